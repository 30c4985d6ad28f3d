package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.contract.hosts.HostLeaseTest;
import io.lifeline.local.stack.ReadMeter;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agent list a page at a time (docs/api.md, "List agents"): {@code limit} and {@code cursor}, the status filter
 * through the roster's status index, {@code changedSince}, and what a page reads, counted from the read units the store
 * reports ({@link ReadMeter}), not timed. Each test has teams of its own.
 */
@Tag("contract")
class AgentPagingContractTest {
    static final ReadMeter meter = new ReadMeter();
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(meter).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void firstPage_thenTheCursorWalk_readsEveryAgentOnce_inIdOrder() {
        Team t = new Team("paging-walk", 25);

        TestStack.Reply first = ok(t.list(Map.of("limit", "10")));
        assertEquals(10, first.body().get("count").asInt());
        assertEquals(t.ids.subList(0, 10), ids(first.body()));
        assertNotNull(first.text("nextCursor"), "more agents follow");

        List<JsonNode> pages = t.walk(Map.of("limit", "10"));
        assertEquals(List.of(10, 10, 5), pages.stream().map(p -> p.get("count").asInt()).toList());
        List<String> all = new ArrayList<>();
        pages.forEach(p -> all.addAll(ids(p)));
        assertEquals(t.ids, all, "every agent once, in id order");
        assertFalse(pages.get(2).has("nextCursor"), "the last page has no cursor");
    }

    @Test
    void withoutLimit_thePageIsTheDefault100() {
        Team t = new Team("paging-default", 105);
        TestStack.Reply first = ok(t.list(Map.of()));
        assertEquals(100, first.body().get("count").asInt());
        TestStack.Reply rest = ok(t.list(Map.of("cursor", first.text("nextCursor"))));
        assertEquals(t.ids.subList(100, 105), ids(rest.body()));
        assertFalse(rest.body().has("nextCursor"));
    }

    @Test
    void statusFilter_pagesOnlyAgentsInThatStatus_newestInItFirst_andReadsOnlyThem() {
        Team t = new Team("paging-status", 12);
        List<String> joined = new ArrayList<>();
        for (int i = 0; i < 12; i += 2) {
            stack.clock.advance(Duration.ofSeconds(1));
            ok(t.send("join", t.ids.get(i), null));
            joined.add(0, t.ids.get(i)); // newest first
        }
        stack.pump.drain();

        meter.reset();
        List<JsonNode> pages = t.walk(Map.of("status", "ready", "limit", "4"));
        List<String> ready = new ArrayList<>();
        pages.forEach(p -> ready.addAll(ids(p)));
        assertEquals(joined, ready, "the ready agents, newest in that status first");
        assertEquals(2, pages.size());
        for (JsonNode p : pages) {
            p.get("agents").forEach(a -> assertEquals("ready", a.get("status").asText()));
        }
        assertEquals(6, meter.itemsRead("BatchGetItem"), "only the agents the pages answer were read: " + meter);

        List<String> offline = new ArrayList<>();
        t.walk(Map.of("status", "offline", "limit", "5")).forEach(p -> offline.addAll(ids(p)));
        assertEquals(6, offline.size());
        assertTrue(offline.stream().noneMatch(joined::contains));
    }

    @Test
    void anAgentThatLeftAStatus_isNotInItsPage_evenBeforeTheOutboxMovesItsEntry() {
        Team t = new Team("paging-moved", 3);
        t.ids.forEach(id -> ok(t.send("join", id, null)));
        stack.pump.drain();
        ok(t.send("fail", t.ids.get(1), "{\"reason\":\"crashed\"}"));
        // Not drained: the entry still says ready, the item says dead.
        assertEquals(List.of(t.ids.get(2), t.ids.get(0)), ids(ok(t.list(Map.of("status", "ready"))).body()));
        stack.pump.drain();
        assertEquals(List.of(t.ids.get(1)), ids(ok(t.list(Map.of("status", "dead"))).body()));
    }

