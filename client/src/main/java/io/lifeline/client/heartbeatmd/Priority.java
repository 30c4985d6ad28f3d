package io.lifeline.client.heartbeatmd;

/** The heartbeat.md format's priority labels, in execution order (CRITICAL first). */
public enum Priority {
    /** Runs first; a failure blocks the rest of the wake. */
    CRITICAL,
    /** Runs first among the rest; the wake continues on failure. */
    HIGH,
    MEDIUM,
    /** Runs if time permits: only when it fits in what is left of the wake's budget. */
    LOW,
    /** Background: runs alongside the others, a bounded number at once, and is awaited before the file is written. */
    BG;

    /** The priority for a label such as {@code HIGH}, or null if there is none. */
    static Priority fromLabel(String label) {
        for (Priority p : values()) {
            if (p.name().equals(label)) {
                return p;
            }
        }
        return null;
    }
}
