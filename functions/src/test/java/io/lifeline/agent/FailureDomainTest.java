package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Self-preservation weighs failure domains ({@link FailureDomain}, through {@link SweepPlan#decide} and
 * {@link SweepPlan#fleet}): a mass silence confined to one host or one source address while the rest still reaches
 * Lifeline is not held; one across many domains, one whose domain is still heard, one nothing else outlives, or any
 * under {@code failureDomains: none} is held as before; a released hold is not held. Pure: no store, no clock.
 */
@Tag("unit")
class FailureDomainTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final SweepPlan.Policy DEFAULTS = new SweepPlan.Policy(0.5, 4, 0.5, 20);

    private static SweepPlan.Observed agent(String team, String id, boolean stale, String source,
                                            SweepPlan.Hosted hosted) {
        Instant deadline = stale ? NOW.minusSeconds(1) : NOW.plusSeconds(30);
        return new SweepPlan.Observed(team, id, AgentStatus.READY, deadline.minusSeconds(60), deadline, 1, 2, 7, null,
                hosted, source);
    }

    private static SweepPlan.Observed direct(String team, String id, boolean stale, String source) {
        return agent(team, id, stale, source, null);
    }

    private static SweepPlan.Observed hosted(String team, String id, boolean stale, String lease) {
        return agent(team, id, stale, "10.9.9.9", new SweepPlan.Hosted(lease, id, null, Duration.ofSeconds(60), null));
    }

    /** {@code n} agents of {@code team} from {@code source}, {@code stale} or not, ids {@code prefix1..n}. */
    private static List<SweepPlan.Observed> many(String team, String prefix, int n, boolean stale, String source) {
        List<SweepPlan.Observed> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add(direct(team, prefix + i, stale, source));
        }
        return out;
    }

    private static SweepPlan.TeamOutcome decide(List<SweepPlan.Observed> agents, Map<String, TeamSettings> teams,
                                                String team) {
        return SweepPlan.decide(agents, teams, DEFAULTS, NOW).stream().filter(o -> o.team().equals(team))
                .findFirst().orElseThrow();
    }

    private static TeamSettings rule(String team, FailureDomains domains, TeamHold hold) {
        return new TeamSettings(team, null, null, null, null, null, null, null, null, domains, hold);
    }

    @Test
    void oneSourceSilent_restOfTeamHeard_notHeld_itsAgentsMissAndDie() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("box", "b", 10, true, "203.0.113.7"));
        agents.add(direct("box", "b11", false, "198.51.100.9"));
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "box");
        assertFalse(o.held());
        assertEquals(FailureDomain.Kind.EXPLAINED, o.verdict().kind());
        assertEquals(new FailureDomain.Domain(FailureDomain.SOURCE, null, "203.0.113.7"), o.verdict().domain());
        assertEquals(10, o.verdict().agents().size());
        assertEquals(10, o.actions().stream().filter(a -> a instanceof SweepPlan.Kill).count());
        assertTrue(o.verdict().why().contains("source 203.0.113.7"), o.verdict().why());
    }

    @Test
    void wholeTeamOnOneSourceSilent_anotherSourceStillHeard_notHeld() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("box", "b", 6, true, "203.0.113.7"));
        agents.addAll(many("other", "o", 2, false, "198.51.100.20"));
        assertFalse(decide(agents, Map.of(), "box").held());
    }

    @Test
    void nothingElseReachesLifeline_held() {
        List<SweepPlan.Observed> agents = many("box", "b", 6, true, "203.0.113.7");
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "box");
        assertTrue(o.held());
        assertTrue(o.verdict().why().contains("nothing outside source 203.0.113.7"), o.verdict().why());
    }

    @Test
    void silenceAcrossManySources_held() {
        List<SweepPlan.Observed> agents = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            agents.add(direct("deaf", "d" + i, i <= 8, "192.0.2." + i));
        }
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "deaf");
        assertTrue(o.held());
        assertEquals(List.of(), o.actions());
        assertEquals(FailureDomain.Kind.HELD, o.verdict().kind());
        assertTrue(o.verdict().why().contains("spans 8 failure domains"), o.verdict().why());
    }

    @Test
    void silentAgentsShareTheirSourceWithAgentsStillHeard_held() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("nat", "s", 6, true, "203.0.113.1"));
        agents.addAll(many("nat", "f", 4, false, "203.0.113.1"));
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "nat");
        assertTrue(o.held());
        assertTrue(o.verdict().why().contains("4 still heard"), o.verdict().why());
    }

    @Test
    void oneSourceSilent_andAnotherMassSilenceOutsideIt_held() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("t", "b", 6, true, "203.0.113.7"));
        agents.add(direct("t", "x1", true, "192.0.2.1"));
        agents.add(direct("t", "x2", true, "192.0.2.2"));
        agents.add(direct("t", "x3", false, "192.0.2.3"));
        assertTrue(decide(agents, Map.of(), "t").held());
    }

    @Test
    void failureDomainsNone_held_andHostRuleLeavesDirectBeatsWithoutADomain() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("box", "b", 10, true, "203.0.113.7"));
        agents.add(direct("box", "b11", false, "198.51.100.9"));
        SweepPlan.TeamOutcome none = decide(agents, Map.of("box", rule("box", FailureDomains.NONE, null)), "box");
        assertTrue(none.held());
        assertTrue(none.verdict().why().contains("failureDomains: none"), none.verdict().why());
        SweepPlan.TeamOutcome host = decide(agents, Map.of("box", rule("box", FailureDomains.HOST, null)), "box");
        assertTrue(host.held());
    }

    @Test
    void oneHostsLeasesSilent_restHeard_notHeld_underTheHostRule() {
        List<SweepPlan.Observed> agents = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            agents.add(hosted("h", "a" + i, true, "build-1"));
            agents.add(hosted("h", "b" + i, true, "build-1.2"));
        }
        agents.add(hosted("h", "c1", false, "build-2"));
        SweepPlan.TeamOutcome o = decide(agents, Map.of("h", rule("h", FailureDomains.HOST, null)), "h");
        assertFalse(o.held());
        assertEquals(new FailureDomain.Domain(FailureDomain.HOST, "h", "build-1"), o.verdict().domain());
        assertEquals(10, o.verdict().agents().size());
    }

    @Test
    void releasedHold_notHeld_itsAgentsMiss() {
        List<SweepPlan.Observed> agents = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            agents.add(direct("deaf", "d" + i, i <= 8, "192.0.2." + i));
        }
        TeamHold released = new TeamHold(NOW.minusSeconds(60), 10, 8, true, "spans", NOW.minusSeconds(5));
        SweepPlan.TeamOutcome o = decide(agents, Map.of("deaf", rule("deaf", null, released)), "deaf");
        assertFalse(o.held());
        assertEquals(FailureDomain.Kind.RELEASED, o.verdict().kind());
        assertEquals(8, o.actions().size());
        TeamHold standing = new TeamHold(NOW.minusSeconds(60), 10, 8, true, "spans", null);
        assertTrue(decide(agents, Map.of("deaf", rule("deaf", null, standing)), "deaf").held());
    }

    @Test
    void noSourceKnown_heldAsBefore() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("old", "b", 10, true, null));
        agents.add(direct("old", "b11", false, null));
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "old");
        assertTrue(o.held());
        assertTrue(o.verdict().why().contains("no failure domain is known"), o.verdict().why());
    }

    @Test
    void fleet_oneSourceSilentAcrossTeams_notHeld_manySources_held() {
        List<SweepPlan.Observed> box = new ArrayList<>();
        for (int t = 1; t <= 5; t++) {
            box.addAll(many("t" + t, "t" + t + "-", 5, true, "203.0.113.7"));
        }
        box.addAll(many("big", "g", 10, false, "198.51.100.1"));
        List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(box, Map.of(), DEFAULTS, NOW);
        SweepPlan.FleetOutcome fleet = SweepPlan.fleet(outcomes, Map.of(), DEFAULTS);
        assertEquals(35, fleet.alive());
        assertEquals(25, fleet.stale());
        assertFalse(fleet.held());
        assertEquals(FailureDomain.Kind.EXPLAINED, fleet.verdict().kind());
        assertTrue(outcomes.stream().noneMatch(SweepPlan.TeamOutcome::held), "each team's box died too");

        List<SweepPlan.Observed> deaf = new ArrayList<>();
        for (int t = 1; t <= 25; t++) {
            deaf.add(direct("s" + t, "s" + t, true, "192.0.2." + t));
        }
        deaf.addAll(many("big", "g", 10, false, "198.51.100.1"));
        SweepPlan.FleetOutcome held = SweepPlan.fleet(SweepPlan.decide(deaf, Map.of(), DEFAULTS, NOW), Map.of(),
                DEFAULTS);
        assertTrue(held.held());
        assertTrue(held.verdict().why().contains("spans 25 failure domains"), held.verdict().why());
    }

    @Test
    void underTheGuard_noVerdict() {
        List<SweepPlan.Observed> agents = new ArrayList<>(many("t", "s", 2, true, "203.0.113.7"));
        agents.addAll(many("t", "f", 8, false, "198.51.100.1"));
        SweepPlan.TeamOutcome o = decide(agents, Map.of(), "t");
        assertFalse(o.held());
        assertNull(o.verdict());
        assertEquals(2, o.actions().size());
    }
}