    @Test
    void hostedAgents_inAPage_areShownAsGetShowsThem() {
        Team t = new Team("paging-hosted", 3);
        t.ids.forEach(id -> ok(t.send("join", id, null)));
        String batch = HostLeaseTest.hostedBody("host-p", t.ids, Map.of());
        ok(stack.send("batch-heartbeats", t.key, Map.of("team", t.team), null, batch));
        stack.clock.advance(Duration.ofSeconds(40));
        ok(stack.send("batch-heartbeats", t.key, Map.of("team", t.team), null, batch));
        stack.clock.advance(Duration.ofSeconds(5));
        stack.pump.drain();

        for (Map<String, String> query : List.of(Map.<String, String>of(), Map.of("status", "ready"))) {
            JsonNode page = ok(t.list(query)).body();
            assertEquals(3, page.get("count").asInt(), query::toString);
            for (JsonNode listed : page.get("agents")) {
                JsonNode got = ok(t.send("get-agent", listed.get("agentId").asText(), null)).body();
                for (String field : List.of("status", "alive", "heartbeatTs", "deadline", "consecutiveMisses")) {
                    assertEquals(got.get(field), listed.get(field), field + " of " + listed);
                }
                assertEquals(stack.clock.instant().minusSeconds(5).toString(), listed.get("heartbeatTs").asText(),
                        "the lease's beat, not the item's");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "1001", "-1", "ten", "", "1.5"})
    void limitOutOfBounds_answers400_andWritesNothing(String limit) {
        Team t = Team.of("paging-limits", 2);
        TestStack.Reply r = stack.writesNothing(() -> t.list(Map.of("limit", limit)));
        assertEquals(400, r.status(), r.body()::toString);
        assertEquals("INVALID_QUERY", r.code());
        assertFalse(r.body().get("success").asBoolean());
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "1000"})
    void limitAtItsBounds_isAnswered(String limit) {
        Team t = Team.of("paging-limits", 2);
        TestStack.Reply r = ok(t.list(Map.of("limit", limit)));
        assertEquals(Math.min(2, Integer.parseInt(limit)), r.body().get("count").asInt());
        assertEquals("1".equals(limit), r.body().has("nextCursor"));
    }

    @Test
    void badCursors_answer400InvalidCursor_andWriteNothing() {
        Team t = Team.of("paging-cursors", 3);
        String good = ok(t.list(Map.of("limit", "1"))).text("nextCursor");
        String decoded = new String(Base64.getUrlDecoder().decode(good), StandardCharsets.UTF_8);
        String otherList = b64(decoded.replace("|agents|", "|tasks|"));
        String injected = b64(decoded + "|x");
        String badId = b64(decoded.substring(0, decoded.lastIndexOf('|') + 1) + "bad id!");
        for (String cursor : List.of("garbage!!", "", "AAAA", otherList, injected, badId, "x".repeat(600),
                good.substring(1))) {
            TestStack.Reply r = stack.writesNothing(() -> t.list(Map.of("cursor", cursor)));
            assertEquals(400, r.status(), cursor + ": " + r.body());
            assertEquals("INVALID_QUERY", r.code(), cursor);
        }
        TestStack.Reply otherFilter = t.list(Map.of("cursor", good, "status", "offline"));
        assertEquals(400, otherFilter.status(), "a cursor of the whole list is not one of a status's");
        assertEquals("INVALID_QUERY", otherFilter.code());
    }

    @Test
    void aCursorFromAnotherTeam_isRefused_andNamesNeither() {
        Team a = Team.of("paging-team-a", 3);
        Team b = Team.of("paging-team-b", 3);
        for (Map<String, String> q : List.of(Map.of("limit", "1"), Map.of("limit", "1", "status", "offline"))) {
            String cursorOfA = ok(a.list(q)).text("nextCursor");
            Map<String, String> withIt = new HashMap<>(q);
            withIt.put("cursor", cursorOfA);
            TestStack.Reply r = stack.writesNothing(() -> b.list(withIt));
            assertEquals(400, r.status(), r.body()::toString);
            assertEquals("INVALID_QUERY", r.code());
            assertFalse(r.body().toString().contains("paging-team-a"), r.body()::toString);
            assertFalse(new String(Base64.getUrlDecoder().decode(cursorOfA), StandardCharsets.UTF_8)
                    .contains("paging-team-a"), "a cursor does not name its team");
        }
    }

    @Test
    void changedSince_answersTheAgentsWhoseStatusChangedAfterIt_newestFirst() {
        Team t = new Team("paging-changes", 6);
        t.ids.forEach(id -> ok(t.send("join", id, null)));
        stack.pump.drain();
        stack.clock.advance(Duration.ofSeconds(10));
        Instant since = stack.clock.instant();
        stack.clock.advance(Duration.ofSeconds(1));
        ok(t.send("fail", t.ids.get(4), "{\"reason\":\"crashed\"}"));
        stack.clock.advance(Duration.ofSeconds(1));
        ok(t.send("leave", t.ids.get(1), null));
        stack.pump.drain();

        TestStack.Reply r = ok(t.list(Map.of("changedSince", since.toString())));
        assertEquals(List.of(t.ids.get(1), t.ids.get(4)), ids(r.body()));
        assertEquals(List.of("offline", "dead"), r.body().findValuesAsText("status"));
        assertFalse(r.body().get("truncated").asBoolean());
        assertEquals(stack.clock.instant().minusSeconds(5).toString(), r.text("nextChangedSince"));

        TestStack.Reply capped = ok(t.list(Map.of("changedSince", since.toString(), "limit", "1")));
        assertEquals(List.of(t.ids.get(1)), ids(capped.body()));
        assertTrue(capped.body().get("truncated").asBoolean(), "more changed than it answers");
    }

