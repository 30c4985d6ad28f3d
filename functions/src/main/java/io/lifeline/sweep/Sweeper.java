package io.lifeline.sweep;

import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.store.SweepStore;
import io.lifeline.store.TeamStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs one sweep: read a snapshot, decide with {@link SweepPlan} at one instant, then make each decision a
 * conditional write. Agents that are not stale cost no write. A write refused because a heartbeat won, or
 * throttled, leaves that agent for the next sweep; the rest of the sweep goes on. A miss counts at most once
 * per {@link Timing#missSpacing()}, and an agent {@code restarting} past the revive flow's longest run is
 * ended ({@code restart_exhausted}).
 */
public final class Sweeper {

    /**
     * What a sweep did, for logs and metrics. {@code missesTooSoon}: misses not counted because the agent's
     * last one is younger than the spacing; {@code revivesEnded}: agents moved out of a restart no flow was
     * left to end.
     */
    public record Report(Instant at, int itemsScanned, int aliveSeen, List<String> markedDead, int missesRecorded,
                         int raceLostToHeartbeat, int skippedOnError, List<String> teamsHeld,
                         double consumedReadUnits, Duration took, int missesTooSoon, List<String> revivesEnded,
                         List<String> hostsExpired, int leaseAnswersDropped, SweepPlan.FleetOutcome fleet,
                         List<String> awaitingRaised) {
        /** True when the deployment-wide guard held this sweep: no agent of any team was marked dead. */
        public boolean fleetHeld() {
            return fleet != null && fleet.held();
        }
    }

    /**
     * {@code missSpacing}: the least time between two counted misses of one agent; {@code reviveLongestRun}: the
     * revive flow's longest possible run, past which a {@code restarting} agent has no flow left;
     * {@code allowances}: when a wait for a person raises its alert.
     */
    public record Timing(Duration missSpacing, Duration reviveLongestRun, Liveness.Allowances allowances) {
        /** With the documented allowances (only their alert threshold matters to the sweep). */
        public Timing(Duration missSpacing, Duration reviveLongestRun) {
            this(missSpacing, reviveLongestRun, Liveness.Allowances.DEFAULTS);
        }
    }

    private final SweepStore store;
    private final TeamStore teams;
    private final SweepPlan.Policy policy;
    private final Timing timing;
    private final Clock clock;
    /** No alive agent is judged before one stale-after window from this start; null: no such grace. */
    private final Instant graceFrom;
    /** Parallel conditional writes per sweep. */
    static final int WRITERS = 8;
    private final ExecutorService writers = Executors.newFixedThreadPool(WRITERS, r -> {
        Thread t = new Thread(r, "sweep-write");
        t.setDaemon(true);
        return t;
    });

    public Sweeper(SweepStore store, TeamStore teams, SweepPlan.Policy policy, Timing timing, Clock clock) {
        this(store, teams, policy, timing, clock, null);
    }

    /**
     * {@code graceFrom}: the host's start (Lifeline Local's), or null (AWS); see {@link SweepPlan#afterStart}.
     */
    public Sweeper(SweepStore store, TeamStore teams, SweepPlan.Policy policy, Timing timing, Clock clock,
                   Instant graceFrom) {
        this.graceFrom = graceFrom;
        this.store = store;
        this.teams = teams;
        this.policy = policy;
        this.timing = timing;
        this.clock = clock;
    }

    private enum Kind { DEAD, MISSED, LOST, TOO_SOON, SKIPPED, REVIVE_ENDED }

    private record Outcome(Kind kind, String agent) {
    }

    /** One decision made a conditional write: a heartbeat that won, or a throttled write, is not an error. */
    private Outcome apply(SweepPlan.Action action, Instant now, Map<String, Instant> silences) {
        SweepPlan.Observed a = action.agent();
        String id = a.team() + "/" + a.agentId();
        try {
            SweepStore.Write written = action instanceof SweepPlan.Kill kill
                    ? store.markDead(a, kill.misses(), kill.reason(), now, timing.missSpacing(), cause(a, silences))
                    : store.recordMiss(a, ((SweepPlan.Miss) action).misses(), now, timing.missSpacing());
            return switch (written) {
                case DONE -> new Outcome(action instanceof SweepPlan.Kill ? Kind.DEAD : Kind.MISSED, id);
                case RACE_LOST -> new Outcome(Kind.LOST, id);
                case TOO_SOON -> new Outcome(Kind.TOO_SOON, id);
            };
        } catch (LifelineException e) {
            // Throttled or unavailable: this agent is looked at again next sweep.
            return new Outcome(Kind.SKIPPED, id);
        }
    }

    /** The silence of the lease the agent beats through, if that lease is silent (docs/alerts-noise.md). */
    private static HostIncidents.Cause cause(SweepPlan.Observed a, Map<String, Instant> silences) {
        if (a.hosted() == null) {
            return null;
        }
        Instant flagged = silences.get(HostIncidents.leaseKey(a.team(), a.hosted().hostId()));
        return flagged == null ? null : new HostIncidents.Cause(a.hosted().hostId(), flagged);
    }

    /**
     * Flags the leases gone silent, each host's leases as one incident (the first flagged leads, the others are
     * part of it); answers the silences now in force, {@code team/leaseId} -> the flag's time.
     */
    private Map<String, Instant> flagSilentHosts(SweepStore.Snapshot snapshot, Instant now, boolean fleetHeld,
                                                 List<String> hostsExpired, int[] skipped) {
        Map<String, Instant> silences = HostIncidents.silences(snapshot.leases());
        List<HostLease.Expired> expired = fleetHeld ? List.of()
                : HostLease.expired(snapshot.leases(), snapshot.linked(), snapshot.teams(), now);
        for (HostIncidents.Group group : HostIncidents.groups(snapshot.leases(), expired)) {
            String lead = group.existingLead();
            for (HostLease.Expired e : group.members()) {
                try {
                    if (store.flagLeaseExpired(group.flag(e, lead), now)) {
                        lead = lead == null ? e.lease().hostId() : lead;
                        hostsExpired.add(e.lease().team() + "/" + e.lease().hostId());
                        silences.put(HostIncidents.leaseKey(e.lease().team(), e.lease().hostId()), now);
                    }
                } catch (LifelineException ex) {
                    skipped[0]++;
                }
            }
        }
        return silences;
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

    /** One ending of an orphaned revive made a conditional write; a flow or join that moved the agent wins. */
    private Outcome end(SweepPlan.EndRevive end, Instant now) {
        String id = end.agent().team() + "/" + end.agent().agentId();
        try {
            return store.endRevive(end, now) == SweepStore.Write.DONE ? new Outcome(Kind.REVIVE_ENDED, id)
                    : new Outcome(Kind.LOST, id);
        } catch (LifelineException e) {
            return new Outcome(Kind.SKIPPED, id);
        }
    }

    public Report sweepOnce() {
        return sweepOnce(clock.instant());
    }

    /**
     * One sweep judging at {@code now}, which the caller read before this call (the handler reads it with its
     * check for a stall, so one reading decides both). It is read before the scan, so the snapshot is never
     * older than it: a pause between the two (GC, a throttled page, a frozen process) cannot make beats that
     * landed meanwhile look missed.
     */
    public Report sweepOnce(Instant now) {
        long started = System.nanoTime();
        SweepStore.Snapshot snapshot = store.scan();
        List<String> dead = new ArrayList<>();
        List<String> held = new ArrayList<>();
        List<String> revivesEnded = new ArrayList<>();
        int misses = 0;
        int lost = 0;
        int tooSoon = 0;
        int skipped = 0;
        List<SweepPlan.Observed> judged = snapshot.agents().stream().map(Liveness::judged).toList();
        List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(SweepPlan.afterStart(judged, graceFrom),
                snapshot.teams(), policy, now);
        SweepPlan.FleetOutcome fleet = SweepPlan.fleet(outcomes, policy);
        skipped += flagFleet(fleet, snapshot.fleetHeldSince(), now) ? 0 : 1;
        // Host leases before the deaths: a host gone silent is one HostLeaseExpired per
        // incident, and the deaths below of agents beating through it carry that silence (docs/alerts-noise.md).
        // A fleet-wide hold holds the hosts' pages too: their silence is the same brownout.
        List<String> hostsExpired = new ArrayList<>();
        int[] leaseSkips = {0};
        Map<String, Instant> silences = flagSilentHosts(snapshot, now, fleet.held(), hostsExpired, leaseSkips);
        skipped += leaseSkips[0];
        List<SweepPlan.Action> actions = new ArrayList<>();
        // Held fleet-wide: nobody is marked dead and no team raises its own flag (the fleet's event is the one
        // alert); each team's flag is judged again once the fleet's hold ends.
        for (SweepPlan.TeamOutcome outcome : fleet.held() ? List.<SweepPlan.TeamOutcome>of() : outcomes) {
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
            results.add(writers.submit(() -> apply(action, now, silences)));
        }
        for (SweepPlan.EndRevive end : SweepPlan.orphanedRevives(snapshot.restarting(), timing.reviveLongestRun(),
                now)) {
            results.add(writers.submit(() -> end(end, now)));
        }
        for (Future<Outcome> f : results) {
            Outcome o = join(f);
            switch (o.kind()) {
                case DEAD -> dead.add(o.agent());
                case MISSED -> misses++;
                case LOST -> lost++;
                case TOO_SOON -> tooSoon++;
                case SKIPPED -> skipped++;
                case REVIVE_ENDED -> revivesEnded.add(o.agent());
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
        // A lease renewed since its flag is restored; an answer a lease must no longer give is dropped, so the
        // next beat is exact.
        int answersDropped = 0;
        for (HostLease.Seen back : HostLease.restored(snapshot.leases())) {
            try {
                store.restoreLease(back, now);
            } catch (LifelineException ex) {
                skipped++;
            }
        }
        // Waits for a person: one AgentAwaitingInput when one runs past its threshold, one AgentInputResumed when
        // it is over (resolved first, so a new wait of the same agent raises its own).
        List<String> awaitingRaised = new ArrayList<>();
        Liveness.AwaitingDecisions waits = Liveness.awaiting(snapshot.personWaits(), timing.allowances(), now);
        for (Liveness.PersonWait w : waits.resolve()) {
            try {
                store.resolveAwaiting(w);
            } catch (LifelineException ex) {
                skipped++;
            }
        }
        for (Liveness.PersonWait w : waits.raise()) {
            try {
                if (store.raiseAwaiting(w, now)) {
                    awaitingRaised.add(w.team() + "/" + w.agentId());
                }
            } catch (LifelineException ex) {
                skipped++;
            }
        }
        for (HostLease.StaleAnswer stale : HostLease.staleAnswers(snapshot.leases(), snapshot.linked())) {
            try {
                answersDropped += store.dropLeaseAnswer(stale) ? 1 : 0;
            } catch (LifelineException ex) {
                skipped++;
            }
        }
        return new Report(now, snapshot.itemsScanned(), snapshot.agents().size(), dead, misses, lost, skipped, held,
                snapshot.consumedReadUnits(), Duration.ofNanos(System.nanoTime() - started), tooSoon, revivesEnded,
                hostsExpired, answersDropped, fleet, awaitingRaised);
    }

    /**
     * The fleet's flag follows its outcome: raised by the first sweep that holds (one FleetMassStaleSuspected),
     * lowered by the first that does not (one FleetMassStaleResolved). False when the write was skipped on an error
     * (the next sweep tries again).
     */
    private boolean flagFleet(SweepPlan.FleetOutcome fleet, Instant heldSince, Instant now) {
        try {
            if (fleet.held() && heldSince == null) {
                teams.fleet().raise(fleet, now);
            } else if (!fleet.held() && heldSince != null) {
                teams.fleet().clear(heldSince, now);
            }
            return true;
        } catch (LifelineException e) {
            return false;
        }
    }
}
