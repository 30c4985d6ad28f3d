package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link Liveness}'s parking rule at its boundaries: until when, the deadline a park gives, and when it holds. */
@Tag("unit")
class LivenessParkTest {
    private static final Instant NOW = Instant.parse("2026-11-28T14:00:00Z");
    private static final Duration STALE = Duration.ofSeconds(60);

    @Test
    void until_isTheResetGiven_nowForOnePast_elseTheDefault() {
        assertEquals(NOW.plusSeconds(300), Liveness.parkUntil(NOW.plusSeconds(300), NOW, Liveness.DEFAULT_PARK));
        assertEquals(NOW, Liveness.parkUntil(NOW.minusSeconds(5), NOW, Liveness.DEFAULT_PARK));
        assertEquals(NOW.plus(Duration.ofMinutes(30)), Liveness.parkUntil(null, NOW, Liveness.DEFAULT_PARK));
    }

    @Test
    void theDeadline_isTheResetPlusStaleAfter_neverShorterThanTheOneItHad() {
        Instant until = NOW.plusSeconds(600);
        assertEquals(until.plus(STALE), Liveness.parkedDeadline(until, STALE, NOW.plusSeconds(60)));
        Instant eightHours = NOW.plus(Duration.ofHours(8));
        assertEquals(eightHours, Liveness.parkedDeadline(until, STALE, eightHours));
        assertEquals(until.plus(STALE), Liveness.parkedDeadline(until, STALE, null));
    }

    @Test
    void aPark_holdsAtItsDeadline_notAMillisecondAfter() {
        Instant deadline = Liveness.parkedDeadline(NOW.plusSeconds(600), STALE);
        assertEquals(NOW.plusSeconds(600).plus(STALE), deadline);
        assertFalse(Liveness.stale(deadline, deadline), "the park's deadline is not stale at itself");
        assertTrue(Liveness.stale(deadline, deadline.plusMillis(1)), "1 ms after it, judged as any silent agent");
    }

    @Test
    void aParkedAgent_isNeverStalled_asItWaits() {
        Liveness.Progress old = new Liveness.Progress(NOW.minus(Duration.ofHours(1)), false, null);
        // The sweep reads a park as a wait (AgentItems.progressSeen): a parked agent in a turn is not stalled.
        assertFalse(Liveness.stalled(AgentStatus.WORKING, old, true, Duration.ofSeconds(120), NOW));
        assertTrue(Liveness.stalled(AgentStatus.WORKING, old, false, Duration.ofSeconds(120), NOW));
    }
}
