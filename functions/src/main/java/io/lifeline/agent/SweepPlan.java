package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one sweep should do, decided from one snapshot at one instant (pure: no store, no clock). An alive
 * agent whose deadline has passed, and that is not paused, has missed this sweep: it gets a miss, or dies
 * when the misses reach its grace. Self-preservation: when more than the threshold share of a team's
 * alive agents are stale at once (and the team has at least the minimum alive), the sweep holds back that
 * whole team and raises one alert instead, as Eureka and Kubernetes do against their own blind spots; unless one
 * failure domain explains the silence ({@link FailureDomain}: a dead box, while the rest still reaches Lifeline).
 */
public final class SweepPlan {

    /**
     * An agent as the sweep read it; {@code beats} is what its conditional write will insist on, and for an agent
     * that beats through a host lease ({@code hosted}, else null) also its lease entry.
     */
    public record Observed(String team, String agentId, AgentStatus status, Instant heartbeatAt, Instant deadline,
                           int misses, int graceMisses, long beats, Instant pausedUntil, Hosted hosted,
                           String source) {
        public Observed(String team, String agentId, AgentStatus status, Instant heartbeatAt, Instant deadline,
                        int misses, int graceMisses, long beats, Instant pausedUntil, Hosted hosted) {
            this(team, agentId, status, heartbeatAt, deadline, misses, graceMisses, beats, pausedUntil, hosted, null);
        }

        public Observed(String team, String agentId, AgentStatus status, Instant heartbeatAt, Instant deadline,
                        int misses, int graceMisses, long beats, Instant pausedUntil) {
            this(team, agentId, status, heartbeatAt, deadline, misses, graceMisses, beats, pausedUntil, null);
        }

        /** This agent with another link (its lease's entry joined to it). */
        public Observed linked(Hosted link) {
            return new Observed(team, agentId, status, heartbeatAt, deadline, misses, graceMisses, beats, pausedUntil,
                    link, source);
        }

        /** This agent judged at another sign of life, deadline and misses (its link and source kept). */
        public Observed judgedAt(Instant heartbeatAt, Instant deadline, int misses) {
            return new Observed(team, agentId, status, heartbeatAt, deadline, misses, graceMisses, beats, pausedUntil,
                    hosted, source);
        }
    }

    /**
     * An agent's link to the host lease it beats through: the lease, its key there, the lease beat the sweep saw
     * ({@code leaseBeatMs}, null when the lease had none), the agent's stale-after, the answer the lease had cached
     * for it ({@code answer}, or null) and when the sweep last counted it a miss ({@code lastMissAt}, or null). The sweep's writes on such an agent insist that
     * the lease beat still leaves it stale (earlier than the judging time less its stale-after), so a renewal that
     * lands meanwhile with a later sign of life wins; its death also removes that answer.
     */
    public record Hosted(String hostId, String key, Long leaseBeatMs, Duration staleAfter, String answer,
                         Instant lastMissAt) {
        public Hosted(String hostId, String key, Long leaseBeatMs, Duration staleAfter, String answer) {
            this(hostId, key, leaseBeatMs, staleAfter, answer, null);
        }

        /** This link with its lease's entry as the sweep read it (null: no lease is left): its beat and answer. */
        public Hosted through(HostLease.Seen lease) {
            return lease == null ? this : new Hosted(hostId, key, lease.beats().get(key), staleAfter,
                    lease.answers().get(key), lastMissAt);
        }
    }

    /**
     * An agent the sweep read in {@code restarting}: {@code seq} and {@code since} are the transition stamp of
     * its entry into restarting ({@code tseq}, {@code tAt}), which the sweep's write insists on.
     */
    public record Restarting(String team, String agentId, long seq, Instant since) {
    }

    /** End a revive that no flow is left to end: restarting -> dead_failed_revive ({@code restart_exhausted}). */
    public record EndRevive(Restarting agent, String reason) {
    }