    @Test
    void changedSince_onAnIdleTeam_readsSixEmptyRanges_andNoAgent() {
        Team t = new Team("paging-idle", 20);
        t.ids.forEach(id -> ok(t.send("join", id, null)));
        stack.pump.drain();
        stack.clock.advance(Duration.ofSeconds(30));
        meter.reset();
        TestStack.Reply r = ok(t.list(Map.of("changedSince", stack.clock.instant().minusSeconds(2).toString())));
        assertEquals(0, r.body().get("count").asInt());
        assertEquals(6, meter.requests("Query"), "one Query of the status index per status: " + meter);
        assertEquals(0, meter.requests("BatchGetItem"), meter::toString);
        assertEquals(3.0, meter.readUnits(), "six empty ranges, half a unit each: " + meter);
    }

    @ParameterizedTest
    @ValueSource(strings = {"yesterday", "2026-13-01T00:00:00Z", "", "1969-12-31T23:59:59Z",
            "+1000000000-01-01T00:00:00Z", "2286-11-20T17:46:40Z"})
    void changedSince_thatIsNoTime_answers400(String since) {
        Team t = Team.of("paging-limits", 2);
        TestStack.Reply r = stack.writesNothing(() -> t.list(Map.of("changedSince", since)));
        assertEquals(400, r.status(), r.body()::toString);
        assertEquals("INVALID_QUERY", r.code());
    }

    @Test
    void changedSince_withAStatusOrACursor_answers400() {
        Team t = Team.of("paging-limits", 2);
        String cursor = ok(t.list(Map.of("limit", "1"))).text("nextCursor");
        String since = stack.clock.instant().toString();
        assertEquals("INVALID_QUERY", t.list(Map.of("changedSince", since, "status", "dead")).code());
        assertEquals("INVALID_QUERY", t.list(Map.of("changedSince", since, "cursor", cursor)).code());
    }

    /**
     * What a page reads, by the read units the store reports: a page of 100 agents costs the same on a team of 250 as
     * its size says (100 items read eventually consistent, half a unit each, and one roster Query), whichever page it
     * is; the walk is the sum of its pages.
     */
    @Test
    void readUnits_ofAPage_followThePage_notTheTeam() {
        Team t = new Team("paging-units", 250);
        t.ids.forEach(id -> ok(t.send("join", id, null)));
        stack.pump.drain();

        meter.reset();
        List<JsonNode> pages = t.walk(Map.of("limit", "100"));
        List<Double> units = new ArrayList<>(meter.perPage);
        assertEquals(3, pages.size());
        System.out.printf("agent list, team of 250, limit 100: read units per page %s, walk %.1f%n", units,
                meter.readUnits());
        assertEquals(50.0 + 1.0, units.get(0), "100 items at 0.5 and the roster's 100 entries (~8 KB, 1 unit)");
        assertEquals(units.get(0), units.get(1), "the second page costs what the first does");
        assertEquals(25.0 + 0.5, units.get(2), "50 items at 0.5, 50 roster entries (~4 KB)");
        assertEquals(units.stream().mapToDouble(Double::doubleValue).sum(), meter.readUnits(), 1e-9);

        meter.reset();
        ok(t.list(Map.of("limit", "100", "status", "ready")));
        assertEquals(50.0 + 1.0, meter.readUnits(), "100 items and the index's 100 entries: " + meter);
    }

    // ---- tasks and keys ----------------------------------------------------------------------------------------

    @Test
    void tasks_pageByIdWithACursor_withAndWithoutStatus_andAnotherTeamsCursorIsRefused() {
        Team t = new Team("paging-tasks", 1);
        List<String> tasks = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            String id = String.format("t-%02d", i);
            tasks.add(id);
            assertEquals(201, stack.send("create-task", t.key, Map.of("team", t.team), null,
                    "{\"taskId\":\"" + id + "\",\"title\":\"T\"}").status());
        }
        ok(t.send("join", t.ids.get(0), null));
        ok(stack.send("claim", t.key, Map.of("team", t.team, "taskId", "t-03"), null,
                "{\"agentId\":\"" + t.ids.get(0) + "\"}"));

