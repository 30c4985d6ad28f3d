package io.lifeline.agent;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether a mass silence is explained at the agents' side (pure: no store, no clock). Self-preservation holds a
 * silence that Lifeline's own impairment could explain; a silence confined to one failure domain (one host, or one
 * source address of direct beats) while the rest of the team or fleet still reaches Lifeline is a box that died or
 * was cut off, and its agents die as judged. The rule, in Kubernetes' words: one zone in full disruption while
 * others are healthy is evicted as usual; every zone disrupted at once is the control plane's own blindness, and
 * nothing is evicted (docs/self-preservation.md).
 */
public final class FailureDomain {
    /** {@link Domain#kind()} of a daemon's host (every lease of it). */
    public static final String HOST = "host";
    /** {@link Domain#kind()} of one source address of direct beats. */
    public static final String SOURCE = "source";

    private FailureDomain() {
    }

    /**
     * One failure domain: a host of {@code team} (its leases are the team's own), or a source address ({@code team}
     * null: one box or NAT, whichever teams beat from it).
     */
    public record Domain(String kind, String team, String id) {
        /** {@code source 203.0.113.7}, {@code host build-1}. */
        public String describe() {
            return kind + " " + id;
        }
    }

    /** What a tripped guard made of the silence. */
    public enum Kind {
        /** Lifeline's own impairment could explain it: nobody of the scope is marked dead. */
        HELD,
        /** Held, but an admin released the hold: the agents die as judged until the silence ends. */
        RELEASED,
        /** One failure domain went silent while the rest still reach Lifeline: its agents die as judged. */
        EXPLAINED
    }

    /**
     * The verdict on one scope (a team, or the fleet): {@code domain} and its silent {@code agents} when explained,
     * and {@code why} in words a person can act on.
     */
    public record Verdict(Kind kind, Domain domain, List<SweepPlan.Observed> agents, String why) {
        public boolean holds() {
            return kind == Kind.HELD;
        }
    }

    /**
     * The watched agents of one scope (a team, or the fleet) counted by failure domain: how many are watched and how
     * many of them are stale, in all and in each domain, and the domain of each stale agent (the only agents it
     * names). Counts, not agents: a scope of a million heard agents costs a counter per domain.
     */
    public static final class Counts {
        private final Map<Domain, int[]> byDomain = new HashMap<>();
        private final Map<SweepPlan.Observed, Domain> ofStale = new IdentityHashMap<>();
        private int watched;
        private int stale;

        /** {@code watched} agents more of domain {@code d} (null: none), {@code stale} of them. */
        void count(Domain d, int watched, int stale) {
            this.watched += watched;
            this.stale += stale;
            if (d != null) {
                inDomain(d, watched, stale);
            }
        }

        private void inDomain(Domain d, int watched, int stale) {
            int[] c = byDomain.computeIfAbsent(d, k -> new int[2]);
            c[0] += watched;
            c[1] += stale;
        }

        /** A stale agent's domain (null: none), for grouping the silent by domain. */
        void staleIn(SweepPlan.Observed a, Domain d) {
            if (d != null) {
                ofStale.put(a, d);
            }
        }

        /** Adds another scope's counts (a team's to the fleet's). */
        void addAll(Counts other) {
            other.byDomain.forEach((d, c) -> inDomain(d, c[0], c[1]));
            watched += other.watched;
            stale += other.stale;
            ofStale.putAll(other.ofStale);
        }

        public Domain of(SweepPlan.Observed a) {
            return ofStale.get(a);
        }

        public int watched() {
            return watched;
        }

        int watchedIn(Domain d) {
            int[] c = byDomain.get(d);
            return c == null ? 0 : c[0];
        }

        /** Heard agents (watched, not stale) outside {@code d}: someone still reaches Lifeline. */
        boolean reachedOutside(Domain d) {
            int[] c = byDomain.get(d);
            int freshIn = c == null ? 0 : c[0] - c[1];
            return watched - stale - freshIn > 0;
        }
    }

