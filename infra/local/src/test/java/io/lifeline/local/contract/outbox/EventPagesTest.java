package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code GET .../events} a page at a time, through the template's route and the real handlers: a walk of
 * {@code nextCursor} answers the team's log once, newest first, as one large page does (the log's shards merged in
 * time order); the last page has no cursor; a cursor given to one team is refused to another (400 INVALID_QUERY,
 * nothing read, nothing written), as is a cursor not given by the route.
 */
@Timeout(120)
@Tag("contract")
class EventPagesTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Agents of {@code team} that join and leave {@code rounds} times: two status changes each round. */
    private static void busy(String team, String admin, int agents, int rounds) {
        for (int i = 0; i < agents; i++) {
            String id = team + "-a" + i;
            ok(stack.send("register", admin, Map.of("team", team), null, "{\"agentId\":\"" + id + "\",\"name\":\""
                    + id + "\",\"role\":\"worker\"}"));
            for (int r = 0; r < rounds; r++) {
                ok(stack.send("join", admin, Map.of("team", team, "agentId", id), null, null));
                stack.clock.advance(Duration.ofMillis(5));
                ok(stack.send("leave", admin, Map.of("team", team, "agentId", id), null, null));
                stack.clock.advance(Duration.ofMillis(5));
            }
        }
        stack.pump.drain();
    }

    private static TestStack.Reply page(String team, String key, Map<String, String> query) {
        return stack.send("events", key, Map.of("team", team), query, null);
    }

    private static List<String> ids(JsonNode body) {
        List<String> out = new ArrayList<>();
        body.path("events").forEach(e -> out.add(e.path("eventId").asText()));
        return out;
    }

    @Test
    void aWalkOfCursors_answersTheLogOnceInTimeOrder_asOneLargePageDoes() {
        String team = "pages";
        String admin = stack.key(team, Scope.ADMIN);
        busy(team, admin, 6, 4);
        JsonNode whole = ok(page(team, admin, Map.of("limit", "100"))).body();
        List<String> all = ids(whole);
        assertEquals(6 * 4 * 2, all.size(), whole::toString);
        assertFalse(whole.has("nextCursor"), "one page held it all: no cursor");
        List<String> ats = new ArrayList<>();
        whole.path("events").forEach(e -> ats.add(e.path("at").asText()));
        List<String> newestFirst = new ArrayList<>(ats);
        newestFirst.sort((a, b) -> b.compareTo(a));
        assertEquals(newestFirst, ats, "newest first across the shards");

        for (String limit : List.of("1", "5", "7")) {
            List<String> walked = new ArrayList<>();
            Map<String, String> query = new HashMap<>(Map.of("limit", limit));
            int pages = 0;
            while (true) {
                JsonNode body = ok(page(team, admin, query)).body();
                assertTrue(body.path("count").asInt() <= Integer.parseInt(limit));
                walked.addAll(ids(body));
                pages++;
                if (!body.has("nextCursor")) {
                    break;
                }
                query.put("cursor", body.path("nextCursor").asText());
                assertTrue(pages < 100);
            }
            assertEquals(all, walked, "pages of " + limit);
        }
        // The same walk over one type, and over one agent's own copy.
        JsonNode first = ok(page(team, admin, Map.of("limit", "3", "agentId", team + "-a2"))).body();
        JsonNode second = ok(page(team, admin, Map.of("limit", "100", "agentId", team + "-a2", "cursor",
                first.path("nextCursor").asText()))).body();
        assertEquals(8, ids(first).size() + ids(second).size());
        assertNull(second.get("nextCursor"));
    }

    @Test
    void aCursorOfOneTeam_isRefusedToAnother_andACursorNotGivenByTheRoute_isRefused() {
        String alpha = "alpha-pages";
        String beta = "beta-pages";
        String alphaAdmin = stack.key(alpha, Scope.ADMIN);
        String betaRead = stack.key(beta, Scope.READ);
        busy(alpha, alphaAdmin, 2, 2);
        busy(beta, stack.key(beta, Scope.ADMIN), 2, 2);
        String alphaCursor = ok(page(alpha, alphaAdmin, Map.of("limit", "2"))).body().path("nextCursor").asText();
        assertFalse(alphaCursor.isEmpty());
        String position = new String(Base64.getUrlDecoder().decode(alphaCursor), StandardCharsets.UTF_8)
                .substring(("e1:" + alpha + ":").length());
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(("e1:" + beta + ":" + position)
                .getBytes(StandardCharsets.UTF_8));
        for (String bad : List.of(alphaCursor, "not-a-cursor", "%%%", "ZTE6YmV0YS1wYWdlczpFIzEyMw",
                "x".repeat(600))) {
            TestStack.Reply r = stack.writesNothing(() -> page(beta, betaRead, Map.of("cursor", bad)));
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("INVALID_QUERY", r.code());
            assertFalse(r.body().toString().contains(alpha), r.body()::toString);
        }
        // A cursor names a place in the log, not a team's events: beta's own page from that place is beta's.
        JsonNode own = ok(page(beta, betaRead, Map.of("cursor", forged, "limit", "100"))).body();
        own.path("events").forEach(e -> assertTrue(e.path("eventId").asText().startsWith(beta + "/"), e::toString));
    }
}
