package io.lifeline.local.contract.hosts;

import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.contract.outbox.PublisherTest;
import io.lifeline.local.stack.ReviveFixture;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The restart channel: the commands the revive flow issues to an agent's host, pulled with
 * {@code GET /v1/teams/{team}/hosts/{hostId}/commands} and acknowledged once with
 * {@code POST .../commands/{commandId}/ack}, expiring after COMMAND_TTL_SECONDS (600 s); and the push side, one
 * AgentRestartRequested event on the bus per command. Each test uses hosts of its own.
 */
@Tag("contract")
class RestartChannelTest {
    static final String TEAM = TestStack.TEAM;
    static final Duration TTL = Duration.ofSeconds(600);
    @RegisterExtension
    static final ReviveFixture fixture = new ReviveFixture();
    static final StoreFaults faults = fixture.faults;
    static TestStack stack;

    @BeforeAll
    static void start() {
        stack = fixture.stack();
    }

    /** Registers an agent of {@code team} on {@code hostId} with {@code key}, and joins it. */
    static String hosted(String team, String key, String hostId) {
        String id = newId("agent");
        ok(stack.send("register", key, Map.of("team", team), null, "{\"agentId\":\"" + id
                + "\",\"name\":\"Agent\",\"role\":\"worker\",\"hostId\":\"" + hostId + "\"}"));
        ok(stack.send("join", key, Map.of("team", team, "agentId", id), null, null));
        return id;
    }

    static String hosted(String hostId) {
        return hosted(TEAM, stack.adminKey, hostId);
    }

    /** The agent dies; the outbox publishes the death, and its revive execution issues command 1. */
    static void kill(String team, String key, String id) {
        ok(stack.send("fail", key, Map.of("team", team, "agentId", id), null, null));
        stack.pump.drain();
    }

    static void kill(String id) {
        kill(TEAM, stack.adminKey, id);
    }

    static Execution executionOf(String id) {
        List<Execution> all = stack.executionsFor(id);
        assertEquals(1, all.size(), all::toString);
        return all.get(0);
    }

    static long deathSeq(String id) {
        return executionOf(id).input().get("startSeq").asLong();
    }

    static TestStack.Reply pull(String team, String key, String hostId) {
        return stack.send("host-commands", key, Map.of("team", team, "hostId", hostId), null, null);
    }

    static List<JsonNode> pending(String hostId) {
        TestStack.Reply r = ok(pull(TEAM, stack.adminKey, hostId));
        List<JsonNode> out = new ArrayList<>();
        r.body().get("commands").forEach(out::add);
        assertEquals(out.size(), r.body().get("count").asInt());
        return out;
    }

    static TestStack.Reply ack(String team, String key, String hostId, String commandId) {
        return stack.send("ack-command", key, Map.of("team", team, "hostId", hostId, "commandId", commandId), null,
                null);
    }

    static TestStack.Reply ack(String hostId, String commandId) {
        return ack(TEAM, stack.adminKey, hostId, commandId);
    }

    static List<JsonNode> restartEvents(String id) {
        return PublisherTest.onBus(stack, "AgentRestartRequested", "agentId", id);
    }

