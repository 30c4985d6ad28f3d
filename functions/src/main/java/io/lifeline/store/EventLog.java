package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * A team's recent events as delivered, newest first, for {@code GET /v1/teams/{team}/events}. The outbox
 * writes each event here once it is on the bus, keyed by its deterministic id, so a replay adds nothing.
 */
public final class EventLog {
    private static final String EVENTS_SUFFIX = "#EVENTS";
    private static final String PREFIX = "E#";
    private static final String TYPE = "type";
    private static final String DETAIL = "detail";
    private static final String AT = "at";
    private static final String EVENT_ID = "eventId";

    /** An event as logged; {@code detailJson} is its EventBridge detail. */
    public record Entry(String eventId, String type, Instant at, String detailJson) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public EventLog(DynamoDbClient dynamo, String table, Duration retention) {
        this.dynamo = dynamo;
        this.table = table;
        this.retention = retention;
    }

    public void append(String team, Entry e) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(Keys.team(team) + EVENTS_SUFFIX));
        item.put(Keys.SK, s(PREFIX + String.format("%013d", e.at().toEpochMilli()) + "#" + e.eventId()));
        item.put(EVENT_ID, s(e.eventId()));
        item.put(TYPE, s(e.type()));
        item.put(AT, ms(e.at()));
        item.put(DETAIL, s(e.detailJson()));
        item.put(Keys.EXPIRES_AT, n(e.at().plus(retention).getEpochSecond()));
        try {
            StoreFailures.call("log the event", () -> dynamo.putItem(p -> p.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException alreadyLogged) {
            // A replayed record: the event is there already.
        }
    }

    /** Newest first; {@code type} null for every type. */
    public List<Entry> recent(String team, String type, int limit) {
        Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":pk", s(Keys.team(team) + EVENTS_SUFFIX),
                ":prefix", s(PREFIX)));
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
                    .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                    .filterExpression(filterExpression)
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .scanIndexForward(false).limit(limit).exclusiveStartKey(from)));
            for (Map<String, AttributeValue> item : page.items()) {
                if (out.size() < limit) {
                    out.add(new Entry(Items.str(item, EVENT_ID), Items.str(item, TYPE), Items.instant(item, AT),
                            Items.str(item, DETAIL)));
                }
            }
            start = out.size() < limit && page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
                    ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }
}
