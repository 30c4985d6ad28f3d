package io.lifeline.client.manager;

/**
 * What the agent is doing, and what a heartbeat reports for it: processing is {@code working};
 * idle and waiting_input are {@code ready}; error reports no status (the server keeps the current one) while
 * the heartbeats go on; stopped ends the heartbeats.
 */
public enum ActivityState {
    IDLE("idle", "ready"),
    PROCESSING("processing", "working"),
    WAITING_INPUT("waiting_input", "ready"),
    ERROR("error", null),
    STOPPED("stopped", null);

    private final String wire;
    private final String reportedStatus;

    ActivityState(String wire, String reportedStatus) {
        this.wire = wire;
        this.reportedStatus = reportedStatus;
    }

    public String wire() {
        return wire;
    }

    /** The heartbeat {@code status} this state reports, or null for none. */
    public String reportedStatus() {
        return reportedStatus;
    }

    public static ActivityState fromWire(String s) {
        for (ActivityState a : values()) {
            if (a.wire.equals(s)) {
                return a;
            }
        }
        throw new IllegalArgumentException("Unknown activity state '" + s + "'");
    }
}
