package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.ReadMeter;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The agent list and the dashboard's refresh on one large team, on the in-process engine, counted in the read units
 * the store reports (BENCHMARKS.md, "The agent list on a large team"): one page of 100, the whole cursor walk, one
 * status's page, and {@code changedSince} over a 2 s refresh on an idle team and with 1 % of it changing status. The
 * team is {@code -Dlifeline.listScaleAgents=N} agents (default 2,000 in the build; the figures are for 100,000), copies
 * of one registered, ready agent: its live item and its roster entry. A page's units do not depend on N; the walk's
 * are N / 100 pages of them.
 */
@Tag("contract")
class AgentListScaleTest {
    static final String TEAM = "scale";
    static final int AGENTS = Integer.getInteger("lifeline.listScaleAgents", 2_000);
    /** The dashboard's page of changes (app.js). */
    static final String CHANGES_LIMIT = "1000";

    @Test
    @Timeout(1_800)
    void aPage_theWalk_andTheDashboardsRefresh_onALargeTeam() throws Exception {
        ReadMeter meter = new ReadMeter();
        try (TestStack s = TestStack.builder().interceptor(meter).build()) {
            String key = s.key(TEAM, Scope.ADMIN);
            long t0 = System.nanoTime();
            seed(s, key);
            System.out.printf("agent list at scale: %,d agents seeded in %.1f s%n", AGENTS,
                    (System.nanoTime() - t0) / 1e9);

            meter.reset();
            meter.startPage();
            JsonNode first = list(s, key, Map.of("limit", "100"));
            double page = meter.readUnits();
            assertEquals(100, first.get("count").asInt());
            assertEquals(51.0, page, "100 items at half a unit, 100 roster entries at 1 unit: " + meter);
            String pageCalls = meter.toString();

            meter.reset();
            int pages = 0;
            int agents = 0;
            String cursor = null;
            do {
                Map<String, String> q = new HashMap<>(Map.of("limit", "100"));
                if (cursor != null) {
                    q.put("cursor", cursor);
                }
                meter.startPage();
                JsonNode p = list(s, key, q);
                pages++;
                agents += p.get("count").asInt();
                cursor = p.path("nextCursor").asText(null);
            } while (cursor != null);
            double walk = meter.readUnits();
            assertEquals(AGENTS, agents, "the walk reads every agent once");
            assertEquals(AGENTS / 100, pages);
            assertTrue(meter.perPage.stream().allMatch(u -> u == page), "every full page costs the first's");

            meter.reset();
            JsonNode ready = list(s, key, Map.of("limit", "100", "status", "ready"));
            double statusPage = meter.readUnits();
            assertEquals(100, ready.get("count").asInt());

            s.clock.advance(Duration.ofSeconds(30));
            meter.reset();
            JsonNode idle = list(s, key, Map.of("changedSince", s.clock.instant().minusSeconds(2).toString(),
                    "limit", CHANGES_LIMIT));
            double idleRefresh = meter.readUnits();
            assertEquals(0, idle.get("count").asInt());
            assertEquals(3.0, idleRefresh, "six empty ranges of the status index: " + meter);

            Instant before = s.clock.instant();
            s.clock.advance(Duration.ofSeconds(1));
            int changing = AGENTS / 100;
            for (int i = 0; i < changing; i++) {
                ok(s.send("fail", key, Map.of("team", TEAM, "agentId", id(i * 100 + 1)), null,
                        "{\"reason\":\"crashed\"}"));
            }
            s.pump.drain();
            s.clock.advance(Duration.ofSeconds(1));
            meter.reset();
            JsonNode changed = list(s, key, Map.of("changedSince", before.toString(), "limit", CHANGES_LIMIT));
            double busyRefresh = meter.readUnits();
            assertEquals(changing, changed.get("count").asInt());
            assertFalse(changed.get("truncated").asBoolean());

            System.out.printf("agent list at scale: team of %,d agents%n", AGENTS);
            System.out.printf("  GET agents?limit=100, one page: %.1f read units (%s)%n", page, pageCalls);
            System.out.printf("  the cursor walk: %,d pages, %,.1f read units%n", pages, walk);
            System.out.printf("  GET agents?status=ready&limit=100: %.1f read units%n", statusPage);
            System.out.printf("  dashboard refresh (changedSince, 2 s), idle team: %.1f read units%n", idleRefresh);
            System.out.printf("  dashboard refresh, %,d agents (1 %%) changed status: %.1f read units (%s)%n",
                    changing, busyRefresh, meter);
        }
    }

    private static JsonNode list(TestStack s, String key, Map<String, String> query) {
        return ok(s.send("list-agents", key, Map.of("team", TEAM), query, null)).body();
    }

    private static String id(int i) {
        return String.format("agent-%07d", i);
    }

    /**
     * One agent registered and joined through the API, its outbox pass made; then its live item and roster entry
     * copied for the rest of the team (each copy in its own id, entered ready a millisecond apart).
     */
    private static void seed(TestStack s, String key) throws Exception {
        String sample = id(0);
        ok(s.send("register", key, Map.of("team", TEAM), null,
                "{\"agentId\":\"" + sample + "\",\"name\":\"worker\",\"role\":\"worker\"}"));
        ok(s.send("join", key, Map.of("team", TEAM, "agentId", sample), null, null));
        s.pump.drain();
        Map<String, AttributeValue> live = s.item("TEAM#" + TEAM + "#AGENT#" + sample, "AGENT");
        Map<String, AttributeValue> entry = s.item("TEAM#" + TEAM, "AGENT#" + sample);
        assertEquals("TEAM#" + TEAM + "#ready", entry.get("stk").s(), "the outbox moved the entry: " + entry);
        long since = Long.parseLong(entry.get("stAt").n());
        List<WriteRequest> liveItems = new ArrayList<>();
        List<WriteRequest> entries = new ArrayList<>();
        for (int i = 1; i < AGENTS; i++) {
            Map<String, AttributeValue> item = new HashMap<>(live);
            item.put("pk", AttributeValue.fromS("TEAM#" + TEAM + "#AGENT#" + id(i)));
            liveItems.add(put(item));
            Map<String, AttributeValue> e = new HashMap<>(entry);
            e.put("sk", AttributeValue.fromS("AGENT#" + id(i)));
            e.put("stAt", AttributeValue.fromN(Long.toString(since - i)));
            entries.add(put(e));
            if (liveItems.size() == 25) {
                write(s, s.tables.live(), liveItems);
                write(s, s.tables.ledger(), entries);
            }
        }
        write(s, s.tables.live(), liveItems);
        write(s, s.tables.ledger(), entries);
        s.pump.drain();
    }

    private static WriteRequest put(Map<String, AttributeValue> item) {
        return WriteRequest.builder().putRequest(PutRequest.builder().item(item).build()).build();
    }

    private static void write(TestStack s, String table, List<WriteRequest> batch) {
        Map<String, List<WriteRequest>> request = Map.of(table, List.copyOf(batch));
        while (!request.isEmpty()) {
            Map<String, List<WriteRequest>> ask = request;
            BatchWriteItemResponse r = s.dynamo.batchWriteItem(b -> b.requestItems(ask));
            request = r.hasUnprocessedItems() ? r.unprocessedItems() : Map.of();
        }
        batch.clear();
    }
}
