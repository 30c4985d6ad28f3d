package io.lifeline.local.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.sweep.SweepGate;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Local's late-sweep rule on its own (LateSweepTest, SweepClockTest and FreezeTest hold it end to end): a sweep more
 * than half an interval late is held, and so is every sweep within one interval after it, naming that instant.
 */
@Tag("unit")
class LateSweepGateTest {
    private static final Duration INTERVAL = Duration.ofSeconds(15);
    private static final Instant T = Instant.parse("2026-03-01T12:00:00Z");

    @Test
    void hold_ofASweepOnTimeOrUpToHalfAnIntervalLate_isNone() {
        LateSweepGate gate = new LateSweepGate(INTERVAL);
        assertNull(gate.hold(T, Duration.ZERO));
        assertNull(gate.hold(T, Duration.ofMillis(7_500)), "exactly half an interval late still judges");
    }

    @Test
    void hold_ofASweepMoreThanHalfAnIntervalLate_holdsIt_andEverySweepWithinAnIntervalAfter() {
        LateSweepGate gate = new LateSweepGate(INTERVAL);
        assertEquals(new SweepGate.Hold(null), gate.hold(T, Duration.ofMillis(7_501)), "held by its own lateness");
        assertEquals(new SweepGate.Hold(T.plus(INTERVAL)), gate.hold(T.plusSeconds(5), Duration.ZERO),
                "an on-time sweep inside the interval after is held until its end");
        assertEquals(new SweepGate.Hold(T.plus(INTERVAL)), gate.hold(T.plus(INTERVAL).minusMillis(1), Duration.ZERO));
        assertNull(gate.hold(T.plus(INTERVAL), Duration.ZERO), "a whole interval after, the next sweep judges");
    }

    @Test
    void hold_afterTwoLateSweeps_lastsAnIntervalFromTheLaterOne() {
        LateSweepGate gate = new LateSweepGate(INTERVAL);
        gate.hold(T.plusSeconds(10), Duration.ofSeconds(20));
        gate.hold(T, Duration.ofSeconds(20)); // an earlier reading arriving second does not shorten the hold
        assertEquals(new SweepGate.Hold(T.plusSeconds(10).plus(INTERVAL)),
                gate.hold(T.plusSeconds(20), Duration.ZERO));
    }
}
