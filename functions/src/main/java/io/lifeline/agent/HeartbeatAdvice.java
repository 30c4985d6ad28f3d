package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;

/**
 * What the API tells an agent about its own timing: the deadline a heartbeat answers, and the interval it
 * recommends. Both follow from the stored agent and the deployment's settings; no extra read.
 */
public final class HeartbeatAdvice {
    /**
     * The {@code nextDeadline} of an agent for which no further heartbeat is expected: an {@code at:} schedule
     * whose one slot is served (the heartbeat came at or after it, or early enough to count for it). The
     * sweep judges such an agent never (it has no stored deadline), so the answer says "never" in the
     * largest date-time that RFC 3339 can write, rather than leave the required field out.
     */
    public static final Instant NO_DEADLINE = Instant.parse("9999-12-31T23:59:59Z");

    /** The least interval we can state in whole seconds. */
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

    private HeartbeatAdvice() {
    }

    /** The deadline a heartbeat answers: the agent's stored deadline, or {@link #NO_DEADLINE} when none applies. */
    public static Instant answeredDeadline(Agent after) {
        return after.deadline() == null ? NO_DEADLINE : after.deadline();
    }

    /**
     * The heartbeat interval to recommend to an agent: the deployment's interval, but at most half of the time
     * the agent's deadline allows, so that one late or lost beat still leaves it alive. That time is the window
     * {@link Liveness#window} gives the agent's next plain beat (a timer's beat; the allowances are a hook beat's,
     * which comes on activity, not on a timer): {@code declared} when the heartbeat declared one
     * ({@code nextHeartbeatWithinSeconds}), else the agent's own stale-after (set at registration, the deployment's default when none was given; a team has no
     * default of its own), else the deployment's stale-after. Whole seconds, rounded down, never under 1 s
     * (a stale-after of 1 s cannot be halved in whole seconds: the grace misses then carry the agent).
     *
     * <p>For an agent on a schedule the deadline is its next slot plus its stale-after; beating at this interval
     * never brings that deadline closer (an early beat counts for the coming slot, an {@code every:} beat
     * restarts the period), so following it keeps any agent alive; what a scheduled agent must do is beat by
     * each slot, within its stale-after.
     *
     * @param deploymentInterval {@code HEARTBEAT_INTERVAL_SECONDS}
     * @param deploymentStaleAfter {@code STALE_AFTER_SECONDS}
     * @param agentStaleAfter the agent's stored stale-after (zero or null when unknown)
     * @param declared the heartbeat's {@code nextHeartbeatWithinSeconds}, or null
     */
    public static Duration interval(Duration deploymentInterval, Duration deploymentStaleAfter,
                                    Duration agentStaleAfter, Duration declared) {
        Duration staleAfter = agentStaleAfter != null && !agentStaleAfter.isNegative() && !agentStaleAfter.isZero()
                ? agentStaleAfter : deploymentStaleAfter;
        // The window of the agent's next plain beat: a client beats on a timer with plain beats; an allowance is the
        // window of a hook's beat (in a turn, waiting), which comes on activity, not on a timer.
        Duration allowed = Liveness.window(declared, Liveness.Activity.PLAIN, null, (Duration) null, staleAfter);
        Duration half = Duration.ofSeconds(allowed.dividedBy(2).toSeconds());
        Duration chosen = deploymentInterval.compareTo(half) < 0 ? deploymentInterval : half;
        return chosen.compareTo(MIN_INTERVAL) < 0 ? MIN_INTERVAL : chosen;
    }

    /** {@link #interval} in whole seconds, for an agent as stored (join, or a heartbeat that declared nothing). */
    public static long intervalSeconds(Duration deploymentInterval, Duration deploymentStaleAfter, Agent agent,
                                       Duration declared) {
        return interval(deploymentInterval, deploymentStaleAfter, agent.staleAfter(), declared).toSeconds();
    }
}
