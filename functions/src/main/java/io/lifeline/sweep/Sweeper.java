package io.lifeline.sweep;

import io.lifeline.agent.LifelineException;
import io.lifeline.store.AgentStore;
import io.lifeline.store.SweepStore;
import io.lifeline.store.TeamStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs one sweep: read a snapshot, decide with {@link SweepPlan} at one instant, then make each decision a
 * conditional write. Agents that are not stale cost no write. A write refused because a heartbeat won, or
 * throttled, leaves that agent for the next sweep; the rest of the sweep goes on.
 */
public final class Sweeper {

    /** What a sweep did, for logs and metrics. */
    public record Report(Instant at, int itemsScanned, int aliveSeen, List<String> markedDead, int missesRecorded,
                         int raceLostToHeartbeat, int skippedOnError, List<String> teamsHeld,
                         double consumedReadUnits, Duration took) {
    }

    private final SweepStore snapshots;
    private final AgentStore agents;
    private final TeamStore teams;
    private final SweepPlan.Policy policy;
    private final Clock clock;

    public Sweeper(SweepStore snapshots, AgentStore agents, TeamStore teams, SweepPlan.Policy policy, Clock clock) {
        this.snapshots = snapshots;
        this.agents = agents;
        this.teams = teams;
        this.policy = policy;
        this.clock = clock;
    }

    public Report sweepOnce() {
        long started = System.nanoTime();
        SweepStore.Snapshot snapshot = snapshots.scan();
        Instant now = clock.instant();
        List<String> dead = new ArrayList<>();
        List<String> held = new ArrayList<>();
        int misses = 0;
        int lost = 0;
        int skipped = 0;
        for (SweepPlan.TeamOutcome outcome : SweepPlan.decide(snapshot.agents(), snapshot.teams(), policy, now)) {
            try {
                if (outcome.held()) {
                    held.add(outcome.team());
                    if (!snapshot.teamsWithMassStaleFlag().contains(outcome.team())) {
                        teams.raiseMassStale(outcome.team(), outcome.alive(), outcome.stale(), outcome.threshold(), now);
                    }
                    continue;
                }
                if (snapshot.teamsWithMassStaleFlag().contains(outcome.team())) {
                    teams.clearMassStale(outcome.team());
                }
            } catch (LifelineException e) {
                skipped++;
                continue;
            }
            for (SweepPlan.Action action : outcome.actions()) {
                SweepPlan.Observed a = action.agent();
                try {
                    if (action instanceof SweepPlan.Kill kill) {
                        if (agents.markDead(a.team(), a.agentId(), a.beats(), kill.misses(), kill.reason(), now)
                                .isPresent()) {
                            dead.add(a.team() + "/" + a.agentId());
                        } else {
                            lost++;
                        }
                    } else if (action instanceof SweepPlan.Miss miss) {
                        if (agents.recordMiss(a.team(), a.agentId(), a.beats(), miss.misses())) {
                            misses++;
                        } else {
                            lost++;
                        }
                    }
                } catch (LifelineException e) {
                    // Throttled or unavailable: this agent is looked at again next sweep.
                    skipped++;
                }
            }
        }
        // Teams whose flag is up but that no longer have alive agents at all: the condition has cleared.
        for (String team : snapshot.teamsWithMassStaleFlag()) {
            boolean seen = snapshot.agents().stream().anyMatch(a -> a.team().equals(team) && a.status().isAlive());
            if (!seen) {
                try {
                    teams.clearMassStale(team);
                } catch (LifelineException e) {
                    skipped++;
                }
            }
        }
        return new Report(now, snapshot.itemsScanned(), snapshot.agents().size(), dead, misses, lost, skipped, held,
                snapshot.consumedReadUnits(), Duration.ofNanos(System.nanoTime() - started));
    }
}
