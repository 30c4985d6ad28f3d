package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/** TransactWriteItems, BatchWriteItem and BatchGetItem, with their limits and refusals. */
interface TransactionCases extends Cases {
    private static TransactWriteItem put(String t, Map<String, AttributeValue> item, String condition) {
        return TransactWriteItem.builder().put(p -> p.tableName(t).item(item).conditionExpression(condition)).build();
    }

    private Map<String, AttributeValue> read(String t, String pk) {
        return db().getItem(r -> r.tableName(t).key(map("pk", pk, "sk", "1")).consistentRead(true)).item();
    }

    @Test
    default void allOrNothingWithCancellationReasons() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", n("1"))));
        db().putItem(r -> r.tableName(t).item(map("pk", "b", "sk", "1", "v", n("5"))));
        TransactWriteItem move = TransactWriteItem.builder().update(u -> u.tableName(t).key(map("pk", "a", "sk", "1"))
                .updateExpression("SET v = v - :one").conditionExpression("v >= :one")
                .expressionAttributeValues(map(":one", n("1")))).build();
        TransactWriteItem receive = TransactWriteItem.builder().update(u -> u.tableName(t)
                .key(map("pk", "b", "sk", "1")).updateExpression("SET v = v + :one")
                .expressionAttributeValues(map(":one", n("1")))).build();
        db().transactWriteItems(r -> r.transactItems(move, receive));
        assertEquals("0", read(t, "a").get("v").n());
        assertEquals("6", read(t, "b").get("v").n());
        TransactWriteItem check = TransactWriteItem.builder().conditionCheck(c -> c.tableName(t)
                .key(map("pk", "a", "sk", "1")).conditionExpression("v >= :one")
                .expressionAttributeValues(map(":one", n("1")))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)).build();
        TransactionCanceledException e = assertThrows(TransactionCanceledException.class,
                () -> db().transactWriteItems(r -> r.transactItems(receive, check)));
        assertEquals("TransactionCanceledException", e.awsErrorDetails().errorCode());
        assertEquals(List.of("None", "ConditionalCheckFailed"),
                e.cancellationReasons().stream().map(c -> c.code()).toList());
        assertEquals("0", e.cancellationReasons().get(1).item().get("v").n(), "the item, when asked");
        assertEquals("6", read(t, "b").get("v").n(), "nothing of a cancelled transaction is written");
    }

    @Test
    default void aConflictingEarlierWriteCancelsTheTransaction() {
        String t = table();
        db().transactWriteItems(r -> r.transactItems(put(t, map("pk", "a", "sk", "1"), "attribute_not_exists(pk)"),
                put(t, map("pk", "b", "sk", "1"), "attribute_not_exists(pk)")));
        TransactionCanceledException e = assertThrows(TransactionCanceledException.class,
                () -> db().transactWriteItems(r -> r.transactItems(put(t, map("pk", "c", "sk", "1"),
                        "attribute_not_exists(pk)"), put(t, map("pk", "b", "sk", "1"), "attribute_not_exists(pk)"))));
        assertEquals("ConditionalCheckFailed", e.cancellationReasons().get(1).code());
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "c", "sk", "1"))).hasItem());
    }

    @Test
    default void aHundredActionsAtMostAndOneActionPerItem() {
        String t = table();
        List<TransactWriteItem> hundred = new ArrayList<>();
        for (int i = 0; i < 101; i++) {
            hundred.add(put(t, map("pk", "k" + i, "sk", "1"), null));
        }
        DynamoDbException tooMany = assertThrows(DynamoDbException.class,
                () -> db().transactWriteItems(r -> r.transactItems(hundred)));
        assertEquals("ValidationException", tooMany.awsErrorDetails().errorCode());
        db().transactWriteItems(r -> r.transactItems(hundred.subList(0, 100)));
        assertEquals(100, db().scan(r -> r.tableName(t)).count());
        DynamoDbException twice = assertThrows(DynamoDbException.class, () -> db().transactWriteItems(r ->
                r.transactItems(put(t, map("pk", "x", "sk", "1"), null), put(t, map("pk", "x", "sk", "1"), null))));
        assertEquals("ValidationException", twice.awsErrorDetails().errorCode());
    }

    @Test
    default void batchWriteTakesTwentyFiveAndBatchGetReadsThem() {
        String t = table();
        List<WriteRequest> puts = new ArrayList<>();
        for (int i = 0; i < 26; i++) {
            int k = i;
            puts.add(WriteRequest.builder().putRequest(p -> p.item(map("pk", "k" + k, "sk", "1", "v", n("" + k))))
                    .build());
        }
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html"
                + " (more than 25 requests in the batch: ValidationException)", () -> assertThrows(
                        DynamoDbException.class, () -> db().batchWriteItem(r -> r.requestItems(Map.of(t, puts)))));
        if (moto()) {
            db().batchWriteItem(r -> r.requestItems(Map.of(t, List.of(WriteRequest.builder()
                    .deleteRequest(d -> d.key(map("pk", "k25", "sk", "1"))).build()))));
        }
        db().batchWriteItem(r -> r.requestItems(Map.of(t, puts.subList(0, 25))));
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            keys.add(map("pk", "k" + i, "sk", "1"));
        }
        var got = db().batchGetItem(r -> r.requestItems(Map.of(t, KeysAndAttributes.builder().keys(keys)
                .projectionExpression("pk, v").build())));
        assertEquals(25, got.responses().get(t).size(), "keys with no item answer nothing");
        assertEquals(2, got.responses().get(t).get(0).size());
        db().batchWriteItem(r -> r.requestItems(Map.of(t, List.of(WriteRequest.builder()
                .deleteRequest(d -> d.key(map("pk", "k0", "sk", "1"))).build()))));
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "k0", "sk", "1"))).hasItem());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html"
                + " (multiple operations on the same item in one request: ValidationException)",
                () -> assertThrows(DynamoDbException.class, () -> db().batchWriteItem(r -> r.requestItems(
                        Map.of(t, List.of(puts.get(1), puts.get(1)))))));
    }
}
