package io.lifeline.agent;

import java.time.Instant;

/**
 * The deployment-wide hold as one team sees it, written on the team's item by the sweep that holds the fleet: the
 * hold it belongs to ({@code since}, the fleet flag's own), this team's own counts as that sweep judged them
 * ({@code alive} watched, {@code stale} of them held back), and {@code releasedAt} once the team's admin released
 * this team from it. It names no other team, agent or host: a team reads it on its own settings, and tenants never
 * meet. A stamp whose {@code since} is not the standing fleet hold's is an earlier hold's, and counts for nothing.
 */
public record TeamFleetHold(Instant since, int alive, int stale, Instant releasedAt) {

    /** Whether the fleet hold still holds this team: not released by its admin. */
    public boolean holding() {
        return releasedAt == null;
    }

    /** Whether this team's admin released it from the fleet hold that began at {@code fleetSince}. */
    public boolean releases(Instant fleetSince) {
        return releasedAt != null && since.equals(fleetSince);
    }
}
