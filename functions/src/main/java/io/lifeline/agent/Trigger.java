package io.lifeline.agent;

import java.util.Locale;
import java.util.Optional;

/** What caused a status change. Each trigger has exactly one target status, see {@link TransitionTable}. */
public enum Trigger {
    JOIN,
    CLAIM_TASK,
    TASK_COMPLETE,
    /** A heartbeat reported {@code working} (or an SDK source implied it) while the agent was ready. */
    REPORT_WORKING,
    /** A heartbeat reported {@code ready} (or an SDK source implied it) while the agent was working. */
    REPORT_READY,
    HEARTBEAT_EXPIRED,
    /**
     * A working agent stalled (no progress past its threshold) with {@code onStall: restart}: judged by the sweep
     * when no daemon hosts it (dead, so the revive flow asks its host), or by the daemon that hosts it, which stopped
     * it and restarts it itself (docs/liveness.md).
     */
    STALLED,
    /** A host that knows its agent crashed said so. */
    REPORTED_FAILURE,
    LEAVE,
    /**
     * A host that kept restarting its agent gave up (a crash loop: too many crashes in a short time). It ends the
     * agent {@code dead_failed_revive} in one write, so the give-up is one alert and no revive flow starts.
     */
    HOST_GAVE_UP,
    RESTART_INITIATED,
    RESTART_EXHAUSTED,
    CLEANUP;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * What was asked, in the API's words (a refusal's sentence: "Cannot revive the agent: ..."), never the wire
     * name of the trigger, which is the state machine's and means nothing to whoever called a route.
     */
    public String asked() {
        return switch (this) {
            case JOIN -> "join";
            case CLAIM_TASK -> "claim a task";
            case TASK_COMPLETE -> "complete the task";
            case REPORT_WORKING -> "report working";
            case REPORT_READY -> "report ready";
            case HEARTBEAT_EXPIRED -> "mark the agent dead";
            case STALLED -> "restart the agent for making no progress";
            case REPORTED_FAILURE -> "report a crash";
            case LEAVE -> "leave";
            case HOST_GAVE_UP -> "give up on the agent";
            case RESTART_INITIATED -> "revive the agent";
            case RESTART_EXHAUSTED -> "end the agent's revive";
            case CLEANUP -> "clean up the agent";
        };
    }

    public static Optional<Trigger> fromWire(String value) {
        for (Trigger t : values()) {
            if (t.wire().equals(value)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