    /**
     * The failure domain of an agent of a team with rule {@code rule}: an agent beating through a daemon's lease
     * ({@code leaseId}, else null) is in its host's (the physical host of its lease, as
     * {@link HostIncidents#physicalHost} names it among the team's leases {@code teamLeases}); one beating directly is
     * in its source address's under {@code source}; under {@code none} nobody has one (null).
     */
    public static Domain of(String team, String leaseId, String source, FailureDomains rule, Set<String> teamLeases) {
        if (rule != FailureDomains.NONE && leaseId != null) {
            return new Domain(HOST, team, HostIncidents.physicalHost(leaseId, teamLeases));
        }
        if (rule == FailureDomains.SOURCE && source != null) {
            return new Domain(SOURCE, null, source);
        }
        return null;
    }

    /**
     * The verdict on a scope whose guard tripped: {@code scope}'s watched agents, {@code stale} of them. Released when
     * the team's flag ({@code hold}) was released by an admin. Explained by a domain D when: every watched agent in D
     * is stale (D is wholly silent), the stale agents outside D are no mass silence themselves (at most
     * {@code threshold} of the agents outside D), and an agent outside D still reaches Lifeline ({@code reaching}: the
     * whole fleet's counts). Else held. {@code rule}: the team's, for the words (null: the fleet's).
     */
    public static Verdict judge(Counts scope, List<SweepPlan.Observed> stale, double threshold, Counts reaching,
                                FailureDomains rule, TeamHold hold) {
        if (hold != null && hold.held() && hold.releasedAt() != null) {
            return new Verdict(Kind.RELEASED, null, stale, "released by an admin at " + hold.releasedAt()
                    + ": the silent agents are marked dead as judged");
        }
        if (rule == FailureDomains.NONE) {
            return held(stale, "failure domains are off for this team (failureDomains: none)");
        }
        Map<Domain, List<SweepPlan.Observed>> silent = new LinkedHashMap<>();
        for (SweepPlan.Observed a : stale) {
            Domain d = scope.of(a);
            if (d != null) {
                silent.computeIfAbsent(d, k -> new ArrayList<>()).add(a);
            }
        }
        if (silent.isEmpty()) {
            return held(stale, "no failure domain is known for the silent agents (no host lease or source address)");
        }
        List<Domain> candidates = new ArrayList<>(silent.keySet());
        // The largest first; among equals by name, so the verdict does not follow the order the Scan's pages (or a
        // fanned-out sweep's parts) arrived in.
        candidates.sort(Comparator.comparingInt((Domain d) -> -silent.get(d).size())
                .thenComparing(d -> d.kind() + "/" + d.team() + "/" + d.id()));
        for (Domain d : candidates) {
            if (explains(d, silent.get(d).size(), scope, stale.size(), threshold, reaching)) {
                return new Verdict(Kind.EXPLAINED, d, List.copyOf(silent.get(d)), "one " + d.describe()
                        + " went silent while the rest still reach Lifeline: a failure at the agents' side, marked"
                        + " dead as judged");
            }
        }
        Domain first = candidates.get(0);
        long heardInFirst = scope.watchedIn(first) - silent.get(first).size();
        if (candidates.size() == 1 && heardInFirst > 0) {
            return held(stale, "the silent agents share their " + first.kind() + " with " + heardInFirst
                    + " still heard: not one domain gone silent");
        }
        if (candidates.size() == 1) {
            return held(stale, "nothing outside " + first.describe() + " reaches Lifeline: the silence could be"
                    + " Lifeline's own");
        }
        return held(stale, "the silence spans " + candidates.size() + " failure domains: Lifeline's own trouble"
                + " could explain it");
    }

    private static Verdict held(List<SweepPlan.Observed> stale, String why) {
        return new Verdict(Kind.HELD, null, stale, why);
    }

    /** {@code silentIn} of the scope's {@code stale} agents are in {@code d}. */
    private static boolean explains(Domain d, int silentIn, Counts scope, int stale, double threshold,
                                    Counts reaching) {
        int watchedIn = scope.watchedIn(d);
        if (watchedIn > silentIn) {
            return false; // an agent of the domain is still heard: the domain did not go silent
        }
        if (stale - silentIn > threshold * (scope.watched() - watchedIn)) {
            return false; // outside the domain, another mass silence
        }
        return reaching.reachedOutside(d);
    }
}
