package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The census the sweep counts its pages into: it keeps the watched stale agents and nothing of a heard one, and the
 * censuses of parts of the table (segments, or parallel invocations) add up to the census of the whole, so a sweep
 * decided from the sum decides as one that read everything. Pure: no store, no clock.
 */
@Tag("unit")
class SweepCensusTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final SweepPlan.Policy POLICY = new SweepPlan.Policy(0.5, 4, 0.5, 20);

    private static SweepPlan.Observed agent(String team, String id, boolean stale, Instant pausedUntil, String lease) {
        Instant deadline = stale ? NOW.minusSeconds(1) : NOW.plusSeconds(30);
        SweepPlan.Hosted hosted = lease == null ? null
                : new SweepPlan.Hosted(lease, id, null, Duration.ofSeconds(60), null);
        return new SweepPlan.Observed(team, id, AgentStatus.READY, deadline.minusSeconds(60), deadline, 0, 2, 3,
                pausedUntil, hosted, lease == null ? "10.0.0.1" : null);
    }

    /**
     * Five teams: a healthy one, one with a few silent, one mostly silent (held), one whose silence is one lease of
     * two (a dead box: explained), one paused agent among the silent.
     */
    private static List<SweepPlan.Observed> fleet() {
        List<SweepPlan.Observed> out = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            out.add(agent("healthy", "h" + i, false, null, null));
            out.add(agent("few", "f" + i, i < 2, null, null));
            out.add(agent("most", "m" + i, i < 8, null, null));
            out.add(agent("box", "b" + i, i < 6, null, i < 6 ? "box-1" : "box-2"));
            out.add(agent("paused", "p" + i, i < 3, i == 0 ? NOW.plusSeconds(600) : null, null));
        }
        return out;
    }

    @Test
    void aCensus_keepsTheWatchedStaleAgentsOnly() {
        SweepCensus census = new SweepCensus(NOW);
        fleet().forEach(census::add);
        assertEquals(50, census.alive());
        // 2 + 8 + 6 + 2 stale and watched (the paused agent's silence is not counted against it).
        assertEquals(18, census.kept());
        assertTrue(census.hasAlive("healthy"));
        assertFalse(census.hasAlive("nobody"));
    }

    @Test
    void partsOfTheTable_addUpToTheWhole_andDecideAsIt() {
        List<SweepPlan.Observed> all = fleet();
        SweepCensus whole = new SweepCensus(NOW);
        all.forEach(whole::add);
        SweepCensus first = new SweepCensus(NOW);
        SweepCensus second = new SweepCensus(NOW);
        for (int i = 0; i < all.size(); i++) {
            (i % 3 == 0 ? first : second).add(all.get(i));
        }
        first.addAll(second);
        assertEquals(whole.alive(), first.alive());
        assertEquals(whole.kept(), first.kept());
        List<SweepPlan.TeamOutcome> fromWhole = SweepPlan.decide(whole, Map.of(), POLICY, null);
        List<SweepPlan.TeamOutcome> fromParts = SweepPlan.decide(first, Map.of(), POLICY, null);
        assertEquals(summary(fromWhole), summary(fromParts));
        assertEquals(SweepPlan.fleet(fromWhole, POLICY).held(), SweepPlan.fleet(fromParts, POLICY).held());
        // The teams as judged: "most" held, "box" explained by its silent lease, the others' stale agents acted on.
        assertEquals(List.of("box:6:EXPLAINED:6", "few:2:-:2", "healthy:0:-:0", "most:8:HELD:0", "paused:2:-:2"),
                summary(fromWhole));
    }

    /** {@code team:stale:verdict:actions}, in the outcomes' order. */
    private static List<String> summary(List<SweepPlan.TeamOutcome> outcomes) {
        return outcomes.stream().map(o -> o.team() + ":" + o.stale() + ":"
                + (o.verdict() == null ? "-" : o.verdict().kind()) + ":" + o.actions().size()).toList();
    }
}
