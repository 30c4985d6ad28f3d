package io.lifeline.app;

import io.lifeline.agent.FailureDomains;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.team.FleetStore;
import io.lifeline.store.team.TeamStore;
import java.time.Duration;
import java.time.Instant;

/** A team's settings (leader, self-preservation, allowances, failure domains), its maintenance pause, its hold, and its recent events. */
public final class Teams {
    private final TeamStore teams;
    private final EventLog events;

    public Teams(TeamStore teams, EventLog events) {
        this.teams = teams;
        this.events = events;
    }

    public TeamSettings settings(String team) {
        return teams.get(team);
    }

    /** Changes the settings given; a null one is left as it is ({@code clearLeader} removes the leader). */
    public TeamSettings update(String team, String leaderAgentId, boolean clearLeader, Double threshold,
                               Integer minAlive, Duration working, Duration input, Duration person,
                               FailureDomains domains, Duration stallAfter, Liveness.OnStall onStall) {
        return teams.update(team, leaderAgentId, clearLeader, threshold, minAlive, working, input, person, domains,
                stallAfter, onStall);
    }

    /** Holds back every dead-marking of the team until {@code until} (a maintenance window). */
    public TeamSettings pause(String team, Instant until, String reason) {
        return teams.pause(team, until, reason);
    }

    public TeamSettings resume(String team) {
        return teams.resume(team);
    }

    /** An admin releases the team's self-preservation hold: its silent agents are marked dead as judged. */
    public TeamSettings releaseHold(String team, Instant now) {
        return teams.releaseHold(team, now);
    }

    /** The team's logged events, newest first, filtered by agent, type and time (each optional). */
    /**
     * The operator releases the fleet-wide hold itself; null when none stands unreleased (see
     * {@link FleetStore#release}).
     */
    public FleetStore.Released releaseFleetHold(Instant now) {
        return teams.fleet().release(now);
    }

    /** A page of the team's events, newest first; {@code before} null, or the {@code next} of the page before. */
    public EventLog.Page events(String team, String agentId, String type, Instant since, Instant until, int limit,
                                String before) {
        return events.page(team, agentId, type, since, until, limit, before);
    }
}