        List<String> walked = new ArrayList<>();
        t.walkRoute("list-tasks", Map.of("limit", "3")).forEach(p -> p.get("tasks")
                .forEach(x -> walked.add(x.get("taskId").asText())));
        assertEquals(tasks, walked, "every task once, in id order");
        List<String> pending = new ArrayList<>();
        t.walkRoute("list-tasks", Map.of("limit", "2", "status", "pending")).forEach(p -> p.get("tasks")
                .forEach(x -> pending.add(x.get("taskId").asText())));
        assertEquals(tasks.stream().filter(x -> !x.equals("t-03")).toList(), pending);

        Team other = Team.of("paging-team-b", 3);
        String cursor = ok(t.route("list-tasks", Map.of("limit", "1"))).text("nextCursor");
        TestStack.Reply refused = stack.writesNothing(() -> other.route("list-tasks", Map.of("cursor", cursor)));
        assertEquals(400, refused.status());
        assertEquals("INVALID_QUERY", refused.code());
        assertEquals(400, t.route("list-tasks", Map.of("limit", "0")).status());
    }

    @Test
    void keys_pageByIdWithACursor() {
        Team t = new Team("paging-keys", 1);
        for (int i = 0; i < 4; i++) {
            assertEquals(201, stack.send("create-key", t.key, Map.of("team", t.team), null,
                    "{\"scope\":\"agent\",\"label\":\"k" + i + "\"}").status());
        }
        List<String> all = new ArrayList<>();
        ok(t.route("list-keys", Map.of("limit", "1000"))).body().get("keys")
                .forEach(k -> all.add(k.get("keyId").asText()));
        assertEquals(5, all.size(), "the admin key and four more");
        List<String> walked = new ArrayList<>();
        List<JsonNode> pages = t.walkRoute("list-keys", Map.of("limit", "2"));
        pages.forEach(p -> p.get("keys").forEach(k -> walked.add(k.get("keyId").asText())));
        assertEquals(all, walked);
        assertEquals(3, pages.size());
        assertEquals("INVALID_QUERY", t.route("list-keys", Map.of("cursor", "nope")).code());
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    private static List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.get("agents").forEach(a -> ids.add(a.get("agentId").asText()));
        return ids;
    }

    private static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A team of {@code n} registered (offline) agents {@code a-000..}, in id order. */
    static final class Team {
        private static final Map<String, Team> SHARED = new HashMap<>();
        final String team;
        final String key;
        final List<String> ids = new ArrayList<>();

        Team(String team, int n) {
            this.team = team;
            this.key = stack.key(team, Scope.ADMIN);
            for (int i = 0; i < n; i++) {
                String id = String.format("a-%03d", i);
                ids.add(id);
                assertEquals(201, stack.send("register", key, Map.of("team", team), null,
                        "{\"agentId\":\"" + id + "\",\"name\":\"N\",\"role\":\"r\"}").status());
            }
        }

        /** The team made once per name, for tests that only read it. */
        static synchronized Team of(String team, int n) {
            return SHARED.computeIfAbsent(team, name -> new Team(name, n));
        }

        TestStack.Reply list(Map<String, String> query) {
            meter.startPage();
            return stack.send("list-agents", key, Map.of("team", team), query, null);
        }

        TestStack.Reply send(String route, String agentId, String body) {
            return stack.send(route, key, Map.of("team", team, "agentId", agentId), null, body);
        }

        TestStack.Reply route(String route, Map<String, String> query) {
            return stack.send(route, key, Map.of("team", team), query, null);
        }

        /** Every page of {@code route}'s list from the first, following each page's cursor. */
        List<JsonNode> walkRoute(String route, Map<String, String> query) {
            List<JsonNode> pages = new ArrayList<>();
            String cursor = null;
            do {
                Map<String, String> q = new HashMap<>(query);
                if (cursor != null) {
                    q.put("cursor", cursor);
                }
                JsonNode page = ok(route(route, q)).body();
                pages.add(page);
                cursor = page.path("nextCursor").asText(null);
            } while (cursor != null);
            return pages;
        }

        /** Every page from the first, following each page's cursor. */
        List<JsonNode> walk(Map<String, String> query) {
            List<JsonNode> pages = new ArrayList<>();
            String cursor = null;
            do {
                Map<String, String> q = new HashMap<>(query);
                if (cursor != null) {
                    q.put("cursor", cursor);
                }
                JsonNode page = ok(list(q)).body();
                pages.add(page);
                String next = page.path("nextCursor").asText(null);
                assertNotEquals(cursor, next, "a cursor moves on");
                cursor = next;
            } while (cursor != null);
            assertNull(pages.get(pages.size() - 1).get("nextCursor"));
            return pages;
        }
    }
}
