package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Liveness} over plain values: which window a sign of life grants (nextWithin, the agent's own allowance,
 * the deployment's, stale-after), staleness exactly at and just after the deadline, the judgement of a hosted
 * agent through its lease, and the sweep's decisions about waits for a person. No store, no clock.
 */
@Tag("unit")
class LivenessTest {
    private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration STALE = Duration.ofSeconds(60);
    private static final Liveness.Allowances DEPLOYMENT = Liveness.Allowances.DEFAULTS;

    @Test
    void window_nextWithinWins_thenTheAgentsAllowance_thenTheDeployments_thenStaleAfter() {
        Duration own = Duration.ofSeconds(180);
        assertEquals(Duration.ofSeconds(5), Liveness.window(Duration.ofSeconds(5), Liveness.Activity.IN_TURN, own,
                DEPLOYMENT, STALE));
        assertEquals(own, Liveness.window(null, Liveness.Activity.IN_TURN, own, DEPLOYMENT, STALE));
        assertEquals(Duration.ofMinutes(15), Liveness.window(null, Liveness.Activity.IN_TURN, null, DEPLOYMENT, STALE));
        assertEquals(Duration.ofHours(8), Liveness.window(null, Liveness.Activity.WAITING_FOR_INPUT, null, DEPLOYMENT,
                STALE));
        assertEquals(Duration.ofHours(8), Liveness.window(null, Liveness.Activity.WAITING_FOR_PERSON, null, DEPLOYMENT,
                STALE));
        assertEquals(STALE, Liveness.window(null, Liveness.Activity.PLAIN, own, DEPLOYMENT, STALE),
                "a plain beat ignores allowances");
    }

    @Test
    void stale_isStrictlyAfterTheDeadline_andNeverWithoutOne() {
        Instant deadline = Liveness.deadline(AT, STALE);
        assertEquals(AT.plusSeconds(60), deadline);
        assertFalse(Liveness.stale(deadline, deadline));
        assertTrue(Liveness.stale(deadline, deadline.plusMillis(1)));
        assertFalse(Liveness.stale(null, AT.plusSeconds(1_000_000)));
        assertNull(Liveness.deadline(null, STALE));
    }

    @Test
    void waitingForPerson_tenTimesStaleAfter_isNotStale() {
        Instant deadline = Liveness.deadline(AT, Liveness.window(null, Liveness.Activity.WAITING_FOR_PERSON, null,
                DEPLOYMENT, STALE));
        assertFalse(Liveness.stale(deadline, AT.plus(STALE.multipliedBy(10))));
    }

    @Test
    void throughLease_takesTheLaterSignOfLife_andForgetsMissesCountedBeforeIt() {
        SweepPlan.Observed item = new SweepPlan.Observed("t", "a", AgentStatus.READY, AT, AT.plusSeconds(60), 1, 2, 4,
                null, new SweepPlan.Hosted("h", HostLease.key("a"), AT.plusSeconds(100).toEpochMilli(), STALE, null,
                AT.plusSeconds(75)));
        SweepPlan.Observed judged = Liveness.judged(item);
        assertEquals(AT.plusSeconds(100), judged.heartbeatAt());
        assertEquals(AT.plusSeconds(160), judged.deadline());
        assertEquals(0, judged.misses(), "heard after the miss");
        SweepPlan.Observed direct = new SweepPlan.Observed("t", "b", AgentStatus.READY, AT, AT.plusSeconds(60), 1, 2,
                4, null);
        assertEquals(direct, Liveness.judged(direct), "an agent with no lease is judged from its item");
    }

    @Test
    void awaiting_raisesOnceAfterTheThreshold_resolvesWhenTheWaitIsOver() {
        Instant late = AT.plus(DEPLOYMENT.awaitingAlertAfter());
        Liveness.PersonWait fresh = new Liveness.PersonWait("t", "a", AgentStatus.WORKING, AT, null);
        assertEquals(List.of(), Liveness.awaiting(List.of(fresh), DEPLOYMENT, late.minusMillis(1)).raise());
        assertEquals(List.of(fresh), Liveness.awaiting(List.of(fresh), DEPLOYMENT, late).raise());
        Liveness.PersonWait alerted = new Liveness.PersonWait("t", "a", AgentStatus.WORKING, AT, AT);
        Liveness.AwaitingDecisions standing = Liveness.awaiting(List.of(alerted), DEPLOYMENT, late.plusSeconds(900));
        assertEquals(List.of(), standing.raise(), "one alert per wait");
        assertEquals(List.of(), standing.resolve());
        Liveness.PersonWait over = new Liveness.PersonWait("t", "a", AgentStatus.WORKING, null, AT);
        assertEquals(List.of(over), Liveness.awaiting(List.of(over), DEPLOYMENT, late).resolve());
        Liveness.PersonWait died = new Liveness.PersonWait("t", "a", AgentStatus.DEAD, AT, AT);
        assertEquals(List.of(died), Liveness.awaiting(List.of(died), DEPLOYMENT, late).resolve());
        Liveness.PersonWait anew = new Liveness.PersonWait("t", "a", AgentStatus.READY, late, AT);
        Liveness.AwaitingDecisions next = Liveness.awaiting(List.of(anew), DEPLOYMENT, late.plusSeconds(900));
        assertEquals(List.of(anew), next.resolve(), "the old wait's alert first");
        assertEquals(List.of(), next.raise());
    }
    private static Agent agent(AgentStatus status, Instant heartbeatAt, Instant deadline, int misses, String schedule) {
        return new Agent("t", "a", "A", "worker", "h", status, heartbeatAt, deadline, misses, 4, STALE, 2, null,
                AgentStats.NONE, AT.minusSeconds(600), null, null, schedule, schedule == null ? null : "UTC");
    }

    @Test
    void shown_aHostedAgent_isItsItemJudgedThroughItsLeaseBeat_asTheSweepJudgesIt() {
        Agent item = agent(AgentStatus.READY, AT, AT.plusSeconds(60), 1, null);
        Agent shown = Liveness.shown(item, AT.plusSeconds(100), AT.plusSeconds(75));
        assertEquals(AT.plusSeconds(100), shown.heartbeatAt(), "the later sign of life: the lease beat");
        assertEquals(AT.plusSeconds(160), shown.deadline(), "the lease beat plus stale-after");
        assertEquals(0, shown.consecutiveMisses(), "heard after the miss");
        assertFalse(Liveness.overdue(shown, AT.plusSeconds(160)));
        assertTrue(Liveness.overdue(shown, AT.plusSeconds(161)));
        // The same agent as the sweep judges it: the one rule gives the one answer.
        SweepPlan.Observed swept = Liveness.judged(new SweepPlan.Observed("t", "a", AgentStatus.READY, AT,
                AT.plusSeconds(60), 1, 2, 4, null, new SweepPlan.Hosted("h", HostLease.key("a"),
                AT.plusSeconds(100).toEpochMilli(), STALE, null, AT.plusSeconds(75))));
        assertEquals(swept.heartbeatAt(), shown.heartbeatAt());
        assertEquals(swept.deadline(), shown.deadline());
        assertEquals(swept.misses(), shown.consecutiveMisses());
    }

    @Test
    void shown_aHostedAgent_keepsEverythingElseOfItsItem_itsFlappingFlagAmongThem() {
        Agent a = agent(AgentStatus.READY, AT, AT.plusSeconds(60), 1, null);
        Agent flagged = new Agent(a.team(), a.agentId(), a.name(), a.role(), a.hostId(), a.status(), a.heartbeatAt(),
                a.deadline(), a.consecutiveMisses(), a.beats(), a.staleAfter(), a.graceMisses(), a.currentTaskId(),
                a.stats(), a.registeredAt(), a.lastTransition(), a.pausedUntil(), a.schedule(), a.timeZone(),
                a.waiting(), AT.minusSeconds(30));
        Agent shown = Liveness.shown(flagged, AT.plusSeconds(100), null);
        assertEquals(AT.plusSeconds(100), shown.heartbeatAt(), "judged through the lease");
        assertEquals(AT.minusSeconds(30), shown.flappingSince(), "a daemon's agent shows its flag too");
    }

    @Test
    void shown_keepsTheItem_whenTheLeaseBeatIsOlder_theAgentIsNotAlive_isScheduled_orHasNoLeaseBeat() {
        Agent fresh = agent(AgentStatus.WORKING, AT.plusSeconds(200), AT.plusSeconds(260), 0, null);
        Agent olderLease = Liveness.shown(fresh, AT.plusSeconds(100), null);
        assertEquals(AT.plusSeconds(200), olderLease.heartbeatAt(), "the item's beat is the later one");
        assertEquals(AT.plusSeconds(260), olderLease.deadline());
        Agent missed = agent(AgentStatus.READY, AT, AT.plusSeconds(60), 2, null);
        assertEquals(2, Liveness.shown(missed, AT.plusSeconds(10), AT.plusSeconds(70)).consecutiveMisses(),
                "misses counted after the lease beat still count");
        Agent dead = agent(AgentStatus.DEAD, AT, AT.plusSeconds(60), 3, null);
        assertEquals(dead, Liveness.shown(dead, AT.plusSeconds(100), null), "a dead agent is shown as its item says");
        Agent scheduled = agent(AgentStatus.READY, AT, AT.plusSeconds(3_600), 0, "rate(1 hour)");
        assertEquals(scheduled, Liveness.shown(scheduled, AT.plusSeconds(100), null),
                "a scheduled agent is judged from its item alone");
        Agent direct = agent(AgentStatus.READY, AT, AT.plusSeconds(60), 0, null);
        assertEquals(direct, Liveness.shown(direct, null, null), "no lease beat: the item");
        assertFalse(Liveness.overdue(dead, AT.plusSeconds(1_000)), "only an alive agent is overdue");
    }

    @Test
    void aBeatTheLeaseAnswers_hasTheDeadlineThroughLeaseJudgesItBy() {
        Instant beat = AT.plusSeconds(30);
        assertEquals(beat.plus(STALE), Liveness.viaLease(beat, STALE));
        Agent item = agent(AgentStatus.READY, AT, AT.plusSeconds(60), 0, null);
        assertEquals(Liveness.viaLease(beat, STALE), Liveness.shown(item, beat, null).deadline());
    }

    @Test
    void carried_aDirectBeatCarriesTheDeployments_aHostsEntryOrOneStatingNothingCarriesNone() {
        assertEquals(Duration.ofMinutes(15), Liveness.carried(Liveness.Activity.IN_TURN, DEPLOYMENT, false));
        assertNull(Liveness.carried(Liveness.Activity.PLAIN, DEPLOYMENT, false));
        assertNull(Liveness.carried(Liveness.Activity.WAITING_FOR_INPUT, DEPLOYMENT, true));
        assertNull(Liveness.carried(null, DEPLOYMENT, false));
        Duration own = Duration.ofSeconds(180);
        assertEquals(STALE, Liveness.window(null, Liveness.Activity.WAITING_FOR_INPUT, own,
                Liveness.carried(Liveness.Activity.WAITING_FOR_INPUT, DEPLOYMENT, true), STALE),
                "a host's entry that waits: its stale-after, even with its own allowance");
        assertEquals(STALE, Liveness.window(null, null, own, (Duration) null, STALE), "an entry that states nothing");
        assertEquals(own, Liveness.window(null, Liveness.Activity.IN_TURN, own,
                Liveness.carried(Liveness.Activity.IN_TURN, DEPLOYMENT, false), STALE));
    }
}
