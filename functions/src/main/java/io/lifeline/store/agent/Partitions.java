package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.Cursors;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.support.Page;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * Reads the items of one partition whose sort key has a prefix (a team's tasks, a team's keys): all of them, or a page
 * at a time ({@link #page}).
 */
public final class Partitions {
    private Partitions() {
    }

    /** {@code status} null reads them all; otherwise only items whose {@code status} attribute has that value. */
    public static List<Map<String, AttributeValue>> withPrefix(DynamoDbClient dynamo, String table, String pk, String prefix,
                                                       String status, String what) {
        QueryRequest request = query(table, pk, prefix, status).build();
        return StoreFailures.call(what, () -> {
            List<Map<String, AttributeValue>> items = new ArrayList<>();
            dynamo.queryPaginator(request).items().forEach(items::add);
            return items;
        });
    }

    /** Queries per page at most: a filter that matches few items cannot make one page read the whole partition. */
    private static final int MAX_QUERIES = 8;

    /**
     * A page of at most {@code limit} of the team's items under {@code prefix} (in sort-key order), from {@code cursor}
     * (null: the first page; refused 400 INVALID_QUERY when it was not issued for this team, {@code list} and
     * {@code status}), only those whose {@code status} attribute is {@code status} when it is not null. Each Query
     * asks one item more than the page still needs, so the last page says so.
     */
    public static Page<Map<String, AttributeValue>> page(DynamoDbClient dynamo, String table, String team, String prefix,
                                                 String list, String status, int limit, String cursor, String what) {
        String pk = Keys.team(team);
        Map<String, AttributeValue> start = cursor == null ? null : Map.of(Keys.PK, s(pk), Keys.SK,
                s(prefix + Cursors.decode(cursor, list, team, status, 1).get(0)));
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        for (int q = 0; q < MAX_QUERIES && items.size() <= limit && (q == 0 || start != null); q++) {
            QueryRequest request = query(table, pk, prefix, status).exclusiveStartKey(start)
                    .limit(limit + 1 - items.size()).build();
            QueryResponse r = StoreFailures.call(what, () -> dynamo.query(request));
            items.addAll(r.items());
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        }
        String next = null;
        if (items.size() > limit) {
            items = items.subList(0, limit);
            next = Cursors.encode(list, team, status, Keys.idAfter(prefix, Items.str(items.get(limit - 1), Keys.SK)));
        } else if (start != null) {
            next = Cursors.encode(list, team, status, Keys.idAfter(prefix, Items.str(start, Keys.SK)));
        }
        return new Page<>(items, next);
    }

    private static QueryRequest.Builder query(String table, String pk, String prefix, String status) {
        Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":pk", s(pk), ":prefix", s(prefix)));
        String filter = null;
        if (status != null) {
            names.put("#status", AgentItems.STATUS);
            values.put(":status", s(status));
            filter = "#status = :status";
        }
        return QueryRequest.builder().tableName(table)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .filterExpression(filter)
                .expressionAttributeNames(names).expressionAttributeValues(values);
    }
}