    /**
     * The service-wide self-preservation settings. {@code threshold} and {@code minAlive}: each team's guard (a team's
     * settings may override them). {@code fleetThreshold} and {@code fleetMinAlive}: the deployment-wide guard,
     * judged over every team at once, so a brownout that silences many small teams together (each under its own
     * minimum) holds too.
     */
    public record Policy(double threshold, int minAlive, double fleetThreshold, int fleetMinAlive) {
        /** Only the per-team guard: the fleet's never holds (a threshold of 1 is never passed). */
        public Policy(double threshold, int minAlive) {
            this(threshold, minAlive, 1.0, Integer.MAX_VALUE);
        }
    }

    /**
     * The whole deployment in one sweep: {@code alive} watched alive agents (teams and agents not paused),
     * {@code stale} of them past their deadline, in {@code staleTeams} (sorted). {@code held}: more than
     * {@code threshold} of them are stale and there are at least the fleet minimum, so no agent is marked dead.
     */
    public record FleetOutcome(int alive, int stale, List<String> staleTeams, boolean held, double threshold,
                               FailureDomain.Verdict verdict) {
        public FleetOutcome(int alive, int stale, List<String> staleTeams, boolean held, double threshold) {
            this(alive, stale, staleTeams, held, threshold, null);
        }

        /** The guard tripped, but the operator released the hold: nobody is held, and the flag stays up. */
        public boolean released() {
            return verdict != null && verdict.kind() == FailureDomain.Kind.RELEASED;
        }
    }

    public sealed interface Action permits Miss, Kill {
        Observed agent();
    }

    /** Record one more missed sweep. */
    public record Miss(Observed agent, int misses) implements Action {
    }

    /** Mark dead, with the reason a person will read. */
    public record Kill(Observed agent, int misses, String reason) implements Action {
    }

    /**
     * One team's outcome. When {@code held}, {@code actions} is empty and an alert is due. {@code verdict}: what the
     * guard made of a mass silence (null when the team's guard did not trip): held, released by an admin, or
     * explained by one failure domain, whose agents' actions stand. {@code counts} and {@code staleAgents}: the
     * agents judged, counted by failure domain, and the stale ones, for the fleet's guard.
     */
    public record TeamOutcome(String team, int alive, int stale, boolean held, double threshold,
                              List<Action> actions, FailureDomain.Verdict verdict, FailureDomain.Counts counts,
                              List<Observed> staleAgents) {
        public TeamOutcome(String team, int alive, int stale, boolean held, double threshold, List<Action> actions) {
            this(team, alive, stale, held, threshold, actions, null, new FailureDomain.Counts(), List.of());
        }
    }

    private SweepPlan() {
    }

    /**
     * After a start of the host (Lifeline Local's {@code startedAt}): each alive agent as {@link Liveness#afterStart}
     * judges it (at least one full window from the start).
     */
    public static List<Observed> afterStart(List<Observed> agents, Instant startedAt) {
        if (startedAt == null) {
            return agents;
        }
        return agents.stream().map(a -> Liveness.afterStart(a, startedAt)).toList();
    }

    public static List<TeamOutcome> decide(List<Observed> agents, Map<String, TeamSettings> teams, Policy policy,
                                           Instant now) {
        return decide(agents, teams, policy, now, null);
    }

    /**
     * Each team's outcome. {@code fleetHeldSince}: when the deployment-wide hold that stands began (null: none); a
     * team its admin released from that hold is judged as released from its own guard too ({@link #ownHold}).
     */
    public static List<TeamOutcome> decide(List<Observed> agents, Map<String, TeamSettings> teams, Policy policy,
                                           Instant now, Instant fleetHeldSince) {
        SweepCensus census = new SweepCensus(now);
        agents.forEach(census::add);
        return decide(census, teams, policy, fleetHeldSince);
    }

