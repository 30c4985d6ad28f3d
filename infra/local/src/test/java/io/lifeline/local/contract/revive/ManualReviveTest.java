package io.lifeline.local.contract.revive;

import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.stack.TestStack.ok;
import static io.lifeline.local.stack.TestStack.statesEntered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.stack.ReviveFixture;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An operator's revive, {@code POST /v1/teams/{team}/agents/{agentId}/revive} (admin): it starts a new execution
 * of the revive flow, named after the agent and its current transition, run by Local's Step Functions over the
 * real SDK client; and {@code GET .../revivals}, what each execution did.
 */
@Tag("contract")
class ManualReviveTest {
    static final String TEAM = TestStack.TEAM;
    @RegisterExtension
    static final ReviveFixture fixture = new ReviveFixture();
    static final StoreFaults faults = fixture.faults;
    static TestStack stack;

    @BeforeAll
    static void start() {
        stack = fixture.stack();
    }

    static long seqOf(String id) {
        return stack.agentView(id).get("lastTransition").get("seq").asLong();
    }

    /** Registers on host-1, joins, dies, and lets the automatic flow run out: dead_failed_revive. */
    static String failedRevive(String what) {
        String id = fixture.readyOnHost(what);
        fixture.kill(id);
        stack.advanceAndRunDue(Duration.ofSeconds(30));
        stack.advanceAndRunDue(Duration.ofSeconds(60));
        stack.advanceAndRunDue(Duration.ofSeconds(120));
        assertEquals("dead_failed_revive", stack.status(id));
        return id;
    }

    static TestStack.Reply revive(String id) {
        return stack.agent("revive", id, "{}");
    }

    static List<JsonNode> revivals(String id, Map<String, String> query) {
        TestStack.Reply r = ok(stack.send("revivals", stack.adminKey, Map.of("team", TEAM, "agentId", id), query,
                null));
        assertEquals(id, r.text("agentId"));
        List<JsonNode> out = new ArrayList<>();
        r.body().get("revivals").forEach(out::add);
        return out;
    }

    static List<String> steps(JsonNode revival) {
        List<String> out = new ArrayList<>();
        revival.get("steps").forEach(s -> out.add(s.get("step").asText() + "/" + s.get("attempt").asInt() + "/"
                + s.get("outcome").asText()));
        return out;
    }

    /** Starting a revive. */
    @Nested
    class Starting {
        @Test
        void revive_whenDeadFailedRevive_startsNewExecutionThatRestartsTheAgent() {
            String id = failedRevive("manual");
            long seq = seqOf(id);
            int executionsBefore = stack.executionsFor(id).size();

            TestStack.Reply r = revive(id);

            assertEquals(202, r.status(), r.body()::toString);
            String name = "revive-" + TEAM + "-" + id + "-" + seq;
            assertEquals(name, r.text("executionName"));
            assertEquals(seq, r.body().get("startSeq").asLong());
            assertTrue(r.text("executionArn").endsWith(":" + name), r.text("executionArn"));
            Execution e = stack.stepFunctions.execution(name).orElseThrow();
            assertEquals(executionsBefore + 1, stack.executionsFor(id).size());
            assertEquals(seq, e.input().get("startSeq").asLong());
            assertTrue(e.input().get("manual").asBoolean());
            JsonNode agent = stack.agentView(id);
            assertEquals("restarting", agent.get("status").asText());
            assertEquals("dead_failed_revive", agent.get("lastTransition").get("from").asText());
            assertEquals("restart_initiated", agent.get("lastTransition").get("trigger").asText());
            TestStack.Reply commands = ok(stack.send("host-commands", stack.adminKey,
                    Map.of("team", TEAM, "hostId", "host-1"), null, null));
            List<String> ids = new ArrayList<>();
            commands.body().get("commands").forEach(c -> ids.add(c.get("commandId").asText()));
            assertTrue(ids.contains("restart-" + id + "-" + seq + "-1"), ids::toString);

            ok(stack.agent("join", id, null));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals("Revived", statesEntered(e).get(statesEntered(e).size() - 1));
        }

        @Test
        void fail_withGiveUp_endsDeadFailedReviveAtOnce_startsNoReviveFlow_andAManualReviveStillWorks() {
            String id = newId("gave-up");
            ok(stack.register(id));
            ok(stack.agent("join", id, null));

            TestStack.Reply r = ok(stack.agent("fail", id,
                    "{\"reason\":\"5 crashes in 10 min; exited with status 3: boom\",\"giveUp\":true}"));

            assertEquals("dead_failed_revive", r.text("status"));
            JsonNode last = stack.agentView(id).get("lastTransition");
            assertEquals("host_gave_up", last.get("trigger").asText());
            assertEquals("ready", last.get("from").asText());
            assertEquals("host gave up: 5 crashes in 10 min; exited with status 3: boom", last.get("reason").asText());
            stack.pump.drain();
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            assertTrue(stack.executionsFor(id).isEmpty(), "a give-up starts no revive flow");
            assertEquals("dead_failed_revive", stack.status(id));
            assertEquals(202, revive(id).status(), "an operator may still decide to revive it");
        }

