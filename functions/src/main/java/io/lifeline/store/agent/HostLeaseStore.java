package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Host leases on the live table: one item per host, {@code TEAM#<team>#HOST#<hostId> /
 * HOST}, renewed by a daemon's batched beat with one conditional UpdateItem that sets each agent's lease beat
 * ({@code a.<key>}, epoch ms) and nothing else, so it carries no fact for the bus and its stream record is
 * filtered out. The answer map ({@code s.<key>}, {@link HostLease.Cached}) is written only after an exact write
 * of the agent's item, and removed by the sweep's death of the agent and by the sweep when it no longer holds.
 * An agent costs at most 31 bytes (a beat entry of 20, an answer of 11), so 25 agents with the longest ids, team and
 * host make a lease of at most 949 bytes, 75 under one write unit (HostLeaseTest).
 */
public final class HostLeaseStore {
    public static final String SK = "HOST";
    static final String HOST_INFIX = "#HOST#";
    /** The last renewal (ms, server clock) and the number of renewals. */
    public static final String RENEWED_AT = "at";
    static final String RENEWALS = "n";
    /** Map: agent key -> lease beat (ms). */
    public static final String BEATS = "a";
    /** Map: agent key -> {@link HostLease.Cached#wire()}. */
    public static final String ANSWERS = "s";
    /**
     * Set by the sweep when the lease went silent (ms), with the agents it carried. A renewal removes the agents
     * but keeps the flag; the restore write ({@link #restore}) then removes it with the outbox mark.
     */
    public static final String EXPIRED_AT = "exp";
    static final String EXPIRED_AGENTS = "xa";
    static final String EXPIRED_COUNT = "xn";
    /**
     * Set by the flag of a lease that joins another lease's incident (the same physical host, docs/alerts-noise.md):
     * the lead lease's id; removed by the flag of a lease that leads. Kept through the restore, so both facts tell
     * whether they lead. {@code xl}: how many leases the lead's flag speaks for.
     */
    static final String PART_OF = "po";
    static final String EXPIRED_LEASES = "xl";
    /**
     * Set by the restore write with the outbox mark: the flag it removed (ms, the silence's id) and when (ms); one
     * {@code HostLeaseRestored}. The next renewal removes both.
     */
    static final String RESTORED_FROM = "rx";
    static final String RESTORED_AT = "rs";
    /** How many agent ids an expiry names (the count is always whole). */
    static final int MAX_NAMED = 25;
    /**
     * A beat entry of an agent that is not in the batch and has no answer (it is not alive, or unknown) goes away
     * after this long; an entry of an alive agent stays until the agent is no longer alive.
     */
    static final Duration PRUNE_AFTER = Duration.ofMinutes(10);
    private static final int ATTEMPTS = 4;
    /**
     * A lease beat moved back by less than this is the request's own latency (the server's time less an age the
     * daemon measured a moment earlier), not a daemon going back in time: it is not put back, so an agent whose
     * local beats are rarer than its host's renewals costs no second write.
     */
    static final Duration JITTER = Duration.ofSeconds(1);

    /** An agent's lease beat: when its daemon last heard from it locally, on the server's clock. */
    public record Beat(String agentId, Instant at) {
    }

    /**
     * What a renewal found: the answers cached before it, by agent id of the batch; entries to prune; and lease
     * beats it moved backwards ({@code newer}: the later beat it replaced, by agent id), which a daemon reporting a
     * larger age than before can cause and the settling write puts back.
     */
    public record Renewed(Map<String, HostLease.Cached> cached, List<String> prunable, Map<String, Instant> newer,
                          Instant flagged) {
        public Renewed(Map<String, HostLease.Cached> cached, List<String> prunable, Map<String, Instant> newer) {
            this(cached, prunable, newer, null);
        }
    }

    private final DynamoDbClient dynamo;
    private final String table;

    public HostLeaseStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    public static Map<String, AttributeValue> key(String team, String hostId) {
        return Map.of(Keys.PK, s(Keys.team(team) + HOST_INFIX + hostId), Keys.SK, s(SK));
    }