    /**
     * Each team's outcome from a census taken at its instant, as {@link #decide(List, Map, Policy, Instant, Instant)}
     * decides from the agents themselves: a paused team is left out, every other team with an alive agent is judged
     * by its own guard, weighing failure domains against the whole fleet's counts.
     */
    public static List<TeamOutcome> decide(SweepCensus census, Map<String, TeamSettings> teams, Policy policy,
                                           Instant fleetHeldSince) {
        Instant now = census.now();
        Map<String, FailureDomain.Counts> counted = new TreeMap<>();
        FailureDomain.Counts fleet = new FailureDomain.Counts();
        for (String team : census.teams()) {
            TeamSettings settings = teams.get(team);
            if (census.hasAlive(team) && (settings == null || !settings.pausedAt(now))) {
                FailureDomain.Counts counts = census.counts(team, FailureDomains.of(settings));
                counted.put(team, counts);
                fleet.addAll(counts);
            }
        }
        List<TeamOutcome> outcomes = new ArrayList<>();
        counted.forEach((team, counts) -> outcomes.add(decideTeam(team, counts, census.stale(team), teams.get(team),
                ownHold(teams.get(team), fleetHeldSince), policy, now, fleet)));
        return outcomes;
    }

    /**
     * Whether the team's admin released it from the deployment-wide hold that began at {@code fleetHeldSince}: the
     * sweep then judges its silent agents as if no fleet hold stood, until that hold ends (a later one holds it again).
     */
    public static boolean releasedFromFleet(TeamSettings settings, Instant fleetHeldSince) {
        return settings != null && settings.fleetHold() != null && settings.fleetHold().releases(fleetHeldSince);
    }

    /**
     * The team's own flag as its guard weighs it. A team released from the standing fleet hold counts as released
     * from its own guard too: one release covers the silence, whichever guard holds it, so the admin is not asked
     * twice for one incident (a flag one failure domain explained stays as it is: its agents die anyway).
     */
    static TeamHold ownHold(TeamSettings settings, Instant fleetHeldSince) {
        TeamHold own = settings == null ? null : settings.hold();
        if (!releasedFromFleet(settings, fleetHeldSince) || (own != null && (!own.held() || own.releasedAt() != null))) {
            return own;
        }
        TeamFleetHold share = settings.fleetHold();
        return new TeamHold(own == null ? share.since() : own.since(), share.alive(), share.stale(), true,
                own == null ? null : own.why(), share.releasedAt());
    }

    private static TeamOutcome decideTeam(String team, FailureDomain.Counts counts, List<Observed> stale,
                                          TeamSettings settings, TeamHold hold, Policy policy, Instant now,
                                          FailureDomain.Counts fleet) {
        double threshold = settings != null && settings.selfPreservationThreshold() != null
                ? settings.selfPreservationThreshold() : policy.threshold();
        int minAlive = settings != null && settings.selfPreservationMinAlive() != null
                ? settings.selfPreservationMinAlive() : policy.minAlive();
        FailureDomain.Verdict verdict = null;
        if (trips(counts.watched(), stale.size(), threshold, minAlive)) {
            verdict = FailureDomain.judge(counts, stale, threshold, fleet, FailureDomains.of(settings), hold);
            if (verdict.holds()) {
                return new TeamOutcome(team, counts.watched(), stale.size(), true, threshold, List.of(), verdict,
                        counts, stale);
            }
        }
        return new TeamOutcome(team, counts.watched(), stale.size(), false, threshold, actions(stale, now), verdict,
                counts, stale);
    }

    /** A guard trips: at least {@code minAlive} watched, and more than {@code threshold} of them stale. */
    static boolean trips(int watched, int stale, double threshold, int minAlive) {
        return watched >= minAlive && stale > threshold * watched;
    }

    private static List<Action> actions(List<Observed> stale, Instant now) {
        List<Action> actions = new ArrayList<>();
        for (Observed a : stale) {
            int misses = a.misses() + 1;
            if (misses >= a.graceMisses()) {
                actions.add(new Kill(a, misses, reason(a, misses, now)));
            } else {
                actions.add(new Miss(a, misses));
            }
        }
        return actions;
    }

    /**
     * The deployment-wide guard, from the teams' outcomes of the same sweep: when more than the fleet threshold of
     * all watched alive agents are stale at once, the silence is ours or the network's (a throttled ingress, a
     * dropped path from most hosts), not the agents', whatever each team's size. A single silent team in a fleet
     * stays under the threshold and dies as before.
     */
    public static FleetOutcome fleet(List<TeamOutcome> outcomes, Policy policy) {
        return fleet(outcomes, Map.of(), policy);
    }

