package io.lifeline.agent;

import java.time.Instant;

/**
 * A team's own settings. {@code leaderAgentId} receives an inbox message when an agent of the team dies;
 * {@code pausedUntil} holds back all of the team's dead-marking until then (a maintenance window); the
 * self-preservation threshold and minimum override the service's defaults when set.
 */
public record TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                           Double selfPreservationThreshold, Integer selfPreservationMinAlive) {

    public boolean pausedAt(Instant now) {
        return pausedUntil != null && now.isBefore(pausedUntil);
    }
}
