package io.lifeline.store;

import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.LifelineException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Alert windows on the ledger (docs/alerts-noise.md): one small item per window that had an alertable death,
 * {@code ALERTS#WINDOW#<startMs> / WINDOW}, counting its deaths ({@code n}) by team, host and reason, naming the
 * first few, keeping the PagerDuty key of its first death ({@code lead}), counting the returns of its agents
 * ({@code b}), and, once its digest is out, {@code dg}. Every count is one conditional UpdateItem with
 * {@code ADD}-like arithmetic, returning the item, so no read precedes a write. Windows expire with the event log.
 */
public final class AlertWindowStore {
    static final String SK = "WINDOW";
    static final String DEATHS = "n";
    static final String BACK = "b";
    static final String LEAD = "lead";
    static final String DIGESTED = "dg";
    static final String BY_TEAM = "t";
    static final String BY_HOST = "h";
    static final String BY_REASON = "r";
    static final String NAMES = "names";

    /**
     * What the outbox decided for one change it counted in a window ({@code burst}: in the window's digest;
     * {@code raised}: it raised the window's start or end), kept beside the window so that the same change handled
     * again (a stream retry, the repair's replay) decides the same with no write.
     */
    public record Mark(boolean burst, boolean raised) {
    }

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
        item.put(Keys.EXPIRES_AT, n(start.plus(retention).getEpochSecond()));
        try {
            StoreFailures.call("mark a change in its alert window", () -> dynamo.putItem(p -> p.tableName(table)
                    .item(item).conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException markedAlready) {
            // the same change, marked by an earlier pass
        }
    }

    private static Map<String, AttributeValue> markKey(Instant start, String id) {
        return Map.of(Keys.PK, s("ALERTS#WINDOW#" + start.toEpochMilli()), Keys.SK, s("C#" + id));
    }

    /** A window as its last write left it. */
    public record Window(Instant start, int deaths, int back, String lead, boolean digested,
                         Map<String, Integer> byTeam, Map<String, Integer> byHost, Map<String, Integer> byReason,
                         List<String> names) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public AlertWindowStore(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    static Map<String, AttributeValue> key(Instant start) {
        return Map.of(Keys.PK, s("ALERTS#WINDOW#" + start.toEpochMilli()), Keys.SK, s(SK));
    }

    /**
     * Counts one alertable death in the window: its team, host ({@code -}: none) and reason (the trigger), and the
     * window's lead PagerDuty key if it is the first. Answers the window after the count.
     */
    public Window countDeath(Instant start, String team, String host, String reason, String leadKey) {
        for (int attempt = 0; attempt < 4; attempt++) {
            Update u = new Update(table, key(start));
            increment(u, DEATHS);
            u.setExpression(LEAD, "if_not_exists(" + u.name(LEAD) + ", " + u.value(s(leadKey)) + ")");
            u.set(Keys.EXPIRES_AT, n(start.plus(retention).getEpochSecond()));
            incrementPath(u, u.mapPath(BY_TEAM, team));
            incrementPath(u, u.mapPath(BY_HOST, host));
            incrementPath(u, u.mapPath(BY_REASON, reason));
            u.condition("attribute_exists(" + u.name(BY_TEAM) + ")");
            try {
                return window(start, StoreFailures.call("count a death in its alert window",
                        () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
            } catch (ConditionalCheckFailedException first) {
                Update make = new Update(table, key(start));
                make.set(DEATHS, n(1));
                make.set(LEAD, s(leadKey));
                make.set(Keys.EXPIRES_AT, n(start.plus(retention).getEpochSecond()));
                make.set(BY_TEAM, AttributeValue.fromM(Map.of(team, n(1))));
                make.set(BY_HOST, AttributeValue.fromM(Map.of(host, n(1))));
                make.set(BY_REASON, AttributeValue.fromM(Map.of(reason, n(1))));
                make.condition("attribute_not_exists(" + make.name(BY_TEAM) + ")");
                try {
                    return window(start, StoreFailures.call("open an alert window",
                            () -> dynamo.updateItem(make.request(ReturnValue.ALL_NEW))).attributes());
                } catch (ConditionalCheckFailedException openedMeanwhile) {
                    // another death opened it first: count in it
                }
            }
        }
        throw new LifelineException(LifelineException.Kind.UNAVAILABLE,
                "CONTENDED", "The alert window kept changing under this count; retry");
    }

    /** Names {@code agent} in the window (the first few deaths only: the caller asks while the count allows). */
    public void name(Instant start, String agent) {
        Update u = new Update(table, key(start));
        u.setExpression(NAMES, "list_append(if_not_exists(" + u.name(NAMES) + ", " + u.value(
                AttributeValue.fromL(List.of())) + "), " + u.value(AttributeValue.fromL(List.of(s(agent)))) + ")");
        StoreFailures.call("name an agent in its alert window", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
    }

    /** Counts the return (or hand-off) of an agent whose death counted in the window; null if there is no window. */
    public Window countBack(Instant start) {
        Update u = new Update(table, key(start));
        increment(u, BACK);
        u.condition("attribute_exists(" + u.name(DEATHS) + ")");
        try {
            return window(start, StoreFailures.call("count a return in its alert window",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException noWindow) {
            return null;
        }
    }

    /** The window, or null: one consistent GetItem. */
    public Window read(Instant start) {
        Map<String, AttributeValue> item = StoreFailures.call("read an alert window", () -> dynamo.getItem(
                g -> g.tableName(table).key(key(start)).consistentRead(true))).item();
        return item == null || item.isEmpty() ? null : window(start, item);
    }

    /**
     * Marks the window's digest sent and answers the window as it stands (a death counted after this is alerted one
     * by one, so none falls between the digest and the people). Null if there is no window.
     */
    public Window digest(Instant start) {
        Update u = new Update(table, key(start));
        u.set(DIGESTED, AttributeValue.fromBool(true));
        u.condition("attribute_exists(" + u.name(DEATHS) + ")");
        try {
            return window(start, StoreFailures.call("mark the alert window digested",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException noWindow) {
            return null;
        }
    }

    private static void increment(Update u, String attribute) {
        u.setExpression(attribute, "if_not_exists(" + u.name(attribute) + ", " + u.value(n(0)) + ") + "
                + u.value(n(1)));
    }

    private static void incrementPath(Update u, String path) {
        u.setPathExpression(path, "if_not_exists(" + path + ", " + u.value(n(0)) + ") + " + u.value(n(1)));
    }

    private static Window window(Instant start, Map<String, AttributeValue> item) {
        List<String> names = new ArrayList<>();
        AttributeValue l = item.get(NAMES);
        if (l != null && l.hasL()) {
            l.l().forEach(v -> names.add(v.s()));
        }
        AttributeValue dg = item.get(DIGESTED);
        return new Window(start, (int) Items.num(item, DEATHS, 0), (int) Items.num(item, BACK, 0),
                Items.str(item, LEAD), dg != null && Boolean.TRUE.equals(dg.bool()), counts(item.get(BY_TEAM)),
                counts(item.get(BY_HOST)), counts(item.get(BY_REASON)), names);
    }

    private static Map<String, Integer> counts(AttributeValue m) {
        Map<String, Integer> out = new LinkedHashMap<>();
        if (m != null && m.hasM()) {
            m.m().forEach((k, v) -> out.put(k, Integer.parseInt(v.n())));
        }
        return out;
    }
}
