package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.BatchReads;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Alert windows on the ledger (docs/alerts-noise.md), one item collection per window that had an alertable death,
 * {@code ALERTS#WINDOW#<startMs>}, in small items none of which grows with the fleet or takes every death's write:
 * <ul>
 *   <li>{@code WINDOW}, the head: the window's first deaths counted up to its threshold plus one and no further
 *   (so it takes at most that many writes), the PagerDuty key of its first death ({@code lead}), once its digest is
 *   out {@code dg}, once its burst is resolved {@code rs};</li>
 *   <li>{@code S#<k>}, {@value #SHARDS} shards of the window's totals: deaths ({@code n}), returns ({@code b}),
 *   agents now in {@code dead_failed_revive} ({@code f}) and deaths by reason ({@code r:<reason>}); an agent's death
 *   and its later changes count in the same shard, chosen by its team and id;</li>
 *   <li>{@code T#<team>}, a team's deaths ({@code n}) and the ids and hosts of its first few ({@code names},
 *   {@code h:<host>}), which its own view of the digest tells it;</li>
 *   <li>{@code H#<host>#<team>}, a host's deaths in a team, for the digest's largest hosts;</li>
 *   <li>{@code C#<change>}, the mark of each change counted (its decision, kept so the same change handled again
 *   decides the same with no write).</li>
 * </ul>
 * Every count is one conditional UpdateItem with {@code if_not_exists(...) + 1} arithmetic, so no read precedes a
 * write. Windows expire with the event log.
 *
 * <p>The head is {@code ALERTS#WINDOW#<startMs>}; every other item is in one of {@value #PARTS} partitions beside
 * it, {@code ALERTS#WINDOW#<startMs>#<p>} (a shard's by its number, a team's by the team, a host's by the host, a
 * mark's by its change), so a burst's three to five writes a death spread over them instead of all landing on one partition
 * key (1,000 writes a second each). The teams and hosts are read a partition after another; a window written before
 * the partitions (its items beside the head) is read there too, as the last.
 */
public final class AlertWindowStore {
    /** Shards of a window's totals: a burst's writes spread over this many items. */
    public static final int SHARDS = 16;
    /** Partitions of a window's counts and marks (beside its head's); shard k is in partition k. */
    public static final int PARTS = 64;
    static final String SK = "WINDOW";
    static final String DEATHS = "n";
    static final String BACK = "b";
    static final String FAILED = "f";
    static final String LEAD = "lead";
    static final String DIGESTED = "dg";
    static final String RESOLVED = "rs";
    static final String NAMES = "names";
    static final String REASON = "r:";
    static final String HOST = "h:";
    static final String TEAM_ATTR = "team";
    static final String HOST_ATTR = "host";

    /**
     * What the outbox decided for one change it counted in a window ({@code burst}: in the window's digest;
     * {@code raised}: it raised the window's start or end), kept beside the window so that the same change handled
     * again (a stream retry, the repair's replay) decides the same with no write.
     */
    public record Mark(boolean burst, boolean raised) {
    }

    /** The head: whether the digest is out and the burst resolved, and the first death's PagerDuty key. */
    public record Head(Instant start, int counted, String lead, boolean digested, boolean resolved) {
    }

    /** A window's totals, summed over its shards. */
    public record Totals(int deaths, int back, int failed, Map<String, Integer> byReason) {
    }

    /** A team's part of a window: its deaths, and the ids and hosts of its first few. */
    public record TeamCount(String team, int deaths, List<String> names, Map<String, Integer> hosts) {
    }

    /** A host's deaths in one team. */
    public record HostCount(String host, String team, int deaths) {
    }

    /** One page of a window's teams or hosts, and where the next starts (null: none). */
    public record Page<T>(List<T> items, String next) {
    }

    /**
     * The digest's view of a window, bounded whatever the fleet: the totals, the largest teams and hosts
     * ({@code byTeam}, {@code byHost}) with how many there were in all ({@code teams}, {@code hosts}), the first
     * named agents, and how many of its agents are in {@code dead_failed_revive} ({@code failed}).
     */
    public record Window(Instant start, int deaths, int back, String lead, boolean digested,
                         Map<String, Integer> byTeam, Map<String, Integer> byHost, Map<String, Integer> byReason,
                         List<String> names, int teams, int hosts, int failed) {
        /** A window whose maps are whole (every team and host), with no agent failed. */
        public Window(Instant start, int deaths, int back, String lead, boolean digested,
                      Map<String, Integer> byTeam, Map<String, Integer> byHost, Map<String, Integer> byReason,
                      List<String> names) {
            this(start, deaths, back, lead, digested, byTeam, byHost, byReason, names, byTeam.size(), byHost.size(), 0);
        }
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public AlertWindowStore(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    /** The stalls counted beside the deaths in the same windows (their own attributes and items). */
    public StallWindowStore stalls() {
        return new StallWindowStore(this, dynamo, table);
    }

    private static String pk(Instant start) {
        return "ALERTS#WINDOW#" + start.toEpochMilli();
    }

    /** Partition {@code part} of the window's counts; {@link #PARTS}: the head's, where windows of before kept them. */
    private static String pk(Instant start, int part) {
        return part == PARTS ? pk(start) : pk(start) + "#" + part;
    }

    static Map<String, AttributeValue> key(Instant start, int part, String sk) {
        return Map.of(Keys.PK, s(pk(start, part)), Keys.SK, s(sk));
    }

    static Map<String, AttributeValue> key(Instant start) {
        return Map.of(Keys.PK, s(pk(start)), Keys.SK, s(SK));
    }

    /** The partition of a team's count, a host's counts, or a change's mark, by its name. */
    static int partOf(String name) {
        return Math.floorMod(mix(name.hashCode()), PARTS);
    }

    private static Map<String, AttributeValue> teamKey(Instant start, String team) {
        return key(start, partOf(team), "T#" + team);
    }

    static Map<String, AttributeValue> shardKey(Instant start, int shard) {
        return key(start, shard, "S#" + shard);
    }

    private static Map<String, AttributeValue> markKey(Instant start, String id) {
        return key(start, partOf(id), "C#" + id);
    }

    /**
     * The shard an agent's death and its later changes count in: its id's hash, mixed (MurmurHash3's finalizer) so
     * that ids alike but for their digits spread over every shard (String's hash alone maps team-00001/team-00001-a
     * and team-00002/team-00002-a to the same one).
     */
    public static int shardOf(String team, String agentId) {
        return Math.floorMod(mix((team + "/" + agentId).hashCode()), SHARDS);
    }

    private static int mix(int hash) {
        int h = hash;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }

    AttributeValue expires(Instant start) {
        return n(start.plus(retention).getEpochSecond());
    }

    // ---- marks ------------------------------------------------------------------------------------------

    /** The mark of change {@code id} in the window, or null if it was not counted: one consistent GetItem. */
    public Mark mark(Instant start, String id) {
        Map<String, AttributeValue> item = StoreFailures.call("read an alert window mark", () -> dynamo.getItem(
                g -> g.tableName(table).key(markKey(start, id)).consistentRead(true))).item();
        if (item == null || item.isEmpty()) {
            return null;
        }
        return new Mark(Boolean.TRUE.equals(item.get("burst").bool()), Boolean.TRUE.equals(item.get("raised").bool()));
    }

    /** Keeps the decision for change {@code id} (a second put of the same mark changes nothing). */
    public void putMark(Instant start, String id, Mark mark) {
        Map<String, AttributeValue> item = new LinkedHashMap<>(markKey(start, id));
        item.put("burst", AttributeValue.fromBool(mark.burst()));
        item.put("raised", AttributeValue.fromBool(mark.raised()));
        item.put(Keys.EXPIRES_AT, expires(start));
        try {
            StoreFailures.call("mark a change in its alert window", () -> dynamo.putItem(p -> p.tableName(table)
                    .item(item).conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException markedAlready) {
            // the same change, marked by an earlier pass
        }
    }

    // ---- the head -----------------------------------------------------------------------------------------

    /**
     * Counts a death on the head while the head has counted fewer than {@code upTo}: answers the count after this
     * one, or 0 when the head had counted {@code upTo} already (the window is past its threshold; nothing written).
     * The first death keeps its PagerDuty key as the window's {@code lead}.
     */
    public int countHead(Instant start, int upTo, String leadKey) {
        Update u = new Update(table, key(start));
        increment(u, DEATHS, 1);
        u.setExpression(LEAD, "if_not_exists(" + u.name(LEAD) + ", " + u.value(s(leadKey)) + ")");
        u.set(Keys.EXPIRES_AT, expires(start));
        u.condition("attribute_not_exists(" + u.name(DEATHS) + ") OR " + u.name(DEATHS) + " < " + u.value(n(upTo)));
        try {
            return (int) Items.num(StoreFailures.call("count a death on its alert window's head",
                    () -> dynamo.updateItem(u.request(ReturnValue.UPDATED_NEW))).attributes(), DEATHS, 0);
        } catch (ConditionalCheckFailedException pastThreshold) {
            return 0;
        }
    }

    /** The head, or null: one consistent GetItem. */
    public Head head(Instant start) {
        Map<String, AttributeValue> item = StoreFailures.call("read an alert window", () -> dynamo.getItem(
                g -> g.tableName(table).key(key(start)).consistentRead(true))).item();
        return item == null || item.isEmpty() ? null : head(start, item);
    }

    private static Head head(Instant start, Map<String, AttributeValue> item) {
        return new Head(start, (int) Items.num(item, DEATHS, 0), Items.str(item, LEAD), flag(item, DIGESTED),
                flag(item, RESOLVED));
    }

    static boolean flag(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v != null && Boolean.TRUE.equals(v.bool());
    }

    /**
     * Marks the window's digest sent and answers the head (a death counted after this is alerted one by one, so
     * none falls between the digest and the people). Null if there is no window.
     */
    public Head digest(Instant start) {
        Update u = new Update(table, key(start));
        u.set(DIGESTED, AttributeValue.fromBool(true));
        u.condition("attribute_exists(" + u.name(DEATHS) + ")");
        try {
            return head(start, StoreFailures.call("mark the alert window digested",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException noWindow) {
            return null;
        }
    }

    /** Marks the window's burst resolved: true for the one call that marked it, false once it was. */
    public boolean markResolved(Instant start) {
        Update u = new Update(table, key(start));
        u.set(RESOLVED, AttributeValue.fromBool(true));
        u.condition("attribute_exists(" + u.name(DEATHS) + ") AND attribute_not_exists(" + u.name(RESOLVED) + ")");
        return u.writeIf(dynamo, "mark the alert window resolved");
    }

    // ---- counts -------------------------------------------------------------------------------------------

    /**
     * Counts one alertable death: in its shard of the totals (and its reason; {@code failed}: straight to
     * dead_failed_revive, a host's give-up), its team (naming the agent and its host while the team has counted at
     * most {@code named}) and its host ({@code -}: none). Three to four small writes, each on an item only this
     * death's shard, team or host shares.
     */
    public void countDeath(Instant start, String team, String agentId, String host, String reason, boolean failed,
                           int named) {
        Update shard = new Update(table, shardKey(start, shardOf(team, agentId)));
        increment(shard, DEATHS, 1);
        if (failed) {
            increment(shard, FAILED, 1);
        }
        increment(shard, REASON + reason, 1);
        shard.set(Keys.EXPIRES_AT, expires(start));
        StoreFailures.call("count a death in its alert window", () -> dynamo.updateItem(
                shard.request(ReturnValue.NONE)));

        Update t = new Update(table, teamKey(start, team));
        increment(t, DEATHS, 1);
        t.set(TEAM_ATTR, s(team));
        t.set(Keys.EXPIRES_AT, expires(start));
        long teamDeaths = Items.num(StoreFailures.call("count a team's death in its alert window",
                () -> dynamo.updateItem(t.request(ReturnValue.UPDATED_NEW))).attributes(), DEATHS, 0);
        if (teamDeaths <= named) {
            Update name = new Update(table, teamKey(start, team));
            name.setExpression(NAMES, "list_append(if_not_exists(" + name.name(NAMES) + ", " + name.value(
                    AttributeValue.fromL(List.of())) + "), " + name.value(AttributeValue.fromL(List.of(s(agentId))))
                    + ")");
            increment(name, HOST + host, 1);
            StoreFailures.call("name an agent in its alert window", () -> dynamo.updateItem(
                    name.request(ReturnValue.NONE)));
        }

        // By the host: a host's items stay together (its teams one after another), as the digest reads them.
        Update h = new Update(table, key(start, partOf(host), "H#" + host + "#" + team));
        increment(h, DEATHS, 1);
        h.set(HOST_ATTR, s(host));
        h.set(TEAM_ATTR, s(team));
        h.set(Keys.EXPIRES_AT, expires(start));
        StoreFailures.call("count a host's death in its alert window", () -> dynamo.updateItem(
                h.request(ReturnValue.NONE)));
    }

    /** A shard's counts after a change. */
    public record Shard(int deaths, int back, int failed) {
        /** Every death counted in this shard is back and none is in {@code dead_failed_revive}. */
        public boolean settled() {
            return back >= deaths && failed <= 0;
        }
    }

    /**
     * Counts, in the shard of an agent whose death counted in the window, {@code back} returns and {@code failed}
     * more (or, negative, fewer) agents in {@code dead_failed_revive}; answers the shard after, or null if the shard
     * counted no death (the agent's death was not counted here).
     */
    public Shard countAfterDeath(Instant start, String team, String agentId, int back, int failed) {
        Update u = new Update(table, shardKey(start, shardOf(team, agentId)));
        increment(u, BACK, back);
        increment(u, FAILED, failed);
        u.condition("attribute_exists(" + u.name(DEATHS) + ")");
        try {
            Map<String, AttributeValue> item = StoreFailures.call("count a return in its alert window",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
            return new Shard((int) Items.num(item, DEATHS, 0), (int) Items.num(item, BACK, 0),
                    (int) Items.num(item, FAILED, 0));
        } catch (ConditionalCheckFailedException noDeath) {
            return null;
        }
    }

    /** The window's totals: one consistent BatchGetItem of its {@value #SHARDS} shards (and where they were before). */
    public Totals totals(Instant start) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (int k = 0; k < SHARDS; k++) {
            keys.add(shardKey(start, k));
            keys.add(key(start, PARTS, "S#" + k)); // a window of before the partitions
        }
        int deaths = 0;
        int back = 0;
        int failed = 0;
        Map<String, Integer> reasons = new TreeMap<>();
        for (Map<String, AttributeValue> item : BatchReads.get(dynamo, table, keys, k -> k.consistentRead(true),
                "read an alert window's totals")) {
            deaths += (int) Items.num(item, DEATHS, 0);
            back += (int) Items.num(item, BACK, 0);
            failed += (int) Items.num(item, FAILED, 0);
            item.forEach((name, v) -> {
                if (name.startsWith(REASON)) {
                    reasons.merge(name.substring(REASON.length()), Integer.parseInt(v.n()), Integer::sum);
                }
            });
        }
        return new Totals(deaths, back, failed, reasons);
    }

    /**
     * A page of the window's teams, a partition after another (in team order within each), from after {@code after}
     * (null: the first).
     */
    public Page<TeamCount> teams(Instant start, String after, int limit) {
        return teams(start, "T#", after, limit);
    }

    /** A page of the window's team items of {@code prefix} (the deaths' {@code T#}, the stalls' {@code ST#}). */
    Page<TeamCount> teams(Instant start, String prefix, String after, int limit) {
        Paged r = page(start, prefix, after, limit);
        List<TeamCount> out = new ArrayList<>();
        for (Map<String, AttributeValue> item : r.items()) {
            List<String> names = new ArrayList<>();
            AttributeValue l = item.get(NAMES);
            if (l != null && l.hasL()) {
                l.l().forEach(v -> names.add(v.s()));
            }
            Map<String, Integer> hosts = new TreeMap<>();
            item.forEach((name, v) -> {
                if (name.startsWith(HOST)) {
                    hosts.put(name.substring(HOST.length()), Integer.parseInt(v.n()));
                }
            });
            out.add(new TeamCount(Items.str(item, TEAM_ATTR), (int) Items.num(item, DEATHS, 0), names, hosts));
        }
        return new Page<>(out, r.next());
    }

    /** A page of the window's hosts (each host's teams one after another), from after {@code after}. */
    public Page<HostCount> hosts(Instant start, String after, int limit) {
        return hosts(start, "H#", after, limit);
    }

    /** A page of the window's host items of {@code prefix} (the deaths' {@code H#}, the stalls' {@code SH#}). */
    Page<HostCount> hosts(Instant start, String prefix, String after, int limit) {
        Paged r = page(start, prefix, after, limit);
        List<HostCount> out = new ArrayList<>();
        for (Map<String, AttributeValue> item : r.items()) {
            out.add(new HostCount(Items.str(item, HOST_ATTR), Items.str(item, TEAM_ATTR),
                    (int) Items.num(item, DEATHS, 0)));
        }
        return new Page<>(out, r.next());
    }

    /** Items of a page, and where the next starts ({@code <part>/<sort key>}; null: none). */
    private record Paged(List<Map<String, AttributeValue>> items, String next) {
    }

    /**
     * Up to {@code limit} items of {@code prefix}, a partition after another (the head's last), from {@code after}: a
     * {@link Paged#next}, {@code <part>/<sort key after which it goes on>}, the sort key empty at a partition's start.
     */
    private Paged page(Instant start, String prefix, String after, int limit) {
        int part = 0;
        String from = null;
        if (after != null) {
            int slash = after.indexOf('/');
            part = Integer.parseInt(after.substring(0, slash));
            from = after.substring(slash + 1).isEmpty() ? null : after.substring(slash + 1);
        }
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        for (; part <= PARTS; part++, from = null) {
            String pk = pk(start, part);
            Map<String, AttributeValue> exclusive = from == null ? null : Map.of(Keys.PK, s(pk), Keys.SK, s(from));
            int want = limit - items.size();
            QueryResponse r = StoreFailures.call("read an alert window's counts", () -> dynamo.query(q -> q
                    .tableName(table).keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                    .expressionAttributeValues(Map.of(":pk", s(pk), ":prefix", s(prefix)))
                    .consistentRead(true).limit(want).exclusiveStartKey(exclusive)));
            items.addAll(r.items());
            boolean more = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty();
            if (more) {
                return new Paged(items, part + "/" + r.lastEvaluatedKey().get(Keys.SK).s());
            }
            if (items.size() >= limit) {
                return new Paged(items, part < PARTS ? (part + 1) + "/" : null);
            }
        }
        return new Paged(items, null);
    }

    static void increment(Update u, String attribute, int by) {
        String name = u.anyName(attribute);
        u.setPathExpression(name, "if_not_exists(" + name + ", " + u.value(n(0)) + ") + " + u.value(n(by)));
    }
}
