package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The answers {@link Liveness} gives the rest of the code, each at its boundary: what the heartbeat write stores
 * ({@link Liveness#due}, every row of docs/liveness.md's table), a scheduled agent's deadline, and the judgements the
 * sweep, a host lease, the crash-recovery answer and the restart rule ask of it, all drawing the line where
 * {@link Liveness#stale} does: alive at the deadline itself, stale one millisecond after it.
 */
@Tag("unit")
class LivenessBoundariesTest {
    private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration STALE = Duration.ofSeconds(60);
    private static final Liveness.Allowances DEPLOYMENT = Liveness.Allowances.DEFAULTS;

    private static Agent agent(AgentStatus status, Instant heartbeatAt, Instant deadline, String schedule) {
        return new Agent("t", "a", "A", "worker", null, status, heartbeatAt, deadline, 0, 4, STALE, 2, null,
                AgentStats.NONE, AT.minusSeconds(600), null, null, schedule, schedule == null ? null : "UTC");
    }

    @Test
    void due_isWindowsRule_inTheFormTheWriteStores_onEveryRowOfTheTable() {
        Duration within = Duration.ofSeconds(7);
        assertEquals(new Liveness.Due.At(AT.plus(within)),
                Liveness.due(AT, within, Liveness.Activity.IN_TURN, Duration.ofMinutes(15)), "nextWithin wins");
        for (Liveness.Activity activity : List.of(Liveness.Activity.IN_TURN, Liveness.Activity.WAITING_FOR_INPUT,
                Liveness.Activity.WAITING_FOR_PERSON)) {
            Duration carried = Liveness.carried(activity, DEPLOYMENT, false);
            assertEquals(new Liveness.Due.AfterAllowance(AT, activity, carried),
                    Liveness.due(AT, null, activity, carried), activity.name());
            assertEquals(new Liveness.Due.AfterStaleAfter(AT), Liveness.due(AT, null, activity,
                    Liveness.carried(activity, DEPLOYMENT, true)), activity + " through a host: its stale-after");
        }
        assertEquals(new Liveness.Due.AfterStaleAfter(AT), Liveness.due(AT, null, Liveness.Activity.PLAIN, null));
        assertEquals(new Liveness.Due.AfterStaleAfter(AT), Liveness.due(AT, null, null, null), "states nothing");
        assertEquals(new Liveness.Due.AfterStaleAfter(AT), Liveness.due(AT), "a join");
    }

    @Test
    void scheduled_isTheNextSlotPlusStaleAfter_andNoneOnceAnAtScheduleIsServed() {
        assertEquals(AT.plus(Duration.ofMinutes(5)).plus(STALE), Liveness.scheduled("every:5m", "UTC", AT, STALE));
        assertEquals(Instant.parse("2026-03-02T02:01:00Z"), Liveness.scheduled("daily:02:00", "UTC", AT, STALE));
        assertNull(Liveness.scheduled("at:2026-03-01T11:00:00Z", "UTC", AT, STALE), "after its one slot: none");
        Agent written = agent(AgentStatus.READY, AT, AT.plus(STALE), "every:5m");
        assertTrue(Liveness.followsSchedule(written, null));
        assertEquals(AT.plus(Duration.ofMinutes(5)).plus(STALE), Liveness.scheduled(written));
        assertFalse(Liveness.followsSchedule(written, Duration.ofSeconds(30)), "a beat's own nextWithin wins");
        assertFalse(Liveness.followsSchedule(agent(AgentStatus.READY, AT, AT.plus(STALE), null), null));
        assertFalse(Liveness.followsSchedule(agent(AgentStatus.READY, null, null, "every:5m"), null),
                "never heard: nothing to follow");
    }

    @Test
    void sessionActive_atTheDeadlineItself_andNotOneMillisecondAfter() {
        Agent a = agent(AgentStatus.WORKING, AT, AT.plus(STALE), null);
        Instant deadline = a.deadline();
        assertTrue(Liveness.sessionActive(a, deadline));
        assertEquals(!Liveness.stale(deadline, deadline), Liveness.sessionActive(a, deadline));
        assertFalse(Liveness.sessionActive(a, deadline.plusMillis(1)));
        assertEquals(!Liveness.stale(deadline, deadline.plusMillis(1)), Liveness.sessionActive(a, deadline.plusMillis(1)));
        assertFalse(Liveness.sessionActive(agent(AgentStatus.DEAD, AT, AT.plus(STALE), null), AT), "not alive");
        assertFalse(Liveness.sessionActive(agent(AgentStatus.READY, AT, null, "at:2026-03-01T11:00:00Z"), AT),
                "no further beat expected: over");
    }

    @Test
    void staleBefore_isExactlyWhereALeaseBeatLeavesTheAgentStale() {
        Instant now = AT.plusSeconds(100);
        Instant bound = Liveness.staleBefore(now, STALE);
        for (long offsetMs : new long[] {-1, 0, 1}) {
            Instant beat = bound.plusMillis(offsetMs);
            assertEquals(Liveness.stale(Liveness.viaLease(beat, STALE), now), beat.isBefore(bound),
                    "lease beat " + offsetMs + " ms from the bound");
        }
    }

    @Test
    void leaseSilent_andHostLeaseExpired_drawTheLineAtTheLeasesDeadline() {
        Instant renewed = AT;
        Instant deadline = Liveness.viaLease(renewed, STALE);
        assertFalse(Liveness.leaseSilent(renewed, STALE, deadline));
        assertTrue(Liveness.leaseSilent(renewed, STALE, deadline.plusMillis(1)));
        HostLease.Seen lease = new HostLease.Seen("t", "h", renewed, null, Map.of(HostLease.key("a"), AT.toEpochMilli()),
                Map.of());
        List<HostLease.Linked> linked = List.of(new HostLease.Linked("t", "a", "h", AgentStatus.READY, STALE, null));
        assertTrue(HostLease.expired(List.of(lease), linked, Map.of(), deadline).isEmpty(), "at the deadline: alive");
        assertEquals(1, HostLease.expired(List.of(lease), linked, Map.of(), deadline.plusMillis(1)).size());
    }

    @Test
    void paused_untilItsEnd_notAtIt() {
        Instant until = AT.plusSeconds(60);
        assertTrue(Liveness.paused(until, until.minusMillis(1)));
        assertFalse(Liveness.paused(until, until));
        assertFalse(Liveness.paused(null, AT));
    }

    @Test
    void afterStart_givesOneWindowFromTheStart_andLeavesALaterDeadlineAlone() {
        SweepPlan.Observed a = new SweepPlan.Observed("t", "a", AgentStatus.READY, AT, AT.plus(STALE), 1, 2, 5, null);
        Instant start = AT.plusSeconds(600);
        SweepPlan.Observed moved = Liveness.afterStart(a, start);
        assertEquals(Liveness.deadline(start, STALE), moved.deadline());
        assertEquals(a.heartbeatAt(), moved.heartbeatAt());
        assertEquals(a.misses(), moved.misses());
        assertFalse(Liveness.stale(moved.deadline(), start.plus(STALE)), "alive at the window's end from the start");
        assertSame(a, Liveness.afterStart(a, AT.minusSeconds(1)), "its own deadline is later");
        assertSame(a, Liveness.afterStart(a, null));
        SweepPlan.Observed unheard = new SweepPlan.Observed("t", "b", AgentStatus.READY, null, null, 0, 2, 0, null);
        assertSame(unheard, Liveness.afterStart(unheard, start));
    }
}
