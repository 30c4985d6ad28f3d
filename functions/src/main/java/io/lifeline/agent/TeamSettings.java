package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;

/**
 * A team's own settings. {@code leaderAgentId} receives an inbox message when an agent of the team dies;
 * {@code pausedUntil} holds back all of the team's dead-marking until then (a maintenance window); the
 * self-preservation threshold and minimum override the service's defaults when set; the allowances
 * ({@link Liveness}) are the ones an agent registered in the team without its own gets, or null for the deployment's.
 * {@code failureDomains}: what counts as one failure domain for self-preservation (null: {@link FailureDomains#DEFAULT});
 * {@code hold}: the team's mass-silence flag, or null when none stands; {@code fleetHold}: the deployment-wide hold
 * as this team sees it ({@link TeamFleetHold}), or null. {@code stallAfter} and {@code onStall}: the stall rule an
 * agent registered in the team without its own gets ({@link Liveness#stalled}), or null for the default.
 */
public record TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                           Double selfPreservationThreshold, Integer selfPreservationMinAlive,
                           Duration workingAllowance, Duration inputAllowance,
                           Duration personAllowance, FailureDomains failureDomains, TeamHold hold,
                           TeamFleetHold fleetHold, Duration stallAfter, Liveness.OnStall onStall) {

    /** A team with no share of a fleet-wide hold and no stall rule of its own. */
    public TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                        Double selfPreservationThreshold, Integer selfPreservationMinAlive,
                        Duration workingAllowance, Duration inputAllowance, Duration personAllowance,
                        FailureDomains failureDomains, TeamHold hold) {
        this(team, leaderAgentId, pausedUntil, pauseReason, selfPreservationThreshold, selfPreservationMinAlive,
                workingAllowance, inputAllowance, personAllowance, failureDomains, hold, null, null, null);
    }

    /** A team with its share of a fleet-wide hold and no stall rule of its own. */
    public TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                        Double selfPreservationThreshold, Integer selfPreservationMinAlive,
                        Duration workingAllowance, Duration inputAllowance, Duration personAllowance,
                        FailureDomains failureDomains, TeamHold hold, TeamFleetHold fleetHold) {
        this(team, leaderAgentId, pausedUntil, pauseReason, selfPreservationThreshold, selfPreservationMinAlive,
                workingAllowance, inputAllowance, personAllowance, failureDomains, hold, fleetHold, null, null);
    }

    /** A team with no failure-domain rule of its own and no flag. */
    public TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                        Double selfPreservationThreshold, Integer selfPreservationMinAlive,
                        Duration workingAllowance, Duration inputAllowance, Duration personAllowance) {
        this(team, leaderAgentId, pausedUntil, pauseReason, selfPreservationThreshold, selfPreservationMinAlive,
                workingAllowance, inputAllowance, personAllowance, null, null);
    }

    /** A team with the deployment's allowances. */
    public TeamSettings(String team, String leaderAgentId, Instant pausedUntil, String pauseReason,
                        Double selfPreservationThreshold, Integer selfPreservationMinAlive) {
        this(team, leaderAgentId, pausedUntil, pauseReason, selfPreservationThreshold, selfPreservationMinAlive, null,
                null, null);
    }

    public boolean pausedAt(Instant now) {
        return Liveness.paused(pausedUntil, now);
    }
}