    public static boolean isLease(Map<String, AttributeValue> item) {
        String pk = Items.str(item, Keys.PK);
        return SK.equals(Items.str(item, Keys.SK)) && pk != null && pk.contains(HOST_INFIX);
    }

    static String team(Map<String, AttributeValue> item) {
        String pk = Items.str(item, Keys.PK);
        return pk.substring("TEAM#".length(), pk.indexOf(HOST_INFIX));
    }

    static String hostId(Map<String, AttributeValue> item) {
        String pk = Items.str(item, Keys.PK);
        return pk.substring(pk.indexOf(HOST_INFIX) + HOST_INFIX.length());
    }

    /** A lease item's beat of {@code agentId} (its entry in the beat map), or null when it has none or is absent. */
    static Instant beatOf(Map<String, AttributeValue> lease, String agentId) {
        AttributeValue beats = lease == null ? null : lease.get(BEATS);
        AttributeValue entry = beats == null || !beats.hasM() ? null : beats.m().get(HostLease.key(agentId));
        return entry == null ? null : Instant.ofEpochMilli(Long.parseLong(entry.n()));
    }

    /** The lease as the sweep reads it. */
    public static HostLease.Seen seen(Map<String, AttributeValue> item) {
        Map<String, Long> beats = new HashMap<>();
        AttributeValue a = item.get(BEATS);
        if (a != null && a.hasM()) {
            a.m().forEach((k, v) -> beats.put(k, Long.parseLong(v.n())));
        }
        Map<String, String> answers = new HashMap<>();
        AttributeValue sv = item.get(ANSWERS);
        if (sv != null && sv.hasM()) {
            sv.m().forEach((k, v) -> answers.put(k, v.s()));
        }
        return new HostLease.Seen(team(item), hostId(item), Items.instant(item, RENEWED_AT),
                Items.instant(item, EXPIRED_AT), beats, answers);
    }

