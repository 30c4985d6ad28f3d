package io.lifeline.local.contract.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.e2e.ObservabilityTest;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * DynamoDB throttles the sweep's writes for some agents (an SDK interceptor
 * failing them with ProvisionedThroughputExceededException). The rest of the sweep is still right (the others
 * get their misses and die on time, a beating agent stays alive), the throttled agents are neither marked nor
 * half-written, and the next sweeps, once the throttling ends, handle them.
 */
@Tag("contract")
class SweepThrottlingTest {

    private static Predicate<SdkRequest> agentWrite(String agentId) {
        return r -> r instanceof UpdateItemRequest && StoreFaults.touching(TestStack.TEAM, agentId).test(r);
    }

    @Test
    void throttledSweepWrites_skipOnlyThoseAgents_whoAreHandledByTheNextSweeps() throws Exception {
        StoreFaults faults = new StoreFaults();
        try (TestStack stack = TestStack.builder().interceptor(faults)
                .parameter("SelfPreservationMinAlive", "100000").build()) {
            List<String> silent = List.of("th-0", "th-1", "th-2", "th-3", "th-4", "th-5");
            for (String a : silent) {
                assertEquals(200, stack.ready(a).status());
            }
            assertEquals(200, stack.ready("th-beating").status());
            StoreFaults.Fault f1 = faults.fail(1000, agentWrite("th-1"), StoreFaults::throttled);
            StoreFaults.Fault f4 = faults.fail(1000, agentWrite("th-4"), StoreFaults::throttled);

            stack.clock.advance(Duration.ofSeconds(61));
            assertEquals(200, stack.heartbeat("th-beating", "{}").status());
            assertEquals(List.of(), stack.sweep(), "first miss for the others");
            stack.clock.advance(Duration.ofSeconds(15));
            assertEquals(200, stack.heartbeat("th-beating", "{}").status());
            assertEquals(Set.of("acme/th-0", "acme/th-2", "acme/th-3", "acme/th-5"), Set.copyOf(stack.sweep()));
            assertTrue(f1.fired() >= 2 && f4.fired() >= 2, "both throttled agents' writes were tried each sweep");
            for (String throttled : List.of("th-1", "th-4")) {
                assertEquals("ready", stack.agentItem(throttled).get("status").s());
                var misses = stack.agentItem(throttled).get("misses");
                assertEquals("0", misses == null ? "0" : misses.n(), "no partial write");
            }
            assertEquals("ready", stack.agentItem("th-beating").get("status").s());

            faults.clear();
            stack.clock.advance(Duration.ofSeconds(15));
            assertEquals(200, stack.heartbeat("th-beating", "{}").status());
            assertEquals(List.of(), stack.sweep(), "their first miss now");
            stack.clock.advance(Duration.ofSeconds(15));
            assertEquals(200, stack.heartbeat("th-beating", "{}").status());
            assertEquals(Set.of("acme/th-1", "acme/th-4"), Set.copyOf(stack.sweep()));
            assertEquals("ready", stack.agentItem("th-beating").get("status").s());
            stack.pump.drain();
            for (String a : silent) {
                List<String> triggers = stack.transitions(a, 10).stream().map(t -> t.get("trigger").asText()).toList();
                // Newest first; the agents have a host, so a revive flow may follow the death.
                assertEquals(List.of("heartbeat_expired", "join"), triggers.subList(triggers.size() - 2,
                        triggers.size()), a + ": " + triggers);
                assertEquals(1, triggers.stream().filter("heartbeat_expired"::equals).count(), a + ": " + triggers);
            }
        }
    }

    /**
     * A sweep whose writes are throttled reports them in its metrics line (SweepWriteErrors, which
     * SweepWriteErrorsAlarm watches, and Faults), one per skipped write, and publishes none once the store takes
     * them again (a count of 0 is not published: a custom metric is billed for every hour it is).
     */
    @Test
    void throttledSweepWrites_areCountedInTheSweepLinesWriteErrorsMetric() throws Exception {
        StoreFaults faults = new StoreFaults();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Log.sink(lines::add);
        try (TestStack stack = TestStack.builder().interceptor(faults)
                .parameter("SelfPreservationMinAlive", "100000").build()) {
            for (String a : List.of("we-0", "we-1", "we-2")) {
                assertEquals(200, stack.ready(a).status());
            }
            faults.fail(1000, agentWrite("we-1"), StoreFaults::throttled);
            faults.fail(1000, agentWrite("we-2"), StoreFaults::throttled);
            stack.clock.advance(Duration.ofSeconds(61));
            lines.clear();
            stack.sweep();
            assertEquals(List.of(2L), writeErrors(lines), "two skipped writes, one sweep line");

            faults.clear();
            stack.clock.advance(Duration.ofSeconds(15));
            lines.clear();
            stack.sweep();
            assertEquals(List.of(), writeErrors(lines));
        } finally {
            Log.sink(null);
        }
    }

    /** SweepWriteErrors of each sweep line that declares it as an EMF metric. */
    private static List<Long> writeErrors(List<String> lines) throws Exception {
        List<Long> out = new ArrayList<>();
        for (String line : List.copyOf(lines)) {
            JsonNode doc = Json.parse(line);
            if (doc.path("msg").asText().equals("sweep")
                    && ObservabilityTest.declared(doc).contains(Metrics.SWEEP_WRITE_ERRORS)) {
                out.add(doc.path(Metrics.SWEEP_WRITE_ERRORS).asLong());
            }
        }
        return out;
    }
}
