package io.lifeline.client.manager;

import io.lifeline.client.model.Stats;

/** The crash-recovery protocol's stats at one moment; {@code uptimeSeconds} since the manager started. */
public record HeartbeatStats(long messagesProcessed, long toolCallsExecuted, long errorsEncountered,
        long uptimeSeconds) {

    public Stats toWire() {
        return new Stats(messagesProcessed, toolCallsExecuted, errorsEncountered, uptimeSeconds);
    }
}
