package io.lifeline.client.model;

import java.time.Instant;

/**
 * A team's settings and maintenance window. {@code failureDomains}: what counts as one failure domain when
 * self-preservation weighs a mass silence ({@code host}, {@code source}, {@code none}); {@code hold}: the team's
 * mass-silence flag while it stands, or null; {@code fleetHold}: the deployment-wide hold as this team sees it (this
 * team's own counts alone), or null.
 */
public record TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
        Double selfPreservationThreshold, Integer selfPreservationMinAlive, String failureDomains, Hold hold,
        Hold fleetHold) {

    /** Settings without a share of a fleet-wide hold. */
    public TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
            Double selfPreservationThreshold, Integer selfPreservationMinAlive, String failureDomains, Hold hold) {
        this(team, leaderAgentId, pausedUntil, pauseReason, selfPreservationThreshold, selfPreservationMinAlive,
                failureDomains, hold, null);
    }

    /**
     * The team's mass-silence flag: {@code held} while self-preservation holds the team's dead-marking (an admin may
     * release it), {@code aliveAgents} and {@code staleAgents} as the sweep counted them, {@code since} and
     * {@code why}; {@code releasedAt} once released. As {@code fleetHold}: {@code held} while the fleet-wide hold holds
     * the team (its admin may release the team from it), the team's own counts, the fleet hold's {@code since}.
     */
    public record Hold(boolean held, int aliveAgents, int staleAgents, Instant since, String why, Instant releasedAt) {
    }
}
