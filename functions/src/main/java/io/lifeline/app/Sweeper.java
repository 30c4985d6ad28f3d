package io.lifeline.app;

import io.lifeline.agent.FailureDomain;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamHold;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs one sweep: read the live table, judging each page as it arrives ({@link SweepIntake}: only the stale agents
 * and a few counters per team are kept), decide with {@link SweepPlan} at one instant, then make each decision a
 * conditional write. Agents that are not stale cost no write. A write refused because a heartbeat won, or
 * throttled, leaves that agent for the next sweep; the rest of the sweep goes on. A miss counts at most once
 * per {@link Timing#missSpacing()}, and an agent {@code restarting} past the revive flow's longest run is
 * ended ({@code restart_exhausted}).
 */
public final class Sweeper {

    /** What the scan read: items, alive agents among them, and the read units DynamoDB reported. */
    public record Scanned(int itemsScanned, int aliveSeen, double consumedReadUnits) {
    }

    /**
     * What the sweep's writes did. {@code missesTooSoon}: misses not counted because the agent's last one is younger
     * than the spacing; {@code raceLostToHeartbeat}: writes a beat (or join) won; {@code skippedOnError}: writes
     * skipped on a throttle or an outage, looked at again next sweep; {@code revivesEnded}: agents moved out of a
     * restart no flow was left to end; {@code awaitingRaised}: waits for a person that raised their one alert;
     * {@code stalled}: agents whose stall this sweep raised (those it restarted are in {@code markedDead} too).
     */
    public record Written(List<String> markedDead, int missesRecorded, int raceLostToHeartbeat, int missesTooSoon,
                          int skippedOnError, List<String> revivesEnded, List<String> awaitingRaised,
                          List<String> stalled) {
        /** A sweep that raised no stall. */
        public Written(List<String> markedDead, int missesRecorded, int raceLostToHeartbeat, int missesTooSoon,
                       int skippedOnError, List<String> revivesEnded, List<String> awaitingRaised) {
            this(markedDead, missesRecorded, raceLostToHeartbeat, missesTooSoon, skippedOnError, revivesEnded,
                    awaitingRaised, List.of());
        }
    }

    /** What self-preservation held back: teams held on their own, and the fleet's outcome. */
    public record Held(List<String> teamsHeld, SweepPlan.FleetOutcome fleet) {
    }

    /** What the sweep did about host leases: leases flagged silent ({@code team/host}), cached answers dropped. */
    public record Hosts(List<String> hostsExpired, int leaseAnswersDropped) {
    }

    /** What a sweep did, for logs and metrics, in named parts; the accessors below read through to them. */
    public record Report(Instant at, Scanned scanned, Written written, Held held, Hosts hosts, Duration took) {
        public int itemsScanned() {
            return scanned.itemsScanned();
        }

        public int aliveSeen() {
            return scanned.aliveSeen();
        }

        public double consumedReadUnits() {
            return scanned.consumedReadUnits();
        }

        public List<String> markedDead() {
            return written.markedDead();
        }

        public int missesRecorded() {
            return written.missesRecorded();
        }

        public int raceLostToHeartbeat() {
            return written.raceLostToHeartbeat();
        }

        public int missesTooSoon() {
            return written.missesTooSoon();
        }

        public int skippedOnError() {
            return written.skippedOnError();
        }

        public List<String> revivesEnded() {
            return written.revivesEnded();
        }

        public List<String> awaitingRaised() {
            return written.awaitingRaised();
        }

        public List<String> stalled() {
            return written.stalled();
        }

        public List<String> teamsHeld() {
            return held.teamsHeld();
        }

        public SweepPlan.FleetOutcome fleet() {
            return held.fleet();
        }

        /** True when the deployment-wide guard held this sweep: no agent of any team was marked dead. */
        public boolean fleetHeld() {
            return held.fleet() != null && held.fleet().held();
        }

        public List<String> hostsExpired() {
            return hosts.hostsExpired();
        }

        public int leaseAnswersDropped() {
            return hosts.leaseAnswersDropped();
        }
    }

    /** One sweep's running count of what its writes did; becomes the report's {@link Written}. */
    private static final class Tally {
        final List<String> dead = new ArrayList<>();
        final List<String> revivesEnded = new ArrayList<>();
        final List<String> awaitingRaised = new ArrayList<>();
        final List<String> stalled = new ArrayList<>();
        final List<String> teamsHeld = new ArrayList<>();
        final List<String> hostsExpired = new ArrayList<>();
        /** {@code team/agentId} -> the source silence a death follows from (its team's flag is the page). */
        final Map<String, HostIncidents.Cause> sourceCauses = new HashMap<>();
        int misses;
        int lost;
        int tooSoon;
        int skipped;
        int answersDropped;

        void skip() {
            skipped++;
        }

        void count(Outcome o) {
            switch (o.kind()) {
                case DEAD -> dead.add(o.agent());
                case MISSED -> misses++;
                case LOST -> lost++;
                case TOO_SOON -> tooSoon++;
                case SKIPPED -> skipped++;
                case REVIVE_ENDED -> revivesEnded.add(o.agent());
            }
        }

        Written written() {
            return new Written(dead, misses, lost, tooSoon, skipped, revivesEnded, awaitingRaised, stalled);
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

    final SweepStore store;
    private final TeamStore teams;
    private final SweepPlan.Policy policy;
    private final Timing timing;
    private final Clock clock;
    /** No alive agent is judged before one stale-after window from this start; null: no such grace. */
    final Instant graceFrom;
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
    private Outcome apply(SweepPlan.Action action, Instant now, Map<String, Instant> silences,
                          Map<String, HostIncidents.Cause> sourceCauses) {
        SweepPlan.Observed a = action.agent();
        String id = a.team() + "/" + a.agentId();
        HostIncidents.Cause cause = cause(a, silences);
        try {
            SweepStore.Write written = action instanceof SweepPlan.Kill kill
                    ? store.markDead(a, kill.misses(), kill.reason(), now, timing.missSpacing(),
                    cause != null ? cause : sourceCauses.get(id))
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
     * Step 4: flags the leases gone silent (while the fleet holds, only those of {@code judgedTeams}, the teams released
     * from it; null: of every team), each host's leases as one incident (the first flagged leads, the others are part
     * of it); answers the silences now in force, {@code team/leaseId} -> the flag's time.
     */
    private Map<String, Instant> flagSilentHosts(SweepIntake snapshot, Instant now, Set<String> judgedTeams,
                                                 Tally tally) {
        Map<String, Instant> silences = HostIncidents.silences(snapshot.leases());
        List<HostLease.Expired> expired = HostLease.expired(snapshot.leases(), snapshot.linked(), snapshot.teams(), now)
                .stream().filter(e -> judgedTeams == null || judgedTeams.contains(e.lease().team())).toList();
        for (HostIncidents.Group group : HostIncidents.groups(snapshot.leases(), expired)) {
            String lead = group.existingLead();
            for (HostLease.Expired e : group.members()) {
                try {
                    if (store.flagLeaseExpired(group.flag(e, lead), now)) {
                        lead = lead == null ? e.lease().hostId() : lead;
                        tally.hostsExpired.add(e.lease().team() + "/" + e.lease().hostId());
                        silences.put(HostIncidents.leaseKey(e.lease().team(), e.lease().hostId()), now);
                    }
                } catch (LifelineException ex) {
                    tally.skipped++;
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
        // 1. Read and judge as the pages arrive: each alive agent through Liveness, counted per team (the store
        // reads; it judges nothing). Only the stale are kept, for the fleet-wide counts self-preservation weighs.
        SweepIntake snapshot = new SweepIntake(now, graceFrom);
        SweepStore.Totals read = store.scan(snapshot);
        snapshot.finish();
        return decide(snapshot, new Scanned(read.itemsScanned(), snapshot.census().alive(), read.consumedReadUnits()),
                started);
    }

    /**
     * Steps 2 to 10 over an intake that has read the whole live table (one invocation's scan, or a round's parts
     * merged, {@link SweepRound}): the one path every decision and write of a sweep takes.
     */
    Report decide(SweepIntake snapshot, Scanned scanned, long started) {
        Instant now = snapshot.census().now();
        Tally tally = new Tally();
        // 2. Decide: each team and the fleet through SweepPlan, at one instant.
        List<SweepPlan.TeamOutcome> outcomes = SweepPlan.decide(snapshot.census(), snapshot.teams(), policy,
                snapshot.fleetHeldSince());
        SweepPlan.FleetOutcome fleet = SweepPlan.fleet(outcomes, snapshot.teams(), policy,
                snapshot.fleetReleasedAt());
        // 3. The fleet's flag follows its outcome; each team it holds reads its own share of it (its counts only).
        Instant fleetSince = flagFleet(fleet, snapshot.fleetHeldSince(), now, tally);
        FleetShares.write(teams, fleet.held(), fleetSince, outcomes, snapshot.teams(), tally::skip);
        // Teams their admin released from the standing fleet hold are judged as if it did not stand.
        Set<String> released = fleet.held() ? FleetShares.released(snapshot.teams(), snapshot.fleetHeldSince())
                : null;
        // 4. Silent hosts before the deaths: one HostLeaseExpired per incident, and the deaths below of agents
        // beating through a silent lease carry that silence (docs/alerts-noise.md). A fleet-wide hold holds the
        // hosts' pages too: their silence is the same brownout (but for teams released from it).
        Map<String, Instant> silences = flagSilentHosts(snapshot, now, released, tally);
        // 5. Each team's own guard: held teams raise their flag and write nothing; the others' decisions stand.
        List<SweepPlan.Action> actions = holdOrRelease(released == null ? outcomes
                : outcomes.stream().filter(o -> released.contains(o.team())).toList(), snapshot, now, tally);
        // 6. The decisions, as conditional writes side by side (a beat that lands meanwhile wins), and the revives
        // no flow is left to end.
        writeDecisions(actions, SweepPlan.orphanedRevives(snapshot.restarting(), timing.reviveLongestRun(), now),
                silences, now, tally);
        // 7. Teams flagged that no longer have alive agents at all: their condition has cleared.
        clearFlagsOfEmptyTeams(snapshot, tally);
        // 8. Leases: a lease renewed since its flag is restored; an answer a lease must no longer give is dropped.
        settleLeases(snapshot, now, tally);
        // 9. Waits for a person: one AgentAwaitingInput past its threshold, one AgentInputResumed once it is over.
        judgeWaits(snapshot, now, tally);
        // 10. Progress: one AgentStalled for an agent in a turn with no progress past its threshold (and, with
        // onStall restart and no daemon, its death), one AgentProgressResumed once it is no longer stalled.
        judgeStalls(snapshot, now, fleet.held(), tally);
        return new Report(now, scanned, tally.written(), new Held(tally.teamsHeld, fleet),
                new Hosts(tally.hostsExpired, tally.answersDropped), Duration.ofNanos(System.nanoTime() - started));
    }

    /**
     * Step 5: a team its own guard holds raises its flag (once) and writes nothing; a team whose silence one source
     * address explains raises its flag as that incident's one page, its deaths carrying the silence as their cause (a
     * host's is its lease's page already); a released hold keeps its flag while its agents die; any other team's
     * flag clears.
     */
    private List<SweepPlan.Action> holdOrRelease(List<SweepPlan.TeamOutcome> outcomes, SweepIntake snapshot,
                                                 Instant now, Tally tally) {
        List<SweepPlan.Action> actions = new ArrayList<>();
        for (SweepPlan.TeamOutcome outcome : outcomes) {
            TeamSettings settings = snapshot.teams().get(outcome.team());
            TeamHold flag = settings == null ? null : settings.hold();
            FailureDomain.Verdict verdict = outcome.verdict();
            try {
                if (outcome.held()) {
                    tally.teamsHeld.add(outcome.team());
                    raise(outcome, flag, true, now);
                    continue;
                }
                if (verdict != null && verdict.kind() == FailureDomain.Kind.EXPLAINED
                        && FailureDomain.SOURCE.equals(verdict.domain().kind())) {
                    Instant since = raise(outcome, flag, false, now);
                    verdict.agents().forEach(a -> tally.sourceCauses.put(a.team() + "/" + a.agentId(),
                            HostIncidents.Cause.ofSource(verdict.domain().id(), since)));
                } else if (flag != null && (verdict == null || verdict.kind() != FailureDomain.Kind.RELEASED)) {
                    teams.clearMassStale(outcome.team());
                }
            } catch (LifelineException e) {
                tally.skipped++;
                continue;
            }
            actions.addAll(outcome.actions());
        }
        return actions;
    }

    /**
     * The team's flag as its outcome says ({@code held}, or one domain explained): raised when none stands, raised
     * anew in place of one of the other kind (a new incident, one event), else left. Answers the flag's time.
     */
    private Instant raise(SweepPlan.TeamOutcome outcome, TeamHold flag, boolean held, Instant now) {
        if (flag != null && flag.held() == held) {
            return flag.since();
        }
        TeamStore.Flag raised = new TeamStore.Flag(outcome.alive(), outcome.stale(), outcome.threshold(), held,
                outcome.verdict() == null ? null : outcome.verdict().why());
        teams.raiseMassStale(outcome.team(), raised, flag == null ? null : flag.since(), now);
        return now;
    }

    /**
     * Step 6: the writes are independent conditional updates, made side by side, so a sweep with many stale agents
     * takes about one round trip per {@link #WRITERS} agents rather than one per agent.
     */
    private void writeDecisions(List<SweepPlan.Action> actions, List<SweepPlan.EndRevive> ends,
                                Map<String, Instant> silences, Instant now, Tally tally) {
        List<Future<Outcome>> results = new ArrayList<>();
        for (SweepPlan.Action action : actions) {
            results.add(writers.submit(() -> apply(action, now, silences, tally.sourceCauses)));
        }
        for (SweepPlan.EndRevive end : ends) {
            results.add(writers.submit(() -> end(end, now)));
        }
        for (Future<Outcome> f : results) {
            tally.count(join(f));
        }
    }

    /** Step 7: a team whose flag is up but that has no alive agent left has nothing held back any more. */
    private void clearFlagsOfEmptyTeams(SweepIntake snapshot, Tally tally) {
        for (String team : snapshot.teamsWithMassStaleFlag()) {
            if (!snapshot.census().hasAlive(team)) {
                try {
                    teams.clearMassStale(team);
                } catch (LifelineException e) {
                    tally.skipped++;
                }
            }
        }
    }

    /** Step 8: restore the leases renewed since their flag; drop the answers a lease must no longer give. */
    private void settleLeases(SweepIntake snapshot, Instant now, Tally tally) {
        for (HostLease.Seen back : HostLease.restored(snapshot.leases())) {
            try {
                store.restoreLease(back, now);
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
        for (HostLease.StaleAnswer stale : HostLease.staleAnswers(snapshot.leases(), snapshot.linked())) {
            try {
                tally.answersDropped += store.dropLeaseAnswer(stale) ? 1 : 0;
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
    }

    /** Step 9: resolve the alerts of waits that are over (first), then raise those of waits past their threshold. */
    private void judgeWaits(SweepIntake snapshot, Instant now, Tally tally) {
        Liveness.AwaitingDecisions waits = Liveness.awaiting(snapshot.personWaits(), timing.allowances(), now);
        for (Liveness.PersonWait w : waits.resolve()) {
            try {
                store.resolveAwaiting(w);
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
        for (Liveness.PersonWait w : waits.raise()) {
            try {
                if (store.raiseAwaiting(w, now)) {
                    tally.awaitingRaised.add(w.team() + "/" + w.agentId());
                }
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
    }

    /**
     * Step 10: resolve the stalls that are over (first), then raise those of agents stalled now. A restart is a
     * death, so a pause (the agent's or its team's) or a fleet-wide hold keeps it to the alert.
     */
    private void judgeStalls(SweepIntake snapshot, Instant now, boolean fleetHeld, Tally tally) {
        Liveness.StallDecisions stalls = Liveness.stalls(snapshot.progress(), timing.allowances().stallAfter(), now);
        Set<String> held = new HashSet<>();
        for (Liveness.ProgressSeen s : stalls.raise()) {
            TeamSettings team = snapshot.teams().get(s.team());
            if (fleetHeld || snapshot.paused(s.team() + "/" + s.agentId()) || team != null && team.pausedAt(now)
                    || tally.teamsHeld.contains(s.team())) {
                held.add(s.team() + "/" + s.agentId());
            }
        }
        for (Liveness.ProgressSeen s : stalls.resolve()) {
            try {
                store.resolveStall(s);
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
        for (Liveness.ProgressSeen s : stalls.raise()) {
            String reason = s.progress().reason() != null ? s.progress().reason() : Liveness.NO_PROGRESS_REPORTED;
            boolean restart = stalls.restart().contains(s) && !held.contains(s.team() + "/" + s.agentId());
            try {
                if (store.raiseStall(s, reason, restart, now)) {
                    tally.stalled.add(s.team() + "/" + s.agentId());
                    if (restart) {
                        tally.dead.add(s.team() + "/" + s.agentId());
                    }
                }
            } catch (LifelineException ex) {
                tally.skipped++;
            }
        }
    }

    /**
     * The fleet's flag follows its outcome: raised by the first sweep that holds (one FleetMassStaleSuspected),
     * lowered by the first that does not (one FleetMassStaleResolved); one the operator released stays up while the
     * guard still trips. Answers when the hold that stands after this sweep began (null: none, or a write skipped on
     * an error, which the next sweep tries again).
     */
    private Instant flagFleet(SweepPlan.FleetOutcome fleet, Instant heldSince, Instant now, Tally tally) {
        try {
            if (fleet.held() && heldSince == null) {
                return teams.fleet().raise(fleet, now) ? now : null;
            } else if (!fleet.held() && !fleet.released() && heldSince != null) {
                teams.fleet().clear(heldSince, now);
            }
            return fleet.held() ? heldSince : null;
        } catch (LifelineException e) {
            tally.skip();
            return null;
        }
    }
}
