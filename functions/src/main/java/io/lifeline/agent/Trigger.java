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
