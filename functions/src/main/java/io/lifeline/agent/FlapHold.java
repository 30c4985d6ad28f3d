package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;

/**
 * How long an agent's flapping flag holds its changes back from the per-agent alerts (docs/alerts-noise.md), judged
 * from the agent's newest flip (a change between alive and down) alone. The flag's check resolves it once the agent
 * has gone {@code stable} without a flip ({@link #stableAt}); the flag holds a change only while the change comes
 * before that plus one {@code sweep} interval ({@link #until}), so a check that failed, or never ran, cannot hold an
 * agent's alerts for longer: the next change after the bound is alerted as ever, and ends the flag. The extra sweep
 * leaves a working check the first word: it runs at {@link #stableAt}, one sweep before the bound.
 */
public record FlapHold(Duration stable, Duration sweep) {
    public FlapHold {
        if (stable.isNegative() || sweep.isNegative()) {
            throw new IllegalArgumentException("the stable window and the sweep interval cannot be negative");
        }
    }

    /** When an agent whose newest flip was at {@code lastFlip} has been stable long enough for its flag to end. */
    public Instant stableAt(Instant lastFlip) {
        return lastFlip.plus(stable);
    }

    /** Whether, at {@code now}, the agent has been stable long enough since {@code lastFlip} (the check resolves). */
    public boolean stable(Instant lastFlip, Instant now) {
        return !now.isBefore(stableAt(lastFlip));
    }

    /** The flag's bound: a change from this instant on is no longer held, whether or not the check ran. */
    public Instant until(Instant lastFlip) {
        return stableAt(lastFlip).plus(sweep);
    }

    /** Whether a flag still holds a change at {@code at}, the agent's newest flip before it at {@code lastFlip}. */
    public boolean holds(Instant lastFlip, Instant at) {
        return at.isBefore(until(lastFlip));
    }
}
