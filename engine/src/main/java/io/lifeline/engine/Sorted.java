package io.lifeline.engine;

import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Items in DynamoDB's order: partitions by {@link Partition}, and within one, by sort key. A table's entries sort by
 * its sort key; an index's by the index's sort key, then the table's key (so entries with equal index keys stay
 * distinct and in a stable order).
 */
final class Sorted {
    /** Where an entry sorts within its partition. */
    record Position(Key first, Key second, Key third) implements Comparable<Position> {
        @Override
        public int compareTo(Position o) {
            int c = first.compareTo(o.first);
            if (c == 0) {
                c = second.compareTo(o.second);
            }
            return c != 0 ? c : third.compareTo(o.third);
        }
    }

    /** Partitions in scan order, for Scan. */
    final TreeMap<Partition, TreeMap<Position, Map<String, AttributeValue>>> partitions = new TreeMap<>();
    /** The same partitions by key, so a point read or write finds its partition without walking the tree. */
    private final HashMap<Partition, TreeMap<Position, Map<String, AttributeValue>>> byKey = new HashMap<>();
    private long count;

    Map<String, AttributeValue> get(Partition p, Position pos) {
        TreeMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
        return part == null ? null : part.get(pos);
    }

    void put(Partition p, Position pos, Map<String, AttributeValue> item) {
        TreeMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
        if (part == null) {
            part = new TreeMap<>();
            byKey.put(p, part);
            partitions.put(p, part);
        }
        if (part.put(pos, item) == null) {
            count++;
        }
    }

    void remove(Partition p, Position pos) {
        TreeMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
        if (part != null && part.remove(pos) != null) {
            count--;
            if (part.isEmpty()) {
                byKey.remove(p);
                partitions.remove(p);
            }
        }
    }

    NavigableMap<Position, Map<String, AttributeValue>> partition(Partition p) {
        TreeMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
        return part == null ? new TreeMap<>() : part;
    }

    long count() {
        return count;
    }
}
