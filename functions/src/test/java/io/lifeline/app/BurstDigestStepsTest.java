package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.store.StoreTables;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The alert window's items and the digest built from them in steps, against the engine's tables: the head counts to its
 * threshold plus one and then refuses (the first past it decided by that one write); the totals add up over their
 * shards; a dead_failed_revive keeps a window unsettled; and a digest made one page a step (a time budget of zero,
 * pages of 3) equals the one made in a single step: the same totals, the ten largest teams and hosts, one view per
 * team with its own count, and the step count the pages need.
 */
@Tag("store")
class BurstDigestStepsTest {
    private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
    private static final AlertBursts.Settings SETTINGS = new AlertBursts.Settings(1, Duration.ofSeconds(60), 20);
    private static StoreTables tables;
    /** Long enough that the table's TTL (on AWS, and on the engine) never removes a test's items (its START is in the past). */
    private static final Duration RETENTION = Duration.ofDays(3650);

    @BeforeAll
    static void create() {
        tables = StoreTables.create();
    }

    @AfterAll
    static void drop() {
        tables.close();
    }

    private static AlertWindowStore windows() {
        return new AlertWindowStore(tables.dynamo, tables.tables, RETENTION);
    }

    @Test
    void theHead_countsToItsThresholdPlusOne_thenRefuses() {
        AlertWindowStore w = windows();
        Instant start = START.plusSeconds(3600);
        assertEquals(List.of(1, 2, 3, 0, 0), List.of(w.countHead(start, 3, "lifeline/a/x"),
                w.countHead(start, 3, "lifeline/b/y"), w.countHead(start, 3, "lifeline/c/z"),
                w.countHead(start, 3, "lifeline/d/w"), w.countHead(start, 3, "lifeline/e/v")));
        AlertWindowStore.Head head = w.head(start);
        assertEquals(3, head.counted());
        assertEquals("lifeline/a/x", head.lead(), "the first death's key");
        assertTrue(w.markResolved(start));
        assertFalse(w.markResolved(start), "resolved once");
    }

    @Test
    void aFailedRevive_keepsItsShardUnsettled_untilTheAgentRejoins() {
        AlertWindowStore w = windows();
        Instant start = START.plusSeconds(7200);
        w.countDeath(start, "acme", "a-1", "h-1", "heartbeat_expired", false, 20);
        w.countDeath(start, "acme", "a-2", "h-1", "host_gave_up", true, 20);
        // a-2's host gave up on it; then it is cleaned up: back, and still failed.
        AlertWindowStore.Shard cleaned = w.countAfterDeath(start, "acme", "a-2", 1, 0);
        assertTrue(cleaned.failed() >= 1 && !cleaned.settled(), cleaned::toString);
        AlertWindowStore.Totals t = w.totals(start);
        assertEquals(2, t.deaths());
        assertEquals(1, t.back());
        assertEquals(1, t.failed());
        assertEquals(Map.of("heartbeat_expired", 1, "host_gave_up", 1), t.byReason());
        // a-1 rejoins; a-2, revived again by hand, is no longer failed: the window is settled.
        w.countAfterDeath(start, "acme", "a-1", 1, 0);
        w.countAfterDeath(start, "acme", "a-2", 0, -1);
        t = w.totals(start);
        assertEquals(List.of(2, 2, 0), List.of(t.deaths(), t.back(), t.failed()));
    }

    /** 25 teams, team i with (i % 4) + 1 deaths on hosts h-(i % 7): counted as the outbox counts them. */
    private static Map<String, Integer> burst(AlertWindowStore w, Instant start) {
        Map<String, Integer> byTeam = new LinkedHashMap<>();
        w.countHead(start, SETTINGS.threshold() + 1, "lifeline/team-00/team-00-a0");
        for (int i = 0; i < 25; i++) {
            String team = String.format("team-%02d", i);
            for (int a = 0; a <= i % 4; a++) {
                w.countDeath(start, team, team + "-a" + a, "h-" + (i % 7), "heartbeat_expired", false, 2);
                byTeam.merge(team, 1, Integer::sum);
            }
        }
        return byTeam;
    }