        @Test
        void fail_withGiveUpThatIsNotABoolean_answers400AndWritesNothing() {
            String id = newId("gave-up-bad");
            ok(stack.register(id));
            ok(stack.agent("join", id, null));
            stack.pump.drain();
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("fail", id, "{\"giveUp\":\"yes\"}"));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
            assertEquals("ready", stack.status(id));
        }

        @Test
        void revive_whenDead_startsExecutionAndTheRulesOwnForTheSameDeathStandsDown() {
            String id = newId("dead");
            ok(stack.register(id));
            ok(stack.agent("join", id, null));
            ok(stack.agent("fail", id, null));
            long deathSeq = seqOf(id);

            // The operator is quicker than the outbox: the rule's execution has not started yet.
            TestStack.Reply r = revive(id);

            assertEquals(202, r.status(), r.body()::toString);
            assertEquals("revive-" + TEAM + "-" + id + "-" + deathSeq, r.text("executionName"));
            assertEquals("restarting", stack.status(id));
            Execution manual = stack.stepFunctions.execution(r.text("executionName")).orElseThrow();

            stack.pump.drain();

            List<Execution> all = stack.executionsFor(id);
            assertEquals(2, all.size(), "the death's rule started its own");
            Execution automatic = all.get(1);
            assertEquals(Execution.Status.SUCCEEDED, automatic.status(), automatic::toString);
            assertEquals("NotNeeded", statesEntered(automatic).get(statesEntered(automatic).size() - 1));
            List<JsonNode> records = revivals(id, null);
            assertEquals(1, records.size(), records::toString);
            assertTrue(records.get(0).get("executionId").asText().endsWith(":" + manual.name()), records::toString);
            assertEquals(List.of("initiate/1/restart_requested"), steps(records.get(0)));

            ok(stack.agent("join", id, null));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            assertEquals(Execution.Status.SUCCEEDED, manual.status());
        }

        @Test
        void revive_askedTwiceForSameState_answers409AlreadyReviving() {
            String id = failedRevive("twice");
            // As in the cloud, where StartExecution returns before the first step runs: the first step is held up.
            faults.fail(1, StoreFaults.transition(TEAM, id, "restart_initiated"), StoreFaults::throttled);
            TestStack.Reply first = revive(id);
            assertEquals(202, first.status(), first.body()::toString);
            assertEquals("dead_failed_revive", stack.status(id));
            int executions = stack.executionsFor(id).size();

            TestStack.Reply again = stack.writesNothing(() -> revive(id));

            assertEquals(409, again.status(), again.body()::toString);
            assertEquals("ALREADY_REVIVING", again.code());
            assertTrue(again.text("error").contains(first.text("executionName")), again.body()::toString);
            assertEquals(executions, stack.executionsFor(id).size());

            stack.advanceAndRunDue(Duration.ofSeconds(2));
            assertEquals("restarting", stack.status(id));
            TestStack.Reply late = revive(id);
            assertEquals(409, late.status());
            assertEquals("INVALID_TRANSITION", late.code(), "once restarting, it is no longer revivable");
            ok(stack.agent("join", id, null));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
        }

        @ParameterizedTest
        @ValueSource(strings = {"offline", "ready", "working", "restarting"})
        void revive_whenNotDead_answers409InvalidTransitionAndStartsNothing(String status) {
            String id = newId("alive-" + status);
            ok(stack.register(id));
            switch (status) {
                case "ready" -> ok(stack.agent("join", id, null));
                case "working" -> {
                    ok(stack.agent("join", id, null));
                    ok(stack.heartbeat(id, "{\"status\":\"working\"}"));
                }
                case "restarting" -> {
                    ok(stack.agent("join", id, null));
                    ok(stack.agent("fail", id, null));
                    stack.pump.drain();
                }
                default -> { }
            }
            assertEquals(status, stack.status(id));
            int executions = stack.executionsFor(id).size();

            TestStack.Reply r = stack.writesNothing(() -> revive(id));

            assertEquals(409, r.status(), r.body()::toString);
            assertEquals("INVALID_TRANSITION", r.code());
            // In the API's words (what was asked, the status and what it means), never the trigger's wire name.
            assertTrue(r.text("error").startsWith("Cannot revive the agent: the agent is " + status + " ("),
                    r.text("error"));
            assertTrue(r.text("error").endsWith("that is allowed only while it is dead or dead_failed_revive"),
                    r.text("error"));
            assertFalse(r.text("error").contains("restart_initiated"), r.text("error"));
            assertEquals(executions, stack.executionsFor(id).size());
            assertEquals(status, stack.status(id));
        }

