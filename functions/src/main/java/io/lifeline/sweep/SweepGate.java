package io.lifeline.sweep;

import java.time.Duration;
import java.time.Instant;

/**
 * Whether a sweep that is due judges at all: the handler asks once per sweep, with its one reading of the time and
 * how late the sweep is against its due time (zero when on time), and a sweep held back judges nobody and logs
 * outcome {@code skipped_late}. Whoever builds the handler supplies the gate; the Lambda runtime's handler judges
 * every sweep ({@link #JUDGE_EVERY_SWEEP}): a late schedule there says nothing about the heartbeats, and the
 * three-quarter-interval miss spacing keeps bunched or repeated sweeps from counting a miss twice.
 */
@FunctionalInterface
public interface SweepGate {
    /** Every sweep judges, however late. */
    SweepGate JUDGE_EVERY_SWEEP = (now, late) -> null;

    /** Null: the sweep judges; a {@link Hold}: it judges nobody. */
    Hold hold(Instant now, Duration late);

    /**
     * A sweep held back. {@code until}: the end of an earlier hold this sweep falls within (its line adds
     * {@code heldUntil}), or null when its own lateness holds it.
     */
    record Hold(Instant until) {
    }
}
