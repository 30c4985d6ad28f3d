package io.lifeline.store.dynamo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;

/** BatchGetItem over any number of keys of one table: chunks of 100, unprocessed keys asked again a few times. */
public final class BatchReads {
    /** BatchGetItem's limit of keys per call. */
    static final int MAX_KEYS = 100;
    /** Calls for one chunk before unprocessed keys (the store is busy) answer 429 THROTTLED. */
    static final int ROUNDS = 4;

    private BatchReads() {
    }

    /**
     * The items found for {@code keys} (missing ones left out, in no particular order); {@code shape} adds the
     * read's options (consistency, projection) to each chunk's request.
     */
    public static List<Map<String, AttributeValue>> get(DynamoDbClient dynamo, String table,
                                                 List<Map<String, AttributeValue>> keys,
                                                 UnaryOperator<KeysAndAttributes.Builder> shape, String what) {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        for (int from = 0; from < keys.size(); from += MAX_KEYS) {
            KeysAndAttributes wanted = shape.apply(KeysAndAttributes.builder()
                    .keys(keys.subList(from, Math.min(keys.size(), from + MAX_KEYS)))).build();
            Map<String, KeysAndAttributes> request = Map.of(table, wanted);
            for (int round = 0; !request.isEmpty(); round++) {
                if (round == ROUNDS) {
                    throw StoreFailures.throttled(what, null);
                }
                Map<String, KeysAndAttributes> ask = request;
                BatchGetItemResponse r = StoreFailures.call(what, () -> dynamo.batchGetItem(b -> b.requestItems(ask)));
                items.addAll(r.responses().getOrDefault(table, List.of()));
                request = r.hasUnprocessedKeys() ? r.unprocessedKeys() : Map.of();
            }
        }
        return items;
    }
}