    /**
     * Renews the lease: one UpdateItem (the first renewal of a host makes its item with a second form of it),
     * returning what it replaced, which costs no read. An expiry flag stays (the renewal removes only the agents
     * it names): what it replaced tells the caller ({@link Renewed#flagged}) to {@link #restore} the lease, and
     * the sweep does if that write is lost.
     */
    public Renewed renew(String team, String hostId, List<Beat> beats, Instant now) {
        if (beats.size() > MAX_AGENTS) {
            throw leaseFull(hostId, beats.size());
        }
        Integer exactly = null; // the entry count a renewal of a nearly full lease was read with
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Update u = renewal(team, hostId, now);
            List<String> paths = new ArrayList<>();
            for (Beat b : beats) {
                String path = u.mapPath(BEATS, HostLease.key(b.agentId()));
                paths.add(path);
                u.setPath(path, ms(b.at()));
            }
            String entries = u.name(BEATS);
            if (exactly == null) {
                // The lease stays within MAX_AGENTS entries: room for the whole batch as new agents, or every agent
                // of the batch already on it (a host's steady state: no growth). Nothing is read for either.
                u.condition("attribute_exists(" + entries + ") AND (size(" + entries + ") <= "
                        + u.value(n(MAX_AGENTS - beats.size())) + " OR (" + paths.stream()
                        .map(path -> "attribute_exists(" + path + ")").collect(Collectors.joining(" AND ")) + "))");
            } else {
                u.condition("size(" + entries + ") = " + u.value(n(exactly)));
            }
            try {
                return renewed(StoreFailures.call("renew the host lease",
                        () -> dynamo.updateItem(u.request(ReturnValue.ALL_OLD))).attributes(), beats, now);
            } catch (ConditionalCheckFailedException firstRenewal) {
                // A new lease, or one that may not have room: read it (only then) to tell.
                Map<String, AttributeValue> held = StoreFailures.call("read the host lease", () -> dynamo.getItem(
                        g -> g.tableName(table).key(key(team, hostId)).consistentRead(true)
                                .projectionExpression("#a").expressionAttributeNames(Map.of("#a", BEATS)))).item();
                AttributeValue on = held == null ? null : held.get(BEATS);
                if (on != null && on.hasM()) {
                    Set<String> after = new HashSet<>(on.m().keySet());
                    beats.forEach(b -> after.add(HostLease.key(b.agentId())));
                    if (after.size() > MAX_AGENTS) {
                        throw leaseFull(hostId, after.size());
                    }
                    exactly = on.m().size();
                    continue;
                }
                Update create = renewal(team, hostId, now);
                Map<String, AttributeValue> all = new LinkedHashMap<>();
                beats.forEach(b -> all.put(HostLease.key(b.agentId()), ms(b.at())));
                create.set(BEATS, AttributeValue.fromM(all));
                create.condition("attribute_not_exists(" + create.name(BEATS) + ")");
                try {
                    return renewed(StoreFailures.call("make the host lease",
                            () -> dynamo.updateItem(create.request(ReturnValue.ALL_OLD))).attributes(), beats, now);
                } catch (ConditionalCheckFailedException madeMeanwhile) {
                    // another renewal made it first: renew it
                }
            }
        }
        throw new LifelineException(LifelineException.Kind.UNAVAILABLE, "CONTENDED",
                "The host lease kept changing under this renewal; retry");
    }

    /**
     * Agents one lease carries at most: a batch's 25 (the daemon sends its next 25 under {@code <hostId>.2}). So the
     * lease stays under one write unit (the class comment's arithmetic); a batch that would take it past this is
     * refused 409 {@code LEASE_FULL} and writes nothing.
     */
    public static final int MAX_AGENTS = 25;

    private static LifelineException leaseFull(String hostId, int agents) {
        return new LifelineException(LifelineException.Kind.CONFLICT, "LEASE_FULL", "Host lease '" + hostId
                + "' would carry " + agents + " agents; a lease carries at most " + MAX_AGENTS
                + ": send the others under another host id (the daemon uses '" + hostId + ".2', ...)");
    }

    private Update renewal(String team, String hostId, Instant now) {
        Update u = new Update(table, key(team, hostId));
        u.set(RENEWED_AT, ms(now));
        u.setExpression(RENEWALS, "if_not_exists(" + u.name(RENEWALS) + ", " + u.value(n(0)) + ") + "
                + u.value(n(1)));
        u.remove(EXPIRED_AGENTS).remove(EXPIRED_COUNT).remove(RESTORED_FROM).remove(RESTORED_AT);
        AgentItems.quiet(u);
        return u;
    }

    private static Renewed renewed(Map<String, AttributeValue> old, List<Beat> beats, Instant now) {
        Map<String, HostLease.Cached> cached = new HashMap<>();
        Set<String> inBatch = new HashSet<>();
        Map<String, AttributeValue> answers = old == null || old.get(ANSWERS) == null || !old.get(ANSWERS).hasM()
                ? Map.of() : old.get(ANSWERS).m();
        for (Beat b : beats) {
            String k = HostLease.key(b.agentId());
            inBatch.add(k);
            AttributeValue v = answers.get(k);
            if (v != null) {
                HostLease.Cached.parse(v.s()).ifPresent(c -> cached.put(b.agentId(), c));
            }
        }
        List<String> prunable = new ArrayList<>();
        Map<String, Instant> newer = new HashMap<>();
        AttributeValue a = old == null ? null : old.get(BEATS);
        if (a != null && a.hasM()) {
            for (Beat b : beats) {
                AttributeValue was = a.m().get(HostLease.key(b.agentId()));
                if (was != null && Long.parseLong(was.n()) > b.at().plus(JITTER).toEpochMilli()) {
                    newer.put(b.agentId(), Instant.ofEpochMilli(Long.parseLong(was.n())));
                }
            }
            long before = now.minus(PRUNE_AFTER).toEpochMilli();
            a.m().forEach((k, v) -> {
                if (!inBatch.contains(k) && !answers.containsKey(k) && Long.parseLong(v.n()) < before) {
                    prunable.add(k);
                }
            });
        }
        return new Renewed(cached, prunable, newer, old == null ? null : Items.instant(old, EXPIRED_AT));
    }

    /**
     * After the exact writes of some agents' items: caches each one's answer ({@code null}: removes it) and prunes
     * entries; one UpdateItem, and none when there is nothing to do.
     */
    public void settle(String team, String hostId, Map<String, HostLease.Cached> answers, List<String> prune,
                       Map<String, Instant> newer) {
        if (answers.isEmpty() && prune.isEmpty() && newer.isEmpty()) {
            return;
        }
        Update u = new Update(table, key(team, hostId));
        newer.forEach((agentId, at) -> u.setPath(u.mapPath(BEATS, HostLease.key(agentId)), ms(at)));
        answers.forEach((agentId, cached) -> {
            String path = u.mapPath(ANSWERS, HostLease.key(agentId));
            if (cached == null) {
                u.removePath(path);
            } else {
                u.setPath(path, s(cached.wire()));
            }
        });
        for (String k : prune) {
            u.removePath(u.mapPath(BEATS, k));
        }
        u.condition("attribute_exists(" + u.name(ANSWERS) + ")");
        AgentItems.quiet(u);
        try {
            StoreFailures.call("settle the host lease", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException noAnswersYet) {
            // The lease's first answers: the map is made whole (an empty map is never stored).
            Map<String, AttributeValue> first = new LinkedHashMap<>();
            answers.forEach((agentId, cached) -> {
                if (cached != null) {
                    first.put(HostLease.key(agentId), s(cached.wire()));
                }
            });
            Update make = new Update(table, key(team, hostId));
            newer.forEach((agentId, at) -> make.setPath(make.mapPath(BEATS, HostLease.key(agentId)), ms(at)));
            if (!first.isEmpty()) {
                make.set(ANSWERS, AttributeValue.fromM(first));
            }
            for (String k : prune) {
                make.removePath(make.mapPath(BEATS, k));
            }
            if (first.isEmpty() && prune.isEmpty() && newer.isEmpty()) {
                return;
            }
            make.condition("attribute_not_exists(" + make.name(ANSWERS) + ") AND attribute_exists("
                    + make.name(BEATS) + ")");
            AgentItems.quiet(make);
            try {
                StoreFailures.call("settle the host lease", () -> dynamo.updateItem(make.request(ReturnValue.NONE)));
            } catch (ConditionalCheckFailedException meanwhile) {
                // answers were cached meanwhile, or the lease is gone: the next beat settles again
            }
        }
    }

    /**
     * Flags a lease the sweep found silent: conditional on the renewal the sweep read and on no flag yet, so one
     * silence is one {@code HostLeaseExpired} (the flag carries the outbox mark) and a renewal meanwhile wins.
     */
    public boolean flagExpired(HostLease.Expired expired, Instant now) {
        return flagExpired(new HostIncidents.Flag(expired, null, expired.agents(), 1), now);
    }

    /**
     * Flags a lease as {@link #flagExpired(HostLease.Expired, Instant)} does, as the lead of its host's incident
     * (naming {@code flag.agents()}, the agents of every lease flagged with it) or {@code partOf} another lease.
     */
    public boolean flagExpired(HostIncidents.Flag flag, Instant now) {
        HostLease.Expired expired = flag.expired();
        HostLease.Seen lease = expired.lease();
        Update u = new Update(table, key(lease.team(), lease.hostId()));
        u.condition(u.name(RENEWED_AT) + " = " + u.value(ms(lease.renewedAt())));
        u.condition("attribute_not_exists(" + u.name(EXPIRED_AT) + ")");
        u.set(EXPIRED_AT, ms(now));
        List<AttributeValue> named = flag.agents().stream().limit(MAX_NAMED).map(Items::s).toList();
        u.set(EXPIRED_AGENTS, AttributeValue.fromL(named));
        u.set(EXPIRED_COUNT, n(flag.agents().size()));
        if (flag.partOf() == null) {
            u.remove(PART_OF);
        } else {
            u.set(PART_OF, s(flag.partOf()));
        }
        if (flag.leases() > 1) {
            u.set(EXPIRED_LEASES, n(flag.leases()));
        } else {
            u.remove(EXPIRED_LEASES);
        }
        u.set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        try {
            StoreFailures.call("flag the host lease expired", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException renewedMeanwhile) {
            return false;
        }
    }

    /**
     * The host was heard again after its lease was flagged at {@code flaggedAt}: removes that flag with the outbox
     * mark and the restored fact, conditional on the flag still being that one, so one silence is one
     * {@code HostLeaseRestored} however many renewals and sweeps try. False when it was restored already.
     */
    public boolean restore(String team, String hostId, Instant flaggedAt, Instant now) {
        Update u = new Update(table, key(team, hostId));
        u.condition(u.name(EXPIRED_AT) + " = " + u.value(ms(flaggedAt)));
        u.remove(EXPIRED_AT).remove(EXPIRED_AGENTS).remove(EXPIRED_COUNT);
        u.set(RESTORED_FROM, ms(flaggedAt));
        u.set(RESTORED_AT, ms(now));
        u.set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        try {
            StoreFailures.call("restore the host lease", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException restoredAlready) {
            return false;
        }
    }

    /**
     * After a change that ends the agent's life (leave, a host's failure report, cleanup): the lease stops answering
     * for it, so its next beat through the lease is written to its item and answered {@code rejoinRequired}. Best
     * effort: if this write fails, the next sweep drops the answer ({@link HostLease#staleAnswers}).
     */
    public void forget(String team, String hostId, String agentId) {
        Update u = new Update(table, key(team, hostId));
        String path = u.mapPath(ANSWERS, HostLease.key(agentId));
        u.condition("attribute_exists(" + path + ")");
        u.removePath(path);
        AgentItems.quiet(u);
        try {
            StoreFailures.call("forget a host lease answer", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException | LifelineException nothingCachedOrLater) {
            // nothing was cached, or the sweep drops it
        }
    }

    /** Removes an answer the lease must no longer give, if it is still the one the sweep saw. */
    public boolean dropAnswer(HostLease.StaleAnswer stale) {
        Update u = new Update(table, key(stale.team(), stale.hostId()));
        String path = u.mapPath(ANSWERS, stale.key());
        u.condition(path + " = " + u.value(s(stale.seen())));
        u.removePath(path);
        AgentItems.quiet(u);
        try {
            StoreFailures.call("drop a host lease answer", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException changedMeanwhile) {
            return false;
        }
    }

    /** The lease's expiry facts on a stream image, or null: {@code [expiredAtMs, renewedAtMs, count]} and ids. */
    public static Expiry expiry(Map<String, AttributeValue> image) {
        Instant at = image == null ? null : Items.instant(image, EXPIRED_AT);
        if (at == null) {
            return null;
        }
        List<String> agents = new ArrayList<>();
        AttributeValue l = image.get(EXPIRED_AGENTS);
        if (l != null && l.hasL()) {
            l.l().forEach(v -> agents.add(v.s()));
        }
        return new Expiry(team(image), hostId(image), at, Items.instant(image, RENEWED_AT), agents,
                (int) Items.num(image, EXPIRED_COUNT, agents.size()), Items.str(image, PART_OF),
                (int) Items.num(image, EXPIRED_LEASES, 1));
    }

    public record Expiry(String team, String hostId, Instant at, Instant lastRenewedAt, List<String> agents, int count,
                  String partOf, int leases) {
    }

    /** The lease's restored fact on a stream image, or null: the flag it removed, the renewal, and when. */
    public static Restore restored(Map<String, AttributeValue> image) {
        Instant from = image == null ? null : Items.instant(image, RESTORED_FROM);
        if (from == null) {
            return null;
        }
        return new Restore(team(image), hostId(image), from, Items.instant(image, RENEWED_AT),
                Items.instant(image, RESTORED_AT), Items.str(image, PART_OF));
    }

    public record Restore(String team, String hostId, Instant expiredAt, Instant renewedAt, Instant at, String partOf) {
    }
}
