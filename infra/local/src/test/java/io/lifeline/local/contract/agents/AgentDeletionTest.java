package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.agentPartition;
import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * DELETE of an agent, through the gateway, the authorizer and Local's IAM guard, against the engine: only an agent
 * that left or that no revive can bring back, holding no task; its live item and side data go, so neither the sweep
 * nor a list reads it again; its history stays; and its id, registered again, continues its seq.
 */
@Tag("contract")
class AgentDeletionTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Registered, joined, with metadata, left: an offline agent with side data and two published transitions. */
    private static String leftAgent(String prefix) {
        String id = newId(prefix);
        ok(stack.ready(id));
        stack.clock.advance(Duration.ofSeconds(2));
        ok(stack.heartbeat(id, "{\"metadata\":{\"run\":7}}"));
        ok(stack.agent("leave", id, "{\"reason\":\"run finished\"}"));
        stack.pump.drain();
        return id;
    }

    private static List<String> listedIds() {
        List<String> ids = new ArrayList<>();
        for (JsonNode a : ok(stack.team("list-agents", null)).body().get("agents")) {
            ids.add(a.get("agentId").asText());
        }
        return ids;
    }

    @Test
    void delete_ofAnAgentThatLeft_removesItsLiveItemAndSideData_keepsItsHistory_andNoListShowsIt() {
        String id = leftAgent("gone");
        assertFalse(stack.item(agentPartition(id), "DATA").isEmpty(), "the metadata is on the ledger first");
        int recorded = stack.recordedTransitions(id).size();
        assertTrue(listedIds().contains(id));

        TestStack.Reply r = ok(stack.agent("delete-agent", id, null));

        assertEquals(id, r.text("deleted"));
        assertEquals("offline", r.text("status"));
        assertTrue(stack.agentItem(id).isEmpty(), "no live item: no sweep reads it again");
        assertTrue(stack.item(agentPartition(id), "DATA").isEmpty(), "metadata, checkpoint and last error go too");
        assertEquals(recorded, stack.recordedTransitions(id).size(), "its history stays for its retention");
        assertFalse(listedIds().contains(id));
        TestStack.Reply get = stack.agent("get-agent", id, null);
        assertEquals(404, get.status(), get.body().toString());
        assertEquals("AGENT_NOT_FOUND", get.code());
        TestStack.Reply again = stack.agent("delete-agent", id, null);
        assertEquals(404, again.status(), again.body().toString());
    }

    @Test
    void delete_ofAnAliveAgent_isRefused409_andWritesNothing() {
        String id = newId("alive");
        ok(stack.ready(id));
        stack.pump.drain();

        TestStack.Reply r = stack.writesNothing(() -> stack.agent("delete-agent", id, null));

        assertEquals(409, r.status(), r.body().toString());
        assertEquals("AGENT_NOT_RETIRABLE", r.code());
        assertEquals("ready", stack.status(id));
    }

    @Test
    void delete_ofAnAgentThatStillHoldsATask_isRefused409_andWritesNothing() {
        String id = newId("holder");
        ok(stack.register(id));
        stack.forceStatus(id, "offline");
        // Test setup: a task left on the item, as before the outbox's hand-back has run.
        stack.dynamo.updateItem(u -> u.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS(
                        agentPartition(id)), "sk", AttributeValue
                        .fromS("AGENT")))
                .updateExpression("SET taskId = :t")
                .expressionAttributeValues(Map.of(":t",
                        AttributeValue.fromS("task-left"))));

        TestStack.Reply r = stack.writesNothing(() -> stack.agent("delete-agent", id, null));

        assertEquals(409, r.status(), r.body().toString());
        assertEquals("AGENT_HOLDS_TASK", r.code());
    }

    @Test
    void delete_withAnAgentScopedKey_isRefused403_andWritesNothing() {
        String id = leftAgent("scoped");
        String agentKey = stack.key(TestStack.TEAM, Scope.AGENT);

        TestStack.Reply r = stack.writesNothing(() -> stack.send("delete-agent", agentKey,
                Map.of("team", TestStack.TEAM, "agentId", id), null, null));

        assertEquals(403, r.status(), r.body().toString());
        assertFalse(stack.agentItem(id).isEmpty());
    }

    @Test
    void register_afterADelete_continuesTheIdsSeq_soItsNewHistoryFollowsTheOld() {
        String id = leftAgent("reborn");
        long lastSeq = stack.recordedTransitions(id).size();
        ok(stack.agent("delete-agent", id, null));

        ok(stack.register(id));
        ok(stack.agent("join", id, null));
        stack.pump.drain();

        List<Map<String, AttributeValue>> records =
                stack.recordedTransitions(id);
        assertEquals(lastSeq + 1, records.size(), "the new join is recorded beside the old life's transitions");
        assertEquals(String.valueOf(lastSeq + 1), records.get(records.size() - 1).get("seq").n());
        assertEquals("join", records.get(records.size() - 1).get("trigger").s());
        assertEquals("ready", stack.status(id));
        assertTrue(listedIds().contains(id));
        JsonNode transitions = ok(stack.agent("transitions", id, null)).body().get("transitions");
        assertEquals(lastSeq + 1, transitions.size(), transitions.toString());
    }

    private static Map<?, ?> repair() {
        RequestHandler<ScheduledEvent,
                Map<?, ?>> repair = stack.host.handler("OutboxRepairFunction");
        return repair.handleRequest(new ScheduledEvent(), null);
    }

    @Test
    void outboxRepair_deletesAgentsOfflinePastTheRetention_andNoOther() {
        String registeredOnly = newId("never-joined");
        ok(stack.register(registeredOnly));
        String old = leftAgent("old");
        String alive = newId("alive-long");
        ok(stack.ready(alive));
        stack.pump.drain();
        stack.clock.advance(Duration.ofDays(10));
        String recent = leftAgent("recent");
        stack.clock.advance(Duration.ofDays(20).plusMinutes(1)); // old: 30 days and a minute; recent: 20 days

        Map<?, ?> run = repair();

        assertTrue(((Number) run.get("agentsRetired")).intValue() >= 2, run.toString());
        assertTrue(stack.agentItem(old).isEmpty(), "offline past the template's 30 days: deleted");
        assertTrue(stack.agentItem(registeredOnly).isEmpty(), "registered 30 days ago and never joined: deleted");
        assertFalse(stack.agentItem(recent).isEmpty(), "offline 20 days: kept");
        assertFalse(stack.agentItem(alive).isEmpty(), "an agent that never left is the sweep's to judge, not deleted");
        assertFalse(listedIds().contains(old));
        assertEquals(0, ((Number) repair().get("agentsRetired")).intValue(), "nothing more to delete");
        // The id comes back with its seq continued, as after an admin's DELETE.
        ok(stack.register(old));
        ok(stack.agent("join", old, null));
        stack.pump.drain();
        assertEquals("ready", stack.status(old));
    }

    @Test
    void register_ofAnIdRegisteredAgain_afterItsDelete_isStillOneAgent() {
        String id = leftAgent("twice");
        ok(stack.agent("delete-agent", id, null));
        ok(stack.register(id));

        TestStack.Reply r = stack.writesNothing(() -> stack.register(id));

        assertEquals(409, r.status(), r.body().toString());
        assertEquals("AGENT_EXISTS", r.code());
    }
}
