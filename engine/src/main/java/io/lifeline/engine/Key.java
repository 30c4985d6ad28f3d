package io.lifeline.engine;

import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A key attribute's value (S, N or B) ordered as DynamoDB orders keys: numbers by value, strings and binaries by
 * their unsigned bytes. A table without a sort key uses {@link #NONE} for it.
 *
 * @param value the value, null only for {@link #NONE}
 */
record Key(AttributeValue value) implements Comparable<Key> {
    static final Key NONE = new Key(null);

    @Override
    public int compareTo(Key o) {
        if (value == null || o.value == null) {
            return value == null ? (o.value == null ? 0 : -1) : 1;
        }
        return Values.compare(value, o.value);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Key k)) {
            return false;
        }
        if (value != null && k.value != null && value.s() != null && value.s().equals(k.value.s())) {
            return true; // equal strings are equal keys: no need to order them
        }
        return compareTo(k) == 0;
    }

    @Override
    public int hashCode() {
        return value == null ? 0 : Values.keyHash(value);
    }
}