    private static Map<String, Object> run(BurstDigest digest, Instant start, int[] steps) {
        Map<String, Object> in = new HashMap<>(Map.of("window", start.toString(), "digestAt",
                start.plusSeconds(65).toString()));
        while (true) {
            steps[0]++;
            Map<String, Object> out = digest.step(start, in, System.nanoTime());
            // As the state machine passes it on: through JSON.
            Map<String, Object> next = Json.MAPPER.convertValue(Json.MAPPER.valueToTree(out), Map.class);
            if (!Boolean.TRUE.equals(next.get("again"))) {
                return next;
            }
            in = next;
        }
    }

    /** The digest of the window {@code start} in {@code team}'s log (logged at its digestAt, 65 s after its start). */
    private static JsonNode logged(EventLog log, String team, Instant start) throws Exception {
        Instant at = start.plusSeconds(65);
        List<EventLog.Entry> entries = log.recent(team, null, EventCatalogue.ALERT_DIGEST, at, at, 10);
        assertEquals(1, entries.size(), team);
        return Json.parse(entries.get(0).detailJson());
    }

    @Test
    void aDigestMadeOnePageAStep_isTheDigestMadeInOneStep_andEveryTeamHasItsOwnView() throws Exception {
        AlertWindowStore w = windows();
        Clock clock = Clock.fixed(START.plusSeconds(70), ZoneOffset.UTC);
        Instant paged = START;
        Instant whole = START.plusSeconds(60);
        Map<String, Integer> byTeam = burst(w, paged);
        burst(w, whole);
        EventLog log = new EventLog(tables.dynamo, tables.tables, RETENTION);
        int[] pagedSteps = {0};
        Map<String, Object> out = run(new BurstDigest(w, log, null, SETTINGS, null, clock, Duration.ZERO, 3), paged,
                pagedSteps);
        assertEquals(true, out.get("sent"));
        int[] wholeSteps = {0};
        run(new BurstDigest(w, log, null, SETTINGS, null, clock), whole, wholeSteps);
        assertEquals(1, wholeSteps[0]);
        // 7 hosts and 25 teams, 3 a page: 3 pages of hosts, 9 of teams (the last page of each tells there is no more).
        assertTrue(pagedSteps[0] >= 12, "one page a step: " + pagedSteps[0]);

        JsonNode a = logged(log, StreamChanges.FLEET_TEAM, paged);
        assertTrue(w.head(paged).digested());
        int deaths = byTeam.values().stream().mapToInt(Integer::intValue).sum();
        assertEquals(deaths, a.path("deaths").asInt());
        assertEquals(25, a.path("teams").asInt());
        assertEquals(7, a.path("hosts").asInt());
        assertEquals(10, a.path("byTeam").size());
        int shown = 0;
        for (JsonNode c : a.path("byTeam")) {
            shown += c.asInt();
        }
        assertEquals(6 * 4 + 4 * 3, shown, "the six teams of 4 deaths and four of the six of 3: " + a.path("byTeam"));
        assertEquals(7, a.path("byHost").size());
        assertEquals(20, a.path("agents").size(), "the first 20 named");
        assertFalse(a.path("allBack").asBoolean());
        for (Map.Entry<String, Integer> t : byTeam.entrySet()) {
            JsonNode view = logged(log, t.getKey(), paged);
            assertEquals(t.getKey(), view.path("team").asText());
            assertEquals(t.getValue(), view.path("deaths").asInt(), t.getKey());
            assertEquals(deaths, view.path("fleetDeaths").asInt());
            assertFalse(view.has("byTeam") || view.has("pagerDutyKey"), view::toString);
            assertNotNull(view.get("byHost"));
        }
        // The whole window's digest in one step: the same, but for its window and time.
        JsonNode b = logged(log, StreamChanges.FLEET_TEAM, whole);
        for (String field : List.of("deaths", "teams", "hosts", "byTeam", "byHost", "byReason", "agents", "summary")) {
            assertEquals(a.get(field), b.get(field), field);
        }
    }
}
