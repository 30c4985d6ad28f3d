package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A flapping flag's judgement of time: its check resolves it once the agent has gone the stable window without a
 * flip, and it holds no change from one sweep after that on, whether or not its check ran.
 */
@Tag("unit")
class FlapHoldTest {
    private static final Instant FLIP = Instant.parse("2026-03-01T12:00:32Z");
    private static final FlapHold HOLD = new FlapHold(Duration.ofSeconds(600), Duration.ofSeconds(15));

    @Test
    void theCheckResolves_afterTheStableWindow() {
        assertEquals(FLIP.plusSeconds(600), HOLD.stableAt(FLIP));
        assertFalse(HOLD.stable(FLIP, FLIP.plusSeconds(599)));
        assertTrue(HOLD.stable(FLIP, FLIP.plusSeconds(600)));
    }

    @Test
    void theFlagHoldsAChange_untilOneSweepAfterTheCheckWasDue() {
        assertEquals(FLIP.plusSeconds(615), HOLD.until(FLIP));
        assertTrue(HOLD.holds(FLIP, FLIP.plusSeconds(1)));
        assertTrue(HOLD.holds(FLIP, FLIP.plusSeconds(614)));
        assertTrue(HOLD.holds(FLIP, FLIP.plusMillis(614_999)));
        assertFalse(HOLD.holds(FLIP, FLIP.plusSeconds(615)), "at the bound: alerted");
        assertFalse(HOLD.holds(FLIP, FLIP.plusSeconds(7 * 24 * 3600)), "not held until the item expires");
    }

    @Test
    void aWorkingCheck_hasTheFirstWord() {
        // The check runs at stableAt; the flag lapses a sweep later, so a check that ran ended it before then.
        assertTrue(HOLD.holds(FLIP, HOLD.stableAt(FLIP)));
    }

    @Test
    void negativeDurations_areRefused() {
        assertThrows(IllegalArgumentException.class, () -> new FlapHold(Duration.ofSeconds(-1), Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new FlapHold(Duration.ZERO, Duration.ofSeconds(-1)));
    }
}