    /** Ends the agent's execution: it joins, and the flow's next check finds it alive. */
    static void rejoin(String team, String key, String id) {
        ok(stack.send("join", key, Map.of("team", team, "agentId", id), null, null));
        stack.advanceAndRunDue(Duration.ofSeconds(120));
        stack.executionsFor(id).forEach(e -> assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString));
    }

    /** Pull. */
    @Nested
    class Pull {
        @Test
        void commands_appearForTheirHostOnly_withAgentAttemptAndReason() {
            String hostA = newId("host-a");
            String hostB = newId("host-b");
            String onA = hosted(hostA);
            String onB = hosted(hostB);
            Instant at = stack.clock.instant();

            kill(onA);
            kill(onB);

            List<JsonNode> forA = pending(hostA);
            List<JsonNode> forB = pending(hostB);
            assertEquals(1, forA.size(), forA::toString);
            assertEquals(1, forB.size(), forB::toString);
            JsonNode c = forA.get(0);
            assertEquals("restart-" + onA + "-" + deathSeq(onA) + "-1", c.get("commandId").asText());
            assertEquals(hostA, c.get("hostId").asText());
            assertEquals("restart", c.get("type").asText());
            assertEquals(onA, c.get("agentId").asText());
            assertEquals(1, c.get("attempt").asInt());
            assertEquals("agent is dead", c.get("reason").asText());
            assertEquals("pending", c.get("state").asText());
            assertEquals(at.toString(), c.get("createdAt").asText());
            assertEquals(at.plus(TTL).toString(), c.get("expiresAt").asText());
            assertEquals(onB, forB.get(0).get("agentId").asText());
            assertEquals(hostB, forB.get(0).get("hostId").asText());
            assertTrue(pending(newId("host-c")).isEmpty(), "a host with no agents has nothing");

            // Attempt 2 goes to the same host, with its own reason.
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            List<JsonNode> later = pending(hostA);
            assertEquals(List.of(1, 2), later.stream().map(x -> x.get("attempt").asInt()).toList());
            assertEquals("agent did not rejoin after attempt 1", later.get(1).get("reason").asText());
            assertEquals(List.of(onB, onB), pending(hostB).stream().map(x -> x.get("agentId").asText()).toList());

            rejoin(TEAM, stack.adminKey, onA);
            rejoin(TEAM, stack.adminKey, onB);
        }

        @Test
        void ack_acknowledgesOnce_thenAnswers409AlreadyAcknowledged() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            String commandId = pending(host).get(0).get("commandId").asText();
            String daemonKey = stack.key(TEAM, Scope.AGENT);
            stack.clock.advance(Duration.ofSeconds(3));
            Instant ackedAt = stack.clock.instant();

            TestStack.Reply first = ack(TEAM, daemonKey, host, commandId);

            assertEquals(200, first.status(), first.body()::toString);
            assertEquals(commandId, first.text("commandId"));
            assertEquals("acked", first.text("state"));
            assertEquals(ackedAt.toString(), first.text("ackedAt"));
            assertTrue(first.body().get("success").asBoolean());
            assertTrue(pending(host).isEmpty(), "an acknowledged command is no longer pending");

            TestStack.Reply second = stack.writesNothing(() -> ack(TEAM, daemonKey, host, commandId));

            assertEquals(409, second.status(), second.body()::toString);
            assertEquals("ALREADY_ACKNOWLEDGED", second.code());
            rejoin(TEAM, stack.adminKey, id);
        }

        @Test
        void ack_ofUnknownCommandOrOnOtherHost_answers404CommandNotFound() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            String commandId = pending(host).get(0).get("commandId").asText();

            TestStack.Reply unknown = stack.writesNothing(() -> ack(host, "restart-nobody-1-1"));
            TestStack.Reply wrongHost = stack.writesNothing(() -> ack(newId("host"), commandId));

            assertEquals(404, unknown.status(), unknown.body()::toString);
            assertEquals("COMMAND_NOT_FOUND", unknown.code());
            assertEquals(404, wrongHost.status(), wrongHost.body()::toString);
            assertEquals("COMMAND_NOT_FOUND", wrongHost.code());
            assertEquals(1, pending(host).size(), "the command is still pending");
            rejoin(TEAM, stack.adminKey, id);
        }

        @Test
        void commands_pastTheirTtl_areHiddenAndCannotBeAcknowledged() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            String commandId = pending(host).get(0).get("commandId").asText();

            // The flow's own steps are not run here: only the clock moves.
            stack.clock.advance(TTL.minusSeconds(1));
            assertEquals(1, pending(host).size(), "still there a second before it expires");
            stack.clock.advance(Duration.ofSeconds(1));

            assertTrue(pending(host).isEmpty(), "hidden once expired");
            TestStack.Reply r = stack.writesNothing(() -> ack(host, commandId));
            assertEquals(404, r.status(), r.body()::toString);
            assertEquals("COMMAND_NOT_FOUND", r.code());
            Map<String, AttributeValue> item = stack.allItems().stream()
                    .filter(i -> i.get("sk").s().equals("CMD#" + commandId)).findFirst().orElseThrow();
            assertEquals("pending", item.get("state").s(), "still stored until DynamoDB's TTL removes it");
            assertNotNull(item.get("expiresAt").n());
            rejoin(TEAM, stack.adminKey, id);
        }

        @Test
        void commands_areTeamScoped() {
            String host = newId("shared-host");
            String other = newId("team");
            String otherKey = stack.key(other, Scope.ADMIN);
            String ours = hosted(host);
            String theirs = hosted(other, otherKey, host);
            kill(ours);
            kill(other, otherKey, theirs);

            List<JsonNode> ourCommands = pending(host);
            assertEquals(List.of(ours), ourCommands.stream().map(c -> c.get("agentId").asText()).toList());
            TestStack.Reply theirList = ok(pull(other, otherKey, host));
            assertEquals(1, theirList.body().get("count").asInt());
            assertEquals(theirs, theirList.body().get("commands").get(0).get("agentId").asText());
            String theirCommand = theirList.body().get("commands").get(0).get("commandId").asText();

            TestStack.Reply peek = stack.writesNothing(() -> pull(TEAM, otherKey, host));
            TestStack.Reply steal = stack.writesNothing(() -> ack(TEAM, otherKey, host,
                    ourCommands.get(0).get("commandId").asText()));
            TestStack.Reply reach = stack.writesNothing(() -> ack(other, stack.adminKey, host, theirCommand));
            TestStack.Reply crossed = stack.writesNothing(() -> ack(host, theirCommand));

            assertEquals(403, peek.status(), peek.body()::toString);
            assertEquals(403, steal.status(), steal.body()::toString);
            assertEquals(403, reach.status(), reach.body()::toString);
            assertEquals(404, crossed.status(), "their command is not ours to acknowledge: " + crossed.body());
            assertEquals(1, pending(host).size());
            assertEquals(1, ok(pull(other, otherKey, host)).body().get("count").asInt());

            rejoin(TEAM, stack.adminKey, ours);
            rejoin(other, otherKey, theirs);
        }

        @Test
        void commands_withReadScopeOrNoKey_areRefused() {
            String host = newId("host");
            String reader = stack.key(TEAM, Scope.READ);
            TestStack.Reply r = pull(TEAM, reader, host);
            assertEquals(403, r.status(), r.body()::toString);
            assertEquals("INSUFFICIENT_SCOPE", r.code());
            assertEquals(200, pull(TEAM, stack.key(TEAM, Scope.AGENT), host).status());
            assertEquals(401, pull(TEAM, null, host).status());
        }
    }

    /** Push. */
    @Nested
    class Push {
        @Test
        void issuedCommands_afterDrain_eachProduceExactlyOneAgentRestartRequested() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            List<JsonNode> commands = new ArrayList<>(pending(host));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            commands.add(pending(host).get(1));
            stack.advanceAndRunDue(Duration.ofSeconds(60));
            commands.add(pending(host).get(2));
            // Acknowledging a command changes it, but publishes nothing more.
            ok(ack(host, commands.get(0).get("commandId").asText()));
            stack.advanceAndRunDue(Duration.ofSeconds(120));
            assertEquals(Execution.Status.FAILED, executionOf(id).status());
            assertEquals(3, commands.size());

            stack.pump.drain();
            stack.pump.drain();

            List<JsonNode> events = restartEvents(id);
            assertEquals(3, events.size(), events::toString);
            Map<String, JsonNode> byCommand = events.stream()
                    .collect(Collectors.toMap(e -> e.get("commandId").asText(), e -> e));
            for (JsonNode c : commands) {
                JsonNode e = byCommand.get(c.get("commandId").asText());
                assertNotNull(e, () -> "no event for " + c);
                assertEquals(TEAM, e.get("team").asText());
                assertEquals(id, e.get("agentId").asText());
                assertEquals(host, e.get("hostId").asText());
                assertEquals(c.get("attempt").asInt(), e.get("attempt").asInt());
                assertEquals(c.get("reason").asText(), e.get("reason").asText());
                assertEquals(c.get("createdAt").asText(), e.get("at").asText());
                assertEquals(c.get("expiresAt").asText(), e.get("expiresAt").asText());
            }
            assertEquals(List.of(1, 2, 3), events.stream().map(e -> e.get("attempt").asInt()).sorted().toList());
        }
    }

    /** Superseded: a flow that ends takes its commands with it. */
    @Nested
    class Superseded {
        static void assertSuperseded(TestStack.Reply r, String agentStatus) {
            assertEquals(409, r.status(), r.body()::toString);
            assertEquals("COMMAND_SUPERSEDED", r.code());
            assertEquals(agentStatus, r.text("agentStatus"));
            assertFalse(r.body().get("rejoinRequired").asBoolean());
        }

        @Test
        void command_whenAgentJoinsBetweenTheHostsPollAndItsAck_isHiddenAndItsAckAnswers409Superseded() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            List<JsonNode> offered = pending(host);
            assertEquals(1, offered.size(), "a command of a live flow is offered");
            String commandId = offered.get(0).get("commandId").asText();

            // The agent comes back on its own before the host acts on what it was offered.
            ok(stack.send("join", stack.adminKey, Map.of("team", TEAM, "agentId", id), null, null));

            assertTrue(pending(host).isEmpty(), "no host is offered a restart of an agent that is alive");
            String daemonKey = stack.key(TEAM, Scope.AGENT);
            TestStack.Reply r = stack.writesNothing(() -> ack(TEAM, daemonKey, host, commandId));
            assertSuperseded(r, "ready");
            assertTrue(r.text("error").contains(commandId) && r.text("error").contains("do not restart"),
                    r.text("error"));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            assertEquals(Execution.Status.SUCCEEDED, executionOf(id).status());
            assertTrue(pending(host).isEmpty());
        }

        @Test
        void command_ofALiveFlow_isOfferedAndAcknowledged_andTheNextAttemptsCommandEndsWithTheFlow() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            String first = pending(host).get(0).get("commandId").asText();
            assertEquals(200, ack(host, first).status(), "the flow stands: the host may act");
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            List<JsonNode> second = pending(host);
            assertEquals(List.of(2), second.stream().map(c -> c.get("attempt").asInt()).toList());

            ok(stack.send("join", stack.adminKey, Map.of("team", TEAM, "agentId", id), null, null));

            assertTrue(pending(host).isEmpty());
            assertSuperseded(stack.writesNothing(() -> ack(host, second.get(0).get("commandId").asText())), "ready");
            TestStack.Reply again = ack(host, first);
            assertEquals("ALREADY_ACKNOWLEDGED", again.code(), "an acknowledged command stays acknowledged");
            stack.advanceAndRunDue(Duration.ofSeconds(60));
            assertEquals(Execution.Status.SUCCEEDED, executionOf(id).status());
        }

        @Test
        void commands_whenTheFlowGivesUpAndTheAgentIsCleanedUp_areHiddenAndTheirAcksAnswer409Superseded() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            List<String> ids = new ArrayList<>();
            ids.add(pending(host).get(0).get("commandId").asText());
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            ids.add(pending(host).get(1).get("commandId").asText());
            stack.advanceAndRunDue(Duration.ofSeconds(60));
            ids.add(pending(host).get(2).get("commandId").asText());

            stack.advanceAndRunDue(Duration.ofSeconds(120));

            assertEquals(Execution.Status.FAILED, executionOf(id).status());
            assertTrue(pending(host).isEmpty(), "the flow gave up: none of its commands is offered");
            for (String commandId : ids) {
                assertSuperseded(stack.writesNothing(() -> ack(host, commandId)), "dead_failed_revive");
            }
            ok(stack.send("cleanup", stack.adminKey, Map.of("team", TEAM, "agentId", id), null, null));
            assertTrue(pending(host).isEmpty());
            assertSuperseded(stack.writesNothing(() -> ack(host, ids.get(2))), "offline");
            assertEquals(List.of("pending", "pending", "pending"), ids.stream().map(c -> stack.allItems().stream()
                    .filter(i -> i.get("sk").s().equals("CMD#" + c)).findFirst().orElseThrow().get("state").s()).toList(),
                    "still stored (TTL removes them), never acknowledged");
        }

        @Test
        void twoFlowsInARow_aManualReviveAfterGivingUp_offersOnlyTheNewestFlowsCommand() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            String old = pending(host).get(0).get("commandId").asText();
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            stack.advanceAndRunDue(Duration.ofSeconds(60));
            stack.advanceAndRunDue(Duration.ofSeconds(120));
            assertEquals("dead_failed_revive", stack.status(id));
            long failedSeq = stack.agentView(id).get("lastTransition").get("seq").asLong();

            TestStack.Reply revive = stack.send("revive", stack.adminKey, Map.of("team", TEAM, "agentId", id), null, "{}");

            assertEquals(202, revive.status(), revive.body()::toString);
            assertEquals("restarting", stack.status(id));
            List<JsonNode> offered = pending(host);
            assertEquals(List.of("restart-" + id + "-" + failedSeq + "-1"),
                    offered.stream().map(c -> c.get("commandId").asText()).toList(), "the newest flow's command only");
            TestStack.Reply stale = stack.writesNothing(() -> ack(host, old));
            assertSuperseded(stale, "restarting");
            assertTrue(stale.text("error").contains("newer revive"), stale.text("error"));
            assertEquals(200, ack(host, offered.get(0).get("commandId").asText()).status());
            ok(stack.send("join", stack.adminKey, Map.of("team", TEAM, "agentId", id), null, null));
            stack.advanceAndRunDue(Duration.ofSeconds(30));
            assertEquals(Execution.Status.SUCCEEDED, stack.stepFunctions.execution(revive.text("executionName"))
                    .orElseThrow().status());
        }

        @Test
        void retriedCheck_afterItsCommandWasWritten_issuesNoDuplicateCommandOrEvent() {
            String host = newId("host");
            String id = hosted(host);
            kill(id);
            Execution e = executionOf(id);
            stack.clock.advance(Duration.ofSeconds(30));
            // Command 2 is written, then the step's record is throttled: the whole step runs again 2 s later.
            StoreFaults.Fault throttled = faults.fail(1, StoreFaults.revivalRecord(TEAM, id), StoreFaults::throttled);
            stack.stepFunctions.runDue();
            assertEquals(1, throttled.fired());
            assertEquals(1, e.history().stream().filter(h -> h.type().equals("RetryScheduled")).count());
            Map<String, String> createdAt = new HashMap<>();
            pending(host).forEach(c -> createdAt.put(c.get("commandId").asText(), c.get("createdAt").asText()));
            assertEquals(2, createdAt.size(), createdAt::toString);

            stack.advanceAndRunDue(Duration.ofSeconds(2));

            assertEquals(2, e.history().stream().filter(h -> h.type().equals("TaskScheduled")
                    && "Check".equals(h.state())).count(), "the check ran twice");
            List<JsonNode> commands = pending(host);
            assertEquals(List.of(1, 2), commands.stream().map(c -> c.get("attempt").asInt()).toList());
            commands.forEach(c -> assertEquals(createdAt.get(c.get("commandId").asText()), c.get("createdAt").asText(),
                    "the command was not rewritten"));
            stack.pump.drain();
            assertEquals(List.of(1, 2), restartEvents(id).stream().map(x -> x.get("attempt").asInt()).sorted().toList());
            rejoin(TEAM, stack.adminKey, id);
        }
    }
}
