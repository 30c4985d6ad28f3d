package io.lifeline.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.agent.SweepPlan;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.SweepStore;
import io.lifeline.store.TeamStore;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The scheduled sweep. EventBridge schedules fire at most once a minute, so one invocation runs
 * {@code SWEEPS_PER_INVOCATION} sweeps spaced by {@code SWEEP_INTERVAL_MS} (4 x 15 s by default). Every
 * sweep logs one JSON line that is also its metrics document (EMF), so a sweep that stops running shows as
 * missing data; it answers the ids it marked dead.
 */
public final class SweepHandler implements RequestHandler<ScheduledEvent, List<String>> {
    private final Sweeper sweeper;
    private final Config config;
    private final java.time.Clock clock;
    /** A monotonic clock in nanoseconds ({@link System#nanoTime} outside tests), for the spacing of sweeps. */
    private final LongSupplier nanoTime;

    public SweepHandler() {
        this(Wiring.fromEnvironment());
    }

    public SweepHandler(Wiring wiring) {
        this(wiring, System::nanoTime);
    }

    public SweepHandler(Wiring wiring, LongSupplier nanoTime) {
        this.config = wiring.config();
        this.clock = wiring.clock();
        this.nanoTime = nanoTime;
        io.lifeline.store.Tables table = config.tables();
        this.sweeper = new Sweeper(new SweepStore(wiring.dynamo(), table, config.sweepSegments()),
                new TeamStore(wiring.dynamo(), table),
                new SweepPlan.Policy(config.selfPreservationThreshold(), config.selfPreservationMinAlive()),
                new Sweeper.Timing(config.missSpacing(), config.reviveLongestRun()), wiring.clock(),
                config.sweepGraceFrom());
    }

    @Override
    public List<String> handleRequest(ScheduledEvent event, Context context) {
        List<String> dead = new ArrayList<>();
        long start = nanoTime.getAsLong();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "sweep")) {
            for (int i = 0; i < config.sweepsPerInvocation(); i++) {
                long dueNanos = start + config.sweepInterval().multipliedBy(i).toNanos();
                waitUntil(dueNanos);
                // One reading of the time decides both whether this sweep is late and what it judges: a stall
                // after the check cannot make it judge at a time the heartbeats queued behind the stall missed.
                Instant now = clock.instant();
                Duration late = i == 0 ? lateAfter(event, now)
                        : Duration.ofNanos(Math.max(0, nanoTime.getAsLong() - dueNanos));
                if (config.sweepSkipsLateSchedules() && late.compareTo(config.sweepInterval().dividedBy(2)) > 0) {
                    // Only where heartbeats share this process (SWEEP_SKIPS_LATE_SCHEDULES, Lifeline Local): the
                    // process or its scheduler was stalled (GC pause, a frozen host), and heartbeats that queued
                    // meanwhile are landing now. Judging before they land would blame agents for our own silence,
                    // so this sweep judges nobody; the next one, a whole interval later, does. Lateness is measured
                    // on a monotonic clock: Local's scheduler stamps each event with the time it was due, never the
                    // time it ran. It writes no SweepDuration, so sweeps that are always late show as a sweep that
                    // does not run.
                    Log.emit(Log.line("WARN", "sweep").put("outcome", "skipped_late")
                            .put("lateMs", late.toMillis()).put("due", now.minus(late).toString()));
                    continue;
                }
                long sweepStart = System.nanoTime();
                Sweeper.Report report;
                try {
                    report = sweeper.sweepOnce(now);
                } catch (RuntimeException e) {
                    // The invocation fails (and Lambda counts the error); the line says why.
                    Log.emit(Log.line("ERROR", "sweep").put("outcome", "error").put("error", e.toString())
                            .put("durationMs", Duration.ofNanos(System.nanoTime() - sweepStart).toMillis()));
                    throw e;
                }
                dead.addAll(report.markedDead());
                log(report, clock.instant());
            }
        }
        return dead;
    }

    /**
     * How late the first sweep is: from the time its schedule was due (the event's time) to {@code now}. An
     * event without a time (a manual invoke, a test) is on time.
     */
    private static Duration lateAfter(ScheduledEvent event, Instant now) {
        if (event == null || event.getTime() == null) {
            return Duration.ZERO;
        }
        return Duration.between(Instant.ofEpochMilli(event.getTime().getMillis()), now);
    }

    private void waitUntil(long dueNanos) {
        long wait = dueNanos - nanoTime.getAsLong();
        if (wait > 0) {
            try {
                Thread.sleep(Duration.ofNanos(wait).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * What a sweep did: {@code held} when self-preservation held a team back, {@code partial} when some writes
     * were skipped on errors (retried next sweep), {@code acted} when it marked or counted misses, else
     * {@code idle} (Lifeline Local's console hides idle sweeps).
     */
    static String outcome(Sweeper.Report r) {
        if (!r.teamsHeld().isEmpty()) {
            return "held";
        }
        if (r.skippedOnError() > 0) {
            return "partial";
        }
        return !r.markedDead().isEmpty() || r.missesRecorded() > 0 || r.raceLostToHeartbeat() > 0
                || r.missesTooSoon() > 0 || !r.revivesEnded().isEmpty() ? "acted" : "idle";
    }

    static void log(Sweeper.Report r, java.time.Instant now) {
        var line = Log.line(r.skippedOnError() > 0 ? "WARN" : "INFO", "sweep");
        line.put("outcome", outcome(r)).put("at", r.at().toString())
                .put("itemsScanned", r.itemsScanned()).put("aliveSeen", r.aliveSeen())
                .put("missesRecorded", r.missesRecorded()).put("raceLostToHeartbeat", r.raceLostToHeartbeat())
                .put("missesTooSoon", r.missesTooSoon())
                .put("skippedOnError", r.skippedOnError()).put("consumedReadUnits", r.consumedReadUnits())
                .put("durationMs", r.took().toMillis());
        line.set("markedDead", Json.MAPPER.valueToTree(r.markedDead()));
        line.set("teamsHeld", Json.MAPPER.valueToTree(r.teamsHeld()));
        line.set("revivesEnded", Json.MAPPER.valueToTree(r.revivesEnded()));
        Metrics.on(line, Metrics.SWEEP_FUNCTION, now)
                .put(Metrics.SWEEP_DURATION, Metrics.Unit.MILLISECONDS, r.took().toMillis())
                .count(Metrics.AGENTS_SCANNED, r.aliveSeen())
                .count(Metrics.AGENTS_MARKED_DEAD, r.markedDead().size())
                .count(Metrics.SELF_PRESERVATION_HOLDS, r.teamsHeld().size())
                .count(Metrics.SWEEP_WRITE_ERRORS, r.skippedOnError())
                .emit();
    }
}
