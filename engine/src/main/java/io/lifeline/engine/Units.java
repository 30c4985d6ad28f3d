package io.lifeline.engine;

import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Capacity;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;

/**
 * Consumed capacity by AWS's published rules:
 * <ul>
 *   <li><a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html">
 *   DynamoDB read and write operations</a>: a write unit per 1 KB of the larger of the item before and after
 *   (rounded up, at least 1); a read unit per 4 KB (rounded up), half for an eventually consistent read; a Query or
 *   Scan sums the sizes of the items it read on a page and rounds the sum once; an item not found costs the minimum.
 *   </li>
 *   <li><a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html">Amazon
 *   DynamoDB Transactions</a>, "Capacity management for transactions": each action of TransactWriteItems costs
 *   twice its plain write (ConditionCheck included, priced as a write of the item it reads).</li>
 *   <li><a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html">Global secondary
 *   indexes</a>, "Provisioned throughput considerations": an index is written only when the item's index keys or
 *   projected attributes change; a changed index key is a delete and a put; each by the projected entry's size.</li>
 * </ul>
 * Item sizes are {@link Values#itemSize} ("DynamoDB item sizes and formats").
 */
final class Units {
    private final String table;
    private final ReturnConsumedCapacity mode;
    private double tableUnits;
    private final Map<String, Double> indexUnits = new LinkedHashMap<>();
    private final boolean read;

    Units(String table, ReturnConsumedCapacity mode, boolean read) {
        this.table = table;
        this.mode = mode == null ? ReturnConsumedCapacity.NONE : mode;
        this.read = read;
    }

    /** Write units for an item of {@code bytes}. */
    static double writeUnits(long bytes) {
        return Math.max(1, (bytes + 1023) / 1024);
    }

    /** Read units for {@code bytes} read in one go. */
    static double readUnits(long bytes, boolean consistent) {
        double units = Math.max(1, (bytes + 4095) / 4096);
        return consistent ? units : units / 2;
    }

    boolean wanted() {
        return mode != ReturnConsumedCapacity.NONE && mode != ReturnConsumedCapacity.UNKNOWN_TO_SDK_VERSION;
    }

    void addTable(double units) {
        tableUnits += units;
    }

    void addIndex(String index, double units) {
        if (units > 0) {
            indexUnits.merge(index, units, Double::sum);
        }
    }

    /** Adds a write of {@code item} over {@code old} (either may be null) to the table and its indexes. */
    void write(Table t, Map<String, AttributeValue> old, Map<String, AttributeValue> item, int factor) {
        if (!wanted()) {
            return;
        }
        long before = old == null ? 0 : Values.itemSize(old);
        long after = item == null ? 0 : Values.itemSize(item);
        addTable(factor * writeUnits(Math.max(before, after)));
        for (Table.Index ix : t.indexes.values()) {
            addIndex(ix.name, factor * indexWrite(t, ix, old, item));
        }
    }

    private static double indexWrite(Table t, Table.Index ix, Map<String, AttributeValue> old,
            Map<String, AttributeValue> item) {
        boolean wasIn = old != null && t.inIndex(ix, old);
        boolean isIn = item != null && t.inIndex(ix, item);
        if (!wasIn && !isIn) {
            return 0;
        }
        Map<String, AttributeValue> a = wasIn ? t.project(ix, old) : null;
        Map<String, AttributeValue> b = isIn ? t.project(ix, item) : null;
        if (!wasIn || !isIn) {
            return writeUnits(Values.itemSize(wasIn ? a : b));
        }
        boolean keyChanged = !Values.same(old.get(ix.hash), item.get(ix.hash))
                || ix.range != null && !Values.same(old.get(ix.range), item.get(ix.range));
        if (keyChanged) {
            return writeUnits(Values.itemSize(a)) + writeUnits(Values.itemSize(b));
        }
        if (sameItem(a, b)) {
            return 0;
        }
        return writeUnits(Math.max(Values.itemSize(a), Values.itemSize(b)));
    }

    private static boolean sameItem(Map<String, AttributeValue> a, Map<String, AttributeValue> b) {
        return Values.same(AttributeValue.fromM(a), AttributeValue.fromM(b));
    }

    /** The answer's ConsumedCapacity, or null when the request did not ask. */
    ConsumedCapacity result() {
        if (!wanted()) {
            return null;
        }
        double total = tableUnits + indexUnits.values().stream().mapToDouble(Double::doubleValue).sum();
        ConsumedCapacity.Builder b = ConsumedCapacity.builder().tableName(table).capacityUnits(total);
        if (read) {
            b.readCapacityUnits(total);
        } else {
            b.writeCapacityUnits(total);
        }
        if (mode == ReturnConsumedCapacity.INDEXES) {
            b.table(unit(tableUnits));
            if (!indexUnits.isEmpty()) {
                Map<String, Capacity> gsi = new LinkedHashMap<>();
                indexUnits.forEach((k, v) -> gsi.put(k, unit(v)));
                b.globalSecondaryIndexes(gsi);
            }
        }
        return b.build();
    }

    private Capacity unit(double units) {
        Capacity.Builder c =
                Capacity.builder().capacityUnits(units);
        return read ? c.readCapacityUnits(units).build() : c.writeCapacityUnits(units).build();
    }
}
