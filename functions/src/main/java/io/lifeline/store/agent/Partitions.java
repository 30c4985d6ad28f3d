package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

/** Reads every item of one partition whose sort key has a prefix (a team's agents, a team's tasks), all pages. */
final class Partitions {
    private Partitions() {
    }

    /** {@code status} null reads them all; otherwise only items whose {@code status} attribute has that value. */
    static List<Map<String, AttributeValue>> withPrefix(DynamoDbClient dynamo, String table, String pk, String prefix,
                                                       String status, String what) {
        Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":pk", s(pk), ":prefix", s(prefix)));
        String filter = null;
        if (status != null) {
            names.put("#status", AgentItems.STATUS);
            values.put(":status", s(status));
            filter = "#status = :status";
        }
        QueryRequest request = QueryRequest.builder().tableName(table)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .filterExpression(filter)
                .expressionAttributeNames(names).expressionAttributeValues(values).build();
        return StoreFailures.call(what, () -> {
            List<Map<String, AttributeValue>> items = new ArrayList<>();
            dynamo.queryPaginator(request).items().forEach(items::add);
            return items;
        });
    }
}
