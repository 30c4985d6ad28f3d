package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.BatchReads;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * The stalls of an alert window (docs/alerts-noise.md), counted beside its deaths in the same item collection
 * ({@link AlertWindowStore}) but in attributes and items of their own, so that a window's digest of stalls says
 * stalled and its digest of deaths is what it was:
 * <ul>
 *   <li>on the head, {@code sn}: the window's first stalls counted up to the threshold plus one and no further;
 *   {@code sdg} once the digest of stalls is out, {@code srs} once every stall of its burst is over;</li>
 *   <li>on each shard {@code S#<k>}, {@code sn} stalls, {@code so} stalls over (progress again, the turn ended, or
 *   ended by a death, a leave or a new life) and {@code sb} of them over with progress again;</li>
 *   <li>{@code ST#<team>}: a team's stalls and the ids and hosts of its first few; {@code SH#<host>#<team>}: a
 *   host's stalls in a team.</li>
 * </ul>
 * The stalls' marks are the window's ({@link AlertWindowStore#mark}), under ids of their own. Every count is one
 * conditional UpdateItem with {@code if_not_exists(...) + 1} arithmetic: no read precedes a write.
 */
public final class StallWindowStore {
    static final String STALLS = "sn";
    static final String OVER = "so";
    static final String BACK = "sb";
    static final String DIGESTED = "sdg";
    static final String RESOLVED = "srs";
    static final String TEAMS = "ST#";
    static final String HOSTS = "SH#";

    private final AlertWindowStore windows;
    private final DynamoDbClient dynamo;
    private final String table;

    StallWindowStore(AlertWindowStore windows, DynamoDbClient dynamo, String table) {
        this.windows = windows;
        this.dynamo = dynamo;
        this.table = table;
    }

    /** A window's stalls, summed over its shards: how many, how many are over, and of those how many progress. */
    public record Totals(int stalls, int over, int back) {
        /** Every stall counted is over. */
        public boolean allOver() {
            return over >= stalls;
        }
    }

    /**
     * Counts a stall on the head while it has counted fewer than {@code upTo}: answers the count after this one, or
     * 0 when it had counted {@code upTo} already (past the threshold; nothing written).
     */
    public int countHead(Instant start, int upTo) {
        Update u = new Update(table, AlertWindowStore.key(start));
        AlertWindowStore.increment(u, STALLS, 1);
        u.set(Keys.EXPIRES_AT, windows.expires(start));
        u.condition("attribute_not_exists(" + u.name(STALLS) + ") OR " + u.name(STALLS) + " < " + u.value(n(upTo)));
        try {
            return (int) Items.num(StoreFailures.call("count a stall on its alert window's head",
                    () -> dynamo.updateItem(u.request(ReturnValue.UPDATED_NEW))).attributes(), STALLS, 0);
        } catch (ConditionalCheckFailedException pastThreshold) {
            return 0;
        }
    }

    /** The stalls' part of the head (no lead: a stall pages no incident), or null: one consistent GetItem. */
    public AlertWindowStore.Head head(Instant start) {
        Map<String, AttributeValue> item = StoreFailures.call("read an alert window", () -> dynamo.getItem(
                g -> g.tableName(table).key(AlertWindowStore.key(start)).consistentRead(true))).item();
        return item == null || item.isEmpty() || !item.containsKey(STALLS) ? null : head(start, item);
    }

    private static AlertWindowStore.Head head(Instant start, Map<String, AttributeValue> item) {
        return new AlertWindowStore.Head(start, (int) Items.num(item, STALLS, 0), null,
                AlertWindowStore.flag(item, DIGESTED), AlertWindowStore.flag(item, RESOLVED));
    }

    /** Marks the window's digest of stalls sent and answers the head; null if the window counted no stall. */
    public AlertWindowStore.Head digest(Instant start) {
        Update u = new Update(table, AlertWindowStore.key(start));
        u.set(DIGESTED, AttributeValue.fromBool(true));
        u.condition("attribute_exists(" + u.name(STALLS) + ")");
        try {
            return head(start, StoreFailures.call("mark the alert window's stalls digested",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException noStalls) {
            return null;
        }
    }

    /** Marks the window's burst of stalls over: true for the one call that marked it, false once it was. */
    public boolean markResolved(Instant start) {
        Update u = new Update(table, AlertWindowStore.key(start));
        u.set(RESOLVED, AttributeValue.fromBool(true));
        u.condition("attribute_exists(" + u.name(STALLS) + ") AND attribute_not_exists(" + u.name(RESOLVED) + ")");
        return u.writeIf(dynamo, "mark the alert window's stalls over");
    }

    /**
     * Counts one stall: in its shard of the totals, its team (naming the agent and its host while the team has
     * counted at most {@code named}) and its host ({@code -}: none). Three to four small writes.
     */
    public void countStall(Instant start, String team, String agentId, String host, int named) {
        Update shard = new Update(table, AlertWindowStore.shardKey(start, AlertWindowStore.shardOf(team, agentId)));
        AlertWindowStore.increment(shard, STALLS, 1);
        shard.set(Keys.EXPIRES_AT, windows.expires(start));
        StoreFailures.call("count a stall in its alert window", () -> dynamo.updateItem(
                shard.request(ReturnValue.NONE)));

        Map<String, AttributeValue> teamKey = AlertWindowStore.key(start, AlertWindowStore.partOf(team), TEAMS + team);
        Update t = new Update(table, teamKey);
        AlertWindowStore.increment(t, AlertWindowStore.DEATHS, 1);
        t.set(AlertWindowStore.TEAM_ATTR, s(team));
        t.set(Keys.EXPIRES_AT, windows.expires(start));
        long teamStalls = Items.num(StoreFailures.call("count a team's stall in its alert window",
                () -> dynamo.updateItem(t.request(ReturnValue.UPDATED_NEW))).attributes(), AlertWindowStore.DEATHS, 0);
        if (teamStalls <= named) {
            Update name = new Update(table, teamKey);
            name.setExpression(AlertWindowStore.NAMES, "list_append(if_not_exists(" + name.name(AlertWindowStore.NAMES)
                    + ", " + name.value(AttributeValue.fromL(List.of())) + "), "
                    + name.value(AttributeValue.fromL(List.of(s(agentId)))) + ")");
            AlertWindowStore.increment(name, AlertWindowStore.HOST + host, 1);
            StoreFailures.call("name a stalled agent in its alert window", () -> dynamo.updateItem(
                    name.request(ReturnValue.NONE)));
        }

        Update h = new Update(table, AlertWindowStore.key(start, AlertWindowStore.partOf(host),
                HOSTS + host + "#" + team));
        AlertWindowStore.increment(h, AlertWindowStore.DEATHS, 1);
        h.set(AlertWindowStore.HOST_ATTR, s(host));
        h.set(AlertWindowStore.TEAM_ATTR, s(team));
        h.set(Keys.EXPIRES_AT, windows.expires(start));
        StoreFailures.call("count a host's stall in its alert window", () -> dynamo.updateItem(
                h.request(ReturnValue.NONE)));
    }

    /** A shard's stall counts after a stall's end. */
    public record Shard(int stalls, int over, int back) {
        /** Every stall counted in this shard is over. */
        public boolean settled() {
            return over >= stalls;
        }
    }

    /**
     * Counts the end of a stall counted in the window, in its agent's shard: over, and {@code back} (1: with
     * progress again; 0: ended by a death, a leave or a new life). Answers the shard after, or null if the shard
     * counted no stall.
     */
    public Shard countEnd(Instant start, String team, String agentId, int back) {
        Update u = new Update(table, AlertWindowStore.shardKey(start, AlertWindowStore.shardOf(team, agentId)));
        AlertWindowStore.increment(u, OVER, 1);
        AlertWindowStore.increment(u, BACK, back);
        u.condition("attribute_exists(" + u.name(STALLS) + ")");
        try {
            Map<String, AttributeValue> item = StoreFailures.call("count a stall's end in its alert window",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
            return new Shard((int) Items.num(item, STALLS, 0), (int) Items.num(item, OVER, 0),
                    (int) Items.num(item, BACK, 0));
        } catch (ConditionalCheckFailedException noStall) {
            return null;
        }
    }

    /** The window's stall totals: one consistent BatchGetItem of its shards. */
    public Totals totals(Instant start) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (int k = 0; k < AlertWindowStore.SHARDS; k++) {
            keys.add(AlertWindowStore.shardKey(start, k));
        }
        int stalls = 0;
        int over = 0;
        int back = 0;
        for (Map<String, AttributeValue> item : BatchReads.get(dynamo, table, keys, k -> k.consistentRead(true),
                "read an alert window's stall totals")) {
            stalls += (int) Items.num(item, STALLS, 0);
            over += (int) Items.num(item, OVER, 0);
            back += (int) Items.num(item, BACK, 0);
        }
        return new Totals(stalls, over, back);
    }

    /** A page of the window's teams with stalls ({@link AlertWindowStore.TeamCount#deaths}: its stalls). */
    public AlertWindowStore.Page<AlertWindowStore.TeamCount> teams(Instant start, String after, int limit) {
        return windows.teams(start, TEAMS, after, limit);
    }

    /** A page of the window's hosts with stalls ({@link AlertWindowStore.HostCount#deaths}: its stalls). */
    public AlertWindowStore.Page<AlertWindowStore.HostCount> hosts(Instant start, String after, int limit) {
        return windows.hosts(start, HOSTS, after, limit);
    }
}
