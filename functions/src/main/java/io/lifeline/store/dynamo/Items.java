package io.lifeline.store.dynamo;

import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Small conversions between item attributes and Java values. Times are stored as epoch milliseconds. */
public final class Items {
    private Items() {
    }

    public static AttributeValue s(String value) {
        return AttributeValue.fromS(value);
    }

    public static AttributeValue n(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }

    public static AttributeValue ms(Instant at) {
        return n(at.toEpochMilli());
    }

    public static String str(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null ? null : v.s();
    }

    public static Long num(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? null : Long.parseLong(v.n());
    }

    public static long num(Map<String, AttributeValue> item, String name, long fallback) {
        Long v = num(item, name);
        return v == null ? fallback : v;
    }

    public static Instant instant(Map<String, AttributeValue> item, String name) {
        Long v = num(item, name);
        return v == null ? null : Instant.ofEpochMilli(v);
    }
}
