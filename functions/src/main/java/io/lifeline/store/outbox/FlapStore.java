package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.LifelineException;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Flapping on the ledger (docs/alerts-noise.md): one small item per agent whose status went between alive and
 * not alive, {@code FLAP#<team>#<agent> / FLAP}: the start of its current count window ({@code ws}, ms), the changes
 * counted in it ({@code n}), the newest change ({@code last}, ms; {@code st}: its status; {@code seq}: its seq, so
 * a change handled again is not counted twice; {@code pl}: the change before it, ms, which each count moves there
 * from {@code last} in the same write; {@code sl}: the newest stall change counted, {@link #stallKey}, the stall's
 * own order, as {@code seq} is a status change's), and while the agent is flagged flapping, {@code fl} (since when,
 * ms). The resolve, and the lapse of a flag whose check never ended it, move {@code fl} to {@code rfl}. Every write is one
 * conditional UpdateItem that answers the item; the live item carries none of it. Items expire with the event log, counted from their newest change.
 */
public final class FlapStore {
    static final String SK = "FLAP";
    static final String WINDOW_START = "ws";
    static final String COUNT = "n";
    static final String LAST = "last";
    static final String PREVIOUS = "pl";
    static final String LAST_STATUS = "st";
    static final String SEQ = "seq";
    static final String STALL = "sl";
    static final String FLAGGED = "fl";
    static final String RESOLVED = "rfl";

    /**
     * An agent's flapping item as its last write left it; {@code flaggedAt} null: not flagged; {@code previous}: the
     * change counted before {@code last} (null: none, or an item counted before the store kept it); {@code stall}:
     * the newest stall change counted ({@link #stallKey}; 0: none).
     */
    public record Flaps(Instant windowStart, int count, Instant last, Instant previous, String lastStatus, long seq,
                        Instant flaggedAt, Instant resolvedFlag, long stall) {
    }

    /**
     * A stall change's place in the agent's stall changes, as a seq is a status change's: its stall's start
     * ({@code since}, ms) doubled, plus one for its end ({@code resumed}), so each stall's end comes after its start
     * and before the next stall's start. A stall has no seq of its own: it changes no status.
     */
    public static long stallKey(Instant since, boolean resumed) {
        return since.toEpochMilli() * 2 + (resumed ? 1 : 0);
    }

    /** A counted change: the item after it, and whether this call counted it (false: counted before). */
    public record Counted(Flaps flaps, boolean counted) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public FlapStore(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    static Map<String, AttributeValue> key(String team, String agentId) {
        return Map.of(Keys.PK, s("FLAP#" + team + "#" + agentId), Keys.SK, s(SK));
    }

    /**
     * Counts change {@code seq} (to {@code status}, at {@code at}) of the agent: in the current window if it began
     * less than {@code window} before, else as the first of a new one. A seq counted before is not counted again.
     */
    public Counted count(String team, String agentId, long seq, String status, Instant at, Duration window) {
        return count(team, agentId, SEQ, seq, status, at, window);
    }

    /**
     * Counts a stall change of the agent in an alert-mode stall (its start, or its end: {@link #stallKey}
     * {@code key}, {@code status} {@code stalled} or the status it resumed in, at {@code at}), as {@link #count}
     * counts a status change, in the same window and with the same newest-change fields; a stall change counted
     * before is not counted again. It leaves {@code seq} as it is, so a status change is ordered among its own.
     */
    public Counted countStall(String team, String agentId, long key, String status, Instant at, Duration window) {
        return count(team, agentId, STALL, key, status, at, window);
    }

    private Counted count(String team, String agentId, String order, long value, String status, Instant at,
                          Duration window) {
        long t = at.toEpochMilli();
        long expires = at.plus(retention).getEpochSecond();
        for (int attempt = 0; attempt < 4; attempt++) {
            Update in = new Update(table, key(team, agentId));
            in.setExpression(COUNT, in.name(COUNT) + " + " + in.value(n(1)));
            in.setExpression(PREVIOUS, in.name(LAST));
            in.set(LAST, n(t)).set(LAST_STATUS, s(status)).set(order, n(value)).set(Keys.EXPIRES_AT, n(expires));
            in.condition(newer(in, order, value) + " AND " + in.name(WINDOW_START) + " > "
                    + in.value(n(t - window.toMillis())));
            try {
                return new Counted(flaps(StoreFailures.call("count a flap", () -> dynamo.updateItem(
                        in.request(ReturnValue.ALL_NEW))).attributes()), true);
            } catch (ConditionalCheckFailedException notInWindow) {
                Update open = new Update(table, key(team, agentId));
                open.setExpression(PREVIOUS, "if_not_exists(" + open.name(LAST) + ", " + open.value(n(t)) + ")");
                open.set(WINDOW_START, n(t)).set(COUNT, n(1)).set(LAST, n(t)).set(LAST_STATUS, s(status))
                        .set(order, n(value)).set(Keys.EXPIRES_AT, n(expires));
                open.condition(newer(open, order, value) + " AND (attribute_not_exists(" + open.name(WINDOW_START)
                        + ") OR " + open.name(WINDOW_START) + " <= " + open.value(n(t - window.toMillis())) + ")");
                try {
                    return new Counted(flaps(StoreFailures.call("open a flap window", () -> dynamo.updateItem(
                            open.request(ReturnValue.ALL_NEW))).attributes()), true);
                } catch (ConditionalCheckFailedException again) {
                    Flaps now = read(team, agentId);
                    if (now != null && (STALL.equals(order) ? now.stall() : now.seq()) >= value) {
                        return new Counted(now, false); // counted by an earlier pass
                    }
                }
            }
        }
        throw new LifelineException(LifelineException.Kind.UNAVAILABLE,
                "CONTENDED", "The agent's flap count kept changing under this count; retry");
    }

    /** The condition that {@code value} is newer than the item's {@code order} (a seq, a stall key), or the first. */
    private static String newer(Update u, String order, long value) {
        return "(attribute_not_exists(" + u.name(order) + ") OR " + u.name(order) + " < " + u.value(n(value)) + ")";
    }

    /** Flags the agent flapping since {@code at}; true if this call flagged it (false: flagged already). */
    public boolean flag(String team, String agentId, Instant at) {
        Update u = new Update(table, key(team, agentId));
        u.set(FLAGGED, n(at.toEpochMilli()));
        // An item that counted a change (a status change's or a stall's): each count sets the window's start.
        u.condition("attribute_exists(" + u.name(WINDOW_START) + ") AND attribute_not_exists(" + u.name(FLAGGED)
                + ")");
        try {
            StoreFailures.call("flag an agent flapping", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException flaggedAlready) {
            return false;
        }
    }

    /**
     * Ends the flag raised at {@code flaggedAt} if the newest change is still {@code last} (no change came in
     * between); true if this call ended it.
     */
    public boolean resolve(String team, String agentId, Instant flaggedAt, Instant last) {
        Update u = new Update(table, key(team, agentId));
        u.set(RESOLVED, n(flaggedAt.toEpochMilli())).set(COUNT, n(0));
        u.remove(FLAGGED);
        u.condition(u.name(FLAGGED) + " = " + u.value(n(flaggedAt.toEpochMilli())) + " AND " + u.name(LAST) + " = "
                + u.value(n(last.toEpochMilli())));
        try {
            StoreFailures.call("resolve an agent's flapping", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException changed) {
            return false;
        }
    }

    /**
     * Ends the flag raised at {@code flaggedAt} that its check never ended, at the change {@code seq} that came after
     * the flag's bound (the caller judged it so, by the agent's FlapHold): the flag moves to {@code rfl} as
     * the resolve moves it, and the count starts again from that change. True if this call ended it (false: ended
     * already, or a newer change was counted since).
     */
    public boolean lapse(String team, String agentId, Instant flaggedAt, long seq) {
        Update u = new Update(table, key(team, agentId));
        u.condition(u.name(SEQ) + " = " + u.value(n(seq)));
        return lapse(u, flaggedAt);
    }

    /**
     * {@link #lapse}, at the stall change {@code key} at {@code at}: only while it is still the newest change counted
     * (its stall key, and no status change counted since: {@code last} still its time).
     */
    public boolean lapseAtStall(String team, String agentId, Instant flaggedAt, long key, Instant at) {
        Update u = new Update(table, key(team, agentId));
        u.condition(u.name(STALL) + " = " + u.value(n(key)) + " AND " + u.name(LAST) + " = "
                + u.value(n(at.toEpochMilli())));
        return lapse(u, flaggedAt);
    }

    private boolean lapse(Update u, Instant flaggedAt) {
        u.set(RESOLVED, n(flaggedAt.toEpochMilli())).set(COUNT, n(1));
        u.remove(FLAGGED);
        u.condition(u.name(FLAGGED) + " = " + u.value(n(flaggedAt.toEpochMilli())));
        try {
            StoreFailures.call("end a lapsed flapping flag", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException changed) {
            return false;
        }
    }

    /** The agent's item (one consistent GetItem), or null. */
    public Flaps read(String team, String agentId) {
        Map<String, AttributeValue> item = StoreFailures.call("read an agent's flaps", () -> dynamo.getItem(
                g -> g.tableName(table).key(key(team, agentId)).consistentRead(true))).item();
        return item == null || item.isEmpty() ? null : flaps(item);
    }

    private static Flaps flaps(Map<String, AttributeValue> item) {
        return new Flaps(time(item, WINDOW_START), (int) Items.num(item, COUNT, 0), time(item, LAST),
                time(item, PREVIOUS), Items.str(item, LAST_STATUS), Items.num(item, SEQ, 0), time(item, FLAGGED),
                time(item, RESOLVED), Items.num(item, STALL, 0));
    }

    private static Instant time(Map<String, AttributeValue> item, String name) {
        Long v = Items.num(item, name);
        return v == null ? null : Instant.ofEpochMilli(v);
    }
}