    /**
     * As {@link #fleet(List, Policy)}, weighing failure domains as each team's rule says ({@code teams}): a fleet-wide
     * silence confined to one domain (a host, or one source address) while the rest of the fleet still reaches
     * Lifeline is not held.
     */
    public static FleetOutcome fleet(List<TeamOutcome> outcomes, Map<String, TeamSettings> teams, Policy policy) {
        return fleet(outcomes, teams, policy, null);
    }

    /**
     * As {@link #fleet(List, Map, Policy)}; {@code releasedAt}: when the operator released the fleet-wide hold that
     * stands (null: not released). A released hold holds nobody while its guard still trips: every team is judged
     * by its own guard, and the flag stays up until the silence ends.
     */
    public static FleetOutcome fleet(List<TeamOutcome> outcomes, Map<String, TeamSettings> teams, Policy policy,
                                     Instant releasedAt) {
        int alive = 0;
        int stale = 0;
        List<String> staleTeams = new ArrayList<>();
        FailureDomain.Counts counts = new FailureDomain.Counts();
        List<Observed> staleAgents = new ArrayList<>();
        for (TeamOutcome o : outcomes) {
            alive += o.alive();
            stale += o.stale();
            counts.addAll(o.counts());
            staleAgents.addAll(o.staleAgents());
            if (o.stale() > 0) {
                staleTeams.add(o.team());
            }
        }
        boolean held = false;
        FailureDomain.Verdict verdict = null;
        if (trips(alive, stale, policy.fleetThreshold(), policy.fleetMinAlive()) && releasedAt != null) {
            verdict = new FailureDomain.Verdict(FailureDomain.Kind.RELEASED, null, List.copyOf(staleAgents),
                    "released by the operator at " + releasedAt + ": each team's silent agents are judged by its own"
                            + " guard");
        } else if (trips(alive, stale, policy.fleetThreshold(), policy.fleetMinAlive())) {
            verdict = FailureDomain.judge(counts, staleAgents, policy.fleetThreshold(), counts, null, null);
            held = verdict.holds();
        }
        return new FleetOutcome(alive, stale, List.copyOf(staleTeams), held, policy.fleetThreshold(), verdict);
    }

    /**
     * The agents left {@code restarting} for longer than {@code longestRun}, the revive flow's longest possible
     * run: their flow has died (a failed execution, a lost one), so nothing else will ever end their restart.
     * Exactly at the bound an agent is left alone. Team pauses do not hold this back: it judges the flow, not
     * the agent's heartbeats.
     */
    public static List<EndRevive> orphanedRevives(List<Restarting> restarting, Duration longestRun, Instant now) {
        List<EndRevive> out = new ArrayList<>();
        for (Restarting r : restarting) {
            if (r.since() != null && Duration.between(r.since(), now).compareTo(longestRun) > 0) {
                out.add(new EndRevive(r, "restarting for " + human(Duration.between(r.since(), now))
                        + " with no revive flow left to end it"));
            }
        }
        return out;
    }

    /** {@code 6m12s}, {@code 1h2m3s}, {@code 45s}. */
    static String human(Duration d) {
        long s = d.toSeconds();
        StringBuilder out = new StringBuilder();
        if (s >= 3600) {
            out.append(s / 3600).append('h');
        }
        if (s >= 60) {
            out.append(s % 3600 / 60).append('m');
        }
        return out.append(s % 60).append('s').toString();
    }

    /** Short, because it is stamped on the agent item (cut at 100 bytes): the silence first. */
    static String reason(Observed a, int misses, Instant now) {
        String silent = a.heartbeatAt() == null ? "never sent a heartbeat"
                : "no heartbeat for " + Duration.between(a.heartbeatAt(), now).toSeconds() + " s";
        return silent + ", " + misses + " missed sweep" + (misses == 1 ? "" : "s") + ", deadline was " + a.deadline();
    }
}
