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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
    /** Parallel conditional writes per sweep. */
    static final int WRITERS = 8;
    private final ExecutorService writers = Executors.newFixedThreadPool(WRITERS, r -> {
        Thread t = new Thread(r, "sweep-write");
        t.setDaemon(true);
        return t;
    });

    public Sweeper(SweepStore snapshots, AgentStore agents, TeamStore teams, SweepPlan.Policy policy, Clock clock) {
        this.snapshots = snapshots;
        this.agents = agents;
        this.teams = teams;
        this.policy = policy;
        this.clock = clock;
    }

    private enum Kind { DEAD, MISSED, LOST, SKIPPED }

    private record Outcome(Kind kind, String agent) {
    }

    /** One decision made a conditional write: a heartbeat that won, or a throttled write, is not an error. */
    private Outcome apply(SweepPlan.Action action, Instant now) {
        SweepPlan.Observed a = action.agent();
        String id = a.team() + "/" + a.agentId();
        try {
            if (action instanceof SweepPlan.Kill kill) {
                return agents.markDead(a.team(), a.agentId(), a.beats(), kill.misses(), kill.reason(), now).isPresent()
                        ? new Outcome(Kind.DEAD, id) : new Outcome(Kind.LOST, id);
            }
            SweepPlan.Miss miss = (SweepPlan.Miss) action;
            return agents.recordMiss(a.team(), a.agentId(), a.beats(), miss.misses())
                    ? new Outcome(Kind.MISSED, id) : new Outcome(Kind.LOST, id);
        } catch (LifelineException e) {
            // Throttled or unavailable: this agent is looked at again next sweep.
            return new Outcome(Kind.SKIPPED, id);
        }
    }

    private static Outcome join(Future<Outcome> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("sweep interrupted", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    public Report sweepOnce() {
        long started = System.nanoTime();
        // The time judged is read before the scan, so the snapshot is never older than it: a pause between the
        // two (GC, a throttled page) cannot make beats that landed meanwhile look missed.
        Instant now = clock.instant();
        SweepStore.Snapshot snapshot = snapshots.scan();
        List<String> dead = new ArrayList<>();
        List<String> held = new ArrayList<>();
        int misses = 0;
        int lost = 0;
        int skipped = 0;
        List<SweepPlan.Action> actions = new ArrayList<>();
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
            actions.addAll(outcome.actions());
        }
        // The writes are independent conditional updates: make them side by side, so a sweep with many stale
        // agents takes about one round trip per WRITERS agents rather than one per agent.
        List<Future<Outcome>> results = new ArrayList<>();
        for (SweepPlan.Action action : actions) {
            results.add(writers.submit(() -> apply(action, now)));
        }
        for (Future<Outcome> f : results) {
            Outcome o = join(f);
            switch (o.kind()) {
                case DEAD -> dead.add(o.agent());
                case MISSED -> misses++;
                case LOST -> lost++;
                case SKIPPED -> skipped++;
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
