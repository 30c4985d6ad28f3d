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
 */
public final class EventLog {
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

    public void append(String team, Entry e) {
        put(Keys.team(team) + EVENTS_SUFFIX, e);
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
            writes.add(WriteRequest.builder().putRequest(p -> p.item(item(Keys.team(e.getKey()) + EVENTS_SUFFIX,
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
     * BatchGetItem per 100 events, of the keys the log would have.
     */
    public Set<String> logged(List<Map.Entry<String, Entry>> entries) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        Set<Map<String, AttributeValue>> seen = new HashSet<>();
        for (Map.Entry<String, Entry> e : entries) {
            Map<String, AttributeValue> key = Map.of(Keys.PK, s(Keys.team(e.getKey()) + EVENTS_SUFFIX),
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
     * Newest first. {@code agentId} null reads the team's log, else that agent's copy; {@code type} null for
     * every type; {@code since} and {@code until} (both inclusive, either null for no bound) a time window.
     */
    public List<Entry> recent(String team, String agentId, String type, Instant since, Instant until, int limit) {
        Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK));
        String pk = agentId == null ? Keys.team(team) + EVENTS_SUFFIX : Keys.agentScope(team, agentId);
        // "~" sorts after every digit and "#", so [E#<since>, E#<until>#~] holds every event of the window.
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":pk", s(pk),
                ":from", s(PREFIX + (since == null ? "" : millis(since))),
                ":to", s(PREFIX + (until == null ? "" : millis(until) + "#") + "~")));
        String filter = null;
        if (type != null) {
            names.put("#type", TYPE);
            values.put(":type", s(type));
            filter = "#type = :type";
        }
        List<Entry> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        String filterExpression = filter;
        do {
            Map<String, AttributeValue> from = start;
            var page = StoreFailures.call("read events", () -> dynamo.query(q -> q.tableName(table)
                    .keyConditionExpression("#pk = :pk AND #sk BETWEEN :from AND :to")
                    .filterExpression(filterExpression)
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .scanIndexForward(false).limit(limit).exclusiveStartKey(from)));
            for (Map<String, AttributeValue> item : page.items()) {
                if (out.size() < limit) {
                    out.add(new Entry(Items.str(item, EVENT_ID), Items.str(item, TYPE), Items.instant(item, AT),
                            Items.str(item, DETAIL), Items.str(item, AGENT_ID)));
                }
            }
            start = out.size() < limit && page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
                    ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }
}
