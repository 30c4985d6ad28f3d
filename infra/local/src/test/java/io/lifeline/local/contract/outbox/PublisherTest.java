package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.stack.SharedDynamo;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The outbox from real stream records: changes are driven through the API, then the stream pump feeds the
 * publisher with the table's stream. Each event is counted where it lands, on the bus (by the eventId in its
 * detail) and in GET /v1/teams/{team}/events.
 */
@Tag("contract")
public class PublisherTest {
    static TestStack stack;
    /** A stack of its own for sweeps, which look at every agent of the table. */
    static TestStack sweepStack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        sweepStack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
        sweepStack.close();
    }

    /** The details of the events of {@code type} the bus accepted, each as often as it was accepted. */
    public static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type)).map(d -> d.event().get("detail"))
                .toList();
    }

    public static List<JsonNode> onBus(TestStack s, String type, String field, String value) {
        return onBus(s, type).stream().filter(d -> value.equals(d.path(field).asText(null))).toList();
    }

    static Map<String, Long> countById(List<JsonNode> details) {
        return details.stream().collect(Collectors.groupingBy(d -> d.get("eventId").asText(), Collectors.counting()));
    }

    /** GET /v1/teams/{team}/events with {@code query}, as the team's admin. */
    public static List<JsonNode> logged(TestStack s, String team, String key, Map<String, String> query) {
        TestStack.Reply r = s.send("events", key, Map.of("team", team), query, null);
        assertEquals(200, r.status(), () -> r.body().toString());
        List<JsonNode> out = new ArrayList<>();
        r.body().get("events").forEach(out::add);
        assertEquals(out.size(), r.body().get("count").asInt());
        return out;
    }

    public static List<JsonNode> logged(TestStack s, Map<String, String> query) {
        return logged(s, TestStack.TEAM, s.adminKey, query);
    }

    static List<JsonNode> loggedFor(TestStack s, String type, String field, String value) {
        return logged(s, Map.of("type", type, "limit", "100")).stream()
                .filter(e -> value.equals(e.get("detail").path(field).asText(null))).toList();
    }

    /** AgentStatusChanged. */
    @Nested
    class StatusChanges {
        @Test
        void statusChanges_eachBecomesExactlyOneAgentStatusChanged_withTheTransitionsFields() {
            String a = "pub-a";
            ok(stack.register(a));
            List<Instant> times = new ArrayList<>();
            stack.clock.advance(Duration.ofSeconds(1));
            times.add(stack.clock.instant());
            ok(stack.agent("join", a, null));
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.heartbeat(a, "{}"));
            stack.clock.advance(Duration.ofSeconds(1));
            times.add(stack.clock.instant());
            ok(stack.heartbeat(a, "{\"status\":\"working\"}"));
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.heartbeat(a, "{\"status\":\"working\",\"metadata\":{\"step\":2}}"));
            stack.clock.advance(Duration.ofSeconds(1));
            times.add(stack.clock.instant());
            ok(stack.heartbeat(a, "{\"status\":\"idle\"}"));
            stack.clock.advance(Duration.ofSeconds(1));
            times.add(stack.clock.instant());
            ok(stack.agent("leave", a, "{\"reason\":\"shift over\"}"));

            assertTrue(stack.pump.drain() > 0);

            List<JsonNode> bus = onBus(stack, "AgentStatusChanged", "agentId", a);
            Map<String, Long> counts = countById(bus);
            List<String> expectedIds = List.of("acme/pub-a/status/1", "acme/pub-a/status/2", "acme/pub-a/status/3",
                    "acme/pub-a/status/4");
            assertEquals(Set.copyOf(expectedIds), counts.keySet(), "one event per status change, none other");
            counts.forEach((id, n) -> assertEquals(1L, n, id + " reached the bus once"));

            // The same changes as the agent's history tells them (oldest first there).
            List<JsonNode> history = new ArrayList<>(stack.transitions(a, 10));
            Collections.reverse(history);
            assertEquals(4, history.size());
            Map<String, JsonNode> byId = bus.stream().collect(Collectors.toMap(d -> d.get("eventId").asText(),
                    Function.identity()));
            String[][] expected = {
                {"offline", "ready", "join"},
                {"ready", "working", "report_working"},
                {"working", "ready", "report_ready"},
                {"ready", "offline", "leave"},
            };
            for (int i = 0; i < 4; i++) {
                JsonNode d = byId.get(expectedIds.get(i));
                assertEquals("acme", d.get("team").asText());
                assertEquals(a, d.get("agentId").asText());
                assertEquals(expected[i][0], d.get("from").asText(), expectedIds.get(i));
                assertEquals(expected[i][1], d.get("to").asText(), expectedIds.get(i));
                assertEquals(expected[i][2], d.get("trigger").asText(), expectedIds.get(i));
                assertEquals(i + 1, d.get("seq").asLong());
                assertEquals(times.get(i), Instant.parse(d.get("at").asText()), expectedIds.get(i));
                JsonNode h = history.get(i);
                assertEquals(h.get("seq").asLong(), d.get("seq").asLong());
                assertEquals(h.get("from").asText(), d.get("from").asText());
                assertEquals(h.get("to").asText(), d.get("to").asText());
                assertEquals(h.get("trigger").asText(), d.get("trigger").asText());
            }
            assertEquals("shift over", byId.get("acme/pub-a/status/4").get("reason").asText());
            assertEquals("agent joined", byId.get("acme/pub-a/status/1").get("reason").asText());
            assertEquals("Agent pub-a", byId.get("acme/pub-a/status/1").get("name").asText());
            assertEquals("host-1", byId.get("acme/pub-a/status/1").get("hostId").asText());

            List<JsonNode> log = loggedFor(stack, "AgentStatusChanged", "agentId", a);
            assertEquals(List.of("acme/pub-a/status/4", "acme/pub-a/status/3", "acme/pub-a/status/2",
                    "acme/pub-a/status/1"), log.stream().map(e -> e.get("eventId").asText()).toList(),
                    "the events route has each once, newest first");
            for (JsonNode e : log) {
                assertEquals("AgentStatusChanged", e.get("type").asText());
                assertEquals(byId.get(e.get("eventId").asText()), e.get("detail"), "the log keeps the detail as sent");
            }

            assertEquals(0, stack.pump.drain(), "caught up: nothing is delivered twice");
            assertEquals(4, onBus(stack, "AgentStatusChanged", "agentId", a).size());
        }

        @Test
        void heartbeat_thatChangesNoStatus_producesNoEvent() {
            String a = "pub-quiet";
            ok(stack.ready(a));
            stack.pump.drain();
            int before = stack.bus.delivered().size();
            int loggedBefore = logged(stack, Map.of("limit", "100")).size();

            stack.clock.advance(Duration.ofSeconds(5));
            ok(stack.heartbeat(a, "{}"));
            stack.clock.advance(Duration.ofSeconds(5));
            ok(stack.heartbeat(a, "{\"status\":\"ready\"}"));
            stack.clock.advance(Duration.ofSeconds(5));
            ok(stack.heartbeat(a, "{\"status\":\"idle\",\"metadata\":{\"tokens\":12},\"checkpoint\":{\"step\":3}}"));

            assertTrue(stack.pump.drain() > 0, "the heartbeats' writes were on the stream");
            assertEquals(before, stack.bus.delivered().size(), () -> "new events: "
                    + stack.bus.delivered().subList(before, stack.bus.delivered().size()));
            assertEquals(loggedBefore, logged(stack, Map.of("limit", "100")).size());
        }

        @Test
        void registration_producesNoEvent() {
            stack.pump.drain();
            int before = stack.bus.delivered().size();
            ok(stack.register("pub-new"));
            assertTrue(stack.pump.drain() > 0, "the registration was on the stream");
            assertEquals(before, stack.bus.delivered().size(), () -> "new events: "
                    + stack.bus.delivered().subList(before, stack.bus.delivered().size()));
            assertTrue(onBus(stack, "AgentStatusChanged", "agentId", "pub-new").isEmpty());
        }
    }

    /** The other event types, each from its cause. */
    @Nested
    class OtherEventTypes {
        private static TestStack.Reply call(String route, String key, String team, String agentId, String body) {
            Map<String, String> path = new HashMap<>(Map.of("team", team));
            if (agentId != null) {
                path.put("agentId", agentId);
            }
            return stack.send(route, key, path, null, body);
        }

        private static void readyIn(String team, String key, String agentId) {
            ok(call("register", key, team, null, "{\"agentId\":\"" + agentId + "\",\"name\":\"Agent " + agentId
                    + "\",\"role\":\"worker\",\"hostId\":\"host-1\"}"));
            ok(call("join", key, team, agentId, null));
        }

        @Test
        void death_whileHoldingATask_producesTasksReassigned_andLeaderNotified_onlyOnceTheLeaderIsSet() {
            String team = "pub-lead-team";
            String key = stack.key(team, Scope.ADMIN);
            readyIn(team, key, "lead");
            readyIn(team, key, "early");
            readyIn(team, key, "worker");

            // Before the team has a leader: a death tells no one's inbox.
            stack.clock.advance(Duration.ofSeconds(1));
            ok(call("fail", key, team, "early", "{\"reason\":\"oom\"}"));
            stack.pump.drain();
            assertTrue(onBus(stack, "LeaderNotified", "team", team).isEmpty());
            assertTrue(onBus(stack, "TasksReassigned", "team", team).isEmpty(), "it held no task");
            assertEquals(1, onBus(stack, "AgentStatusChanged", "agentId", "early").stream()
                    .filter(d -> d.get("to").asText().equals("dead")).count());

            JsonNode settings = ok(stack.send("put-settings", key, Map.of("team", team), null,
                    "{\"leaderAgentId\":\"lead\"}")).body();
            assertEquals("lead", settings.get("leaderAgentId").asText());
            ok(stack.send("create-task", key, Map.of("team", team), null, "{\"taskId\":\"job-1\",\"title\":\"Job\"}"));
            ok(stack.send("claim", key, Map.of("team", team, "taskId", "job-1"), null, "{\"agentId\":\"worker\"}"));
            stack.clock.advance(Duration.ofSeconds(1));
            Instant diedAt = stack.clock.instant();
            ok(call("fail", key, team, "worker", "{\"reason\":\"segfault\"}"));

            assertTrue(stack.pump.drain() > 0);
            stack.pump.drain();

            List<JsonNode> deaths = onBus(stack, "AgentStatusChanged", "agentId", "worker").stream()
                    .filter(d -> d.get("to").asText().equals("dead")).toList();
            assertEquals(1, deaths.size());
            assertEquals("working", deaths.get(0).get("from").asText());
            assertEquals("reported_failure", deaths.get(0).get("trigger").asText());
            assertEquals("failure reported: segfault", deaths.get(0).get("reason").asText());

            List<JsonNode> reassigned = onBus(stack, "TasksReassigned", "team", team);
            assertEquals(1, reassigned.size(), reassigned::toString);
            assertEquals("worker", reassigned.get(0).get("fromAgentId").asText());
            assertEquals(List.of("job-1"), List.of(reassigned.get(0).get("taskIds").get(0).asText()));
            assertEquals(1, reassigned.get(0).get("taskIds").size());
            assertEquals(diedAt, Instant.parse(reassigned.get(0).get("at").asText()));

            List<JsonNode> notices = onBus(stack, "LeaderNotified", "team", team);
            assertEquals(1, notices.size(), notices::toString);
            JsonNode n = notices.get(0);
            assertEquals("lead", n.get("leaderAgentId").asText());
            assertEquals("worker", n.get("aboutAgentId").asText());
            assertEquals("job-1", n.get("tasksHandedBack").get(0).asText());
            assertTrue(n.get("message").asText().contains("segfault"), n.toString());

            // Each once in the team's log too, and in no other team's.
            List<JsonNode> log = logged(stack, team, key, Map.of("limit", "100"));
            Map<String, Long> types = log.stream().collect(Collectors.groupingBy(e -> e.get("type").asText(),
                    Collectors.counting()));
            assertEquals(1L, types.get("TasksReassigned"));
            assertEquals(1L, types.get("LeaderNotified"));
            assertTrue(loggedFor(stack, "LeaderNotified", "team", team).isEmpty(), "team acme's log has none of it");
            assertEquals(0, stack.pump.drain());
        }

        @Test
        void errors_contextLimit_producesSessionRotationRequested_otherErrorsDoNot() {
            String a = "pub-ctx";
            ok(stack.ready(a));
            stack.clock.advance(Duration.ofSeconds(1));
            Instant first = stack.clock.instant();
            JsonNode r = ok(stack.agent("errors", a, "{\"message\":\"prompt is too long: context window exceeded\"}"))
                    .body();
            assertEquals("rotate_session", r.get("action").asText());
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.agent("errors", a, "{\"message\":\"429 rate limit\"}"));
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.agent("errors", a, "{\"message\":\"NullPointerException in tool\"}"));
            stack.pump.drain();

            List<JsonNode> rotations = onBus(stack, "SessionRotationRequested", "agentId", a);
            assertEquals(1, rotations.size(), rotations::toString);
            assertEquals("acme/pub-ctx/rotation/1", rotations.get(0).get("eventId").asText());
            assertEquals(1, rotations.get(0).get("rotation").asLong());
            assertEquals(first, Instant.parse(rotations.get(0).get("at").asText()));

            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.agent("errors", a, "{\"message\":\"token limit reached\"}"));
            stack.pump.drain();
            assertEquals(Map.of("acme/pub-ctx/rotation/1", 1L, "acme/pub-ctx/rotation/2", 1L),
                    countById(onBus(stack, "SessionRotationRequested", "agentId", a)));
            assertEquals(2, loggedFor(stack, "SessionRotationRequested", "agentId", a).size());
        }

        @Test
        void sweep_whenMostAgentsGoSilent_producesOneMassStaleSuspected_andMarksNoneDead() {
            TestStack s = sweepStack;
            List<String> agents = List.of("ms-1", "ms-2", "ms-3", "ms-4", "ms-5");
            for (String a : agents) {
                ok(s.ready(a));
            }
            s.clock.advance(Duration.ofSeconds(30));
            ok(s.heartbeat("ms-1", "{}"));
            s.clock.advance(Duration.ofSeconds(31));
            Instant heldAt = s.clock.instant();
            assertEquals(List.of(), s.sweep(), "held back: 4 of 5 alive agents are stale at once");
            s.pump.drain();
            s.clock.advance(Duration.ofSeconds(15));
            assertEquals(List.of(), s.sweep());
            s.clock.advance(Duration.ofSeconds(15));
            assertEquals(List.of(), s.sweep());
            s.pump.drain();

            List<JsonNode> held = onBus(s, "MassStaleSuspected");
            assertEquals(1, held.size(), "one event while the condition lasts: " + held);
            JsonNode d = held.get(0);
            assertEquals("acme", d.get("team").asText());
            assertEquals(5, d.get("aliveAgents").asInt());
            assertEquals(4, d.get("staleAgents").asInt());
            assertEquals(0.5, d.get("threshold").asDouble());
            assertEquals(heldAt, Instant.parse(d.get("at").asText()));
            assertEquals("acme/mass-stale/" + heldAt.toEpochMilli(), d.get("eventId").asText());
            assertTrue(onBus(s, "AgentStatusChanged").stream().noneMatch(e -> e.get("to").asText().equals("dead")),
                    "no agent was marked dead while held");
            assertEquals(1, logged(s, Map.of("type", "MassStaleSuspected")).size());
        }
    }

    /** The events route. */
    @Nested
    class EventsRoute {
        @Test
        void eventsRoute_listsNewestFirst_filtersByType_respectsLimit_andIsTeamScoped() {
            String a = "pub-route";
            ok(stack.register(a));
            stack.clock.advance(Duration.ofSeconds(2));
            ok(stack.agent("join", a, null));
            for (String body : List.of("{\"status\":\"working\"}", "{\"status\":\"ready\"}")) {
                stack.clock.advance(Duration.ofSeconds(2));
                ok(stack.heartbeat(a, body));
            }
            stack.clock.advance(Duration.ofSeconds(2));
            ok(stack.agent("errors", a, "{\"message\":\"context length exceeded\"}"));
            stack.pump.drain();

            List<JsonNode> all = logged(stack, Map.of("limit", "100"));
            assertTrue(all.size() >= 4, all::toString);
            for (int i = 1; i < all.size(); i++) {
                Instant newer = Instant.parse(all.get(i - 1).get("at").asText());
                Instant older = Instant.parse(all.get(i).get("at").asText());
                assertFalse(older.isAfter(newer), "newest first: " + all.get(i - 1) + " before " + all.get(i));
            }
            List<String> mine = all.stream().filter(e -> a.equals(e.get("detail").path("agentId").asText(null)))
                    .map(e -> e.get("eventId").asText()).toList();
            assertEquals(List.of("acme/pub-route/rotation/1", "acme/pub-route/status/3", "acme/pub-route/status/2",
                    "acme/pub-route/status/1"), mine);
            assertEquals(Set.copyOf(all.stream().map(e -> e.get("eventId").asText()).toList()).size(), all.size(),
                    "no event twice");

            List<JsonNode> rotations = logged(stack, Map.of("type", "SessionRotationRequested", "limit", "100"));
            assertFalse(rotations.isEmpty());
            assertTrue(rotations.stream().allMatch(e -> e.get("type").asText().equals("SessionRotationRequested")));
            assertEquals(all.stream().filter(e -> e.get("type").asText().equals("SessionRotationRequested"))
                    .map(e -> e.get("eventId").asText()).toList(),
                    rotations.stream().map(e -> e.get("eventId").asText()).toList());

            List<JsonNode> two = logged(stack, Map.of("limit", "2"));
            assertEquals(all.subList(0, 2), two, "limit takes the newest");
            List<JsonNode> oneStatus = logged(stack, Map.of("type", "AgentStatusChanged", "limit", "1"));
            assertEquals(1, oneStatus.size());
            assertEquals("acme/pub-route/status/3", oneStatus.get(0).get("eventId").asText());
            assertEquals(400, stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM), Map.of("limit", "0"),
                    null).status());

            String otherKey = stack.key("pub-other", Scope.ADMIN);
            assertEquals(403, stack.send("events", otherKey, Map.of("team", TestStack.TEAM), null, null).status(),
                    "another team's key does not read acme's events");
            assertTrue(logged(stack, "pub-other", otherKey, Map.of("limit", "100")).stream()
                    .noneMatch(e -> e.get("detail").get("team").asText().equals(TestStack.TEAM)));
            String readKey = stack.key(TestStack.TEAM, Scope.READ);
            assertEquals(all.subList(0, 2), logged(stack, TestStack.TEAM, readKey, Map.of("limit", "2")),
                    "a read key of the team may read them");
        }

        @Test
        void eventsRoute_sinceReadsOnlyThatWindow_andAgentIdReadsTheEventsAboutThatAgent() {
            String a = "pub-window";
            String b = "pub-neighbour";
            ok(stack.register(a));
            ok(stack.register(b));
            ok(stack.agent("join", a, null));
            ok(stack.agent("join", b, null));
            ok(stack.createTask("pub-window-task"));
            ok(stack.task("claim", "pub-window-task", "{\"agentId\":\"" + a + "\"}"));
            stack.pump.drain();
            stack.clock.advance(Duration.ofMinutes(5));
            Instant since = stack.clock.instant();
            ok(stack.agent("leave", a, "{\"reason\":\"done for today\"}"));
            ok(stack.agent("leave", b, null));
            stack.pump.drain();

            List<JsonNode> window = logged(stack, Map.of("since", since.toString(), "limit", "100"));
            assertTrue(window.stream().allMatch(e -> !Instant.parse(e.get("at").asText()).isBefore(since)),
                    window::toString);
            assertTrue(ids(window).containsAll(List.of("acme/pub-window/status/3", "acme/pub-neighbour/status/2")),
                    window::toString);
            assertFalse(ids(window).contains("acme/pub-window/status/1"), "before the window");
            // until bounds the other end (inclusive): the window before the leaves holds the joins, not the leaves.
            List<String> before = ids(logged(stack, Map.of("agentId", a, "until", since.minusMillis(1).toString())));
            assertTrue(before.contains("acme/pub-window/status/1") && !before.contains("acme/pub-window/status/3"),
                    before::toString);
            Instant leftAt = since;
            assertEquals(List.of("acme/pub-window/status/3"), ids(logged(stack, Map.of("agentId", a, "since",
                    leftAt.toString(), "until", leftAt.toString(), "type", "AgentStatusChanged"))), "both ends inclusive");

            // a's own events: its status changes and the task handed back from it on leave, nobody else's.
            List<JsonNode> mine = logged(stack, Map.of("agentId", a, "limit", "100"));
            assertEquals(List.of("AgentStatusChanged", "AgentStatusChanged", "AgentStatusChanged", "TasksReassigned"),
                    mine.stream().map(e -> e.get("type").asText()).sorted().toList(), mine::toString);
            assertEquals(List.of("acme/pub-window/status/3", "acme/pub-window/status/2", "acme/pub-window/status/1"),
                    ids(mine).stream().filter(id -> id.contains("/status/")).toList());
            assertTrue(mine.stream().filter(e -> e.get("type").asText().equals("TasksReassigned"))
                    .allMatch(e -> a.equals(e.get("detail").get("fromAgentId").asText())), mine::toString);
            assertEquals(List.of("acme/pub-window/status/3"),
                    ids(logged(stack, Map.of("agentId", a, "since", since.toString(), "type", "AgentStatusChanged"))));
            assertEquals(List.of(), logged(stack, Map.of("agentId", "pub-nobody")));

            TestStack.Reply badSince = stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("since", "an hour ago"), null);
            assertEquals(400, badSince.status());
            assertEquals("INVALID_QUERY", badSince.code());
            assertEquals(400, stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("until", "now"), null).status());
            // A window that ends before it starts, and bounds the log's 13-digit millisecond keys cannot hold.
            for (Map<String, String> query : List.of(
                    Map.of("since", "2026-03-02T00:00:00Z", "until", "2026-03-01T00:00:00Z"),
                    Map.of("since", "2300-01-01T00:00:00Z"), Map.of("until", "+1000000000-01-01T00:00:00Z"),
                    Map.of("since", "1969-12-31T23:59:59Z"), Map.of("since", "-999999999-01-01T00:00:00Z"))) {
                TestStack.Reply bad = stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM), query, null);
                assertEquals(400, bad.status(), query + ": " + bad.body());
                assertEquals("INVALID_QUERY", bad.code(), query::toString);
            }
            TestStack.Reply badAgent = stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("agentId", "no spaces"), null);
            assertEquals(400, badAgent.status());
            assertEquals("INVALID_ID", badAgent.code());
        }

        static List<String> ids(List<JsonNode> events) {
            return events.stream().map(e -> e.get("eventId").asText()).toList();
        }
    }

    /** Deterministic ids. */
    @Nested
    class DeterministicIds {
        /**
         * The same stream records through a fresh container (a new publisher, which remembers no sent ids in memory,
         * from TRIM_HORIZON) put nothing on the bus again: the event log, written right after each send, says what was
         * sent (a replay never re-sends an alert), and the log gains none.
         * On a stack of its own, whose leader is set before anything happens (see the report: a replayed death
         * reads the team's current leader).
         */
        @Test
        void replay_ofTheSameRecords_byAFreshPublisher_sendsNoEventAgain() throws Exception {
            try (TestStack s = TestStack.start()) {
                ok(s.send("put-settings", s.adminKey, Map.of("team", TestStack.TEAM), null,
                        "{\"leaderAgentId\":\"boss\"}"));
                ok(s.ready("boss"));
                ok(s.ready("r-1"));
                ok(s.ready("r-2"));
                ok(s.createTask("r-task"));
                ok(s.task("claim", "r-task", "{\"agentId\":\"r-1\"}"));
                s.clock.advance(Duration.ofSeconds(3));
                ok(s.agent("fail", "r-1", "{\"reason\":\"crash\"}"));
                ok(s.agent("errors", "r-2", "{\"message\":\"context window full\"}"));
                ok(s.heartbeat("r-2", "{\"status\":\"working\"}"));
                ok(s.agent("leave", "r-2", null));
                s.pump.drain();
                List<String> first = s.bus.delivered().stream()
                        .map(d -> d.event().get("detail").get("eventId").asText()).toList();
                Set<String> types = s.bus.delivered().stream().map(LocalEventBus.Delivered::detailType)
                        .collect(Collectors.toSet());
                // r-1 has a host, so its death also starts the revive flow: a restart request goes out too.
                assertEquals(Set.of("AgentStatusChanged", "TasksReassigned", "LeaderNotified",
                        "SessionRotationRequested", "AgentRestartRequested"), types);
                Map<String, Long> firstCounts = first.stream().collect(Collectors.groupingBy(x -> x,
                        Collectors.counting()));
                firstCounts.forEach((id, n) -> assertEquals(1L, n, id + " once before the replay"));
                List<JsonNode> logBefore = logged(s, Map.of("limit", "100"));
                assertEquals(first.size(), logBefore.size());

                try (DynamoDbStreamsClient streams = SharedDynamo.streams()) {
                    StreamPump replay = new StreamPump(streams, s.streamArn(), StreamPump.consumers(s.freshHost()), null);
                    assertTrue(replay.drain() > 0);
                }
                List<String> all = s.bus.delivered().stream()
                        .map(d -> d.event().get("detail").get("eventId").asText()).toList();
                List<String> again = all.subList(first.size(), all.size());
                assertEquals(List.of(), again, "the replay sent nothing the event log holds");
                assertEquals(logBefore, logged(s, Map.of("limit", "100")), "the log dropped the replayed events");
                // The replayed death started a revive execution that found the death already handled: it records
                // that it did nothing, which is a write but no event.
                s.pump.drain();
                assertEquals(all.size(), s.bus.delivered().size(), "nothing new reached the bus");
            }
        }
    }
}
