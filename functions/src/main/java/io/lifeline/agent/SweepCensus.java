package io.lifeline.agent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sweep's count of the agents it read, taken one agent at a time as its Scan's pages arrive (pure: no store, no
 * clock): per team how many are alive, watched (not paused) and stale, by host lease and by source address (what its
 * failure domains are made of), and the stale agents themselves, the only ones it keeps: the candidates for a miss or
 * a death, which wait for the fleet-wide counts self-preservation weighs. An agent heard in time bumps counters and is
 * dropped, so a census grows with the fleet's stale agents, teams, leases and sources, not with its alive agents.
 * Censuses of parts of the table (segments, invocations) add up ({@link #addAll}).
 */
public final class SweepCensus {
    private final Instant now;
    private final Map<String, Team> teams = new TreeMap<>();

    /** One team's counts; {@code {watched, stale}} per lease and per source. */
    private static final class Team {
        int alive;
        int watched;
        int stale;
        final List<SweepPlan.Observed> staleAgents = new ArrayList<>();
        /** Lease id -> {watched, stale} of the agents beating through it (any agent's lease names a host). */
        final Map<String, int[]> byLease = new HashMap<>();
        /** Source address -> {watched, stale} of the agents beating directly. */
        final Map<String, int[]> bySource = new HashMap<>();
    }

    /** A census judging at {@code now}: an agent is stale when its deadline is before it. */
    public SweepCensus(Instant now) {
        this.now = now;
    }

    public Instant now() {
        return now;
    }

    /**
     * Counts one agent as the sweep judges it (through its lease, {@link Liveness#judged}, and after a start,
     * {@link Liveness#afterStart}); keeps it only when it is watched and stale.
     */
    public void add(SweepPlan.Observed a) {
        Team t = teams.computeIfAbsent(a.team(), k -> new Team());
        String lease = a.hosted() == null ? null : a.hosted().hostId();
        int[] bucket = lease != null ? t.byLease.computeIfAbsent(lease, k -> new int[2])
                : a.source() != null && a.status().isAlive() ? t.bySource.computeIfAbsent(a.source(), k -> new int[2])
                : null;
        if (!a.status().isAlive()) {
            return;
        }
        t.alive++;
        if (Liveness.paused(a.pausedUntil(), now)) {
            return;
        }
        t.watched++;
        boolean stale = Liveness.stale(a.deadline(), now);
        if (stale) {
            t.stale++;
            t.staleAgents.add(a);
        }
        if (bucket != null) {
            bucket[0]++;
            bucket[1] += stale ? 1 : 0;
        }
    }

    /** Adds another part's census of the same instant (another segment's, another invocation's). */
    public void addAll(SweepCensus other) {
        other.teams.forEach((name, o) -> {
            Team t = teams.computeIfAbsent(name, k -> new Team());
            t.alive += o.alive;
            t.watched += o.watched;
            t.stale += o.stale;
            t.staleAgents.addAll(o.staleAgents);
            o.byLease.forEach((k, c) -> add(t.byLease, k, c));
            o.bySource.forEach((k, c) -> add(t.bySource, k, c));
        });
    }

    /**
     * One team's counters without its stale agents: what a part of a sweep ships of the agents it counted itself.
     * {@code byLease} and {@code bySource}: {@code {watched, stale}} per lease and per source address.
     */
    public record Counts(int alive, int watched, int stale, Map<String, int[]> byLease, Map<String, int[]> bySource) {
    }

    /** Whether {@link #add} keeps the agent (as judged): alive, watched and stale. */
    public boolean keeps(SweepPlan.Observed a) {
        return a.status().isAlive() && !Liveness.paused(a.pausedUntil(), now) && Liveness.stale(a.deadline(), now);
    }

    /** Each team's counters, by team (a census that keeps no agent ships whole this way). */
    public Map<String, Counts> counts() {
        Map<String, Counts> out = new TreeMap<>();
        teams.forEach((name, t) -> out.put(name, new Counts(t.alive, t.watched, t.stale, t.byLease, t.bySource)));
        return out;
    }

    /** Adds another part's counters of {@code team}, taken at the same instant, with no agent kept. */
    public void addCounts(String team, Counts c) {
        Team t = teams.computeIfAbsent(team, k -> new Team());
        t.alive += c.alive();
        t.watched += c.watched();
        t.stale += c.stale();
        c.byLease().forEach((k, v) -> add(t.byLease, k, v));
        c.bySource().forEach((k, v) -> add(t.bySource, k, v));
    }

    private static void add(Map<String, int[]> into, String key, int[] c) {
        int[] mine = into.computeIfAbsent(key, k -> new int[2]);
        mine[0] += c[0];
        mine[1] += c[1];
    }

    /** The teams with an agent counted, sorted. */
    public Set<String> teams() {
        return teams.keySet();
    }

    /** Alive agents of every team. */
    public int alive() {
        return teams.values().stream().mapToInt(t -> t.alive).sum();
    }

    /** Whether the team has an alive agent (paused or not). */
    public boolean hasAlive(String team) {
        Team t = teams.get(team);
        return t != null && t.alive > 0;
    }

    /** The agents the census keeps: the watched stale ones, of every team. */
    public int kept() {
        return teams.values().stream().mapToInt(t -> t.staleAgents.size()).sum();
    }

    /** The team's watched stale agents, in the order they were counted. */
    List<SweepPlan.Observed> stale(String team) {
        Team t = teams.get(team);
        return t == null ? List.of() : t.staleAgents;
    }

    /** The team's watched agents by failure domain under its rule, each stale agent with its domain. */
    FailureDomain.Counts counts(String team, FailureDomains rule) {
        FailureDomain.Counts out = new FailureDomain.Counts();
        Team t = teams.get(team);
        if (t == null) {
            return out;
        }
        Set<String> leases = t.byLease.keySet();
        int watchedWithout = t.watched;
        int staleWithout = t.stale;
        for (Map.Entry<String, int[]> e : t.byLease.entrySet()) {
            out.count(FailureDomain.of(team, e.getKey(), null, rule, leases), e.getValue()[0], e.getValue()[1]);
            watchedWithout -= e.getValue()[0];
            staleWithout -= e.getValue()[1];
        }
        for (Map.Entry<String, int[]> e : t.bySource.entrySet()) {
            out.count(FailureDomain.of(team, null, e.getKey(), rule, leases), e.getValue()[0], e.getValue()[1]);
            watchedWithout -= e.getValue()[0];
            staleWithout -= e.getValue()[1];
        }
        out.count(null, watchedWithout, staleWithout);
        for (SweepPlan.Observed a : t.staleAgents) {
            out.staleIn(a, FailureDomain.of(team, a.hosted() == null ? null : a.hosted().hostId(), a.source(), rule,
                    leases));
        }
        return out;
    }
}
