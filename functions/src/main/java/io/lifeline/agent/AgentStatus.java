package io.lifeline.agent;

import java.util.Locale;
import java.util.Optional;

/** The six stored statuses of an agent. Only {@link #READY} and {@link #WORKING} expect heartbeats. */
public enum AgentStatus {
    OFFLINE, READY, WORKING, DEAD, RESTARTING, DEAD_FAILED_REVIVE;

    /** The value stored in DynamoDB and used on the wire. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** What the status means, for a sentence a person reads ("it is offline: it left or has not joined"). */
    public String meaning() {
        return switch (this) {
            case OFFLINE -> "it left or has not joined";
            case READY -> "it joined and waits for work";
            case WORKING -> "it joined and is working";
            case DEAD -> "its beats stopped and it was marked dead";
            case RESTARTING -> "its host was asked to restart it";
            case DEAD_FAILED_REVIVE -> "it was not brought back and needs a person";
        };
    }

    public boolean isAlive() {
        return this == READY || this == WORKING;
    }

    public static Optional<AgentStatus> fromWire(String value) {
        for (AgentStatus s : values()) {
            if (s.wire().equals(value)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /**
     * A status an agent may report about itself on a heartbeat: {@code ready|working}, or the heartbeat protocol's
     * aliases {@code idle} (= ready) and {@code active} (= working).
     */
    public static Optional<AgentStatus> fromReported(String value) {
        if (value == null) {
            return Optional.empty();
        }
        switch (value) {
            case "ready":
            case "idle":
                return Optional.of(READY);
            case "working":
            case "active":
                return Optional.of(WORKING);
            default:
                return Optional.empty();
        }
    }
}
