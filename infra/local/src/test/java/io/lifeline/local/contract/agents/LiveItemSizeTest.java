package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.stack.TestStack;
import io.lifeline.store.outbox.OutboxMarks;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What a busy agent's live item weighs after a realistic life (the sweep's read units follow the live
 * item's bytes, half a unit per 4 KB scanned). The agent lives through the real handlers, sweep, revive flow and
 * outbox: a join, metadata and a checkpoint near their limits, a context-limit error that rotates its session,
 * tasks claimed and completed with stats on its beats, a missed sweep, a death by the sweep, a revive that asks its
 * host twice, a rejoin, a leave with a long reason and a join, and a task held at the end; the outbox has published
 * every change. Ids are as long as the bench's (agent 12 characters, tasks 20).
 */
@Tag("contract")
class LiveItemSizeTest {
    /**
     * The bound for this life: 0.03 read units per alive agent per sweep is 0.03 x 8,192 = 245 bytes scanned per
     * agent (half a unit per 4 KB), its team item's share included (a team item per 100 agents: about 1 byte). The
     * agent beats from an IPv4 address, whose 4 bytes (attribute {@code ip}) the item keeps for self-preservation's
     * failure domains.
     */
    static final int MAX_LIVE_ITEM_BYTES = 244;
    static final String AGENT = "agent-000123";

