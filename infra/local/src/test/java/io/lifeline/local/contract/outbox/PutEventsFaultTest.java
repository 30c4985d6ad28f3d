package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import io.lifeline.aws.EventBridgePublisher;
import io.lifeline.app.EventCatalogue;
import io.lifeline.app.LifelineEvent;
import io.lifeline.local.aws.LocalClients;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequest;

/**
 * PutEvents failing entry by entry, as the real service sometimes does: the outbox retries what failed, hands
 * a record back to the stream when its events could not be put, and in the end every event is on the bus
 * exactly once. Counted by the eventId inside each accepted event's detail.
 */
@Tag("contract")
class PutEventsFaultTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @AfterEach
    void acceptAgain() {
        stack.bus.refuseWhen(entry -> false);
    }

    /** Refuses every second entry it is asked about, counting both. */
    private static final class EverySecond implements Predicate<JsonNode> {
        final AtomicInteger seen = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public boolean test(JsonNode entry) {
            boolean refuse = seen.getAndIncrement() % 2 == 1;
            if (refuse) {
                refused.incrementAndGet();
            }
            return refuse;
        }
    }

    private static String eventIdOf(JsonNode putEventsEntry) {
        try {
            return Json.parse(putEventsEntry.path("Detail").asText()).path("eventId").asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** How often each event id of {@code agents} reached the bus. */
    private static Map<String, Long> onBus(TestStack s, Set<String> agents) {
        return s.bus.delivered().stream().map(d -> d.event().get("detail"))
                .filter(d -> agents.contains(d.path("agentId").asText()))
                .collect(Collectors.groupingBy(d -> d.get("eventId").asText(), Collectors.counting()));
    }

    /** The ids the outbox must publish for the agents: one per transition the API reports. */
    private static Set<String> expectedStatusIds(TestStack s, List<String> agents) {
        Set<String> ids = new HashSet<>();
        for (String a : agents) {
            for (JsonNode t : s.transitions(a, 100)) {
                ids.add(TestStack.TEAM + "/" + a + "/status/" + t.get("seq").asLong());
            }
        }
        return ids;
    }

    /** The status event ids 1..n of an agent of team acme. */
    private static Set<String> statusIds(String agent, int n) {
        Set<String> ids = new HashSet<>();
        for (int seq = 1; seq <= n; seq++) {
            ids.add(TestStack.TEAM + "/" + agent + "/status/" + seq);
        }
        return ids;
    }

    private static Set<String> loggedIds(TestStack s) {
        TestStack.Reply r = s.send("events", s.adminKey, Map.of("team", TestStack.TEAM), Map.of("limit", "100"),
                null);
        assertEquals(200, r.status());
        Set<String> ids = new HashSet<>();
        r.body().get("events").forEach(e -> ids.add(e.get("eventId").asText()));
        return ids;
    }

    private static Map<String, Long> once(Set<String> ids) {
        return ids.stream().collect(Collectors.toMap(id -> id, id -> 1L));
    }

    /** Through the stack: stream records, publisher, bus. */
    @Nested
    class ThroughTheStack {
        @Test
        void drain_whenEverySecondEntryIsRefused_putsEveryEventOnTheBusExactlyOnce() {
            EverySecond refuse = new EverySecond();
            stack.bus.refuseWhen(refuse);
            List<String> agents = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                agents.add("half-" + i);
                ok(stack.ready("half-" + i));
            }
            stack.clock.advance(Duration.ofSeconds(1));
            for (String a : agents) {
                ok(stack.heartbeat(a, "{\"status\":\"working\"}"));
            }
            for (String a : agents.subList(0, 6)) {
                ok(stack.agent("leave", a, null));
            }
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < 12; i++) {
                expected.addAll(statusIds("half-" + i, i < 6 ? 3 : 2));
            }

            stack.pump.drain();
            assertEquals(expected, expectedStatusIds(stack, agents), "as the agents' histories tell it");

            assertEquals(once(expected), onBus(stack, Set.copyOf(agents)), "no loss, no duplicate");
            assertTrue(refuse.refused.get() >= expected.size() / 2, "half the first tries were refused: "
                    + refuse.refused.get());
            assertEquals(expected.size() + refuse.refused.get(), refuse.seen.get(),
                    "each refused entry was sent again, and only those");
            assertTrue(loggedIds(stack).containsAll(expected), "the events route lists them all");
            assertEquals(0, stack.pump.drain());
        }

        @Test
        void drain_whenTheBusRefusesEverything_holdsTheRecord_thenDeliversAllOfItExactlyOnce() {
            List<String> agents = List.of("all-0", "all-1", "all-2", "all-3", "all-4");
            for (String a : agents) {
                ok(stack.ready(a));
            }
            stack.pump.drain();
            Set<String> joined = new HashSet<>();
            agents.forEach(a -> joined.addAll(statusIds(a, 1)));
            assertEquals(once(joined), onBus(stack, Set.copyOf(agents)));
            int acceptedBefore = stack.bus.delivered().size();

            AtomicInteger asked = new AtomicInteger();
            stack.bus.refuseWhen(entry -> {
                asked.incrementAndGet();
                return true;
            });
            stack.clock.advance(Duration.ofSeconds(1));
            for (String a : agents) {
                ok(stack.heartbeat(a, "{\"status\":\"working\"}"));
            }
            assertEquals(0, stack.pump.drain(), "the first record's events could not be put: the batch stops there");
            assertTrue(asked.get() >= 5 * 6, "the publisher tried, and retried, every entry: " + asked.get());
            assertEquals(acceptedBefore, stack.bus.delivered().size());
            assertEquals(0, stack.pump.drain(), "still refused: the checkpoint did not move past the failed record");
            Set<String> logged = loggedIds(stack);
            assertTrue(logged.containsAll(joined));
            assertTrue(agents.stream().map(a -> TestStack.TEAM + "/" + a + "/status/2").noneMatch(logged::contains),
                    "nothing logged as sent that is not on the bus");

            // Records written after the failed one, while the bus still refuses.
            stack.clock.advance(Duration.ofSeconds(1));
            for (String a : agents.subList(0, 2)) {
                ok(stack.agent("leave", a, "{\"reason\":\"done\"}"));
            }

            stack.bus.refuseWhen(entry -> false);
            assertTrue(stack.pump.drain() > 0);
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                expected.addAll(statusIds("all-" + i, i < 2 ? 3 : 2));
            }
            assertEquals(expected, expectedStatusIds(stack, agents));
            assertEquals(once(expected), onBus(stack, Set.copyOf(agents)),
                    "everything, the failed record's events and those after it, exactly once");
            assertTrue(loggedIds(stack).containsAll(expected));
            assertEquals(0, stack.pump.drain());
        }

        /**
         * One record's events refused, the records after it accepted in the same call: the stream delivers the
         * failed record and those after it again, and the events already on the bus are not put there twice.
         */
        @Test
        void drain_whenOneRecordsEventIsRefused_redeliversFromThatRecord_withoutDoublingLaterEvents() {
            List<String> agents = List.of("one-0", "one-1", "one-2");
            for (String a : agents) {
                ok(stack.ready(a));
            }
            stack.pump.drain();
            stack.bus.refuseWhen(entry -> eventIdOf(entry).startsWith("acme/one-1/"));
            stack.clock.advance(Duration.ofSeconds(1));
            for (String a : agents) {
                ok(stack.heartbeat(a, "{\"status\":\"working\"}"));
            }
            stack.pump.drain();
            Map<String, Long> bus = onBus(stack, Set.copyOf(agents));
            assertEquals(1L, bus.get("acme/one-0/status/2"));
            assertEquals(null, bus.get("acme/one-1/status/2"), "refused");
            assertEquals(1L, bus.get("acme/one-2/status/2"), "sent with the same call, after the refused record");
            Set<String> logged = loggedIds(stack);
            assertTrue(logged.contains("acme/one-0/status/2"));
            assertTrue(!logged.contains("acme/one-1/status/2") && !logged.contains("acme/one-2/status/2"),
                    "the log stops at the failed record");

            stack.bus.refuseWhen(entry -> false);
            stack.pump.drain();
            Set<String> expected = new HashSet<>();
            agents.forEach(a -> expected.addAll(statusIds(a, 2)));
            assertEquals(once(expected), onBus(stack, Set.copyOf(agents)), "no duplicate of one-2's event");
            assertTrue(loggedIds(stack).containsAll(expected));
        }
    }

    /** EventBridgePublisher alone, against the local bus. */
    @Nested
    class PublisherAlone {
        /** Counts PutEvents calls and their entries. */
        private static final class PutEventsCalls implements ExecutionInterceptor {
            final List<Integer> entriesPerCall = Collections.synchronizedList(new ArrayList<>());

            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof PutEventsRequest put) {
                    entriesPerCall.add(put.entries().size());
                }
            }

            int calls() {
                return entriesPerCall.size();
            }
        }

        private static EventBridgeClient client(ExecutionInterceptor interceptor) {
            return LocalClients.build(EventBridgeClient.builder()
                    .overrideConfiguration(c -> c.addExecutionInterceptor(interceptor)), stack.bus.endpoint());
        }

        /** {@code n} real catalogue events of team {@code team}: deaths by sweep of agents u-0, u-1... */
        private static List<LifelineEvent> deaths(String team, int n) {
            Instant at = Instant.parse("2026-03-01T12:00:00Z");
            List<LifelineEvent> events = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                events.add(EventCatalogue.of(new StreamChanges.StatusChanged(team, "u-" + i, null, "host-1",
                        new Transition(7, AgentStatus.READY, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED,
                                "no heartbeat for 90 s", at.plusSeconds(i)), null)));
            }
            return events;
        }

        private static Map<String, Long> onBusOfTeam(String team) {
            return stack.bus.delivered().stream().map(d -> d.event().get("detail"))
                    .filter(d -> team.equals(d.path("team").asText()))
                    .collect(Collectors.groupingBy(d -> d.get("eventId").asText(), Collectors.counting()));
        }

        private static Set<String> ids(List<LifelineEvent> events) {
            return events.stream().map(LifelineEvent::eventId).collect(Collectors.toSet());
        }

        @Test
        void publish_25Events_takes3Calls_ofAtMost10_andRemembersWhatWasSent() {
            PutEventsCalls calls = new PutEventsCalls();
            try (EventBridgeClient client = client(calls)) {
                EventBridgePublisher publisher = new EventBridgePublisher(client, "bus-unit",
                        List.of(Duration.ofMillis(1), Duration.ofMillis(1)));
                List<LifelineEvent> events = deaths("unit-25", 25);
                assertEquals(Set.of(), publisher.publish(events));
                assertEquals(List.of(10, 10, 5), calls.entriesPerCall);
                assertEquals(once(ids(events)), onBusOfTeam("unit-25"));

                assertEquals(Set.of(), publisher.publish(events), "already sent");
                assertEquals(3, calls.calls(), "a replayed batch puts nothing on the bus twice");
            }
            JsonNode e = stack.bus.delivered().stream().filter(d -> d.event().get("detail").path("team").asText()
                    .equals("unit-25")).findFirst().orElseThrow().event();
            assertEquals("lifeline", e.get("source").asText());
            assertEquals("AgentStatusChanged", e.get("detail-type").asText());
            assertEquals("2026-03-01T12:00:00Z", e.get("time").asText(), "the event's time is the change's");
        }

        @Test
        void publish_whenEverySecondEntryIsRefused_retriesOnlyTheFailedEntries_untilAllAreSent() {
            EverySecond refuse = new EverySecond();
            stack.bus.refuseWhen(refuse);
            PutEventsCalls calls = new PutEventsCalls();
            try (EventBridgeClient client = client(calls)) {
                EventBridgePublisher publisher = new EventBridgePublisher(client, "bus-unit",
                        Collections.nCopies(5, Duration.ofMillis(1)));
                List<LifelineEvent> events = deaths("unit-half", 25);
                assertEquals(Set.of(), publisher.publish(events));
                // 25 -> 12 refused -> 6 -> 3 -> 2 -> 1 -> 0: each retry sends only what failed, 10 a call at most.
                assertEquals(List.of(10, 10, 5, 10, 2, 6, 3, 2, 1), calls.entriesPerCall);
                assertEquals(25 + 12 + 6 + 3 + 2 + 1, refuse.seen.get());
                assertEquals(once(ids(events)), onBusOfTeam("unit-half"));
            }
        }

        @Test
        void publish_whenTheBusRefusesEverything_answersEveryUnsentId_afterTheLastBackoff() {
            stack.bus.refuseWhen(entry -> true);
            PutEventsCalls calls = new PutEventsCalls();
            try (EventBridgeClient client = client(calls)) {
                EventBridgePublisher publisher = new EventBridgePublisher(client, "bus-unit",
                        List.of(Duration.ofMillis(1), Duration.ofMillis(2)));
                List<LifelineEvent> events = deaths("unit-none", 25);
                assertEquals(ids(events), publisher.publish(events));
                assertEquals(List.of(10, 10, 5, 10, 10, 5, 10, 10, 5), calls.entriesPerCall,
                        "the first try and one per backoff step");
                assertEquals(Map.of(), onBusOfTeam("unit-none"));

                stack.bus.refuseWhen(entry -> false);
                assertEquals(Set.of(), publisher.publish(events), "unsent ids are not remembered as sent");
                assertEquals(once(ids(events)), onBusOfTeam("unit-none"));
            }
        }
    }
}