        @Test
        void revive_ofAgentWithoutHost_answers409NoHost() {
            String id = newId("hostless");
            ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"No host\",\"role\":\"worker\"}"));
            ok(stack.agent("join", id, null));
            ok(stack.agent("fail", id, null));
            stack.pump.drain();
            assertEquals("dead", stack.status(id));

            TestStack.Reply r = stack.writesNothing(() -> revive(id));

            assertEquals(409, r.status(), r.body()::toString);
            assertEquals("NO_HOST", r.code());
            assertTrue(stack.executionsFor(id).isEmpty());
        }

        @Test
        void revive_withAgentOrReadScope_answers403AndStartsNothing() {
            String id = failedRevive("scoped");
            int executions = stack.executionsFor(id).size();
            for (Scope scope : List.of(Scope.AGENT, Scope.READ)) {
                String key = stack.key(TEAM, scope);

                TestStack.Reply r = stack.writesNothing(() -> stack.send("revive", key,
                        Map.of("team", TEAM, "agentId", id), null, "{}"));

                assertEquals(403, r.status(), scope + ": " + r.body());
                assertEquals("INSUFFICIENT_SCOPE", r.code(), scope.toString());
            }
            String otherTeam = stack.key(newId("other"), Scope.ADMIN);
            TestStack.Reply r = stack.send("revive", otherTeam, Map.of("team", TEAM, "agentId", id), null, "{}");
            assertEquals(403, r.status(), r.body()::toString);
            assertEquals(executions, stack.executionsFor(id).size());
            assertEquals("dead_failed_revive", stack.status(id));
        }

        @Test
        void revive_ofUnknownAgent_answers404() {
            TestStack.Reply r = revive(newId("nobody"));
            assertEquals(404, r.status(), r.body()::toString);
            assertEquals("AGENT_NOT_FOUND", r.code());
        }
    }

    /** GET .../revivals. */
    @Nested
    class Revivals {
        @Test
        void revivals_listExecutionsNewestFirst_withStepsAttemptsAndOutcome() {
            String id = failedRevive("history");
            long deathSeq = stack.executionsFor(id).get(0).input().get("startSeq").asLong();
            long failedSeq = seqOf(id);
            Instant manualAt = stack.clock.instant();
            TestStack.Reply r = ok(revive(id));
            Execution manual = stack.stepFunctions.execution(r.text("executionName")).orElseThrow();
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            ok(stack.agent("join", id, null));
            stack.advanceAndRunDue(Duration.ofSeconds(60));
            assertEquals(Execution.Status.SUCCEEDED, manual.status(), manual::toString);

            List<JsonNode> records = revivals(id, null);

            assertEquals(2, records.size(), records::toString);
            JsonNode newest = records.get(0);
            JsonNode oldest = records.get(1);
            assertEquals(failedSeq, newest.get("startSeq").asLong());
            assertTrue(newest.get("executionId").asText().endsWith(":" + manual.name()));
            assertEquals(manualAt.toString(), newest.get("startedAt").asText());
            assertEquals("revived", newest.get("outcome").asText());
            assertEquals(2, newest.get("attempts").asInt());
            assertEquals(List.of("initiate/1/restart_requested", "check/1/retry", "check/2/revived"), steps(newest));
            assertEquals(deathSeq, oldest.get("startSeq").asLong());
            assertEquals("failed", oldest.get("outcome").asText());
            assertEquals(3, oldest.get("attempts").asInt());
            assertEquals(List.of("initiate/1/restart_requested", "check/1/retry", "check/2/retry", "check/3/exhausted",
                    "giveUp/3/failed"), steps(oldest));
            for (JsonNode step : oldest.get("steps")) {
                assertTrue(step.hasNonNull("at"), step::toString);
            }

            assertEquals(1, revivals(id, Map.of("limit", "1")).size());
            assertEquals(failedSeq, revivals(id, Map.of("limit", "1")).get(0).get("startSeq").asLong());
            String reader = stack.key(TEAM, Scope.READ);
            assertEquals(200, stack.send("revivals", reader, Map.of("team", TEAM, "agentId", id), null, null).status());
        }

        @Test
        void revivals_ofAgentNeverRevived_isEmpty() {
            String id = newId("quiet");
            ok(stack.register(id));
            assertTrue(revivals(id, null).isEmpty());
            assertEquals(404, stack.agent("revivals", newId("nobody"), null).status());
        }
    }
}
