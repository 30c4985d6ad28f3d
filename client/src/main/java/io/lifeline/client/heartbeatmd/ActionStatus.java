package io.lifeline.client.heartbeatmd;

import java.util.Locale;

/** The heartbeat.md format's action statuses, written lower case in the file. */
public enum ActionStatus {
    PENDING, RUNNING, COMPLETED, FAILED, SKIPPED, BLOCKED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static ActionStatus fromLabel(String label) {
        for (ActionStatus s : values()) {
            if (s.label().equals(label)) {
                return s;
            }
        }
        return null;
    }
}
