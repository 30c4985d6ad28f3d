package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.stack.TestStack;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * What the outbox's throughput rests on, counted, never timed: a pass of Local's stream pump over
 * a caught-up stream is one GetRecords (the shard list and the shard's iterator are kept), and a batch of status
 * changes costs the publisher one event-log read, one PutEvents per 10 events and a fixed number of conditional
 * writes per change, with no per-record read; each agent's changes still reach the bus in their order.
 */
@Tag("contract")
class OutboxThroughputTest {
    private static final String PUBLISHER = "PublisherFunction";

    /** Counts the functions' DynamoDB requests by operation; writes without a condition are counted apart. */
    static final class StoreCalls implements ExecutionInterceptor {
        final Map<String, AtomicLong> calls = new ConcurrentHashMap<>();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            SdkRequest r = context.request();
            String op = r.getClass().getSimpleName().replace("Request", "");
            if (r instanceof PutItemRequest p && p.conditionExpression() == null
                    || r instanceof UpdateItemRequest u && u.conditionExpression() == null) {
                op += ".unconditional";
            }
            calls.computeIfAbsent(op, k -> new AtomicLong()).incrementAndGet();
        }

        Map<String, Long> snapshot() {
            Map<String, Long> out = new TreeMap<>();
            calls.forEach((k, v) -> out.put(k, v.get()));
            return out;
        }

        void reset() {
            calls.clear();
        }
    }

    @Test
    void pass_overACaughtUpStream_isOneGetRecords_withTheShardListAndTheIteratorKept() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready("quiet-1"));
            s.pump.drain();
            Map<String, Long> before = s.pump.streamCalls();

            for (int i = 0; i < 5; i++) {
                assertEquals(0, s.pump.pumpOnce(), "nothing new on the stream");
            }
            ok(s.heartbeat("quiet-1", "{\"status\":\"working\"}"));
            assertEquals(1, s.pump.pumpOnce(), "the change, read from where the last pass ended");

            Map<String, Long> after = s.pump.streamCalls();
            // 5 empty reads, then the page with the change and the empty read that ends the pass.
            assertEquals(7, delta(before, after, "GetRecords"), after::toString);
            assertEquals(6, delta(before, after, "GetRecords.empty"), after::toString);
            assertEquals(0, delta(before, after, "GetShardIterator"), "the iterator is kept between passes");
            assertEquals(0, delta(before, after, "DescribeStream"), "the shard list is kept between passes");
        }
    }

    @Test
    void twentyStatusChanges_inOneBatch_costOneLogRead_twoPutEvents_andFiveConditionalWritesEach() throws Exception {
        StoreCalls store = new StoreCalls();
        OutboxPassTest.PutEventsCalls bus = new OutboxPassTest.PutEventsCalls();
        try (TestStack s = TestStack.builder().interceptor(store).busInterceptor(bus).build()) {
            for (int i = 0; i < 20; i++) {
                ok(s.ready("busy-" + i));
            }
            s.pump.drain();
            for (int i = 0; i < 20; i++) {
                ok(s.heartbeat("busy-" + i, "{}"));
                ok(s.heartbeat("busy-" + i, "{\"status\":\"working\"}"));
            }
            long invoked = s.pump.invocations(PUBLISHER);
            int putEvents = bus.calls.size();
            store.reset();

            s.pump.drain();

            assertEquals(1, s.pump.invocations(PUBLISHER) - invoked, "the 20 changes in one batch");
            List<OutboxPassTest.Call> calls = bus.calls.subList(putEvents, bus.calls.size());
            assertEquals(2, calls.size(), "20 events, 10 a PutEvents: " + calls);
            calls.forEach(c -> assertEquals(10, c.types().size()));
            // Per change: its transition record, the event in the team's log and the agent's copy, the roster
            // entry's status (the list by status reads it), the finishing write (watermark); per batch: one
            // BatchGetItem of the log (what an earlier pass sent). No GetItem, no Query, nothing unconditional.
            assertEquals(Map.of("BatchGetItem", 1L, "PutItem", 60L, "UpdateItem", 40L), store.snapshot());
        }
    }

    @Test
    void changesOfOneAgent_amongOthersInOneBatch_reachTheBusInTheirOrder_andTheWatermarkEndsAtTheLast()
            throws Exception {
        try (TestStack s = TestStack.start()) {
            for (int i = 0; i < 6; i++) {
                ok(s.ready("order-" + i));
            }
            s.pump.drain();
            int before = s.bus.delivered().size();
            String[] reports = {"working", "idle", "working", "idle", "working"};
            for (String report : reports) {
                for (int i = 0; i < 6; i++) {
                    ok(s.heartbeat("order-" + i, "{\"status\":\"" + report + "\"}"));
                }
            }
            long invoked = s.pump.invocations(PUBLISHER);

            s.pump.drain();

            assertEquals(1, s.pump.invocations(PUBLISHER) - invoked, "30 changes of 6 agents in one batch");
            List<LocalEventBus.Delivered> delivered = s.bus.delivered();
            for (int i = 0; i < 6; i++) {
                String agent = "order-" + i;
                List<Long> seqs = new ArrayList<>();
                for (LocalEventBus.Delivered d : delivered.subList(before, delivered.size())) {
                    JsonNode detail = d.event().get("detail");
                    if ("AgentStatusChanged".equals(d.detailType()) && agent.equals(detail.path("agentId").asText())) {
                        seqs.add(detail.get("seq").asLong());
                    }
                }
                long last = Long.parseLong(s.agentItem(agent).get("tseq").n());
                List<Long> expected = new ArrayList<>();
                for (long seq = last - reports.length + 1; seq <= last; seq++) {
                    expected.add(seq);
                }
                assertEquals(expected, seqs, agent + ": each change once, in seq order");
                assertNotNull(s.agentItem(agent).get("ps"), agent);
                assertEquals(Long.toString(last), s.agentItem(agent).get("ps").n(), agent + ": the watermark");
                assertEquals(last, s.recordedTransitions(agent).size(), agent + ": one record per seq");
            }
            assertTrue(s.pump.drain() == 0, "nothing left, nothing delivered twice");
        }
    }

    @Test
    void nextPoll_whileRecordsFlow_isTheBusyInterval_andTheQuietOneAfterAnEmptyPass() {
        assertEquals(LifelineLocal.STREAM_POLL_BUSY_MILLIS, LifelineLocal.nextPollMillis(new StreamPump.Pass(12, 0)),
                "heartbeats read, none delivered: records flow");
        assertEquals(LifelineLocal.STREAM_POLL_BUSY_MILLIS, LifelineLocal.nextPollMillis(new StreamPump.Pass(3, 3)));
        assertEquals(LifelineLocal.STREAM_POLL_MILLIS, LifelineLocal.nextPollMillis(new StreamPump.Pass(0, 0)));
        assertTrue(LifelineLocal.STREAM_POLL_BUSY_MILLIS < LifelineLocal.STREAM_POLL_MILLIS);
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String op) {
        return after.getOrDefault(op, 0L) - before.getOrDefault(op, 0L);
    }
}
