package io.lifeline.local.contract.agents;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
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
 * {@code GET .../transitions} a page at a time: every change exactly once across the pages, newest first, the
 * last page without a {@code nextCursor}; the newest change not yet recorded by the outbox shows on the first
 * page; a cursor the route did not give is 400 INVALID_QUERY.
 */
@Tag("contract")
class TransitionPagingTest {
    static TestStack stack;
    /** The agent's changes: join, then working/ready 120 times; 241 in all. */
    static final String AGENT = "paged";
    static final int CHANGES = 241;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        TestStack.ok(stack.ready(AGENT));
        for (int i = 0; i < 120; i++) {
            TestStack.ok(stack.heartbeat(AGENT, "{\"status\":\"working\"}"));
            TestStack.ok(stack.heartbeat(AGENT, "{\"status\":\"ready\"}"));
        }
        stack.pump.drain();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 50, 100})
    void pages_ofAnyLimit_holdEveryChangeOnce_newestFirst_andTheLastHasNoCursor(int limit) {
        List<JsonNode> pages = walk(AGENT, limit);
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < pages.size(); i++) {
            JsonNode page = pages.get(i);
            int size = page.get("transitions").size();
            boolean last = i == pages.size() - 1;
            assertEquals(last, !page.has("nextCursor"), "page " + i);
            assertTrue(last ? size >= 1 && size <= limit : size == limit, "page " + i + " has " + size);
            page.get("transitions").forEach(t -> seqs.add(t.get("seq").asLong()));
        }
        assertEquals((CHANGES + limit - 1) / limit, pages.size());
        assertEquals(CHANGES, seqs.size());
        for (int i = 0; i < seqs.size(); i++) {
            assertEquals(CHANGES - i, seqs.get(i), "newest first, each once");
        }
    }

    @Test
    void firstPage_beforeTheOutboxRecordedTheNewestChange_showsIt_andTheNextPageGoesOnBelowIt() {
        String agent = TestStack.newId("fresh");
        TestStack.ok(stack.ready(agent));
        TestStack.ok(stack.heartbeat(agent, "{\"status\":\"working\"}"));
        stack.pump.drain();
        TestStack.ok(stack.heartbeat(agent, "{\"status\":\"ready\"}")); // seq 3: stamped on the item only
        List<Long> seqs = new ArrayList<>();
        walk(agent, 2).forEach(p -> p.get("transitions").forEach(t -> seqs.add(t.get("seq").asLong())));
        assertEquals(List.of(3L, 2L, 1L), seqs);
        stack.pump.drain();
    }

    @Test
    void anAgentWithFewerChangesThanTheLimit_getsOnePageWithoutACursor() {
        String agent = TestStack.newId("short");
        TestStack.ok(stack.ready(agent));
        stack.pump.drain();
        TestStack.Reply r = page(agent, 100, null);
        assertEquals(1, r.body().get("transitions").size());
        assertNull(r.body().get("nextCursor"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "x", "!!!!", "dDE6", "dDE6MA", "dDE6LTE", "dDE6YWJj", "dDI6NQ",
            "dDE6MTIzNDU2Nzg5MDEyMzQ1Njc4OTA", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    void aCursorTheRouteDidNotGive_answers400InvalidQuery_andWritesNothing(String cursor) {
        // t1: (empty), t1:0, t1:-1, t1:abc, t2:5, t1: with 22 digits, too long, and plain junk
        TestStack.Reply r = stack.writesNothing(() -> page(AGENT, 10, cursor));
        assertEquals(400, r.status(), cursor + ": " + r.body());
        assertEquals("INVALID_QUERY", r.code());
        assertFalse(r.body().toString().contains("Exception"));
    }

    @Test
    void aCursorPastTheOldestChange_answersAnEmptyPageWithoutACursor() {
        String cursor = Base64.getUrlEncoder().withoutPadding().encodeToString("t1:1".getBytes(StandardCharsets.US_ASCII));
        TestStack.Reply r = page(AGENT, 10, cursor);
        assertEquals(200, r.status(), r.body().toString());
        assertEquals(0, r.body().get("transitions").size());
        assertNull(r.body().get("nextCursor"));
    }

    private static List<JsonNode> walk(String agent, int limit) {
        List<JsonNode> pages = new ArrayList<>();
        String cursor = null;
        do {
            TestStack.Reply r = page(agent, limit, cursor);
            assertEquals(200, r.status(), r.body().toString());
            pages.add(r.body());
            cursor = r.body().has("nextCursor") ? r.body().get("nextCursor").asText() : null;
            assertTrue(pages.size() <= CHANGES + 1, "the walk ends");
        } while (cursor != null);
        return pages;
    }

    private static TestStack.Reply page(String agent, int limit, String cursor) {
        Map<String, String> query = new HashMap<>(Map.of("limit", Integer.toString(limit)));
        if (cursor != null) {
            query.put("cursor", cursor);
        }
        return stack.send("transitions", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", agent), query,
                null);
    }
}
