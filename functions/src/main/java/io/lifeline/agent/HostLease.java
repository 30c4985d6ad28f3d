package io.lifeline.agent;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Host leases, the pure part: a daemon's batched beat renews one small item per host
 * carrying each hosted agent's last local beat, and the sweep judges hosted agents from it. This class holds
 * the lease's compact encoding and the sweep's decisions about leases; the store writes them. How an agent is judged through its lease is
 * {@link Liveness#throughLease}'s.
 *
 * <p>A lease holds, per agent, under a {@link #key short key}: its last local beat (epoch ms, server clock: the
 * renewal's time less the age the daemon reported) in the beat map, and in the answer map what the lease may
 * answer for it without touching its item ({@link Cached}: alive status and stale-after), set only after an exact
 * write of the agent's item and removed by every change that makes it untrue.
 */
public final class HostLease {
    /** Characters of a lease key: 36 bits of SHA-256 of the agent id, unique within one lease in practice. */
    public static final int KEY_CHARS = 6;

    private HostLease() {
    }

    /** The agent's key within a lease: 6 URL-safe base64 characters of SHA-256 of its id. */
    public static String key(String agentId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(agentId.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, KEY_CHARS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present", e);
        }
    }

    /** What a lease answers for an agent without writing its item: it is alive in {@code status}. */
    public record Cached(AgentStatus status, Duration staleAfter) {
        /**
         * Stale-after in whole seconds, doubled, plus 1 when working, in upper-case base 36: {@code 3C} is ready
         * with 60 s, and the longest (working, 7 days) is 4 characters, so 25 answers and the longest ids keep
         * the lease well inside one write unit. Leases written before this form hold {@code r60}/{@code w604800}
         * (a lower-case letter, then decimal seconds), which {@link #parse} still reads.
         */
        public String wire() {
            return Long.toString(staleAfter.toSeconds() * 2 + (status == AgentStatus.WORKING ? 1 : 0), 36)
                    .toUpperCase(Locale.ROOT);
        }

        public static Optional<Cached> parse(String wire) {
            if (wire == null || wire.isEmpty() || wire.length() > 12) {
                return Optional.empty();
            }
            char first = wire.charAt(0);
            try {
                if (first == 'r' || first == 'w') {
                    long seconds = wire.length() < 2 ? 0 : Long.parseLong(wire.substring(1));
                    return seconds <= 0 ? Optional.empty() : Optional.of(new Cached(
                            first == 'w' ? AgentStatus.WORKING : AgentStatus.READY, Duration.ofSeconds(seconds)));
                }
                if (!wire.chars().allMatch(ch -> (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z'))) {
                    return Optional.empty();
                }
                long v = Long.parseLong(wire, 36);
                return v < 2 ? Optional.empty() : Optional.of(new Cached(
                        v % 2 == 1 ? AgentStatus.WORKING : AgentStatus.READY, Duration.ofSeconds(v / 2)));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }

        public static Optional<Cached> of(AgentStatus status, Duration staleAfter, String schedule) {
            if (status == null || !status.isAlive() || schedule != null || staleAfter == null
                    || staleAfter.isZero() || staleAfter.isNegative() || staleAfter.toMillis() % 1000 != 0) {
                return Optional.empty();
            }
            return Optional.of(new Cached(status, staleAfter));
        }
    }

    /** A lease as the sweep read it: its renewal, whether it is flagged expired, and its two maps. */
    public record Seen(String team, String hostId, Instant renewedAt, Instant expiredAt, Map<String, Long> beats,
                       Map<String, String> answers) {
    }

    /**
     * An agent item that names a lease ({@code linked}: it beat through that host at least once), of any
     * status, as the sweep read it.
     */
    public record Linked(String team, String agentId, String hostId, AgentStatus status, Duration staleAfter,
                         String schedule) {
        public String key() {
            return HostLease.key(agentId);
        }
    }

    /** An answer a lease must stop giving: remove {@code key}'s entry if it is still {@code seen}. */
    public record StaleAnswer(String team, String hostId, String key, String seen) {
    }

    /** A lease the sweep flags expired: no renewal within the shortest stale-after of the agents it carries. */
    public record Expired(Seen lease, List<String> agents, Duration shortestStaleAfter) {
    }

    /**
     * The answers leases must stop giving: an entry whose agent no longer names that lease, is not alive, or is
     * alive in another status or with another stale-after than cached. Removing it sends the agent's next beat
     * to its item, exactly; the next beat caches it again.
     */
    public static List<StaleAnswer> staleAnswers(List<Seen> leases, List<Linked> linked) {
        Map<String, Linked> byKey = new HashMap<>();
        for (Linked l : linked) {
            byKey.put(l.team() + "/" + l.hostId() + "/" + l.key(), l);
        }
        List<StaleAnswer> out = new ArrayList<>();
        for (Seen lease : leases) {
            for (Map.Entry<String, String> e : lease.answers().entrySet()) {
                Linked agent = byKey.get(lease.team() + "/" + lease.hostId() + "/" + e.getKey());
                // Compared as what they mean, so an answer in the older wire form that still holds is kept.
                Optional<Cached> expected = agent == null ? Optional.empty()
                        : Cached.of(agent.status(), agent.staleAfter(), agent.schedule());
                if (expected.isEmpty() || !expected.equals(Cached.parse(e.getValue()))) {
                    out.add(new StaleAnswer(lease.team(), lease.hostId(), e.getKey(), e.getValue()));
                }
            }
        }
        return out;
    }

    /**
     * The flagged leases renewed since their flag: each is restored (one {@code HostLeaseRestored}) when the batch
     * that renewed it did not manage to.
     */
    public static List<Seen> restored(List<Seen> leases) {
        List<Seen> out = new ArrayList<>();
        for (Seen lease : leases) {
            if (lease.expiredAt() != null && lease.renewedAt() != null && lease.renewedAt().isAfter(lease.expiredAt())) {
                out.add(lease);
            }
        }
        return out;
    }

    /**
     * The leases that went silent at {@code now}: not flagged yet, carrying at least one alive agent
     * that is judged from it, and not renewed within the shortest stale-after of those agents. A team that is
     * paused is left alone, as its agents are.
     */
    public static List<Expired> expired(List<Seen> leases, List<Linked> linked, Map<String, TeamSettings> teams,
                                        Instant now) {
        // The linked agents by lease, once: each lease then reads only its own (not every hosted agent of the fleet,
        // which made this step leases x hosted agents: 10,000 x 250,000 at a million agents).
        Map<String, List<Linked>> byLease = new HashMap<>();
        for (Linked l : linked) {
            byLease.computeIfAbsent(l.team() + "/" + l.hostId(), k -> new ArrayList<>()).add(l);
        }
        List<Expired> out = new ArrayList<>();
        for (Seen lease : leases) {
            if (lease.expiredAt() != null || lease.renewedAt() == null) {
                continue;
            }
            TeamSettings settings = teams.get(lease.team());
            if (settings != null && settings.pausedAt(now)) {
                continue;
            }
            List<String> agents = new ArrayList<>();
            Duration shortest = null;
            for (Linked l : byLease.getOrDefault(lease.team() + "/" + lease.hostId(), List.of())) {
                if (l.status().isAlive()
                        && l.schedule() == null && lease.beats().containsKey(l.key()) && l.staleAfter() != null
                        && !l.staleAfter().isZero()) {
                    agents.add(l.agentId());
                    shortest = shortest == null || l.staleAfter().compareTo(shortest) < 0 ? l.staleAfter() : shortest;
                }
            }
            if (shortest != null && Liveness.leaseSilent(lease.renewedAt(), shortest, now)) {
                agents.sort(null);
                out.add(new Expired(lease, agents, shortest));
            }
        }
        return out;
    }
}
