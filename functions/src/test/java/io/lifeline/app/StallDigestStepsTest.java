package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.store.StoreTables;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StallWindowStore;
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
 * The stalls of an alert window and their digest built in steps, against the engine's tables: the stalls' head counts
 * to its threshold plus one beside the deaths' and refuses after; a digest of stalls made one page a step (a time
 * budget of zero, pages of 3) equals the one made in a single step, each team has its own view naming only its own
 * agents; and the window's deaths, counted in the same items, are what they were: their totals, teams and digest
 * count no stall, and the stall digest counts no death.
 */
@Tag("store")
class StallDigestStepsTest {
    private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
    private static final AlertBursts.Settings SETTINGS = new AlertBursts.Settings(1, Duration.ofSeconds(60), 20);
    private static final Duration RETENTION = Duration.ofDays(3650);
    private static StoreTables tables;

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
    void theStallsHead_countsBesideTheDeaths_toItsThresholdPlusOne_thenRefuses() {
        AlertWindowStore w = windows();
        StallWindowStore s = w.stalls();
        Instant start = START.plusSeconds(3600);
        assertEquals(1, w.countHead(start, 2, "lifeline/a/x"), "a death first");
        assertEquals(List.of(1, 2, 0), List.of(s.countHead(start, 2), s.countHead(start, 2), s.countHead(start, 2)));
        assertEquals(2, w.countHead(start, 2, "lifeline/b/y"), "the deaths' count is its own");
        assertEquals(2, s.head(start).counted());
        assertEquals("lifeline/a/x", w.head(start).lead());
        assertTrue(s.markResolved(start));
        assertFalse(s.markResolved(start), "over once");
        assertFalse(w.head(start).resolved(), "the deaths' burst is not resolved by the stalls'");
    }

    /** 25 teams, team i with (i % 4) + 1 stalls on hosts h-(i % 7), and one death of team-00: as the outbox counts. */
    private static Map<String, Integer> burst(AlertWindowStore w, Instant start) {
        Map<String, Integer> byTeam = new LinkedHashMap<>();
        w.stalls().countHead(start, SETTINGS.threshold() + 1);
        for (int i = 0; i < 25; i++) {
            String team = String.format("team-%02d", i);
            for (int a = 0; a <= i % 4; a++) {
                w.stalls().countStall(start, team, team + "-a" + a, "h-" + (i % 7), 2);
                byTeam.merge(team, 1, Integer::sum);
            }
        }
        w.countHead(start, SETTINGS.threshold() + 1, "lifeline/team-00/team-00-dead");
        w.countDeath(start, "team-00", "team-00-dead", "h-0", "heartbeat_expired", false, 2);
        return byTeam;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> run(StallDigest digest, Instant start, int[] steps) {
        Map<String, Object> in = new HashMap<>(Map.of("window", start.toString(), "digestAt",
                start.plusSeconds(65).toString(), "kind", StallDigest.KIND));
        while (true) {
            steps[0]++;
            Map<String, Object> out = digest.step(start, in, System.nanoTime());
            // As the state machine passes it on: through JSON.
            Map<String, Object> next = Json.MAPPER.convertValue(Json.MAPPER.valueToTree(out), Map.class);
            assertEquals(StallDigest.KIND, next.get("kind"), "every step keeps the flow's kind");
            if (!Boolean.TRUE.equals(next.get("again"))) {
                return next;
            }
            in = next;
        }
    }

    private static JsonNode logged(EventLog log, String team, String type, Instant start) throws Exception {
        Instant at = start.plusSeconds(65);
        List<EventLog.Entry> entries = log.recent(team, null, type, at, at, 10);
        assertEquals(1, entries.size(), team + " " + type);
        return Json.parse(entries.get(0).detailJson());
    }

    @Test
    void aStallDigestMadeOnePageAStep_isTheOneMadeInOneStep_andTheWindowsDeathsAreUntouched() throws Exception {
        AlertWindowStore w = windows();
        Clock clock = Clock.fixed(START.plusSeconds(70), ZoneOffset.UTC);
        Instant paged = START;
        Instant whole = START.plusSeconds(60);
        Map<String, Integer> byTeam = burst(w, paged);
        burst(w, whole);
        EventLog log = new EventLog(tables.dynamo, tables.tables, RETENTION);
        int[] pagedSteps = {0};
        Map<String, Object> out = run(new StallDigest(w, log, null, SETTINGS, "https://dash.example/", clock,
                Duration.ZERO, 3), paged, pagedSteps);
        int[] wholeSteps = {0};
        run(new StallDigest(w, log, null, SETTINGS, "https://dash.example/", clock), whole, wholeSteps);
        assertEquals(Boolean.TRUE, out.get("sent"));
        assertEquals(1, wholeSteps[0]);
        assertTrue(pagedSteps[0] > 10, "one page a step: " + pagedSteps[0]);

        int total = byTeam.values().stream().mapToInt(Integer::intValue).sum();
        JsonNode a = logged(log, "*", EventCatalogue.ALERT_STALL_DIGEST, paged);
        JsonNode b = logged(log, "*", EventCatalogue.ALERT_STALL_DIGEST, whole);
        assertEquals(total, a.path("stalls").asInt(), a::toString);
        assertEquals(total - 1, a.path("inDigest").asInt());
        assertEquals(25, a.path("teams").asInt());
        assertEquals(7, a.path("hosts").asInt());
        assertEquals(10, a.path("byTeam").size());
        assertEquals(a.path("byTeam"), b.path("byTeam"), "paged or whole, the same ten largest teams");
        assertEquals(a.path("byHost"), b.path("byHost"));
        assertEquals(a.path("summary").asText().replace(paged.toString(), ""), b.path("summary").asText()
                .replace(whole.toString(), ""));
        assertFalse(a.has("deaths"), "a digest of stalls counts no death");
        assertEquals("https://dash.example/", a.path("dashboard").asText());
        for (Map.Entry<String, Integer> e : byTeam.entrySet()) {
            JsonNode view = logged(log, e.getKey(), EventCatalogue.ALERT_STALL_DIGEST, paged);
            assertEquals(e.getValue(), view.path("stalls").asInt(), e.getKey());
            assertEquals(total, view.path("fleetStalls").asInt());
            for (JsonNode agent : view.path("agents")) {
                assertTrue(agent.asText().startsWith(e.getKey() + "-"), view::toString);
            }
        }

        // The deaths of the same window: their totals and their teams count no stall, and are not digested yet.
        AlertWindowStore.Totals deaths = w.totals(paged);
        assertEquals(1, deaths.deaths());
        AlertWindowStore.Page<AlertWindowStore.TeamCount> teams = w.teams(paged, null, 100);
        assertEquals(List.of("team-00"), teams.items().stream().map(AlertWindowStore.TeamCount::team).toList());
        assertEquals(1, teams.items().get(0).deaths());
        assertNull(teams.next());
        assertFalse(w.head(paged).digested(), "the stalls' digest is not the deaths'");
        assertTrue(w.stalls().head(paged).digested());
    }
}
