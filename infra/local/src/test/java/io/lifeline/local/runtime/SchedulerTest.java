package io.lifeline.local.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Local's schedule keeps its firings on a monotonic clock: on time they keep their rate; a firing that starts
 * late is measured late from when it was due; missed slots are never made up back to back, the next firing
 * coming a whole period after a late or long one ended; and a firing stalled in the middle of its run makes the
 * next one late. Pure arithmetic on nanoseconds; {@link FreezeTest} freezes a real process.
 */
@Tag("unit")
class SchedulerTest {
    private static final long SECOND = Duration.ofSeconds(1).toNanos();
    private static final long MS = Duration.ofMillis(1).toNanos();

    private static long lateMillis(Scheduler.Next next, long startedAt) {
        return Scheduler.lateMillis(next.due(), startedAt);
    }

    @Test
    void next_afterAFiringOnTime_keepsTheRate() {
        assertEquals(new Scheduler.Next(11 * SECOND, 11 * SECOND),
                Scheduler.next(10 * SECOND, SECOND, 10 * SECOND + 2 * MS, 10 * SECOND + 40 * MS));
        assertEquals(new Scheduler.Next(11 * SECOND, 11 * SECOND),
                Scheduler.next(10 * SECOND, SECOND, 10 * SECOND, 10 * SECOND + 999 * MS),
                "a slow firing that ended inside its period does not shift the next");
    }

    @Test
    void frozenWhileWaiting_theFiringIsLate_theNextComesAWholePeriodAfterItAndIsOnTime() {
        // Due at 10 s; the process froze from 9.5 s to 15.5 s: the firing started at 15.5 s and ended at 15.51 s.
        assertEquals(5_500, Scheduler.lateMillis(10 * SECOND, 15_500 * MS));
        Scheduler.Next next = Scheduler.next(10 * SECOND, SECOND, 15_500 * MS, 15_510 * MS);
        assertEquals(16_510 * MS, next.runAt());
        assertEquals(10, lateMillis(next, next.runAt()), "late only by the stalled firing's own 10 ms: judged");
    }

    @Test
    void frozenInTheMiddleOfAFiring_theNextIsLate_andTheOneAfterOnTime() {
        // Due and started at 10 s; frozen from 10.01 s to 16.01 s in the middle of its run, which ended at 16.02 s.
        Scheduler.Next next = Scheduler.next(10 * SECOND, SECOND, 10 * SECOND, 16_020 * MS);
        assertEquals(17_020 * MS, next.runAt(), "a whole period after the stalled firing ended");
        assertEquals(6_020, lateMillis(next, next.runAt()), "late by the stall");
        // That one is skipped at once; the one after it is a whole period later and on time.
        Scheduler.Next after = Scheduler.next(next.due(), SECOND, 17_020 * MS, 17_025 * MS);
        assertEquals(18_025 * MS, after.runAt());
        assertEquals(5, lateMillis(after, after.runAt()), "late only by the skipped firing's own 5 ms: judged");
    }

    @Test
    void next_worksAcrossTheWrapOfNanoTime() {
        long due = Long.MAX_VALUE - SECOND / 2;
        assertEquals(new Scheduler.Next(due + SECOND, due + SECOND), Scheduler.next(due, SECOND, due, due + 10 * MS));
    }

    @Test
    void lateMillis_isHowLongAfterItWasDueAFiringStarts_neverNegative() {
        assertEquals(6_000, Scheduler.lateMillis(10 * SECOND, 16 * SECOND));
        assertEquals(0, Scheduler.lateMillis(10 * SECOND, 9 * SECOND));
    }

    @Test
    void lateMillis_withRequestsWaitingAtTheFrontDoor_isTheLongerOfTheTwo() {
        assertEquals(4_000, Scheduler.lateMillis(10 * SECOND, 10 * SECOND, 4 * SECOND));
        assertEquals(6_000, Scheduler.lateMillis(10 * SECOND, 16 * SECOND, 4 * SECOND));
        assertEquals(0, Scheduler.lateMillis(10 * SECOND, 9 * SECOND, 0));
    }

    @Test
    void period_ofTheSweepsSchedule_isItsIntervalTimesTheSweepsOfOneSchedule_elseTheRate() {
        assertEquals(Duration.ofSeconds(60), Scheduler.period(Map.of("SWEEP_INTERVAL_MS", "15000",
                "SWEEPS_PER_INVOCATION", "4"), "rate(1 minute)"), "the template's defaults fill the minute");
        assertEquals(Duration.ofMillis(800), Scheduler.period(Map.of("SWEEP_INTERVAL_MS", "200",
                "SWEEPS_PER_INVOCATION", "4"), "rate(1 minute)"), "scaled with the interval");
        assertEquals(Duration.ofMinutes(5), Scheduler.period(Map.of(), "rate(5 minutes)"));
    }
}
