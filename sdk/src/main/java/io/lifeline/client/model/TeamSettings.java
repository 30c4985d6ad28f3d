package io.lifeline.client.model;

import java.time.Instant;

/**
 * A team's settings and maintenance window. {@code failureDomains}: what counts as one failure domain when
 * self-preservation weighs a mass silence ({@code host}, {@code source}, {@code none}); {@code hold}: the team's
 * mass-silence flag while it stands, or null.
 */
public record TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
        Double selfPreservationThreshold, Integer selfPreservationMinAlive, String failureDomains, Hold hold) {

    /**
     * The team's mass-silence flag: {@code held} while self-preservation holds the team's dead-marking (an admin may
     * release it), {@code aliveAgents} and {@code staleAgents} as the sweep counted them, {@code since} and
     * {@code why}; {@code releasedAt} once released.
     */
    public record Hold(boolean held, int aliveAgents, int staleAgents, Instant since, String why, Instant releasedAt) {
    }
}
