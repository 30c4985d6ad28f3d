package io.lifeline.engine;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The checks DynamoDB makes of a request's values, keys and items before it reads or writes anything, with its
 * messages. Limits are those of <a href=
 * "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html">Quotas in Amazon
 * DynamoDB</a>: 400 KB per item (names and values, "DynamoDB item sizes and formats"), partition key values up to
 * 2048 bytes, sort key values up to 1024 bytes.
 */
final class Checks {
    static final long MAX_ITEM = 400 * 1024;
    private static final String INVALID = "One or more parameter values were invalid: ";

    private Checks() {
    }

    /** Every value of a map of attributes (an item or ExpressionAttributeValues). */
    static void values(Map<String, AttributeValue> values) {
        if (values != null) {
            values.values().forEach(Checks::value);
        }
    }

    /** One value: one type set, numbers DynamoDB can hold, sets neither empty nor with duplicates. */
    static void value(AttributeValue v) {
        switch (Values.type(v)) {
            case "N" -> Values.number(v.n());
            case "SS" -> set(v.ss(), "string", v.ss());
            case "NS" -> {
                v.ns().forEach(Values::number);
                set(v.ns().stream().map(n -> Values.number(n).stripTrailingZeros()).toList(), "number", v.ns());
            }
            case "BS" -> set(v.bs(), "binary", v.bs());
            case "L" -> v.l().forEach(Checks::value);
            case "M" -> v.m().values().forEach(Checks::value);
            default -> {
            }
        }
    }

    private static void set(List<?> normal, String kind, List<?> shown) {
        if (normal.isEmpty()) {
            throw Errors.validation(INVALID + "An " + kind + " set  may not be empty");
        }
        if (new HashSet<>(normal).size() != normal.size()) {
            throw Errors.validation(INVALID + "Input collection " + shown + " contains duplicates.");
        }
    }

    /** A Key parameter: exactly the table's key attributes, of their declared types, within the size limits. */
    static void key(Table t, Map<String, AttributeValue> key) {
        if (key == null || key.size() != t.keyNames().size() || !key.keySet().containsAll(t.keyNames())) {
            throw Errors.validation("The provided key element does not match the schema");
        }
        for (String k : t.keyNames()) {
            AttributeValue v = key.get(k);
            if (!Values.type(v).equals(t.types.get(k))) {
                throw Errors.validation("The provided key element does not match the schema");
            }
        }
        keyValues(t, key);
    }

    private static void keyValues(Table t, Map<String, AttributeValue> item) {
        for (String k : t.keyNames()) {
            AttributeValue v = item.get(k);
            long size = v.s() != null ? Values.utf8(v.s()) : v.b() != null ? v.b().asByteArrayUnsafe().length : 1;
            if (size == 0) {
                throw Errors.validation("One or more parameter values are not valid. The AttributeValue for a key "
                        + "attribute cannot contain an empty " + (v.s() != null ? "string" : "binary") + " value. Key: "
                        + k);
            }
            if (k.equals(t.hash) && size > 2048) {
                throw Errors.validation(INVALID + "Size of hashkey has exceeded the maximum size limit of2048 bytes");
            }
            if (k.equals(t.range) && size > 1024) {
                throw Errors.validation(INVALID + "Aggregated size of all range keys has exceeded the size limit of "
                        + "1024 bytes");
            }
        }
    }

    /** An item to store: its keys present and typed, its index keys typed, its size within 400 KB. */
    static void item(Table t, Map<String, AttributeValue> item, boolean update) {
        for (String k : t.keyNames()) {
            AttributeValue v = item.get(k);
            if (v == null) {
                throw Errors.validation(INVALID + "Missing the key " + k + " in the item");
            }
            if (!Values.type(v).equals(t.types.get(k))) {
                throw Errors.validation(INVALID + "Type mismatch for key " + k + " expected: " + t.types.get(k)
                        + " actual: " + Values.type(v));
            }
        }
        keyValues(t, item);
        for (Table.Index ix : t.indexes.values()) {
            for (String k : ix.range == null ? List.of(ix.hash) : List.of(ix.hash, ix.range)) {
                AttributeValue v = item.get(k);
                if (v == null) {
                    continue;
                }
                String want = t.types.get(k);
                if (!Values.type(v).equals(want)) {
                    throw Errors.validation(INVALID + "Type mismatch for Index Key " + k + " Expected: " + want
                            + " Actual: " + Values.type(v) + " IndexName: " + ix.name);
                }
                if (v.s() != null && v.s().isEmpty() || v.b() != null && v.b().asByteArrayUnsafe().length == 0) {
                    throw Errors.validation(INVALID + "Index key attributes cannot contain an empty value. IndexName: "
                            + ix.name + ", IndexKey: " + k);
                }
            }
        }
        if (Values.itemSize(item) > MAX_ITEM) {
            throw Errors.validation(update ? "Item size to update has exceeded the maximum allowed size"
                    : "Item size has exceeded the maximum allowed size");
        }
    }
}
