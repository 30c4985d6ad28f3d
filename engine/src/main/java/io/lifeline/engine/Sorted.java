package io.lifeline.engine;

import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Items in DynamoDB's order: partitions by {@link Partition}, and within one, by sort key. A table's entries sort by
 * its sort key; an index's by the index's sort key, then the table's key (so entries with equal index keys stay
 * distinct and in a stable order).
 *
 * <p>Two kinds: {@link InMemory} (the engine without a data dir: tree maps of the SDK's objects, the fastest) and
 * {@link Stored} (a data dir: an on-disk B-tree whose cache alone is in memory, so the heap does not grow with the
 * items). Both answer the same entries in the same order.
 */
abstract class Sorted {
    /** Where an entry sorts within its partition. */
    record Position(Key first, Key second, Key third) implements Comparable<Position> {
        static final Position LOWEST = new Position(Key.NONE, Key.NONE, Key.NONE);

        @Override
        public int compareTo(Position o) {
            int c = first.compareTo(o.first);
            if (c == 0) {
                c = second.compareTo(o.second);
            }
            return c != 0 ? c : third.compareTo(o.third);
        }
    }

    /** One entry met by a scan: where it is, and the item. */
    record Entry(Partition partition, Position position, Map<String, AttributeValue> item) {
    }

    abstract Map<String, AttributeValue> get(Partition p, Position pos);

    abstract void put(Partition p, Position pos, Map<String, AttributeValue> item);

    abstract void remove(Partition p, Position pos);

    abstract long count();

    /**
     * The entries of one partition in sort order ({@code forward}) or reversed, strictly after {@code after} in that
     * direction (null: from the partition's first entry in that direction).
     */
    abstract Iterator<Entry> within(Partition p, Position after, boolean forward);

    /**
     * Every entry from partition {@code from} on, in scan order; within {@code from} itself only those after
     * {@code after} (null: all of them).
     */
    abstract Iterator<Entry> from(Partition from, Position after);

    /** The kind for an engine without a data dir: tree maps in memory. */
    static final class InMemory extends Sorted {
        /** Partitions in scan order, for Scan. */
        private final TreeMap<Partition, TreeMap<Position, Map<String, AttributeValue>>> partitions = new TreeMap<>();
        /** The same partitions by key, so a point read or write finds its partition without walking the tree. */
        private final HashMap<Partition, TreeMap<Position, Map<String, AttributeValue>>> byKey = new HashMap<>();
        private long count;

        @Override
        Map<String, AttributeValue> get(Partition p, Position pos) {
            TreeMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
            return part == null ? null : part.get(pos);
        }

        @Override
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

        @Override
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

        @Override
        long count() {
            return count;
        }

        @Override
        Iterator<Entry> within(Partition p, Position after, boolean forward) {
            NavigableMap<Position, Map<String, AttributeValue>> part = byKey.get(p);
            if (part == null) {
                return Collections.emptyIterator();
            }
            if (after != null) {
                part = forward ? part.tailMap(after, false) : part.headMap(after, false);
            }
            Iterator<Map.Entry<Position, Map<String, AttributeValue>>> it =
                    (forward ? part : part.descendingMap()).entrySet().iterator();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public Entry next() {
                    Map.Entry<Position, Map<String, AttributeValue>> e = it.next();
                    return new Entry(p, e.getKey(), e.getValue());
                }
            };
        }

        @Override
        Iterator<Entry> from(Partition from, Position after) {
            Iterator<Map.Entry<Partition, TreeMap<Position, Map<String, AttributeValue>>>> parts =
                    partitions.tailMap(from, true).entrySet().iterator();
            return new Iterator<>() {
                private Partition current;
                private Iterator<Map.Entry<Position, Map<String, AttributeValue>>> inPart =
                        Collections.emptyIterator();

                @Override
                public boolean hasNext() {
                    while (!inPart.hasNext() && parts.hasNext()) {
                        Map.Entry<Partition, TreeMap<Position, Map<String, AttributeValue>>> e = parts.next();
                        current = e.getKey();
                        NavigableMap<Position, Map<String, AttributeValue>> part = e.getValue();
                        if (after != null && current.equals(from)) {
                            part = part.tailMap(after, false);
                        }
                        inPart = part.entrySet().iterator();
                    }
                    return inPart.hasNext();
                }

                @Override
                public Entry next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    Map.Entry<Position, Map<String, AttributeValue>> e = inPart.next();
                    return new Entry(current, e.getKey(), e.getValue());
                }
            };
        }
    }
}
