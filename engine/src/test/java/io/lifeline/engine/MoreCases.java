package io.lifeline.engine;

import static io.lifeline.engine.Cases.l;
import static io.lifeline.engine.Cases.m;
import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static io.lifeline.engine.Cases.s;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.Select;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** Nested projections, an index following its items' key changes, and deletes and checks in transactions. */
interface MoreCases extends Cases {
    @Test
    default void projectionsOfNestedPaths() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "doc", m("x", n("1"), "y", n("2"),
                "lst", l(s("p"), s("q"), s("r"))), "top", "t")));
        Map<String, AttributeValue> got = db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))
                .projectionExpression("doc.y, doc.lst[2], doc.lst[0], #t")
                .expressionAttributeNames(Cases.names("#t", "top"))).item();
        assertEquals(Set.of("doc", "top"), got.keySet());
        assertEquals(Set.of("y", "lst"), got.get("doc").m().keySet());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                + "Expressions.ProjectionExpressions.html (each projected list element is returned; moto keeps one)",
                () -> assertEquals(List.of(s("p"), s("r")), got.get("doc").m().get("lst").l(),
                        "list elements in index order"));
        awsDocumented("AWS answers \"Invalid ProjectionExpression: Two document paths overlap with each other\" "
                + "(ValidationException)", () -> assertThrows(DynamoDbException.class, () -> db().getItem(r ->
                        r.tableName(t).key(map("pk", "a", "sk", "1")).projectionExpression("doc, doc.y"))));
    }

    @Test
    default void anIndexFollowsItsItemsKeyChanges() {
        String t = table("S", "byTeam");
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "tpk", "T1", "tsk", "a")));
        db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET tpk = :t")
                .expressionAttributeValues(map(":t", "T2")));
        assertEquals(0, queryIndex(t, "T1").count());
        assertEquals(1, queryIndex(t, "T2").count());
        db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("REMOVE tsk"));
        assertEquals(0, queryIndex(t, "T2").count(), "an item without the index's sort key leaves the index");
        db().deleteItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")));
        assertEquals(0, db().scan(r -> r.tableName(t).indexName("byTeam")).count());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html (an index key "
                + "attribute's type must match the index's key schema)", () -> {
                    DynamoDbException wrongType = assertThrows(DynamoDbException.class, () -> db().putItem(r ->
                            r.tableName(t).item(map("pk", "b", "sk", "1", "tpk", n("1")))));
                    assertEquals("ValidationException", wrongType.awsErrorDetails().errorCode());
                });
    }

    @Test
    default void aKeysOnlyIndexCannotAnswerEveryAttributeAndSizeCountsCharacters() {
        String t = table("S", "byTeam");
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html (Select: "
                + "global secondary index queries cannot fetch attributes from the parent table)", () -> {
                    DynamoDbException e = assertThrows(DynamoDbException.class, () -> db().query(r -> r.tableName(t)
                            .indexName("byTeam").keyConditionExpression("tpk = :t").select(Select.ALL_ATTRIBUTES)
                            .expressionAttributeValues(map(":t", "T"))));
                    assertEquals("ValidationException", e.awsErrorDetails().errorCode());
                });
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "word", "h\u00e9llo")));
        assertEquals(1, db().scan(r -> r.tableName(t).filterExpression("size(word) = :five")
                .expressionAttributeValues(map(":five", n("5")))).count(), "5 characters, 6 UTF-8 bytes");
    }

    private QueryResponse queryIndex(String t, String team) {
        return db().query(r -> r.tableName(t).indexName("byTeam").keyConditionExpression("tpk = :t")
                .expressionAttributeValues(map(":t", team)));
    }

    @Test
    default void transactionsDeleteAndCheckMissingItems() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1")));
        TransactWriteItem delete = TransactWriteItem.builder().delete(d -> d.tableName(t)
                .key(map("pk", "a", "sk", "1")).conditionExpression("attribute_exists(pk)")).build();
        TransactWriteItem absent = TransactWriteItem.builder().conditionCheck(c -> c.tableName(t)
                .key(map("pk", "b", "sk", "1")).conditionExpression("attribute_not_exists(pk)")).build();
        db().transactWriteItems(r -> r.transactItems(delete, absent));
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))).hasItem());
        TransactionCanceledException again = assertThrows(TransactionCanceledException.class,
                () -> db().transactWriteItems(r -> r.transactItems(delete, absent)));
        assertEquals(List.of("ConditionalCheckFailed", "None"),
                again.cancellationReasons().stream().map(c -> c.code()).toList());
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "b", "sk", "1"))).hasItem(),
                "a ConditionCheck writes nothing");
    }
}
