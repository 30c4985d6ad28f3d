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

    public static Optional<Trigger> fromWire(String value) {
        for (Trigger t : values()) {
            if (t.wire().equals(value)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
