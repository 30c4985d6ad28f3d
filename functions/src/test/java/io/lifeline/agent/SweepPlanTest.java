package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link SweepPlan#decide} over hand-built snapshots: when an agent is stale, Miss versus Kill by grace, the
 * self-preservation boundaries (threshold and minimum alive, service defaults and team overrides), agent and
 * team pauses, and that teams are decided independently. Pure: no store, no clock.
 */
@Tag("unit")
class SweepPlanTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final SweepPlan.Policy DEFAULTS = new SweepPlan.Policy(0.5, 4);
    private static final Instant PAST = NOW.minusSeconds(1);
    private static final Instant FUTURE = NOW.plusSeconds(30);

    private static SweepPlan.Observed agent(String team, String id, Instant deadline, int misses, int grace,
                                            Instant pausedUntil) {
        Instant heartbeat = deadline == null ? NOW.minusSeconds(600) : deadline.minusSeconds(60);
        return new SweepPlan.Observed(team, id, AgentStatus.READY, heartbeat, deadline, misses, grace, 7,
                pausedUntil);
    }

    private static SweepPlan.Observed stale(String team, String id) {
        return agent(team, id, PAST, 0, 2, null);
    }

    private static SweepPlan.Observed fresh(String team, String id) {
        return agent(team, id, FUTURE, 0, 2, null);
    }

    /** {@code stale} stale agents and {@code total - stale} fresh ones, all of {@code team}. */
    private static List<SweepPlan.Observed> team(String team, int total, int stale) {
        List<SweepPlan.Observed> out = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            out.add(i < stale ? stale(team, team + "-s" + i) : fresh(team, team + "-f" + i));
        }
        return out;
    }

    private static List<SweepPlan.TeamOutcome> decide(List<SweepPlan.Observed> agents,
                                                      Map<String, TeamSettings> teams) {
        return SweepPlan.decide(agents, teams, DEFAULTS, NOW);
    }

    private static SweepPlan.TeamOutcome only(List<SweepPlan.TeamOutcome> outcomes) {
        assertEquals(1, outcomes.size(), outcomes::toString);
        return outcomes.get(0);
    }

    private static Optional<SweepPlan.TeamOutcome> outcomeOf(List<SweepPlan.TeamOutcome> outcomes, String team) {
        return outcomes.stream().filter(o -> o.team().equals(team)).findFirst();
    }

    private static TeamSettings settings(String team, Instant pausedUntil, Double threshold, Integer minAlive) {
        return new TeamSettings(team, null, pausedUntil, null, threshold, minAlive);
    }

    /** When an agent is stale. */
    @Nested
    class WhenStale {
        @Test
        void decide_deadlineInTheFuture_noAction() {
            SweepPlan.TeamOutcome o = only(decide(List.of(fresh("a", "x")), Map.of()));
            assertEquals(List.of(), o.actions());
            assertEquals(0, o.stale());
            assertEquals(1, o.alive());
        }

        @Test
        void decide_deadlineExactlyNow_isNotStale() {
            // The plan asks now.isAfter(deadline): at the deadline itself the heartbeat is not yet late.
            SweepPlan.TeamOutcome o = only(decide(List.of(agent("a", "x", NOW, 0, 2, null)), Map.of()));
            assertEquals(List.of(), o.actions());
            assertEquals(0, o.stale());
        }

        @Test
        void decide_deadlineOneMilliBeforeNow_isStale() {
            SweepPlan.TeamOutcome o = only(decide(List.of(agent("a", "x", NOW.minusMillis(1), 0, 2, null)), Map.of()));
            assertEquals(1, o.stale());
            assertInstanceOf(SweepPlan.Miss.class, o.actions().get(0));
        }

        @Test
        void decide_deadlineNull_neverStale() {
            // No further heartbeat expected (an at: schedule that has passed): never missed, however long.
            SweepPlan.TeamOutcome o = only(decide(List.of(agent("a", "x", null, 5, 2, null)), Map.of()));
            assertEquals(List.of(), o.actions());
            assertEquals(0, o.stale());
            assertEquals(1, o.alive());
        }

        @Test
        void decide_notAliveAgents_areIgnoredEntirely() {
            List<SweepPlan.Observed> agents = new ArrayList<>();
            for (AgentStatus s : AgentStatus.values()) {
                if (!s.isAlive()) {
                    agents.add(new SweepPlan.Observed("a", s.wire(), s, PAST.minusSeconds(60), PAST, 0, 2, 1, null));
                }
            }
            assertEquals(List.of(), decide(agents, Map.of()), "a team with no alive agent has no outcome");
        }

        @Test
        void decide_workingAgent_isWatchedLikeReady() {
            SweepPlan.Observed working = new SweepPlan.Observed("a", "w", AgentStatus.WORKING, PAST.minusSeconds(60),
                    PAST, 0, 2, 3, null);
            SweepPlan.TeamOutcome o = only(decide(List.of(working), Map.of()));
            assertEquals(1, o.actions().size());
        }
    }

    /** Miss versus Kill. */
    @Nested
    class MissVersusKill {
        @Test
        void decide_firstMissBelowGrace_isMissWithOneMiss() {
            SweepPlan.Action a = only(decide(List.of(agent("a", "x", PAST, 0, 2, null)), Map.of())).actions().get(0);
            SweepPlan.Miss miss = assertInstanceOf(SweepPlan.Miss.class, a);
            assertEquals(1, miss.misses());
            assertEquals("x", miss.agent().agentId());
            assertEquals(7, miss.agent().beats(), "the write will be conditional on the beats it saw");
        }

        @Test
        void decide_missReachingGrace_isKillWithReason() {
            Instant heartbeat = NOW.minusSeconds(90);
            SweepPlan.Observed x = new SweepPlan.Observed("a", "x", AgentStatus.READY, heartbeat,
                    heartbeat.plusSeconds(60), 1, 2, 7, null);
            SweepPlan.Kill kill = assertInstanceOf(SweepPlan.Kill.class,
                    only(decide(List.of(x), Map.of())).actions().get(0));
            assertEquals(2, kill.misses());
            assertTrue(kill.reason().startsWith("no heartbeat for 90 s"), kill.reason());
            assertTrue(kill.reason().contains("2 missed sweeps"), kill.reason());
        }

        @Test
        void decide_graceOne_killsOnFirstMiss() {
            SweepPlan.Action a = only(decide(List.of(agent("a", "x", PAST, 0, 1, null)), Map.of())).actions().get(0);
            assertEquals(1, assertInstanceOf(SweepPlan.Kill.class, a).misses());
        }

        @Test
        void decide_graceThree_missesTwiceBeforeKill() {
            assertEquals(2, assertInstanceOf(SweepPlan.Miss.class,
                    only(decide(List.of(agent("a", "x", PAST, 1, 3, null)), Map.of())).actions().get(0)).misses());
            assertEquals(3, assertInstanceOf(SweepPlan.Kill.class,
                    only(decide(List.of(agent("a", "x", PAST, 2, 3, null)), Map.of())).actions().get(0)).misses());
        }

        @Test
        void decide_missesAlreadyAboveGrace_killsWithNextCount() {
            // An agent whose grace was lowered after misses were counted dies at the next sweep.
            SweepPlan.Action a = only(decide(List.of(agent("a", "x", PAST, 4, 2, null)), Map.of())).actions().get(0);
            assertEquals(5, assertInstanceOf(SweepPlan.Kill.class, a).misses());
        }

        @Test
        void reason_withoutHeartbeat_saysSo() {
            SweepPlan.Observed never = new SweepPlan.Observed("a", "x", AgentStatus.READY, null, PAST, 0, 1, 0, null);
            assertTrue(SweepPlan.reason(never, 1, NOW).startsWith("never sent a heartbeat, 1 missed sweep,"),
                    SweepPlan.reason(never, 1, NOW));
        }
    }

    /** Self-preservation: threshold. */
    @Nested
    class SelfPreservationThreshold {
        @Test
        void decide_exactlyHalfStale_isNotHeld() {
            SweepPlan.TeamOutcome o = only(decide(team("a", 4, 2), Map.of()));
            assertFalse(o.held());
            assertEquals(4, o.alive());
            assertEquals(2, o.stale());
            assertEquals(2, o.actions().size());
        }

        @Test
        void decide_moreThanHalfStale_isHeldWithNoActions() {
            SweepPlan.TeamOutcome o = only(decide(team("a", 4, 3), Map.of()));
            assertTrue(o.held());
            assertEquals(4, o.alive());
            assertEquals(3, o.stale());
            assertEquals(0.5, o.threshold());
            assertEquals(List.of(), o.actions(), "held: not even misses are recorded");
        }

        @Test
        void decide_sixAliveThreeStale_isNotHeld_fourStale_isHeld() {
            assertFalse(only(decide(team("a", 6, 3), Map.of())).held());
            assertTrue(only(decide(team("a", 6, 4), Map.of())).held());
        }

        @Test
        void decide_allStaleInLargeTeam_isHeld() {
            SweepPlan.TeamOutcome o = only(decide(team("a", 50, 50), Map.of()));
            assertTrue(o.held());
            assertEquals(50, o.stale());
        }

        @Test
        void decide_teamThreshold_overridesDefault() {
            Map<String, TeamSettings> lax = Map.of("a", settings("a", null, 0.8, null));
            SweepPlan.TeamOutcome fourOfFive = only(decide(team("a", 5, 4), lax));
            assertFalse(fourOfFive.held(), "80% is not above 0.8");
            assertEquals(0.8, fourOfFive.threshold());
            assertEquals(4, fourOfFive.actions().size());
            assertTrue(only(decide(team("a", 5, 5), lax)).held());

            Map<String, TeamSettings> strict = Map.of("a", settings("a", null, 0.25, null));
            assertTrue(only(decide(team("a", 4, 2), strict)).held(), "50% is above 0.25");
        }
    }

    /** Self-preservation: minimum alive. */
    @Nested
    class SelfPreservationMinAlive {
        @Test
        void decide_belowMinAlive_isNeverHeld() {
            SweepPlan.TeamOutcome o = only(decide(team("a", 3, 3), Map.of()));
            assertFalse(o.held(), "3 alive is below the minimum of 4");
            assertEquals(3, o.actions().size());
        }

        @Test
        void decide_exactlyMinAlive_allStale_isHeld() {
            assertTrue(only(decide(team("a", 4, 4), Map.of())).held());
        }

        @Test
        void decide_teamMinAlive_overridesDefault() {
            assertTrue(only(decide(team("a", 3, 2), Map.of("a", settings("a", null, null, 3)))).held());
            assertFalse(only(decide(team("a", 4, 4), Map.of("a", settings("a", null, null, 5)))).held());
        }
    }

    /** Pauses. */
    @Nested
    class Pauses {
        @Test
        void decide_pausedAgent_getsNoAction() {
            SweepPlan.TeamOutcome o = only(decide(List.of(agent("a", "x", PAST, 1, 2, NOW.plusSeconds(1))), Map.of()));
            assertEquals(List.of(), o.actions());
            assertEquals(0, o.alive());
            assertEquals(0, o.stale());
        }

        @Test
        void decide_pauseEndingNow_isOver() {
            // pausedUntil is exclusive: at that instant the agent is watched again.
            SweepPlan.TeamOutcome o = only(decide(List.of(agent("a", "x", PAST, 1, 2, NOW)), Map.of()));
            assertInstanceOf(SweepPlan.Kill.class, o.actions().get(0));
        }

        @Test
        void decide_pausedStaleAgents_areNotCountedAsStale() {
            // 4 watched, 2 of them stale (50%: not held) plus 2 paused stale agents. Counted, it would be 4/6.
            List<SweepPlan.Observed> agents = new ArrayList<>(team("a", 4, 2));
            agents.add(agent("a", "p1", PAST, 0, 2, FUTURE));
            agents.add(agent("a", "p2", PAST, 0, 2, FUTURE));
            SweepPlan.TeamOutcome o = only(decide(agents, Map.of()));
            assertFalse(o.held());
            assertEquals(4, o.alive());
            assertEquals(2, o.stale());
            assertEquals(2, o.actions().size());
            assertTrue(o.actions().stream().noneMatch(a -> a.agent().agentId().startsWith("p")));
        }

        @Test
        void decide_pausedFreshAgents_areNotCountedAsAlive() {
            // 4 watched, 3 stale: held. Counting 2 paused fresh agents as alive would make it 3/6 (not held).
            List<SweepPlan.Observed> agents = new ArrayList<>(team("a", 4, 3));
            agents.add(agent("a", "p1", FUTURE, 0, 2, FUTURE));
            agents.add(agent("a", "p2", FUTURE, 0, 2, FUTURE));
            SweepPlan.TeamOutcome o = only(decide(agents, Map.of()));
            assertTrue(o.held());
            assertEquals(4, o.alive());
        }

        @Test
        void decide_pausedAgents_doNotLiftTeamToMinAlive() {
            // 3 watched, all stale, and 2 paused: 3 is below the minimum, so the three are marked.
            List<SweepPlan.Observed> agents = new ArrayList<>(team("a", 3, 3));
            agents.add(agent("a", "p1", FUTURE, 0, 2, FUTURE));
            agents.add(agent("a", "p2", PAST, 0, 2, FUTURE));
            SweepPlan.TeamOutcome o = only(decide(agents, Map.of()));
            assertFalse(o.held());
            assertEquals(3, o.actions().size());
        }

        @Test
        void decide_pausedTeam_isSkippedEntirely() {
            Map<String, TeamSettings> paused = Map.of("a", settings("a", NOW.plusSeconds(60), null, null));
            assertEquals(List.of(), decide(team("a", 6, 6), paused), "no outcome: no action and no hold alert");
            assertEquals(List.of(), decide(team("a", 2, 2), paused));
        }

        @Test
        void decide_teamPauseEndingNow_isOver() {
            Map<String, TeamSettings> ended = Map.of("a", settings("a", NOW, null, null));
            assertEquals(2, only(decide(team("a", 2, 2), ended)).actions().size());
        }
    }

    /** Teams are independent. */
    @Nested
    class TeamsAreIndependent {
        @Test
        void decide_oneTeamHeld_otherTeamMarkedNormally() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("held", 6, 5));
            agents.addAll(team("other", 5, 1));
            agents.add(agent("small", "s0", PAST, 1, 2, null));
            List<SweepPlan.TeamOutcome> outcomes = decide(agents, Map.of());
            assertEquals(3, outcomes.size());
            SweepPlan.TeamOutcome held = outcomeOf(outcomes, "held").orElseThrow();
            assertTrue(held.held());
            assertEquals(List.of(), held.actions());
            SweepPlan.TeamOutcome other = outcomeOf(outcomes, "other").orElseThrow();
            assertFalse(other.held());
            assertEquals(List.of("other-s0"), other.actions().stream().map(a -> a.agent().agentId()).toList());
            SweepPlan.TeamOutcome small = outcomeOf(outcomes, "small").orElseThrow();
            assertInstanceOf(SweepPlan.Kill.class, small.actions().get(0));
        }

        @Test
        void decide_oneTeamPaused_otherTeamMarkedNormally() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("paused", 2, 2));
            agents.addAll(team("other", 2, 2));
            List<SweepPlan.TeamOutcome> outcomes = decide(agents,
                    Map.of("paused", settings("paused", NOW.plus(Duration.ofHours(1)), null, null)));
            assertTrue(outcomeOf(outcomes, "paused").isEmpty());
            assertEquals(2, outcomeOf(outcomes, "other").orElseThrow().actions().size());
        }

        @Test
        void decide_oneTeamsOverride_doesNotApplyToAnother() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("lax", 4, 3));
            agents.addAll(team("plain", 4, 3));
            List<SweepPlan.TeamOutcome> outcomes = decide(agents, Map.of("lax", settings("lax", null, 0.9, null)));
            assertFalse(outcomeOf(outcomes, "lax").orElseThrow().held());
            assertTrue(outcomeOf(outcomes, "plain").orElseThrow().held());
        }
    }

    /** Restarts no flow is left to end. */
    @Nested
    class OrphanedRestarts {
        private static final Duration LONGEST_RUN = Duration.ofSeconds(648);

        @Test
        void orphanedRevives_exactlyAtTheFlowsLongestRun_leftAlone_oneMilliLater_ended() {
            SweepPlan.Restarting r = new SweepPlan.Restarting("a", "r1", 4, NOW.minus(LONGEST_RUN));
            assertEquals(List.of(), SweepPlan.orphanedRevives(List.of(r), LONGEST_RUN, NOW));

            List<SweepPlan.EndRevive> ended = SweepPlan.orphanedRevives(List.of(r), LONGEST_RUN, NOW.plusMillis(1));
            assertEquals(1, ended.size());
            assertEquals(r, ended.get(0).agent(), "the write insists on the stamp the sweep read");
            assertEquals("restarting for 10m48s with no revive flow left to end it", ended.get(0).reason());
        }

        @Test
        void orphanedRevives_onlyThosePastTheBound_andNoneWithoutAnEntryTime() {
            SweepPlan.Restarting old = new SweepPlan.Restarting("a", "old", 4, NOW.minus(Duration.ofHours(2)));
            SweepPlan.Restarting young = new SweepPlan.Restarting("a", "young", 4, NOW.minusSeconds(30));
            SweepPlan.Restarting unknown = new SweepPlan.Restarting("a", "unknown", 0, null);
            List<SweepPlan.EndRevive> ended = SweepPlan.orphanedRevives(List.of(old, young, unknown), LONGEST_RUN, NOW);
            assertEquals(List.of("old"), ended.stream().map(e -> e.agent().agentId()).toList());
            assertEquals("restarting for 2h0m0s with no revive flow left to end it", ended.get(0).reason());
            assertTrue(ended.get(0).reason().getBytes(StandardCharsets.UTF_8).length <= 100,
                    "the reason fits the stored 100 bytes");
        }
    }

    /** The fleet-wide hold. */
    @Nested
    class FleetHold {
        private static final SweepPlan.Policy WITH_FLEET = new SweepPlan.Policy(0.5, 4, 0.5, 10);

        /** 30 teams of 2, all silent, and one team of 10 still beating: 60 of 70 stale, every team under its minimum. */
        private static List<SweepPlan.Observed> brownout() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("big", 10, 0));
            for (int t = 0; t < 30; t++) {
                agents.addAll(team(String.format("small%02d", t), 2, 2));
            }
            return agents;
        }

        @Test
        void fleet_brownoutOfSmallTeams_holdsEveryTeam() {
            List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(brownout(), Map.of(), WITH_FLEET, NOW);
            // No team holds on its own: each small team is under the per-team minimum of 4.
            assertTrue(outcomes.stream().noneMatch(SweepPlan.TeamOutcome::held));
            SweepPlan.FleetOutcome fleet = SweepPlan.fleet(outcomes, WITH_FLEET);
            assertTrue(fleet.held());
            assertEquals(70, fleet.alive());
            assertEquals(60, fleet.stale());
            assertEquals(30, fleet.staleTeams().size());
            assertEquals("small00", fleet.staleTeams().get(0));
        }

        @Test
        void fleet_oneSmallTeamSilentAlone_doesNotHold() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("big", 10, 0));
            for (int t = 0; t < 30; t++) {
                agents.addAll(team(String.format("small%02d", t), 2, t == 7 ? 2 : 0));
            }
            List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(agents, Map.of(), WITH_FLEET, NOW);
            assertFalse(SweepPlan.fleet(outcomes, WITH_FLEET).held());
            SweepPlan.TeamOutcome silent = outcomes.stream().filter(o -> o.team().equals("small07")).findFirst()
                    .orElseThrow();
            assertEquals(2, silent.actions().size());
        }

        @Test
        void fleet_atTheThresholdExactly_doesNotHold() {
            // 10 alive, 5 stale: 0.5 of them, not more than 0.5.
            List<SweepPlan.Observed> agents = new ArrayList<>();
            for (int t = 0; t < 5; t++) {
                agents.addAll(team("t" + t, 2, 1));
            }
            SweepPlan.FleetOutcome fleet = SweepPlan.fleet(SweepPlan.decide(agents, Map.of(), WITH_FLEET, NOW), WITH_FLEET);
            assertEquals(5, fleet.stale());
            assertFalse(fleet.held());
        }

        @Test
        void fleet_underItsMinimumAlive_doesNotHold() {
            // 9 alive, all stale: a deployment this small is judged team by team only.
            List<SweepPlan.Observed> agents = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                agents.addAll(team("t" + t, 3, 3));
            }
            assertFalse(SweepPlan.fleet(SweepPlan.decide(agents, Map.of(), WITH_FLEET, NOW), WITH_FLEET).held());
        }

        @Test
        void fleet_pausedTeamsAndAgents_areNotCounted() {
            List<SweepPlan.Observed> agents = new ArrayList<>(team("big", 10, 0));
            for (int t = 0; t < 30; t++) {
                String name = String.format("small%02d", t);
                agents.add(agent(name, name + "-p1", PAST, 0, 2, FUTURE));
                agents.add(agent(name, name + "-p2", PAST, 0, 2, FUTURE));
            }
            SweepPlan.FleetOutcome fleet = SweepPlan.fleet(SweepPlan.decide(agents, Map.of(), WITH_FLEET, NOW), WITH_FLEET);
            assertEquals(10, fleet.alive());
            assertFalse(fleet.held());
        }

        @Test
        void fleet_twoArgumentPolicy_neverHolds() {
            assertFalse(SweepPlan.fleet(SweepPlan.decide(brownout(), Map.of(), DEFAULTS, NOW), DEFAULTS).held());
        }

        @Test
        void fleet_releasedByTheOperator_holdsNobody_butSaysItStillTrips() {
            List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(brownout(), Map.of(), WITH_FLEET, NOW);
            SweepPlan.FleetOutcome fleet = SweepPlan.fleet(outcomes, Map.of(), WITH_FLEET, NOW.minusSeconds(30));
            assertFalse(fleet.held());
            assertTrue(fleet.released(), "the flag stays up while the guard trips");
            assertEquals(60, fleet.stale());
            // Once the silence is over, a released hold is simply over.
            SweepPlan.FleetOutcome over = SweepPlan.fleet(SweepPlan.decide(team("big", 10, 0), Map.of(), WITH_FLEET,
                    NOW), Map.of(), WITH_FLEET, NOW.minusSeconds(30));
            assertFalse(over.held());
            assertFalse(over.released());
        }

        /** A team of 10, 8 silent (its own guard trips), with its share of the fleet hold that began at {@code since}. */
        private static Map<String, TeamSettings> sharing(Instant since, Instant releasedAt) {
            return Map.of("a", new TeamSettings("a", null, null, null, null, null, null, null, null, null, null,
                    new TeamFleetHold(since, 10, 8, releasedAt)));
        }

        @Test
        void decide_aTeamReleasedFromTheStandingFleetHold_isReleasedFromItsOwnGuardToo() {
            Instant fleetSince = NOW.minusSeconds(60);
            SweepPlan.TeamOutcome released = only(SweepPlan.decide(team("a", 10, 8), sharing(fleetSince,
                    NOW.minusSeconds(5)), DEFAULTS, NOW, fleetSince));
            assertFalse(released.held(), "one release covers the silence, whichever guard holds it");
            assertEquals(FailureDomain.Kind.RELEASED, released.verdict().kind());
            assertEquals(8, released.actions().size());
            assertTrue(SweepPlan.releasedFromFleet(sharing(fleetSince, NOW.minusSeconds(5)).get("a"), fleetSince));
        }

        @Test
        void decide_aReleaseOfAnEarlierFleetHold_orNoRelease_releasesNothing() {
            Instant fleetSince = NOW.minusSeconds(60);
            Instant earlier = NOW.minusSeconds(3600);
            assertTrue(only(SweepPlan.decide(team("a", 10, 8), sharing(earlier, NOW.minusSeconds(3000)), DEFAULTS, NOW,
                    fleetSince)).held(), "a later fleet hold holds the team again");
            assertFalse(SweepPlan.releasedFromFleet(sharing(earlier, NOW.minusSeconds(3000)).get("a"), fleetSince));
            assertTrue(only(SweepPlan.decide(team("a", 10, 8), sharing(fleetSince, null), DEFAULTS, NOW, fleetSince))
                    .held(), "a share not released holds as before");
            assertFalse(SweepPlan.releasedFromFleet(sharing(fleetSince, null).get("a"), fleetSince));
        }
    }
}
