package io.lifeline.agent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A silent host as one incident (docs/alerts-noise.md), the pure part. A daemon carries at most 25 agents a lease
 * and names its further leases {@code <hostId>.2}, {@code <hostId>.3}, ...; all leases of one physical host that go
 * silent are one incident, led by the first flagged (its {@code HostLeaseExpired} names the agents of every lease
 * flagged with it and their whole count), the others flagged {@code partOf} the lead, so the alert rules page once.
 * An agent the sweep marks dead while the lease it beats through is flagged carries that silence as its
 * {@link Cause}, and so does its return, so the rules leave both to the host's page and its resolve.
 */
public final class HostIncidents {
    /** A daemon's second and later leases: {@code <hostId>.<k>}, k from 2. */
    /** {@code cause.kind} of a change that follows from its host's silence. */
    public static final String HOST_SILENT = "host_silent";
    private static final Pattern FURTHER_LEASE = Pattern.compile("^(.+)\\.([2-9]|[1-9][0-9]+)$");

    private HostIncidents() {
    }

    /** {@code cause.kind} of a death that follows from its source address's silence ({@link FailureDomain}). */
    public static final String SOURCE_SILENT = "source_silent";

    /**
     * What made an agent's death: the silence of the lease {@code hostId} flagged at {@code expiredAt}; or, with
     * {@code source} set (and no host), the silence of that source address, judged at {@code expiredAt} (its team's
     * flag: the incident's one page).
     */
    public record Cause(String hostId, Instant expiredAt, String source) {
        public Cause(String hostId, Instant expiredAt) {
            this(hostId, expiredAt, null);
        }

        /** A source address's silence since {@code since}. */
        public static Cause ofSource(String source, Instant since) {
            return new Cause(null, since, source);
        }
    }

    /**
     * A lease to flag: {@code partOf} the lead lease's id (null: it leads), and for a lead the agents of every lease
     * of its incident flagged with it ({@code agents}, sorted) and how many leases that is.
     */
    public record Flag(HostLease.Expired expired, String partOf, List<String> agents, int leases) {
    }

    /** The newly silent leases of one physical host, in the order to flag them, and the lead already flagged. */
    public record Group(String team, String physicalHost, String existingLead, List<HostLease.Expired> members) {
        /** Every agent of the group's leases, sorted. */
        public List<String> agents() {
            Set<String> all = new TreeSet<>();
            members.forEach(m -> all.addAll(m.agents()));
            return new ArrayList<>(all);
        }

        /** The flag of member {@code i} given the lead flagged so far ({@code lead}, or null: this one leads). */
        public Flag flag(HostLease.Expired member, String lead) {
            return lead == null ? new Flag(member, null, agents(), members.size())
                    : new Flag(member, lead, member.agents(), 1);
        }
    }

    /**
     * The physical host of lease {@code leaseId}: {@code <hostId>} for {@code <hostId>.<k>} when the team has a lease
     * {@code <hostId>} (so a host named like an address, {@code 10.0.0.5}, stays itself), else the lease itself.
     */
    public static String physicalHost(String leaseId, Set<String> teamLeases) {
        Matcher m = FURTHER_LEASE.matcher(leaseId);
        if (m.matches() && teamLeases.contains(m.group(1))) {
            return m.group(1);
        }
        return leaseId;
    }

    /** Flagged and not renewed since: the lease is silent now. */
    public static boolean silent(HostLease.Seen lease) {
        return lease.expiredAt() != null
                && (lease.renewedAt() == null || !lease.renewedAt().isAfter(lease.expiredAt()));
    }

    /** The silences agents die of: {@code team/leaseId} -> the flag's time, for every lease silent now. */
    public static Map<String, Instant> silences(List<HostLease.Seen> leases) {
        Map<String, Instant> out = new LinkedHashMap<>();
        for (HostLease.Seen l : leases) {
            if (silent(l)) {
                out.put(l.team() + "/" + l.hostId(), l.expiredAt());
            }
        }
        return out;
    }

    /** The key of {@link #silences} for an agent's lease. */
    public static String leaseKey(String team, String hostId) {
        return team + "/" + hostId;
    }

    /**
     * The leases {@link HostLease#expired} found, grouped by team and physical host; each group's members in flag
     * order (the host's own lease first, then by number) and the lead of an incident of that host still silent
     * (its earliest flag), which later members join.
     */
    public static List<Group> groups(List<HostLease.Seen> leases, List<HostLease.Expired> expired) {
        Map<String, Set<String>> byTeam = new LinkedHashMap<>();
        Map<String, List<HostLease.Seen>> leasesOf = new HashMap<>();
        for (HostLease.Seen l : leases) {
            byTeam.computeIfAbsent(l.team(), k -> new HashSet<>()).add(l.hostId());
            leasesOf.computeIfAbsent(l.team(), k -> new ArrayList<>()).add(l);
        }
        Map<String, List<HostLease.Expired>> members = new LinkedHashMap<>();
        for (HostLease.Expired e : expired) {
            String team = e.lease().team();
            String host = physicalHost(e.lease().hostId(), byTeam.getOrDefault(team, Set.of()));
            members.computeIfAbsent(team + "\n" + host, k -> new ArrayList<>()).add(e);
        }
        List<Group> out = new ArrayList<>();
        members.forEach((key, list) -> {
            String team = key.substring(0, key.indexOf('\n'));
            String host = key.substring(key.indexOf('\n') + 1);
            list.sort(Comparator.comparing((HostLease.Expired e) -> leaseNumber(e.lease().hostId(), host)));
            HostLease.Seen lead = null;
            for (HostLease.Seen l : leasesOf.getOrDefault(team, List.of())) { // the team's own, not the fleet's
                if (silent(l)
                        && physicalHost(l.hostId(), byTeam.get(team)).equals(host)
                        && (lead == null || l.expiredAt().isBefore(lead.expiredAt())
                        || (l.expiredAt().equals(lead.expiredAt())
                        && leaseNumber(l.hostId(), host) < leaseNumber(lead.hostId(), host)))) {
                    lead = l;
                }
            }
            out.add(new Group(team, host, lead == null ? null : lead.hostId(), list));
        });
        return out;
    }

    /** 1 for the host's own lease, k for {@code <host>.<k>}. */
    private static int leaseNumber(String leaseId, String host) {
        if (leaseId.equals(host)) {
            return 1;
        }
        try {
            return Integer.parseInt(leaseId.substring(host.length() + 1));
        } catch (RuntimeException e) {
            return Integer.MAX_VALUE;
        }
    }
}
