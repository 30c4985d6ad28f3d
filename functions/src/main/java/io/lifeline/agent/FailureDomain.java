package io.lifeline.agent;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

    /** Each alive agent's failure domain under its team's rule (null: it has none). */
    public static final class Domains {
        private final Map<SweepPlan.Observed, Domain> of = new IdentityHashMap<>();

        public Domain of(SweepPlan.Observed a) {
            return of.get(a);
        }
    }

    /**
     * The domains of {@code agents} under their teams' rules ({@link FailureDomains}): an agent beating through a
     * daemon's lease is in its host's (the physical host of its lease, as {@link HostIncidents#physicalHost} names
     * it), one beating directly is in its source address's under {@code source}; under {@code none} nobody has one.
     */
    public static Domains map(List<SweepPlan.Observed> agents, Map<String, TeamSettings> teams) {
        Map<String, Set<String>> hostsByTeam = new LinkedHashMap<>();
        for (SweepPlan.Observed a : agents) {
            if (a.hosted() != null) {
                hostsByTeam.computeIfAbsent(a.team(), t -> new HashSet<>()).add(a.hosted().hostId());
            }
        }
        Domains out = new Domains();
        for (SweepPlan.Observed a : agents) {
            FailureDomains rule = FailureDomains.of(teams.get(a.team()));
            Domain d = null;
            if (rule != FailureDomains.NONE && a.hosted() != null) {
                d = new Domain(HOST, a.team(), HostIncidents.physicalHost(a.hosted().hostId(),
                        hostsByTeam.get(a.team())));
            } else if (rule == FailureDomains.SOURCE && a.source() != null) {
                d = new Domain(SOURCE, null, a.source());
            }
            if (d != null) {
                out.of.put(a, d);
            }
        }
        return out;
    }

    /**
     * The verdict on a scope whose guard tripped: {@code watched} agents, {@code stale} of them. Released when the
     * team's flag ({@code hold}) was released by an admin. Explained by a domain D when: every watched agent in D is
     * stale (D is wholly silent), the stale agents outside D are no mass silence themselves (at most
     * {@code threshold} of the agents outside D), and an agent outside D still reaches Lifeline ({@code reaching}:
     * the fresh agents of the whole fleet). Else held. {@code rule}: the team's, for the words (null: the fleet's).
     */
    public static Verdict judge(List<SweepPlan.Observed> watched, List<SweepPlan.Observed> stale, double threshold,
                                Domains domains, List<SweepPlan.Observed> reaching, FailureDomains rule,
                                TeamHold hold) {
        if (hold != null && hold.held() && hold.releasedAt() != null) {
            return new Verdict(Kind.RELEASED, null, stale, "released by an admin at " + hold.releasedAt()
                    + ": the silent agents are marked dead as judged");
        }
        if (rule == FailureDomains.NONE) {
            return held(stale, "failure domains are off for this team (failureDomains: none)");
        }
        Map<Domain, List<SweepPlan.Observed>> silent = new LinkedHashMap<>();
        for (SweepPlan.Observed a : stale) {
            Domain d = domains.of(a);
            if (d != null) {
                silent.computeIfAbsent(d, k -> new ArrayList<>()).add(a);
            }
        }
        if (silent.isEmpty()) {
            return held(stale, "no failure domain is known for the silent agents (no host lease or source address)");
        }
        List<Domain> candidates = new ArrayList<>(silent.keySet());
        candidates.sort(Comparator.comparingInt((Domain d) -> -silent.get(d).size()));
        for (Domain d : candidates) {
            if (explains(d, watched, stale, threshold, domains, reaching)) {
                return new Verdict(Kind.EXPLAINED, d, List.copyOf(silent.get(d)), "one " + d.describe()
                        + " went silent while the rest still reach Lifeline: a failure at the agents' side, marked"
                        + " dead as judged");
            }
        }
        Domain first = candidates.get(0);
        long heardInFirst = watched.stream().filter(a -> first.equals(domains.of(a))).count()
                - silent.get(first).size();
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

    private static boolean explains(Domain d, List<SweepPlan.Observed> watched, List<SweepPlan.Observed> stale,
                                    double threshold, Domains domains, List<SweepPlan.Observed> reaching) {
        int watchedOutside = 0;
        int staleOutside = 0;
        for (SweepPlan.Observed a : watched) {
            if (!d.equals(domains.of(a))) {
                watchedOutside++;
            }
        }
        Set<SweepPlan.Observed> staleSet = Collections.newSetFromMap(new IdentityHashMap<>());
        staleSet.addAll(stale);
        for (SweepPlan.Observed a : stale) {
            if (!d.equals(domains.of(a))) {
                staleOutside++;
            }
        }
        for (SweepPlan.Observed a : watched) {
            if (d.equals(domains.of(a)) && !staleSet.contains(a)) {
                return false; // an agent of the domain is still heard: the domain did not go silent
            }
        }
        if (staleOutside > threshold * watchedOutside) {
            return false; // outside the domain, another mass silence
        }
        return reaching.stream().anyMatch(a -> !Objects.equals(d, domains.of(a)));
    }
}
