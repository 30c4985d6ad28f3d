package io.lifeline.local.contract.agents;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.agent.AgentWrites;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Every status x every trigger, against the engine: put a fresh agent in the status, attempt the trigger
 * (through its API route where one exists, through {@link AgentWrites#transition} where none does yet), and
 * check the outcome against {@link TransitionTable}. Allowed: the status becomes the rule's target and the
 * outbox records exactly one transition with the right from/to/trigger. Refused: 409 (INVALID_TRANSITION,
 * or REJOIN_REQUIRED for a heartbeat from a non-alive status), nothing in the table changes, nothing is
 * recorded. A heartbeat report from an alive status equal to its target is a plain 200 with no transition.
 */
@Tag("contract")
class TransitionWalkTest {
    static TestStack stack;
    static AgentWrites store;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        store = new AgentWrites(stack.dynamo, stack.tables);
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    static Stream<Arguments> pairs() {
        List<Arguments> out = new ArrayList<>();
        for (AgentStatus status : AgentStatus.values()) {
            for (Trigger trigger : Trigger.values()) {
                out.add(Arguments.of(status, trigger, expected(status, trigger)));
            }
        }
        return out.stream();
    }

    /** The outcome the table predicts, as the case's display name. */
    private static String expected(AgentStatus status, Trigger trigger) {
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        if (isReport(trigger) && status.isAlive() && status == rule.to()) {
            return "200, no change";
        }
        if (rule.allows(status)) {
            return "-> " + rule.to().wire();
        }
        return isReport(trigger) && !status.isAlive() ? "409 REJOIN_REQUIRED" : "409 INVALID_TRANSITION";
    }

    private static boolean isReport(Trigger t) {
        return t == Trigger.REPORT_WORKING || t == Trigger.REPORT_READY;
    }

    /** What an attempt answered: an HTTP status and code, or (store path) the exception's kind and code. */
    private record Outcome(int status, String code, JsonNode body, Agent agent) {
    }

    @ParameterizedTest(name = "{0} x {1}: {2}")
    @MethodSource("pairs")
    void trigger_fromStatus_followsTheTable(AgentStatus status, Trigger trigger, String expected) {
        String agentId = "w-" + status.wire() + "-" + trigger.wire();
        String taskId = "t-" + status.wire() + "-" + trigger.wire();
        // No hostId: a death here must stay a death, not start the revive flow (its own tests cover that).
        assertEquals(201, stack.team("register", "{\"agentId\":\"" + agentId + "\",\"name\":\"Walker\",\"role\":\"w\"}")
                .status());
        boolean hasTask = trigger == Trigger.CLAIM_TASK || trigger == Trigger.TASK_COMPLETE;
        if (hasTask) {
            assertEquals(201, stack.createTask(taskId).status());
        }
        if (trigger == Trigger.TASK_COMPLETE) {
            // The agent must hold the task: ready, claim (its first transition), then the status under test.
            stack.forceStatus(agentId, AgentStatus.READY.wire());
            assertEquals(200, stack.task("claim", taskId, "{\"agentId\":\"" + agentId + "\"}").status());
        }
        stack.forceStatus(agentId, status.wire());
        stack.pump.drain();

        Map<String, AttributeValue> agentBefore = stack.agentItem(agentId);
        Map<String, AttributeValue> taskBefore = hasTask ? taskItem(taskId) : null;
        List<Map<String, AttributeValue>> recordedBefore = stack.recordedTransitions(agentId);
        List<JsonNode> apiBefore = stack.transitions(agentId, 100);
        Set<Map<String, AttributeValue>> tableBefore = new HashSet<>(stack.allItems());
        long seqBefore = Long.parseLong(agentBefore.get("tseq").n());
        assertEquals(seqBefore, recordedBefore.size(), "setup: the outbox is caught up");

        Outcome outcome = attempt(trigger, agentId, taskId);
        stack.pump.drain();

        Map<String, AttributeValue> agentAfter = stack.agentItem(agentId);
        List<Map<String, AttributeValue>> recordedAfter = stack.recordedTransitions(agentId);
        List<JsonNode> apiAfter = stack.transitions(agentId, 100);
        TransitionTable.Rule rule = TransitionTable.rule(trigger);

        if (isReport(trigger) && status.isAlive() && status == rule.to()) {
            assertEquals(200, outcome.status(), () -> "no-change heartbeat answered " + outcome.body());
            assertEquals(status.wire(), outcome.body().get("agentStatus").asText());
            assertEquals(status.wire(), agentAfter.get("status").s());
            assertEquals(agentBefore.get("tseq"), agentAfter.get("tseq"), "no transition stamped");
            assertEquals(Long.parseLong(agentBefore.get("beats").n()) + 1, Long.parseLong(agentAfter.get("beats").n()),
                    "the heartbeat itself was counted once");
            assertEquals(recordedBefore, recordedAfter, "no transition recorded");
            assertEquals(apiBefore, apiAfter, "history unchanged");
        } else if (rule.allows(status)) {
            assertEquals(200, outcome.status(), () -> "allowed " + trigger.wire() + " answered " + outcome.body());
            AgentStatus target = rule.to();
            if (outcome.body() != null) {
                JsonNode answered = outcome.body().has("agentStatus") ? outcome.body().get("agentStatus")
                        : outcome.body().get("status");
                assertEquals(target.wire(), answered.asText(), "the answer shows the new status");
            } else {
                assertEquals(target, outcome.agent().status(), "the store returns the new status");
            }
            assertEquals(target.wire(), agentAfter.get("status").s());
            assertEquals(seqBefore + 1, Long.parseLong(agentAfter.get("tseq").n()), "one transition stamped");
            // Published (the pump drained): its from and trigger are on its record below, no longer on the item.
            assertEquals(null, agentAfter.get("tFrom"), "published: from is on the record only");
            assertEquals(null, agentAfter.get("tTrigger"), "published: trigger is on the record only");

            assertEquals(recordedBefore.size() + 1, recordedAfter.size(), "exactly one new record");
            assertEquals(recordedBefore, recordedAfter.subList(0, recordedBefore.size()), "older records untouched");
            Map<String, AttributeValue> rec = recordedAfter.get(recordedAfter.size() - 1);
            assertEquals(Long.toString(seqBefore + 1), rec.get("seq").n());
            assertEquals(status.wire(), rec.get("from").s());
            assertEquals(target.wire(), rec.get("to").s());
            assertEquals(trigger.wire(), rec.get("trigger").s());
            assertEquals(agentAfter.get("tAt").n(), rec.get("at").n());

            assertEquals(apiBefore.size() + 1, apiAfter.size(), "GET transitions shows one more");
            JsonNode newest = apiAfter.get(0);
            assertEquals(seqBefore + 1, newest.get("seq").asLong());
            assertEquals(status.wire(), newest.get("from").asText());
            assertEquals(target.wire(), newest.get("to").asText());
            assertEquals(trigger.wire(), newest.get("trigger").asText());
            assertEquals(apiBefore, apiAfter.subList(1, apiAfter.size()));
            if (trigger == Trigger.CLAIM_TASK) {
                assertEquals("in_progress", taskItem(taskId).get("status").s());
                assertEquals(agentId, taskItem(taskId).get("assignee").s());
                assertEquals(taskId, agentAfter.get("taskId").s());
            } else if (trigger == Trigger.TASK_COMPLETE) {
                assertEquals("done", taskItem(taskId).get("status").s());
                assertEquals(null, agentAfter.get("taskId"), "the agent no longer holds the task");
            }
        } else {
            assertEquals(409, outcome.status(), () -> "refused " + trigger.wire() + " answered " + outcome.body());
            boolean rejoin = isReport(trigger) && !status.isAlive();
            assertEquals(rejoin ? "REJOIN_REQUIRED" : "INVALID_TRANSITION", outcome.code());
            if (outcome.body() != null) {
                assertEquals(status.wire(), outcome.body().get("agentStatus").asText());
                assertEquals(rejoin, outcome.body().path("rejoinRequired").asBoolean(false));
            }
            assertEquals(agentBefore, agentAfter, "the agent item is byte-for-byte unchanged");
            if (hasTask) {
                assertEquals(taskBefore, taskItem(taskId), "the task item is unchanged");
            }
            assertEquals(recordedBefore, recordedAfter, "no transition recorded");
            assertEquals(apiBefore, apiAfter, "history unchanged");
            assertEquals(tableBefore, new HashSet<>(stack.allItems()), "a refused request writes nothing");
        }
    }

    private static Outcome attempt(Trigger trigger, String agentId, String taskId) {
        String claimant = "{\"agentId\":\"" + agentId + "\"}";
        return switch (trigger) {
            case JOIN -> http(stack.agent("join", agentId, null));
            case LEAVE -> http(stack.agent("leave", agentId, null));
            case CLEANUP -> http(stack.agent("cleanup", agentId, null));
            case CLAIM_TASK -> http(stack.task("claim", taskId, claimant));
            case TASK_COMPLETE -> http(stack.task("complete", taskId, claimant));
            case REPORT_WORKING -> http(stack.heartbeat(agentId, "{\"status\":\"working\"}"));
            case REPORT_READY -> http(stack.heartbeat(agentId, "{\"status\":\"ready\"}"));
            case REPORTED_FAILURE -> http(stack.agent("fail", agentId, "{\"reason\":\"walk\"}"));
            case HOST_GAVE_UP -> http(stack.agent("fail", agentId, "{\"reason\":\"walk\",\"giveUp\":true}"));
            case HEARTBEAT_EXPIRED, STALLED, RESTART_INITIATED, RESTART_EXHAUSTED -> direct(trigger, agentId);
        };
    }

    private static Outcome http(TestStack.Reply r) {
        return new Outcome(r.status(), r.code(), r.body(), null);
    }

    /** Triggers with no route yet (sweep, revive flow) go straight to the store, as their callers will. */
    private static Outcome direct(Trigger trigger, String agentId) {
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        AgentStatus current = AgentStatus.fromWire(stack.agentItem(agentId).get("status").s()).orElseThrow();
        if (rule.allows(current)) {
            Agent after = store.transition(TestStack.TEAM, agentId, trigger, "walk", stack.clock.instant());
            assertNotNull(after);
            return new Outcome(200, null, null, after);
        }
        LifelineException e = assertThrows(LifelineException.class, () -> store.transition(TestStack.TEAM, agentId,
                trigger, "walk", stack.clock.instant()));
        assertEquals(LifelineException.Kind.CONFLICT, e.kind());
        assertEquals(current, e.currentStatus(), "the refusal says the current status without a second read");
        // In the API's words: what was asked and the status, never the trigger's wire name.
        assertTrue(e.getMessage().startsWith("Cannot " + trigger.asked() + ": the agent is " + current.wire() + " ("),
                e.getMessage());
        assertFalse(e.getMessage().contains(trigger.wire()), e.getMessage());
        return new Outcome(409, e.code(), null, null);
    }

    private static Map<String, AttributeValue> taskItem(String taskId) {
        return stack.item("TEAM#" + TestStack.TEAM, "TASK#" + taskId);
    }
}
