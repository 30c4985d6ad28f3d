package io.lifeline.client.model;

import java.time.Instant;

/** A team's settings and maintenance window. */
public record TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
        Double selfPreservationThreshold, Integer selfPreservationMinAlive) {
}
