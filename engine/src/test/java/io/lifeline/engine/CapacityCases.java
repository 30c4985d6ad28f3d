package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * ConsumedCapacity by AWS's published rules. moto prices every request its own way, so on moto these cases only
 * print what it answered; the engine (and real DynamoDB) must give AWS's figures:
 * <ul>
 *   <li>sizes: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html</li>
 *   <li>units: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html</li>
 *   <li>transactions: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html</li>
 * </ul>
 */
interface CapacityCases extends Cases {
    private void expect(double aws, ConsumedCapacity got, String what) {
        assertNotNull(got, what + ": ConsumedCapacity was asked for");
        if (moto()) {
            System.out.printf("capacity %s: AWS's rules give %.1f, moto answered %s%n", what, aws, got.capacityUnits());
            return;
        }
        assertEquals(aws, got.capacityUnits(), 1e-9, what);
    }

    private ConsumedCapacity put(String t, Map<String, AttributeValue> item) {
        return db().putItem(r -> r.tableName(t).item(item).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL))
                .consumedCapacity();
    }

    @Test
    default void writesAreOneUnitPerKilobyteOfNamesAndValues() {
        String t = table();
        // pk:"a" 3 + sk:"1" 3 + "f" 1 + 1017 filler = 1024 bytes: one unit; one byte more: two.
        expect(1, put(t, map("pk", "a", "sk", "1", "f", "x".repeat(1017))), "put of 1,024 bytes");
        expect(2, put(t, map("pk", "a", "sk", "2", "f", "x".repeat(1018))), "put of 1,025 bytes");
        // a number's size: (significant digits + 1) / 2 + 1. "n" 1 + 12345 → 4 bytes; 1230000 → 3 (zeros trimmed).
        expect(1, put(t, map("pk", "a", "sk", "3", "n", n("1230000"), "f", "x".repeat(1013))), "3 digits");
        expect(2, put(t, map("pk", "a", "sk", "4", "n", n("12345"), "f", "x".repeat(1013))), "5 digits");
        ConsumedCapacity update = db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "2"))
                .updateExpression("REMOVE f").returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity();
        expect(2, update, "update priced by the larger of before and after");
    }

    @Test
    default void readsAreOneUnitPerFourKilobytesHalvedWhenEventuallyConsistent() {
        String t = table();
        put(t, map("pk", "a", "sk", "1", "f", "x".repeat(5000)));
        expect(2, db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).consistentRead(true)
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity(), "strong get of 5 KB");
        expect(1, db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity(), "eventual get of 5 KB");
        expect(0.5, db().getItem(r -> r.tableName(t).key(map("pk", "z", "sk", "1"))
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity(), "eventual get, no item");
    }

    @Test
    default void queryPagesAreSummedThenRounded() {
        String t = table();
        for (int i = 0; i < 10; i++) {
            // 3 + 4 ("s" + i + padding) + 1 + 992 = 1000 bytes each; 10,000 bytes: 3 units strong, 1.5 eventual.
            put(t, map("pk", "p", "sk", "s" + i, "f", "x".repeat(992)));
        }
        expect(1.5, db().query(r -> r.tableName(t).keyConditionExpression("pk = :p")
                .expressionAttributeValues(map(":p", "p")).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL))
                .consumedCapacity(), "eventual query of 10 x 1,000 bytes");
        expect(3, db().scan(r -> r.tableName(t).consistentRead(true)
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity(), "strong scan");
    }

    @Test
    default void transactionsCostTwice() {
        String t = table();
        List<TransactWriteItem> items = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Map<String, AttributeValue> item = map("pk", "k" + i, "sk", "1", "f", "x".repeat(1500));
            items.add(TransactWriteItem.builder().put(p -> p.tableName(t).item(item)).build());
        }
        List<ConsumedCapacity> got = db().transactWriteItems(r -> r.transactItems(items)
                .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)).consumedCapacity();
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"
                + " (ConsumedCapacity answered when ReturnConsumedCapacity is TOTAL)",
                () -> assertFalse(got == null || got.isEmpty(), "no ConsumedCapacity"));
        if (got != null && !got.isEmpty()) {
            expect(8, got.get(0), "two 1.5 KB puts in a transaction");
        }
    }

    @Test
    default void indexesAreWrittenWhenTheirKeysArePresent() {
        String t = table("S", "byTeam");
        ConsumedCapacity c = db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "tpk", "T", "tsk", "1"))
                .returnConsumedCapacity(ReturnConsumedCapacity.INDEXES)).consumedCapacity();
        expect(2, c, "a put that writes the table and its index");
        if (!moto()) {
            assertEquals(1, c.table().capacityUnits(), 1e-9);
            assertEquals(1, c.globalSecondaryIndexes().get("byTeam").capacityUnits(), 1e-9);
        }
        ConsumedCapacity plain = db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))
                .updateExpression("SET beat = :b").expressionAttributeValues(map(":b", n("1")))
                .returnConsumedCapacity(ReturnConsumedCapacity.INDEXES)).consumedCapacity();
        expect(1, plain, "an update that changes nothing the keys-only index holds");
    }
}
