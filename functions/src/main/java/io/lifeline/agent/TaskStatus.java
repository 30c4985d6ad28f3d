package io.lifeline.agent;

import java.util.Locale;
import java.util.Optional;

public enum TaskStatus {
    PENDING, IN_PROGRESS, DONE;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<TaskStatus> fromWire(String value) {
        for (TaskStatus s : values()) {
            if (s.wire().equals(value)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
