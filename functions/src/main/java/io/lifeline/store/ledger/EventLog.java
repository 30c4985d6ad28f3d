package io.lifeline.store.ledger;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.BatchReads;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * A team's recent events as delivered, newest first, for {@code GET /v1/teams/{team}/events}. The outbox
 * writes each event here once it is on the bus, keyed by its deterministic id, so a replay adds nothing.
 * The sort key starts with the event's time, so "since" is a key condition, not a filter. An event about
 * one agent is also copied into that agent's partition, so the agent's page reads its events with one
 * bounded Query instead of filtering the whole team's log.
 *
 * <p>A team's log is {@link #SHARDS} partitions, {@code TEAM#<team>#EVENTS#<n>}, the shard chosen from the event's
 * id, so one team's events spread evenly and no partition of the log takes more than a share of its writes (a
 * partition takes 1,000 write units a second); a read queries every shard and merges them in the sort key's order
 * (time, then id). Events logged before the log was sharded are in {@code TEAM#<team>#EVENTS}, still read beside the
 * shards until its retention empties it.
 */
public final class EventLog {
    /** How many partitions one team's log spreads over. */
    public static final int SHARDS = 8;
    /** Items a filtered read evaluates per Query. */
    private static final int FILTERED_PAGE = 100;
    private static final String EVENTS_SUFFIX = "#EVENTS";
    private static final String PREFIX = "E#";
    private static final String TYPE = "type";
    private static final String DETAIL = "detail";
    private static final String AT = "at";
    private static final String EVENT_ID = "eventId";
    private static final String AGENT_ID = "agentId";

    /**
     * An event as logged; {@code detailJson} is its EventBridge detail; {@code agentId} the agent it is about,
     * null for a team-wide event.
     */
    public record Entry(String eventId, String type, Instant at, String detailJson, String agentId) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public EventLog(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    /** The partition of {@code team}'s log that holds the event {@code eventId}: fixed by the id, so a retry finds it. */
    static String teamLog(String team, String eventId) {
        return Keys.team(team) + EVENTS_SUFFIX + "#" + Math.floorMod(eventId.hashCode(), SHARDS);
    }

    /** Every partition a read of {@code team}'s log merges: the shards, then the log as written before them. */
    static List<String> teamLogs(String team) {
        List<String> out = new ArrayList<>();
        for (int shard = 0; shard < SHARDS; shard++) {
            out.add(Keys.team(team) + EVENTS_SUFFIX + "#" + shard);
        }
        out.add(Keys.team(team) + EVENTS_SUFFIX);
        return out;
    }

    public void append(String team, Entry e) {
        put(teamLog(team, e.eventId()), e);
        if (e.agentId() != null) {
            put(Keys.agentScope(team, e.agentId()), e);
        }
    }

    /** BatchWriteItem's limit of items per call. */
    static final int MAX_BATCH_WRITE = 25;
    /** Calls for one chunk before unprocessed items (the store is busy) answer 429 THROTTLED. */
    static final int BATCH_ROUNDS = 4;

    /**
     * Logs each entry in its team's log (no agent copies: for team-wide entries, such as a team's view of a fleet
     * event), 25 to a BatchWriteItem. Each item's key is the event's time and id, so writing it again (a retry)
     * puts the same item back: no condition is needed for the log to hold each event once.
     */
    public void appendAll(List<Map.Entry<String, Entry>> entries) {
        List<WriteRequest> writes = new ArrayList<>();
        for (Map.Entry<String, Entry> e : entries) {
            writes.add(WriteRequest.builder().putRequest(p -> p.item(item(teamLog(e.getKey(), e.getValue().eventId()),
                    e.getValue()))).build());
        }
        for (int from = 0; from < writes.size(); from += MAX_BATCH_WRITE) {
            Map<String, List<WriteRequest>> request = Map.of(table,
                    writes.subList(from, Math.min(writes.size(), from + MAX_BATCH_WRITE)));
            for (int round = 0; !request.isEmpty(); round++) {
                if (round == BATCH_ROUNDS) {
                    throw StoreFailures.throttled("log events", null);
                }
                Map<String, List<WriteRequest>> ask = request;
                BatchWriteItemResponse r = StoreFailures.call("log events",
                        () -> dynamo.batchWriteItem(b -> b.requestItems(ask)));
                request = r.hasUnprocessedItems() ? r.unprocessedItems() : Map.of();
            }
        }
    }

    private void put(String pk, Entry e) {
        Map<String, AttributeValue> item = item(pk, e);
        try {
            StoreFailures.call("log the event", () -> dynamo.putItem(p -> p.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException alreadyLogged) {
            // A replayed record: the event is there already.
        }
    }

    private Map<String, AttributeValue> item(String pk, Entry e) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(pk));
        item.put(Keys.SK, s(PREFIX + millis(e.at()) + "#" + e.eventId()));
        item.put(EVENT_ID, s(e.eventId()));
        item.put(TYPE, s(e.type()));
        item.put(AT, ms(e.at()));
        item.put(DETAIL, s(e.detailJson()));
        if (e.agentId() != null) {
            item.put(AGENT_ID, s(e.agentId()));
        }
        item.put(Keys.EXPIRES_AT, n(e.at().plus(retention).getEpochSecond()));
        return item;
    }

    /**
     * Which of {@code entries} are already in their team's log, by event id: what an earlier pass put on the bus (the
     * log is written right after the send), so a replayed or re-driven record does not send them again. One
     * BatchGetItem per 100 events, of the keys the log would have. An event logged before the log was sharded is
     * not looked for there: a record replayed across that change (the stream keeps 24 hours) sends its event once
     * more, and the read drops the second copy by its id.
     */
    public Set<String> logged(List<Map.Entry<String, Entry>> entries) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        Set<Map<String, AttributeValue>> seen = new HashSet<>();
        for (Map.Entry<String, Entry> e : entries) {
            Map<String, AttributeValue> key = Map.of(Keys.PK, s(teamLog(e.getKey(), e.getValue().eventId())),
                    Keys.SK, s(PREFIX + millis(e.getValue().at()) + "#" + e.getValue().eventId()));
            if (seen.add(key)) {
                keys.add(key);
            }
        }
        Set<String> out = new HashSet<>();
        BatchReads.get(dynamo, table, keys, k -> k.consistentRead(true).projectionExpression("#id")
                .expressionAttributeNames(Map.of("#id", EVENT_ID)), "read the event log")
                .forEach(item -> out.add(Items.str(item, EVENT_ID)));
        return out;
    }

    private static String millis(Instant at) {
        return String.format("%013d", Math.max(0, at.toEpochMilli()));
    }

    /**
     * One page of events, newest first; {@code next} is where the page after it starts (the sort key of its last
     * entry, which the next page stays below), null when none is left.
     */
    public record Page(List<Entry> entries, String next) {
    }

    /** A page of at most {@code limit}, newest first (see {@link #page}). */
    public List<Entry> recent(String team, String agentId, String type, Instant since, Instant until, int limit) {
        return page(team, agentId, type, since, until, limit, null).entries();
    }

    /**
     * Newest first. {@code agentId} null reads the team's log (every shard, merged), else that agent's copy;
     * {@code type} null for every type; {@code since} and {@code until} (both inclusive, either null for no bound) a
     * time window; {@code before} null, or a {@link Page#next} of an earlier page: only events older than it.
     */
    public Page page(String team, String agentId, String type, Instant since, Instant until, int limit,
                     String before) {
        // "~" sorts after every digit and "#", so [E#<since>, E#<until>#~] holds every event of the window.
        String from = PREFIX + (since == null ? "" : millis(since));
        String to = PREFIX + (until == null ? "" : millis(until) + "#") + "~";
        if (before != null && before.compareTo(to) < 0) {
            to = before; // inclusive in the key condition: that one entry is dropped below
        }
        if (to.compareTo(from) < 0) {
            return new Page(List.of(), null); // the cursor is older than the window's start: nothing is left
        }
        List<String> partitions = agentId == null ? teamLogs(team) : List.of(Keys.agentScope(team, agentId));
        // Each partition is read a small page at a time, and only the partition whose newest unread entry is the
        // newest of all reads on: a page of the merged log reads about its own size, not a page of every shard.
        // A type filter is applied after the read: pages of 100 then, so a rare type costs few requests (the units
        // are the items evaluated either way).
        int batch = type == null ? Math.max(2, limit / partitions.size() + 1) : Math.max(limit + 1, FILTERED_PAGE);
        List<Reader> readers = new ArrayList<>();
        for (String pk : partitions) {
            readers.add(new Reader(pk, type, from, to, before, batch));
        }
        List<Entry> out = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        String last = null;
        for (Reader next = newestOf(readers); next != null; next = newestOf(readers)) {
            Map<String, AttributeValue> item = next.take();
            if (!ids.add(Items.str(item, EVENT_ID))) {
                continue; // logged both before and after the log was sharded
            }
            if (out.size() == limit) {
                return new Page(out, last);
            }
            out.add(new Entry(Items.str(item, EVENT_ID), Items.str(item, TYPE), Items.instant(item, AT),
                    Items.str(item, DETAIL), Items.str(item, AGENT_ID)));
            last = Items.str(item, Keys.SK);
        }
        return new Page(out, null);
    }

    /** The reader whose next entry sorts last (the newest), reading a page where one has run dry; null when all are. */
    private Reader newestOf(List<Reader> readers) {
        Reader best = null;
        for (Reader r : readers) {
            String head = r.head();
            if (head != null && (best == null || head.compareTo(best.head()) > 0)) {
                best = r;
            }
        }
        return best;
    }

    /** One partition of the log, newest first, read a page at a time as the merge asks. */
    private final class Reader {
        private final String pk;
        private final String type;
        private final String from;
        private final String to;
        private final String before;
        private final int batch;
        private final ArrayDeque<Map<String, AttributeValue>> unread = new ArrayDeque<>();
        private Map<String, AttributeValue> start;
        private boolean started;

        Reader(String pk, String type, String from, String to, String before, int batch) {
            this.pk = pk;
            this.type = type;
            this.from = from;
            this.to = to;
            this.before = before;
            this.batch = batch;
        }

        /** The sort key of the next entry, reading the next page when none is left; null at the partition's end. */
        String head() {
            while (unread.isEmpty() && (!started || start != null)) {
                read();
            }
            return unread.isEmpty() ? null : Items.str(unread.peekFirst(), Keys.SK);
        }

        Map<String, AttributeValue> take() {
            return unread.pollFirst();
        }

        private void read() {
            Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK));
            Map<String, AttributeValue> values = new HashMap<>(Map.of(":pk", s(pk), ":from", s(from), ":to", s(to)));
            if (type != null) {
                names.put("#type", TYPE);
                values.put(":type", s(type));
            }
            Map<String, AttributeValue> after = start;
            var page = StoreFailures.call("read events", () -> dynamo.query(q -> q.tableName(table)
                    .keyConditionExpression("#pk = :pk AND #sk BETWEEN :from AND :to")
                    .filterExpression(type == null ? null : "#type = :type")
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .scanIndexForward(false).limit(batch).exclusiveStartKey(after)));
            for (Map<String, AttributeValue> item : page.items()) {
                if (!Items.str(item, Keys.SK).equals(before)) {
                    unread.addLast(item);
                }
            }
            started = true;
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        }
    }
}