    @Test
    @Timeout(300)
    void liveItem_afterARealisticLife_staysUnderTheSweepsByteBudget() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready(AGENT));
            String blob = "x".repeat(3_900);
            ok(s.heartbeat(AGENT, "{\"metadata\":{\"notes\":\"" + blob + "\"},\"checkpoint\":{\"state\":\"" + blob
                    + "\"},\"stats\":{\"messagesProcessed\":3,\"toolCallsExecuted\":5,\"errorsEncountered\":0}}"));
            ok(s.agent("errors", AGENT, "{\"message\":\"prompt is too long: context window exceeded "
                    + "y".repeat(2_000) + "\"}"));
            for (int t = 0; t < 5; t++) {
                work(s, t, true);
            }
            s.pump.drain();

            // A missed sweep, then a beat.
            s.clock.advance(Duration.ofSeconds(65));
            s.sweep();
            assertEquals(1, s.agentView(AGENT).get("consecutiveMisses").asInt());
            ok(s.heartbeat(AGENT, "{}"));

            // A death by the sweep, a revive that asks the host twice, the agent back.
            for (int i = 0; i < 30 && !"dead".equals(s.status(AGENT)); i++) {
                s.clock.advance(Duration.ofSeconds(20));
                s.sweep();
            }
            assertEquals("dead", s.status(AGENT));
            s.pump.drain();
            assertEquals("restarting", s.status(AGENT));
            s.advanceAndRunDue(Duration.ofSeconds(30));
            s.pump.drain();
            ok(s.agent("join", AGENT, null));
            s.advanceAndRunDue(Duration.ofSeconds(60));
            s.pump.drain();
            assertEquals("ready", s.status(AGENT));

            for (int t = 5; t < 19; t++) {
                work(s, t, true);
            }
            ok(s.agent("leave", AGENT, "{\"reason\":\"" + "r".repeat(160) + "\"}"));
            ok(s.agent("join", AGENT, null));
            work(s, 19, true);
            work(s, 20, false); // ends working, holding agent-000123-task-20
            s.pump.drain();

            Map<String, AttributeValue> item = s.agentItem(AGENT);
            assertEquals("working", item.get("status").s());
            Map<String, Integer> sizes = new TreeMap<>();
            item.forEach((k, v) -> sizes.put(k, attributeBytes(k, v)));
            int total = sizes.values().stream().mapToInt(Integer::intValue).sum();
            System.out.println("live item after a realistic life: " + total + " bytes " + sizes);
            assertTrue(total <= MAX_LIVE_ITEM_BYTES, "live item " + total + " bytes (at most " + MAX_LIVE_ITEM_BYTES
                    + "): " + sizes);

            // GET agent still answers the whole last change (from its record on the ledger), and the task it holds.
            var view = s.agentView(AGENT);
            assertEquals("agent-000123-task-20", view.get("currentTaskId").asText());
            var last = view.get("lastTransition");
            assertEquals("ready", last.get("from").asText(), view::toString);
            assertEquals("working", last.get("to").asText());
            assertEquals("claim_task", last.get("trigger").asText());
            assertEquals("claimed task agent-000123-task-20", last.get("reason").asText());
            assertEquals(Long.parseLong(item.get("tseq").n()), last.get("seq").asLong());
        }
    }

    /**
     * The finishing write of a change that is no longer the newest moves only the watermark: the newer change keeps
     * its details on the item (a replay of it needs them) until its own finishing write removes them.
     */
    @Test
    void finishChange_whenANewerChangeIsStamped_keepsTheNewerChangesDetailsUntilItsOwnFinish() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready("fin-1"));
            ok(s.agent("leave", "fin-1", "{\"reason\":\"going home\"}"));
            // Not drained: the outbox has finished neither change (join = 1, leave = 2).
            OutboxMarks agents = new OutboxMarks(s.dynamo, s.tables);
            agents.finishChange(TestStack.TEAM, "fin-1", 1, null);
            Map<String, AttributeValue> item = s.agentItem("fin-1");
            assertEquals("1", item.get("ps").n());
            assertEquals("leave", item.get("tTrigger").s(), "the newer change keeps its details: " + item);
            assertEquals("going home", item.get("tReason").s());
            agents.finishChange(TestStack.TEAM, "fin-1", 2, null);
            item = s.agentItem("fin-1");
            assertEquals("2", item.get("ps").n());
            for (String gone : List.of("tFrom", "tTrigger", "tReason")) {
                assertEquals(null, item.get(gone), gone + " left with its finishing write: " + item);
            }
            assertEquals("2", item.get("tseq").n());
            assertTrue(item.containsKey("tAt"), "the change's time stays (stamps keep their order)");
        }
    }

    /** Creates, claims and (when {@code complete}) completes task {@code t}, with stats on a working beat. */
    private static void work(TestStack s, int t, boolean complete) {
        String task = AGENT + "-task-" + t;
        s.clock.advance(Duration.ofSeconds(5));
        ok(s.createTask(task));
        ok(s.task("claim", task, "{\"agentId\":\"" + AGENT + "\"}"));
        ok(s.heartbeat(AGENT, "{\"status\":\"working\",\"stats\":{\"messagesProcessed\":" + (t * 37)
                + ",\"toolCallsExecuted\":" + (t * 211) + ",\"errorsEncountered\":" + t + "}}"));
        if (complete) {
            ok(s.task("complete", task, "{\"agentId\":\"" + AGENT + "\"}"));
        }
        s.pump.drain();
    }

    /** An attribute's size by DynamoDB's published rules: its name and value in UTF-8, numbers by their digits. */
    static int attributeBytes(String name, AttributeValue v) {
        return utf8(name) + valueBytes(v);
    }

    private static int valueBytes(AttributeValue v) {
        if (v.s() != null) {
            return utf8(v.s());
        }
        if (v.n() != null) {
            String digits = v.n().replace("-", "").replace(".", "").replaceFirst("^0+(?=\\d)", "");
            return (digits.length() + 1) / 2 + 1;
        }
        if (v.b() != null) {
            return v.b().asByteArray().length;
        }
        if (v.bool() != null || v.nul() != null) {
            return 1;
        }
        if (v.hasM()) {
            int total = 3;
            for (var e : v.m().entrySet()) {
                total += attributeBytes(e.getKey(), e.getValue()) + 1;
            }
            return total;
        }
        if (v.hasL()) {
            int total = 3;
            for (AttributeValue e : v.l()) {
                total += valueBytes(e) + 1;
            }
            return total;
        }
        throw new IllegalArgumentException("an attribute type the live item does not use: " + v);
    }

    private static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
