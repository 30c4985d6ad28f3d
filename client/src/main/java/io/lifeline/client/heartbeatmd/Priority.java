package io.lifeline.client.heartbeatmd;

/** Seed 003's priority labels, in execution order (CRITICAL first). */
public enum Priority {
    /** Runs first; a failure blocks the rest of the wake. */
    CRITICAL,
    /** Runs first among the rest; the wake continues on failure. */
    HIGH,
    MEDIUM,
    LOW,
    /** Background: runs last. This runner executes it synchronously (no async execution yet). */
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
