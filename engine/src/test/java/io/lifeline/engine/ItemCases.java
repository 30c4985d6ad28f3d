package io.lifeline.engine;

import static io.lifeline.engine.Cases.b;
import static io.lifeline.engine.Cases.l;
import static io.lifeline.engine.Cases.m;
import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static io.lifeline.engine.Cases.s;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/** PutItem, GetItem, DeleteItem, the data types, numbers and table operations. */
interface ItemCases extends Cases {
    String DATA_TYPES = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html";

    default Map<String, AttributeValue> get(String t, String pk, String sk) {
        return db().getItem(r -> r.tableName(t).key(map("pk", pk, "sk", sk)).consistentRead(true)).item();
    }

    @Test
    default void everyTypeRoundTrips() {
        String t = table();
        Map<String, AttributeValue> item = map("pk", "a", "sk", "1", "s", "", "n", n("-12.5"), "b", b(1, 2, 0xff),
                "bool", AttributeValue.fromBool(true), "nul", AttributeValue.fromNul(true),
                "m", m("x", l(s("y"), n("2"))), "l", l(), "ss", AttributeValue.fromSs(List.of("p", "q")),
                "ns", AttributeValue.fromNs(List.of("1", "2.5")), "bs", AttributeValue.fromBs(List.of(
                        b(1).b(), b(2).b())));
        db().putItem(r -> r.tableName(t).item(item));
        Map<String, AttributeValue> got = get(t, "a", "1");
        assertEquals(item.keySet(), got.keySet());
        for (String k : item.keySet()) {
            assertTrue(Values.same(item.get(k), got.get(k)), k + ": " + got.get(k));
        }
        assertEquals("", got.get("s").s(), "an empty string in a non-key attribute is kept");
    }

    @Test
    default void getOfAMissingItemAnswersNoItem() {
        String t = table();
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "x", "sk", "y"))).hasItem());
    }

    @Test
    default void thirtyEightDigitsAreKeptAndAThirtyNinthIsRefused() {
        String t = table();
        String big = "12345678901234567890123456789012345678";
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "n", n(big), "tiny", n("1E-130"),
                "huge", n("9.9999999999999999999999999999999999999E+125"))));
        Map<String, AttributeValue> got = get(t, "a", "1");
        assertEquals(big, got.get("n").n());
        assertEquals(0, new BigDecimal(got.get("huge").n()).compareTo(
                new BigDecimal("9.9999999999999999999999999999999999999E+125")));
        awsDocumented(DATA_TYPES + " (up to 38 digits of precision; exceeding this results in an exception)", () -> {
            DynamoDbException e = assertThrows(DynamoDbException.class, () -> db().putItem(r -> r.tableName(t)
                    .item(map("pk", "a", "sk", "2", "n", n(big + "9")))));
            assertEquals("ValidationException", e.awsErrorDetails().errorCode());
        });
        awsDocumented(DATA_TYPES + " (positive range 1E-130 to 9.99...E+125)", () -> {
            assertThrows(DynamoDbException.class, () -> db().putItem(r -> r.tableName(t)
                    .item(map("pk", "a", "sk", "3", "n", n("1E+126")))));
            assertThrows(DynamoDbException.class, () -> db().putItem(r -> r.tableName(t)
                    .item(map("pk", "a", "sk", "4", "n", n("1E-131")))));
        });
        assertThrows(DynamoDbException.class, () -> db().putItem(r -> r.tableName(t)
                .item(map("pk", "a", "sk", "5", "n", n("twelve")))));
    }

    @Test
    default void numbersComeBackTrimmed() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "n", n("001.500"))));
        String got = get(t, "a", "1").get("n").n();
        assertEquals(0, new BigDecimal(got).compareTo(new BigDecimal("1.5")));
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html"
                + " (leading and trailing zeroes are trimmed)", () -> assertEquals("1.5", got));
    }

    @Test
    default void conditionalPutRefusesAnExistingItemAndReturnsItWhenAsked() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", "old")));
        ConditionalCheckFailedException e = assertThrows(ConditionalCheckFailedException.class,
                () -> db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", "new"))
                        .conditionExpression("attribute_not_exists(pk)")
                        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)));
        assertEquals("ConditionalCheckFailedException", e.awsErrorDetails().errorCode());
        assertTrue(e.hasItem(), "the item as it was, when asked");
        assertEquals("old", e.item().get("v").s());
        assertEquals("old", get(t, "a", "1").get("v").s());
        ConditionalCheckFailedException quiet = assertThrows(ConditionalCheckFailedException.class,
                () -> db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1"))
                        .conditionExpression("attribute_not_exists(pk)")));
        assertFalse(quiet.hasItem(), "no item unless asked");
    }

    @Test
    default void putAndDeleteReturnTheOldItem() {
        String t = table();
        assertFalse(db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", "1"))
                .returnValues(ReturnValue.ALL_OLD)).hasAttributes());
        assertEquals("1", db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", "2"))
                .returnValues(ReturnValue.ALL_OLD)).attributes().get("v").s());
        assertEquals("2", db().deleteItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))
                .returnValues(ReturnValue.ALL_OLD)).attributes().get("v").s());
        assertTrue(get(t, "a", "1") == null || get(t, "a", "1").isEmpty());
        assertThrows(DynamoDbException.class, () -> db().putItem(r -> r.tableName(t)
                .item(map("pk", "a", "sk", "1")).returnValues(ReturnValue.ALL_NEW)));
    }

    @Test
    default void conditionalDelete() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", n("3"))));
        assertThrows(ConditionalCheckFailedException.class, () -> db().deleteItem(r -> r.tableName(t)
                .key(map("pk", "a", "sk", "1")).conditionExpression("v > :x")
                .expressionAttributeValues(map(":x", n("3")))));
        db().deleteItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).conditionExpression("v >= :x")
                .expressionAttributeValues(map(":x", n("3"))));
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))).hasItem());
    }

    @Test
    default void tablesAreCreatedDescribedAndDeleted() {
        String t = table("S", "byTeam");
        TableDescription d = db().describeTable(r -> r.tableName(t)).table();
        assertEquals(t, d.tableName());
        assertEquals("ACTIVE", d.tableStatusAsString());
        assertEquals(1, d.globalSecondaryIndexes().size());
        assertEquals("byTeam", d.globalSecondaryIndexes().get(0).indexName());
        assertNotNull(d.creationDateTime());
        assertThrows(DynamoDbException.class, () -> db().createTable(r -> r.tableName(t)
                .billingMode("PAY_PER_REQUEST")
                .attributeDefinitions(a -> a.attributeName("pk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH"))));
        db().deleteTable(r -> r.tableName(t));
        DynamoDbException gone = assertThrows(DynamoDbException.class, () -> db().describeTable(r -> r.tableName(t)));
        assertEquals("ResourceNotFoundException", gone.awsErrorDetails().errorCode());
        DynamoDbException noTable = assertThrows(DynamoDbException.class,
                () -> db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))));
        assertEquals("ResourceNotFoundException", noTable.awsErrorDetails().errorCode());
    }
}
