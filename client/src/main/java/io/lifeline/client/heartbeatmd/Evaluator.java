package io.lifeline.client.heartbeatmd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Decides which actions are due at one instant (the heartbeat.md format's schedule evaluation and parsing).
 *
 * <p>When an action is next due ({@link #dueAt}):
 * <ul>
 *   <li>failed with attempts left: its {@code next_retry};</li>
 *   <li>no schedule: now, while pending (once);</li>
 *   <li>{@code at:}: the instant, while pending (once);</li>
 *   <li>{@code every:}: the last run ({@link Action#lastRun()}) plus the interval; now if it never ran;</li>
 *   <li>{@code cron:}, {@code daily:}, {@code hourly}: the first slot after the last run; if it never ran, the first
 *       slot after the previous wake ({@code last_wake}), or after now when there was none (so a new daily action
 *       waits for its time rather than running at once);</li>
 *   <li>{@code startup}: now, on a startup wake (asked for by the caller, or the first wake of a file with no
 *       {@code last_wake});</li>
 *   <li>{@code on_change:<path>}: now, when the watched file's SHA-256 differs from the action's
 *       {@code watched_hash} (a missing file hashes as {@code absent}; no recorded hash counts as changed).</li>
 * </ul>
 * Recurring forms (every, cron, daily, hourly, startup, on_change) run again whether the last run completed or
 * failed; one-shot forms (none, at) do not run again after completing or using up their attempts.
 * An action a person asked to run afresh ({@link Action#rerunAsked()}: edited since its last result, or set back
 * to {@code status: pending}) is due now (an {@code at:} one at its instant), with its retries counted anew.
 *
 * <p>A due action whose condition does not hold is SKIPPED; otherwise, one whose {@code depends_on} action(s) are not
 * {@code completed} is BLOCKED ({@link Wake} looks again just before running, so a dependency that completes
 * earlier in the same wake unblocks it). Neither is written to the file: they are reported, and looked at again next wake. Due
 * actions are ordered CRITICAL, HIGH, MEDIUM, LOW, BG, then in file order.
 */
public final class Evaluator {
    public static final String ABSENT = "absent";

    private final Clock clock;
    private final Function<String, String> env;

    public Evaluator(Clock clock, Function<String, String> env) {
        this.clock = Objects.requireNonNull(clock);
        this.env = Objects.requireNonNull(env);
    }

    /** Reads the real environment. */
    public Evaluator(Clock clock) {
        this(clock, System::getenv);
    }

    /** DEFERRED: a due [LOW] action the wake had no time left for ({@link Wake}); it stays pending. */
    public enum Verdict { DUE, NOT_DUE, BLOCKED, SKIPPED, DEFERRED }

    /**
     * @param dueAt     when it is (or was) due; null when nothing is expected from it
     * @param watchHash for on_change actions, the watched file's hash now; otherwise null
     */
    public record Decision(Action action, Verdict verdict, Instant dueAt, String reason, String watchHash) {
    }

    /** Every action's decision (file order) and the due ones in execution order. */
    public record Evaluation(Instant now, List<Decision> decisions, List<Action> due) {
        public Decision decision(String actionId) {
            return decisions.stream().filter(d -> d.action().id().equals(actionId)).findFirst().orElse(null);
        }
    }

    /** Evaluates at the clock's current instant; {@code startup} marks a wake at the agent's start. */
    public Evaluation evaluate(HeartbeatFile file, Path baseDir, boolean startup) {
        Instant now = clock.instant();
        boolean startupWake = startup || file.lastWake() == null;
        List<Decision> decisions = new ArrayList<>();
        List<Decision> due = new ArrayList<>();
        Condition.Context context = new Condition.Context(baseDir, env);
        for (Action a : file.actions()) {
            String hash = a.schedule().kind() == ScheduleSpec.Kind.ON_CHANGE
                    ? hashOf(baseDir.resolve(a.schedule().watchPath())) : null;
            Instant at = dueAt(a, file.lastWake(), now, startupWake, hash);
            Decision d;
            if (at == null || at.isAfter(now)) {
                d = new Decision(a, Verdict.NOT_DUE, at, at == null ? "nothing expected" : "due at " + at, hash);
            } else {
                String waiting = unmetDependency(file, a);
                if (a.condition() != null && !a.condition().holds(context)) {
                    d = new Decision(a, Verdict.SKIPPED, at, "condition '" + a.field("condition") + "' does not hold", hash);
                } else if (waiting != null) {
                    d = new Decision(a, Verdict.BLOCKED, at, waiting, hash);
                } else {
                    d = new Decision(a, Verdict.DUE, at, "due since " + at, hash);
                    due.add(d);
                }
            }
            decisions.add(d);
        }
        List<Action> ordered = due.stream().map(Decision::action)
                .sorted(Comparator.comparing(Action::priority)).toList();
        return new Evaluation(now, List.copyOf(decisions), ordered);
    }

    /** Null when every dependency is completed, otherwise what it waits on. */
    static String unmetDependency(HeartbeatFile file, Action a) {
        for (String dep : a.dependsOn()) {
            Action d = file.action(dep);
            if (d.status() != ActionStatus.COMPLETED) {
                return "waiting on " + dep + " (" + d.status().label() + ")";
            }
        }
        return null;
    }

    /**
     * When the action is next due, or null when nothing is expected from it (see the class comment).
     * {@code watchHash} is the watched file's current hash for on_change actions.
     */
    static Instant dueAt(Action a, Instant lastWake, Instant now, boolean startupWake, String watchHash) {
        ScheduleSpec spec = a.schedule();
        ActionStatus status = a.status();
        if (a.rerunAsked()) {
            return spec.kind() == ScheduleSpec.Kind.AT ? spec.schedule().nextAfter(Instant.MIN) : now;
        }
        if (status == ActionStatus.FAILED) {
            Instant retry = a.instantField("next_retry");
            if (retry != null && attemptsSoFar(a) < a.maxAttempts()) {
                return retry;
            }
            if (!spec.recurring()) {
                return null;
            }
        }
        if (status == ActionStatus.COMPLETED && !spec.recurring()) {
            return null;
        }
        Instant lastRun = a.lastRun();
        switch (spec.kind()) {
            case NONE:
                return now;
            case AT:
                return spec.schedule().nextAfter(Instant.MIN); // the at: instant itself
            case EVERY:
                return lastRun == null ? now : spec.schedule().nextAfter(lastRun);
            case CALENDAR: {
                Instant base = lastRun != null ? lastRun : lastWake != null ? lastWake : now;
                return spec.schedule().nextAfter(base);
            }
            case STARTUP:
                return startupWake ? now : null;
            case ON_CHANGE:
                return watchHash.equals(a.field("watched_hash")) ? null : now;
            default:
                throw new IllegalStateException("unhandled schedule kind " + spec.kind());
        }
    }

    /** The n of {@code retry_count: n/max} while in a retry chain, else 0. */
    static int attemptsSoFar(Action a) {
        String rc = a.field("retry_count");
        if (rc == null || a.status() != ActionStatus.FAILED || a.rerunAsked()) {
            return 0;
        }
        return Integer.parseInt(rc.substring(0, rc.indexOf('/')));
    }

    /** SHA-256 of a file's bytes, or {@link #ABSENT} when there is no such file. */
    static String hashOf(Path path) {
        if (!Files.isRegularFile(path)) {
            return ABSENT;
        }
        try {
            return HeartbeatFile.sha256Hex(Files.readAllBytes(path)).substring(0, 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read watched file " + path, e);
        }
    }

    /**
     * Why an action that did not run in a wake did not, and when it next will, for a person: {@code due} is when it
     * is next due after the wake (null: nothing expected from it).
     */
    static String notRunReason(Action a, Instant due) {
        if (due != null) {
            if (a.status() == ActionStatus.FAILED && a.instantField("next_retry") != null
                    && attemptsSoFar(a) < a.maxAttempts()) {
                return "retry " + (attemptsSoFar(a) + 1) + "/" + a.maxAttempts() + " due at " + due;
            }
            return "not due; next at " + due;
        }
        ScheduleSpec.Kind kind = a.schedule().kind();
        if (kind == ScheduleSpec.Kind.STARTUP) {
            return "runs on a startup wake (--startup)";
        }
        if (kind == ScheduleSpec.Kind.ON_CHANGE) {
            return "runs when " + a.schedule().watchPath() + " changes";
        }
        if (a.status() == ActionStatus.FAILED) {
            return "failed, no attempts left (" + a.field("retry_count") + "); fix it (an edited action runs again) or "
                    + "set status: pending to run it again";
        }
        if (a.status() == ActionStatus.COMPLETED) {
            return "completed, and runs once; set status: pending (or edit it) to run it again";
        }
        return "nothing expected from it";
    }

    /** The retry delay for attempt n (1-based) is base * 2^(n-1), at most 1h. */
    static Duration retryDelay(Duration base, int attempt) {
        Duration d = base.multipliedBy(1L << Math.min(attempt - 1, 20));
        return d.compareTo(Duration.ofHours(1)) > 0 ? Duration.ofHours(1) : d;
    }
}
