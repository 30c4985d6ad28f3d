package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequest;

/**
 * EventBridge entirely down (every PutEvents call fails in the SDK, as when the
 * endpoint cannot be reached) while agents change status in every way (report, leave, fail report with a
 * task held, sweep deaths), then back. The API keeps answering and its history is current throughout; the
 * outbox holds the stream's records, so once the bus is back every status change's event, and the task
 * hand-back's, is delivered exactly once (README "Events and alerts": at-least-once delivery, deduplicated by
 * the deterministic event id, so exactly once in the end state).
 */
@Tag("contract")
class EventBusOutageTest {

    /** Fails every PutEvents call before it leaves the client while {@code down}. */
    static final class Outage implements ExecutionInterceptor {
        volatile boolean down;
        final AtomicInteger failed = new AtomicInteger();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (down && context.request() instanceof PutEventsRequest) {
                failed.incrementAndGet();
                throw SdkClientException.create("Unable to execute HTTP request: Connect to events endpoint failed");
            }
        }
    }

    @Test
    void busDownDuringManyStatusChanges_thenBack_deliversEveryEventExactlyOnce() throws Exception {
        Outage outage = new Outage();
        // Self-preservation would hold back two deaths in a five-agent team; this test wants them.
        try (TestStack stack = TestStack.builder().busInterceptor(outage)
                .parameter("SelfPreservationMinAlive", "100000").build()) {
            List<String> agents = List.of("o-0", "o-1", "o-2", "o-3", "o-4");
            for (String a : agents) {
                ok(stack.ready(a));
            }
            ok(stack.createTask("ot-1"));
            ok(stack.task("claim", "ot-1", "{\"agentId\":\"o-0\"}"));
            stack.pump.drain();
            int onBusBefore = stack.bus.delivered().size();
            assertTrue(onBusBefore >= 6, "joins and the claim were delivered while the bus was up");

            outage.down = true;
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.heartbeat("o-1", "{\"status\":\"working\"}"));
            ok(stack.agent("leave", "o-2", "{\"reason\":\"done\"}"));
            ok(stack.agent("fail", "o-0", "{\"reason\":\"process exited 137\"}"));
            stack.clock.advance(Duration.ofSeconds(61));
            ok(stack.heartbeat("o-1", "{}"));
            stack.sweep();
            stack.clock.advance(Duration.ofSeconds(15));
            ok(stack.heartbeat("o-1", "{\"status\":\"ready\"}"));
            List<String> dead = stack.sweep();
            assertEquals(Set.of("acme/o-3", "acme/o-4"), Set.copyOf(dead));
            assertEquals(0, stack.pump.drain(), "no record gets past a bus that is down");

            assertTrue(outage.failed.get() > 0, "the publisher tried");
            assertEquals(onBusBefore, stack.bus.delivered().size(), "nothing reached the bus");
            // The API does not depend on the bus: the newest change shows in the history at once.
            assertEquals("dead", stack.transitions("o-3", 1).get(0).get("to").asText());
            assertEquals("offline", stack.transitions("o-2", 1).get(0).get("to").asText());

            outage.down = false;
            assertTrue(stack.pump.drain() > 0);
            assertEquals(0, stack.pump.drain());

            Set<String> expected = new HashSet<>();
            for (String a : agents) {
                for (JsonNode t : stack.transitions(a, 100)) {
                    expected.add(TestStack.TEAM + "/" + a + "/status/" + t.get("seq").asLong());
                }
            }
            Map<String, Long> status = stack.bus.delivered().stream().map(d -> d.event().get("detail"))
                    .filter(d -> d.has("agentId") && agents.contains(d.get("agentId").asText()))
                    .filter(d -> d.get("eventId").asText().contains("/status/"))
                    .collect(Collectors.groupingBy(d -> d.get("eventId").asText(), Collectors.counting()));
            assertEquals(expected, status.keySet(), "every status change's event is on the bus");
            assertTrue(status.values().stream().allMatch(n -> n == 1), "each exactly once: " + status);
            // 5 joins and the claim before; 6 changes during the outage; then the 3 deaths, delivered at last,
            // start their revive flows (the agents have a host), whose first step moves them to restarting.
            assertEquals(5 + 1 + 6 + 3, expected.size(), expected::toString);
            for (String revived : List.of("o-0", "o-3", "o-4")) {
                assertEquals("restarting", stack.transitions(revived, 1).get(0).get("to").asText());
            }

            List<JsonNode> reassigned = stack.bus.delivered().stream().map(d -> d.event())
                    .filter(e -> "TasksReassigned".equals(e.get("detail-type").asText())).toList();
            assertEquals(1, reassigned.size(), reassigned::toString);
            assertEquals("o-0", reassigned.get(0).get("detail").get("fromAgentId").asText());
            assertEquals("pending", stack.item("TEAM#" + TestStack.TEAM, "TASK#ot-1").get("status").s());

            Map<String, Long> all = stack.bus.delivered().stream()
                    .collect(Collectors.groupingBy(d -> d.event().get("detail").get("eventId").asText(),
                            Collectors.counting()));
            assertTrue(all.values().stream().allMatch(n -> n == 1), "no event of any kind twice: " + all);
            TestStack.Reply log = stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("limit", "100"), null);
            Set<String> logged = new HashSet<>();
            log.body().get("events").forEach(e -> logged.add(e.get("eventId").asText()));
            assertTrue(logged.containsAll(all.keySet()), "the events route lists every delivered event");
            System.out.printf("EventBusOutageTest: %d PutEvents calls failed during the outage; %d events delivered"
                    + " after it, each once%n", outage.failed.get(), stack.bus.delivered().size() - onBusBefore);
        }
    }
}
