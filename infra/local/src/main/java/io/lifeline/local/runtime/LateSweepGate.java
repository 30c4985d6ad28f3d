package io.lifeline.local.runtime;

import io.lifeline.sweep.SweepGate;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Local's late-sweep rule, handed to the sweep function as its {@link SweepGate}. Heartbeats and the sweep share
 * Local's one process, so a sweep that starts more than half an interval after it was due means the process or its
 * scheduler was stalled (a GC pause, a frozen host) and the heartbeats that queued meanwhile are landing now:
 * judging first would blame agents for Local's own silence. Such a sweep judges nobody, and neither does any sweep
 * within one interval after it (the schedule and the queue keep separate times, so the next may come sooner): the
 * first to judge comes a whole interval later. Local stamps each due time on a monotonic clock, never with the
 * time it ran ({@link Scheduler}, the SQS stand-in). One gate per sweep function instance, as the hold was one per
 * handler.
 */
public final class LateSweepGate implements SweepGate {
    private final Duration interval;
    /** No sweep judges before this instant: one interval after a sweep held for its own lateness. */
    private final AtomicReference<Instant> heldUntil = new AtomicReference<>(Instant.MIN);

    /** {@code interval}: the sweep's interval ({@code SWEEP_INTERVAL_MS}, as the function reads it). */
    public LateSweepGate(Duration interval) {
        this.interval = interval;
    }

    @Override
    public Hold hold(Instant now, Duration late) {
        if (late.compareTo(interval.dividedBy(2)) > 0) {
            heldUntil.accumulateAndGet(now.plus(interval), (a, b) -> a.isAfter(b) ? a : b);
            return new Hold(null);
        }
        Instant held = heldUntil.get();
        return now.isBefore(held) ? new Hold(held) : null;
    }
}
