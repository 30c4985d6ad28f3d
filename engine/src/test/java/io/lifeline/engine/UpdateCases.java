package io.lifeline.engine;

import static io.lifeline.engine.Cases.l;
import static io.lifeline.engine.Cases.m;
import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static io.lifeline.engine.Cases.names;
import static io.lifeline.engine.Cases.s;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;

/** UpdateItem: SET, REMOVE, ADD, DELETE, nested paths, functions, ReturnValues and conditions. */
interface UpdateCases extends Cases {
    private Map<String, AttributeValue> update(String t, String expr, Map<String, String> names,
            Map<String, AttributeValue> values, ReturnValue rv) {
        return db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression(expr)
                .expressionAttributeNames(names).expressionAttributeValues(values).returnValues(rv)).attributes();
    }

    @Test
    default void setCreatesTheItemAndReturnValuesAnswerEachForm() {
        String t = table();
        Map<String, AttributeValue> created = update(t, "SET v = :one, w = :w", null, map(":one", n("1"), ":w", "x"),
                ReturnValue.ALL_NEW);
        assertEquals(map("pk", "a", "sk", "1", "v", n("1"), "w", "x").keySet(), created.keySet());
        assertEquals(Map.of("v", n("1")), update(t, "SET v = v + :one", null, map(":one", n("1")),
                ReturnValue.UPDATED_OLD));
        assertEquals(Map.of("v", n("3")), update(t, "SET v = v + :one", null, map(":one", n("1")),
                ReturnValue.UPDATED_NEW));
        Map<String, AttributeValue> old = update(t, "REMOVE w", null, null, ReturnValue.ALL_OLD);
        assertEquals("x", old.get("w").s());
        assertTrue(update(t, "SET v = :one", null, map(":one", n("1")), ReturnValue.NONE) == null
                || update(t, "SET v = :one", null, map(":one", n("1")), ReturnValue.NONE).isEmpty());
    }

    @Test
    default void setReadsTheItemAsItWasBeforeTheUpdate() {
        String t = table();
        update(t, "SET a = :one, b = :two", null, map(":one", n("1"), ":two", n("2")), ReturnValue.NONE);
        Map<String, AttributeValue> now = update(t, "SET a = b, b = a", null, null, ReturnValue.ALL_NEW);
        assertEquals("2", now.get("a").n());
        assertEquals("1", now.get("b").n());
    }

    @Test
    default void nestedPathsListsAndMaps() {
        String t = table();
        update(t, "SET doc = :d", null, map(":d", m("lst", l(m("c", n("1")), m("c", n("2"))), "nest", m())),
                ReturnValue.NONE);
        Map<String, AttributeValue> now = update(t, "SET doc.lst[1].c = :v, doc.nest.k = :k, doc.lst[9] = :end",
                null, map(":v", n("20"), ":k", "kv", ":end", m("c", n("3"))), ReturnValue.ALL_NEW);
        List<AttributeValue> list = now.get("doc").m().get("lst").l();
        assertEquals(3, list.size(), "an index past the end appends");
        assertEquals("20", list.get(1).m().get("c").n());
        assertEquals("kv", now.get("doc").m().get("nest").m().get("k").s());
        Map<String, AttributeValue> removed = update(t, "REMOVE doc.lst[0], doc.lst[2]", null, null,
                ReturnValue.ALL_NEW);
        assertEquals(1, removed.get("doc").m().get("lst").l().size(), "indexes name the original list's elements");
        assertEquals("20", removed.get("doc").m().get("lst").l().get(0).m().get("c").n());
        DynamoDbException e = assertThrows(DynamoDbException.class, () -> update(t, "SET nope.deeper = :v", null,
                map(":v", n("1")), ReturnValue.NONE));
        assertEquals("ValidationException", e.awsErrorDetails().errorCode());
        Map<String, AttributeValue> updatedNew = update(t, "SET doc.nest.k = :k", null, map(":k", "k2"),
                ReturnValue.UPDATED_NEW);
        assertEquals("k2", updatedNew.get("doc").m().get("nest").m().get("k").s());
        assertEquals(Set.of("nest"), updatedNew.get("doc").m().keySet(), "only the updated path comes back");
    }

    @Test
    default void functionsIfNotExistsAndListAppend() {
        String t = table();
        update(t, "SET c = if_not_exists(c, :zero) + :one, l = list_append(if_not_exists(l, :empty), :x)", null,
                map(":zero", n("0"), ":one", n("1"), ":empty", l(), ":x", l(s("a"))), ReturnValue.NONE);
        Map<String, AttributeValue> now = update(t, "SET c = if_not_exists(c, :zero) + :one, l = list_append(:y, l)",
                null, map(":zero", n("0"), ":one", n("1"), ":y", l(s("b"))), ReturnValue.ALL_NEW);
        assertEquals("2", now.get("c").n());
        assertEquals(List.of(s("b"), s("a")), now.get("l").l());
        Map<String, AttributeValue> minus = update(t, "SET c = c - :ten", null, map(":ten", n("10")),
                ReturnValue.UPDATED_NEW);
        assertEquals("-8", minus.get("c").n());
    }

    @Test
    default void addAndDeleteOnNumbersAndSets() {
        String t = table();
        update(t, "ADD c :five, tags :ab, nums :ns", null, map(":five", n("5"), ":ab",
                AttributeValue.fromSs(List.of("a", "b")), ":ns", AttributeValue.fromNs(List.of("1", "2"))),
                ReturnValue.NONE);
        Map<String, AttributeValue> now = update(t, "ADD c :five, tags :bc DELETE nums :one", null,
                map(":five", n("5"), ":bc", AttributeValue.fromSs(List.of("b", "c")), ":one",
                        AttributeValue.fromNs(List.of("1"))), ReturnValue.ALL_NEW);
        assertEquals("10", now.get("c").n());
        assertEquals(Set.of("a", "b", "c"), new HashSet<>(now.get("tags").ss()));
        assertEquals(List.of("2"), now.get("nums").ns());
        Map<String, AttributeValue> gone = update(t, "DELETE nums :two", null,
                map(":two", AttributeValue.fromNs(List.of("2"))), ReturnValue.ALL_NEW);
        assertFalse(gone.containsKey("nums"), "a set emptied by DELETE is removed");
        assertThrows(DynamoDbException.class, () -> update(t, "ADD tags :s", null, map(":s", "x"),
                ReturnValue.NONE));
        assertThrows(DynamoDbException.class, () -> update(t, "ADD c :s", null,
                map(":s", AttributeValue.fromSs(List.of("x"))), ReturnValue.NONE));
    }

    @Test
    default void reservedWordsNeedAName() {
        String t = table();
        DynamoDbException e = assertThrows(DynamoDbException.class, () -> update(t, "SET status = :s", null,
                map(":s", "ok"), ReturnValue.NONE));
        assertEquals("ValidationException", e.awsErrorDetails().errorCode());
        assertTrue(e.awsErrorDetails().errorMessage().contains("reserved keyword"), e.getMessage());
        assertEquals("ok", update(t, "SET #s = :s", names("#s", "status"), map(":s", "ok"), ReturnValue.ALL_NEW)
                .get("status").s());
    }

    @Test
    default void conditionalUpdateIsAtomicOnItsItemAndAnswersTheOldItem() {
        String t = table();
        update(t, "SET #s = :ready", names("#s", "status"), map(":ready", "ready"), ReturnValue.NONE);
        ConditionalCheckFailedException e = assertThrows(ConditionalCheckFailedException.class,
                () -> db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET #s = :d")
                        .conditionExpression("#s IN (:w, :x)").expressionAttributeNames(names("#s", "status"))
                        .expressionAttributeValues(map(":d", "dead", ":w", "working", ":x", "stale"))
                        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)));
        assertEquals("ready", e.item().get("status").s());
        db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET #s = :d")
                .conditionExpression("#s IN (:w, :x, :r)").expressionAttributeNames(names("#s", "status"))
                .expressionAttributeValues(map(":d", "dead", ":w", "working", ":x", "stale", ":r", "ready")));
        assertThrows(ConditionalCheckFailedException.class, () -> db().updateItem(r -> r.tableName(t)
                .key(map("pk", "zz", "sk", "1")).updateExpression("SET v = :v").conditionExpression("attribute_exists(pk)")
                .expressionAttributeValues(map(":v", n("1")))));
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "zz", "sk", "1"))).hasItem(),
                "a refused update creates nothing");
    }

    @Test
    default void updateRefusesKeysOverlapsAndMissingOperands() {
        String t = table();
        assertThrows(DynamoDbException.class, () -> update(t, "SET pk = :v", null, map(":v", "b"), ReturnValue.NONE));
        assertThrows(DynamoDbException.class, () -> update(t, "SET a = :v, a.b = :v", null, map(":v", "b"),
                ReturnValue.NONE));
        assertThrows(DynamoDbException.class, () -> update(t, "SET a = absent + :v", null, map(":v", n("1")),
                ReturnValue.NONE));
        assertThrows(DynamoDbException.class, () -> update(t, "SET a = size(b)", null, null, ReturnValue.NONE));
    }
}
