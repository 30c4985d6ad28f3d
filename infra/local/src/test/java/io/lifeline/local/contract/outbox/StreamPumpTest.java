package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.stack.SharedDynamo;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The outbox through Local's stream pump: one transition record per stamped seq, and a second delivery of
 * the very same stream records (a fresh pump with no checkpoint, as after a lost checkpoint or a Lambda
 * retry) changes nothing.
 */
@Tag("contract")
class StreamPumpTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Changes of several kinds on a few agents: joins, reports, claim and complete, leave, plain beats. */
    private static List<String> writeChanges() {
        List<String> agents = List.of("pump-1", "pump-2", "pump-3");
        for (String a : agents) {
            ok(stack.ready(a));
        }
        ok(stack.heartbeat("pump-1", "{\"status\":\"working\"}"));
        ok(stack.heartbeat("pump-1", "{}"));
        ok(stack.heartbeat("pump-1", "{\"status\":\"idle\"}"));
        ok(stack.agent("leave", "pump-1", null));
        ok(stack.agent("join", "pump-1", null));

        ok(stack.createTask("pump-task"));
        ok(stack.task("claim", "pump-task", "{\"agentId\":\"pump-2\"}"));
        stack.clock.advance(Duration.ofSeconds(5));
        ok(stack.heartbeat("pump-2", "{\"metadata\":{\"step\":1},\"checkpoint\":{\"at\":1}}"));
        ok(stack.task("complete", "pump-task", "{\"agentId\":\"pump-2\"}"));

        ok(stack.heartbeat("pump-3", "{\"status\":\"ready\"}"));
        ok(stack.agent("leave", "pump-3", null));
        return agents;
    }

    /** Checks each agent has exactly records 1..tseq, matching what the item stamped last. */
    private static int assertOneRecordPerSeq(List<String> agents) {
        int total = 0;
        for (String a : agents) {
            Map<String, AttributeValue> item = stack.agentItem(a);
            long tseq = Long.parseLong(item.get("tseq").n());
            List<Map<String, AttributeValue>> recorded = stack.recordedTransitions(a);
            assertEquals(tseq, recorded.size(), a + ": one record per seq");
            for (int i = 0; i < recorded.size(); i++) {
                Map<String, AttributeValue> r = recorded.get(i);
                assertEquals(Long.toString(i + 1), r.get("seq").n(), a);
                assertEquals(String.format("T#%012d", i + 1), r.get("sk").s(), a);
                long at = Long.parseLong(r.get("at").n());
                assertEquals(at / 1000 + Duration.ofDays(30).toSeconds(), Long.parseLong(r.get("expiresAt").n()),
                        a + ": TTL (epoch seconds) is the change's time plus the 30-day retention");
            }
            Map<String, AttributeValue> newest = recorded.get(recorded.size() - 1);
            // Published: the item keeps the newest change's seq and time; its from and trigger are on the record.
            assertEquals(null, item.get("tFrom"), a);
            assertEquals(item.get("status"), newest.get("to"), a);
            assertEquals(null, item.get("tTrigger"), a);
            assertEquals(item.get("tAt"), newest.get("at"), a);
            total += recorded.size();
        }
        return total;
    }

    @Test
    void drain_writesOneRecordPerSeq_andRedeliveryOfTheSameRecordsChangesNothing() throws Exception {
        List<String> agents = writeChanges();
        int delivered = stack.pump.drain();
        assertTrue(delivered > 0);
        int records = assertOneRecordPerSeq(agents);
        // pump-1: join, report_working, report_ready, leave, join; pump-2: join, claim, complete;
        // pump-3: join, leave (its ready report changed nothing).
        assertEquals(10, records);
        assertEquals(List.of("join", "report_working", "report_ready", "leave", "join"),
                stack.recordedTransitions("pump-1").stream().map(r -> r.get("trigger").s()).toList());
        assertEquals(0, stack.pump.drain(), "the checkpoint holds: nothing is delivered twice by the same pump");

        Set<Map<String, AttributeValue>> before = new HashSet<>(stack.allItems());
        try (DynamoDbStreamsClient streams = SharedDynamo.streams()) {
            StreamPump replay = new StreamPump(streams, stack.streamArn(), StreamPump.consumers(stack.host), null);
            int redelivered = replay.drain();
            // The first drain's records plus the transition records' own inserts, all from TRIM_HORIZON.
            assertTrue(redelivered >= delivered, "the replay saw every record again: " + redelivered + " < " + delivered);
            assertEquals(0, replay.drain());
        }
        stack.pump.drain();
        assertEquals(before, new HashSet<>(stack.allItems()), "redelivery duplicated or rewrote nothing");
        assertEquals(10, assertOneRecordPerSeq(agents));
    }

    /** Fails the first {@code failures} writes of a transition record as if DynamoDB were out of reach. */
    private static final class FailTransitionPuts implements ExecutionInterceptor {
        final AtomicInteger failures;
        final AtomicInteger attempts = new AtomicInteger();

        FailTransitionPuts(int failures) {
            this.failures = new AtomicInteger(failures);
        }

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof PutItemRequest put && put.item().get("sk").s().startsWith("T#")) {
                attempts.incrementAndGet();
                if (failures.getAndDecrement() > 0) {
                    throw SdkClientException.create("injected: the store did not answer");
                }
            }
        }
    }

    @Test
    void drain_whenARecordWriteFails_retriesFromThatRecord_andLosesOrDoublesNothing() throws Exception {
        FailTransitionPuts faults = new FailTransitionPuts(1);
        try (TestStack faulty = TestStack.builder().interceptor(faults).build()) {
            assertEquals(200, faulty.ready("flaky").status());
            assertEquals(200, faulty.heartbeat("flaky", "{\"status\":\"working\"}").status());
            assertEquals(200, faulty.agent("leave", "flaky", null).status());
            faulty.pump.drain();
            List<Map<String, AttributeValue>> recorded = faulty.recordedTransitions("flaky");
            assertEquals(List.of("join", "report_working", "leave"),
                    recorded.stream().map(r -> r.get("trigger").s()).toList(), "none lost, none doubled");
            assertEquals(4, faults.attempts.get(), "the failed record was delivered again, once");
            assertEquals(0, faulty.pump.drain());
        }
    }
}
