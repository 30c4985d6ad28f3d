package io.lifeline.config;

import io.lifeline.agent.Liveness;
import io.lifeline.app.AgentFlaps;
import io.lifeline.app.AlertBursts;
import io.lifeline.store.dynamo.Tables;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Every environment variable the functions read, in one place, validated once at init. template.yaml sets
 * them (by {@code !Ref} where they name a resource); Lifeline Local passes the same map.
 */
public record Config(
        Tables tables,
        Duration defaultStaleAfter,
        int defaultGraceMisses,
        Duration heartbeatInterval,
        Duration recoveryMaxAge,
        Duration transitionRetention,
        Duration sweepInterval,
        int sweepsPerInvocation,
        int sweepSegments,
        int sweepParts,
        double selfPreservationThreshold,
        int selfPreservationMinAlive,
        double fleetSelfPreservationThreshold,
        int fleetSelfPreservationMinAlive,
        String eventBusName,
        Duration eventRetention,
        int reviveMaxAttempts,
        Duration reviveBaseWait,
        double reviveBackoffRate,
        Duration commandTtl,
        String reviveStateMachineArn,
        Instant sweepGraceFrom,
        String sweepQueueUrl,
        Duration keyCacheTtl,
        Duration metricsSummaryInterval,
        Duration offlineRetention,
        Liveness.Allowances allowances,
        Duration hookCoalesceWindow,
        AlertBursts.Settings alertBursts,
        AgentFlaps.Settings flapping) {

    public static Config fromEnvironment(Map<String, String> env) {
        return new Config(
                new Tables(required(env, "LIVE_TABLE"), required(env, "LEDGER_TABLE")),
                Duration.ofSeconds(positive(env, "STALE_AFTER_SECONDS", 60)),
                (int) positive(env, "GRACE_MISSES", 2),
                Duration.ofSeconds(positive(env, "HEARTBEAT_INTERVAL_SECONDS", 30)),
                Duration.ofSeconds(positive(env, "RECOVERY_MAX_AGE_SECONDS", 24 * 3600)),
                Duration.ofDays(positive(env, "TRANSITION_RETENTION_DAYS", 30)),
                Duration.ofMillis(positive(env, "SWEEP_INTERVAL_MS", 15_000)),
                (int) positive(env, "SWEEPS_PER_INVOCATION", 4),
                (int) positive(env, "SWEEP_SEGMENTS", 4),
                // Invocations one sweep fans out to (docs/scale.md, "The sweep's parts"); 1: one invocation.
                (int) positive(env, "SWEEP_PARTS", 1),
                share(env, "SELF_PRESERVATION_THRESHOLD", 0.5),
                (int) positive(env, "SELF_PRESERVATION_MIN_ALIVE", 4),
                share(env, "FLEET_SELF_PRESERVATION_THRESHOLD", 0.5),
                (int) positive(env, "FLEET_SELF_PRESERVATION_MIN_ALIVE", 20),
                blankToNull(env.get("EVENT_BUS_NAME")),
                Duration.ofDays(positive(env, "EVENT_RETENTION_DAYS", 7)),
                (int) positive(env, "REVIVE_MAX_ATTEMPTS", 3),
                Duration.ofSeconds(positive(env, "REVIVE_BASE_WAIT_SECONDS", 30)),
                rate(env, "REVIVE_BACKOFF_RATE", 2.0),
                Duration.ofSeconds(positive(env, "COMMAND_TTL_SECONDS", 600)),
                blankToNull(env.get("REVIVE_STATE_MACHINE_ARN")),
                graceFrom(env.get("SWEEP_GRACE_FROM_MS")),
                blankToNull(env.get("SWEEP_QUEUE_URL")),
                // The heartbeat function's own key cache (its Function URL has no authorizer): template.yaml sets
                // it to the authorizer's ReauthorizeEvery, so a revoked key stops working within one bound.
                Duration.ofSeconds(nonNegative(env, "KEY_CACHE_SECONDS", 300)),
                // How often a function writes its summary of routine work (one EMF document per interval).
                Duration.ofSeconds(positive(env, "METRICS_SUMMARY_SECONDS", 300)),
                // An agent offline or dead_failed_revive this long, unchanged, is deleted by the outbox repair
                // (0: never); its id can be registered again and continues its seq.
                Duration.ofDays(nonNegative(env, "OFFLINE_AGENT_RETENTION_DAYS", 30)),
                // Liveness's allowances: a turn in progress, waiting for the next prompt, waiting for a person, and
                // how long a wait for a person runs before its one AgentAwaitingInput, and the stall threshold.
                new Liveness.Allowances(
                        Duration.ofSeconds(positive(env, "WORKING_ALLOWANCE_SECONDS", 900)),
                        Duration.ofSeconds(positive(env, "WAITING_FOR_INPUT_ALLOWANCE_SECONDS", 8 * 3600)),
                        Duration.ofSeconds(positive(env, "WAITING_FOR_PERSON_ALLOWANCE_SECONDS", 8 * 3600)),
                        Duration.ofSeconds(positive(env, "AWAITING_INPUT_ALERT_SECONDS", 300)),
                        // An agent in a turn with no progress this long is stalled (one AgentStalled).
                        Duration.ofSeconds(positive(env, "STALL_AFTER_SECONDS", 120))),
                // Repeated hook events of one agent in one state within this window are not written again.
                Duration.ofSeconds(nonNegative(env, "HOOK_COALESCE_SECONDS", 60)),
                new AlertBursts.Settings((int) positive(env, "ALERT_BURST_THRESHOLD", 1),
                        Duration.ofSeconds(positive(env, "ALERT_BURST_WINDOW_SECONDS", 60)),
                        (int) positive(env, "ALERT_DIGEST_NAMED_AGENTS", 20)),
                new AgentFlaps.Settings((int) positive(env, "FLAP_THRESHOLD", 4),
                        Duration.ofSeconds(positive(env, "FLAP_WINDOW_SECONDS", 600)),
                        Duration.ofSeconds(positive(env, "FLAP_STABLE_SECONDS", 600)),
                        Duration.ofMillis(positive(env, "SWEEP_INTERVAL_MS", 15_000))));
    }

    private static String required(Map<String, String> env, String name) {
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(name + " is not set");
        }
        return value;
    }

    /**
     * {@code SWEEP_GRACE_FROM_MS}: the host's start (Lifeline Local's), before whose end of one stale-after
     * window the sweep judges no alive agent; unset or 0 (AWS): none.
     */
    private static Instant graceFrom(String raw) {
        if (raw == null || raw.isBlank() || raw.strip().equals("0")) {
            return null;
        }
        try {
            long ms = Long.parseLong(raw.strip());
            if (ms > 0) {
                return Instant.ofEpochMilli(ms);
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalStateException("SWEEP_GRACE_FROM_MS must be epoch milliseconds or 0, not '" + raw + "'");
    }

    /**
     * The least time between two misses the sweep records for one agent: three quarters of the sweep interval.
     * Sweeps that run closer together (an overlapping or repeated invocation, a late sweep followed at once by
     * the next) count one miss between them, so they cannot shorten an agent's grace; the quarter left is room
     * for schedule jitter, so sweeps on time are never refused.
     */
    public Duration missSpacing() {
        return sweepInterval.multipliedBy(3).dividedBy(4);
    }

    /**
     * One Retry entry of revive.asl.json's Task states: the first wait, its growth, how many retries, and the cap on
     * one wait (null: none). Each entry keeps its own count, so a Task's worst case retries through all of them.
     */
    public record Retrier(Duration interval, double backoffRate, int maxAttempts, Duration maxDelay) {
        /** The sum of this entry's waits when every one of its retries is used. */
        public Duration totalWait() {
            Duration total = Duration.ZERO;
            double wait = interval.toMillis();
            for (int k = 0; k < maxAttempts; k++) {
                long ms = Math.round(wait);
                total = total.plusMillis(maxDelay == null ? ms : Math.min(ms, maxDelay.toMillis()));
                wait *= backoffRate;
            }
            return total;
        }
    }

    /**
     * The Retry entries every Task state of revive.asl.json has: SnapStartNotReady (10 s rising to a 120 s cap,
     * 8 times: 630 s), then the store's transient failures and Lambda's service errors (2, 4, 8 s).
     */
    public static final List<Retrier> REVIVE_TASK_RETRIERS = List.of(
            new Retrier(Duration.ofSeconds(10), 2, 8, Duration.ofSeconds(120)),
            new Retrier(Duration.ofSeconds(2), 2, 3, null));
    /** The revive function's timeout (template.yaml's Globals), the longest one invocation of a Task can take. */
    public static final Duration REVIVE_TASK_TIMEOUT = Duration.ofSeconds(10);
    /** Task states on the flow's longest path besides one Check per attempt: Initiate, GiveUp, RecordError. */
    public static final int REVIVE_TASKS_BEYOND_CHECKS = 3;
    /** Room for Step Functions' own transitions and the sweep's interval. */
    public static final Duration REVIVE_RUN_MARGIN = Duration.ofSeconds(60);

    /**
     * The longest one Task state of the revive flow can take: every retry of every Retry entry used, each
     * invocation running to the timeout. 764 s: 630 + 14 s of waits and 12 invocations of 10 s.
     */
    public static Duration reviveTaskWorstCase() {
        Duration total = REVIVE_TASK_TIMEOUT;
        for (Retrier r : REVIVE_TASK_RETRIERS) {
            total = total.plus(r.totalWait()).plus(REVIVE_TASK_TIMEOUT.multipliedBy(r.maxAttempts()));
        }
        return total;
    }

    /**
     * The revive flow's longest possible run from the moment it put the agent in {@code restarting}: every wait
     * (base x rate^(k-1) for k = 1..attempts), plus every Task state on the longest path (one Check per attempt,
     * Initiate, GiveUp, RecordError) at its worst ({@link #reviveTaskWorstCase()}), plus a margin. An agent
     * {@code restarting} longer than this has no flow left to end it; the sweep ends it
     * ({@code restart_exhausted}). 1 h 20 min 54 s with the defaults (waits 30 + 60 + 120 s, 6 Tasks of 764 s,
     * margin 60 s): long, because each Task may wait out a SnapStart re-activation for up to 630 s.
     */
    public Duration reviveLongestRun() {
        Duration waits = Duration.ZERO;
        for (int k = 1; k <= reviveMaxAttempts; k++) {
            waits = waits.plusMillis(Math.round(reviveBaseWait.toMillis() * Math.pow(reviveBackoffRate, k - 1)));
        }
        return waits.plus(reviveTaskWorstCase().multipliedBy(reviveMaxAttempts + (long) REVIVE_TASKS_BEYOND_CHECKS))
                .plus(REVIVE_RUN_MARGIN);
    }

    /** A backoff rate, at least 1. */
    private static double rate(Map<String, String> env, String name, double fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            double value = Double.parseDouble(raw.trim());
            if (!(value >= 1)) {
                throw new IllegalStateException(name + " must be at least 1, was " + raw);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be a number, was " + raw, e);
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** A share in (0, 1]. */
    private static double share(Map<String, String> env, String name, double fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            double value = Double.parseDouble(raw.trim());
            if (!(value > 0 && value <= 1)) {
                throw new IllegalStateException(name + " must be a share above 0 and at most 1, was " + raw);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be a number, was " + raw, e);
        }
    }

    private static long positive(Map<String, String> env, String name, long fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            long value = Long.parseLong(raw.trim());
            if (value <= 0) {
                throw new IllegalStateException(name + " must be positive, was " + raw);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be a whole number, was " + raw, e);
        }
    }

    private static long nonNegative(Map<String, String> env, String name, long fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            long value = Long.parseLong(raw.trim());
            if (value < 0) {
                throw new IllegalStateException(name + " must not be negative, was " + raw);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be a whole number, was " + raw, e);
        }
    }

    /**
     * How long one AWS SDK call may take in all ({@code call}, retries included) and one attempt of it
     * ({@code attempt}): {@code DYNAMODB_CALL_TIMEOUT_MS} and {@code DYNAMODB_ATTEMPT_TIMEOUT_MS}, set in
     * template.yaml's Globals far below every function's Timeout, so one hung attempt cannot use up an invocation.
     * Absent (tests, Local), 3 s and 1 s. An attempt longer than its call is refused.
     */
    public record CallTimeouts(Duration call, Duration attempt) {
        public CallTimeouts {
            if (attempt.compareTo(call) > 0) {
                throw new IllegalStateException("DYNAMODB_ATTEMPT_TIMEOUT_MS (" + attempt.toMillis()
                        + ") must not exceed DYNAMODB_CALL_TIMEOUT_MS (" + call.toMillis() + ")");
            }
        }

        public static CallTimeouts fromEnvironment(Map<String, String> env) {
            return new CallTimeouts(Duration.ofMillis(positive(env, "DYNAMODB_CALL_TIMEOUT_MS", 3000)),
                    Duration.ofMillis(positive(env, "DYNAMODB_ATTEMPT_TIMEOUT_MS", 1000)));
        }
    }
}
