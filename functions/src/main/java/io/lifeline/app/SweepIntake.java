package io.lifeline.app;

import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepCensus;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.sweep.SweepStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one sweep keeps of its Scan, taken page by page as the segments read them ({@link SweepStore.Sink}): each
 * alive agent is judged through {@link Liveness} as it arrives and counted in a {@link SweepCensus}, which keeps only
 * the stale ones; an agent that beats through a host lease waits, as read, until its lease is read (another segment
 * may hold it), then is judged the same way. Beside them only what the later steps need: teams, leases and the agents
 * that name one, waits for a person, progress, revives, and which alive agents are paused. No item is kept, and a
 * heard agent is kept by nothing but its lease's entry, if it has one.
 */
final class SweepIntake implements SweepStore.Sink {
    private final Instant graceFrom;
    private final SweepCensus census;
    /** {@code team/hostId} -> the lease as read. */
    private final Map<String, HostLease.Seen> leases = new LinkedHashMap<>();
    /** {@code team/hostId} -> agents beating through that lease, read before it. */
    private final Map<String, List<SweepPlan.Observed>> parked = new HashMap<>();
    private final List<SweepPlan.Restarting> restarting = new ArrayList<>();
    private final Map<String, TeamSettings> teams = new HashMap<>();
    private final Set<String> flagged = new HashSet<>();
    private final List<HostLease.Linked> linked = new ArrayList<>();
    private final List<Liveness.PersonWait> personWaits = new ArrayList<>();
    private final List<Liveness.ProgressSeen> progress = new ArrayList<>();
    /** {@code team/agentId} of the alive agents paused at the sweep's instant. */
    private final Set<String> paused = new HashSet<>();
    private Instant fleetHeldSince;
    private Instant fleetReleasedAt;
    private int parkedCount;
    private int itemsScanned;
    private double consumedReadUnits;

    /** An intake judging at {@code now}; {@code graceFrom}: the host's start ({@link Liveness#afterStart}), or null. */
    SweepIntake(Instant now, Instant graceFrom) {
        this.census = new SweepCensus(now);
        this.graceFrom = graceFrom;
    }

    @Override
    public synchronized void page(SweepStore.Page page) {
        itemsScanned += page.itemsScanned();
        consumedReadUnits += page.consumedReadUnits();
        page.teams().forEach(t -> teams.put(t.team(), t));
        flagged.addAll(page.teamsWithMassStaleFlag());
        if (page.fleetSeen()) {
            fleetHeldSince = page.fleetHeldSince();
            fleetReleasedAt = page.fleetReleasedAt();
        }
        restarting.addAll(page.restarting());
        linked.addAll(page.linked());
        personWaits.addAll(page.personWaits());
        progress.addAll(page.progress());
        for (HostLease.Seen lease : page.leases()) {
            String key = HostIncidents.leaseKey(lease.team(), lease.hostId());
            leases.put(key, lease);
            List<SweepPlan.Observed> waiting = parked.remove(key);
            if (waiting != null) {
                parkedCount -= waiting.size();
                waiting.forEach(a -> count(a, lease));
            }
        }
        for (SweepPlan.Observed a : page.agents()) {
            if (Liveness.paused(a.pausedUntil(), census.now())) {
                paused.add(a.team() + "/" + a.agentId());
            }
            if (a.hosted() == null) {
                count(a, null);
                continue;
            }
            String key = HostIncidents.leaseKey(a.team(), a.hosted().hostId());
            HostLease.Seen lease = leases.get(key);
            if (lease != null) {
                count(a, lease);
            } else {
                parked.computeIfAbsent(key, k -> new ArrayList<>()).add(a);
                parkedCount++;
            }
        }
    }

    /** The agent judged through its lease as read ({@code lease}, null: none) and after a start, then counted. */
    private void count(SweepPlan.Observed a, HostLease.Seen lease) {
        SweepPlan.Observed read = a.hosted() == null || lease == null ? a : a.linked(a.hosted().through(lease));
        census.add(Liveness.afterStart(Liveness.judged(read), graceFrom));
    }

    /**
     * Whether a part of a round counts this plain alive agent itself (its census's counters then say all of it)
     * rather than ship it: any agent the census would keep is shipped, so the round's merge keeps it.
     */
    boolean countsHere(SweepPlan.Observed a) {
        return !census.keeps(Liveness.afterStart(Liveness.judged(a), graceFrom));
    }

    /** Adds a part's counters and what its Scan read (the round's merge). */
    synchronized void addPart(Map<String, SweepCensus.Counts> counts, int scanned, double units) {
        counts.forEach(census::addCounts);
        itemsScanned += scanned;
        consumedReadUnits += units;
    }

    /** After the last page: agents whose lease was never read (it is gone) are judged from their items. */
    synchronized SweepIntake finish() {
        parked.values().forEach(list -> list.forEach(a -> count(a, null)));
        parked.clear();
        parkedCount = 0;
        return this;
    }

    /**
     * The facts this intake holds now, one per agent, lease entry, wait, progress or revive it keeps: what grows with
     * the fleet. A healthy agent of no lease adds none.
     */
    synchronized long retainedFacts() {
        long entries = leases.values().stream().mapToLong(l -> l.beats().size() + l.answers().size()).sum();
        return census.kept() + parkedCount + entries + linked.size() + personWaits.size() + progress.size()
                + restarting.size() + paused.size();
    }

    SweepCensus census() {
        return census;
    }

    List<SweepPlan.Restarting> restarting() {
        return restarting;
    }

    Map<String, TeamSettings> teams() {
        return teams;
    }

    Set<String> teamsWithMassStaleFlag() {
        return flagged;
    }

    List<HostLease.Seen> leases() {
        return List.copyOf(leases.values());
    }

    List<HostLease.Linked> linked() {
        return linked;
    }

    Instant fleetHeldSince() {
        return fleetHeldSince;
    }

    Instant fleetReleasedAt() {
        return fleetReleasedAt;
    }

    List<Liveness.PersonWait> personWaits() {
        return personWaits;
    }

    List<Liveness.ProgressSeen> progress() {
        return progress;
    }

    /** Whether the alive agent {@code team/agentId} was paused at the sweep's instant. */
    boolean paused(String id) {
        return paused.contains(id);
    }

    int itemsScanned() {
        return itemsScanned;
    }

    double consumedReadUnits() {
        return consumedReadUnits;
    }
}
