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

    /**
     * One entry met by a scan: where it is, the item, and the item's size ({@link Values#itemSize}) when the kind
     * kept it (-1 when not).
     */
    record Entry(Partition partition, Position position, Map<String, AttributeValue> item, long size) {
        /** The item's size, kept or computed. */
        long bytes() {
            return size >= 0 ? size : Values.itemSize(item);
        }
    }

    abstract Map<String, AttributeValue> get(Partition p, Position pos);

    /** Stores the item; {@code size} is its {@link Values#itemSize} if the caller knows it (-1 if not). */
    abstract void put(Partition p, Position pos, Map<String, AttributeValue> item, long size);

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

    /**
     * The kind for an engine without a data dir: tree maps in memory, each item kept with its size, so a Scan or
     * Query page counts its bytes without walking every item again (sizing was most of a Scan's time).
     */
    static final class InMemory extends Sorted {
        /** An item and its size (-1: not known). */
        private record Held(Map<String, AttributeValue> item, long size) {
        }

        /** Partitions in scan order, for Scan. */
        private final TreeMap<Partition, TreeMap<Position, Held>> partitions = new TreeMap<>();
        /** The same partitions by key, so a point read or write finds its partition without walking the tree. */
        private final HashMap<Partition, TreeMap<Position, Held>> byKey = new HashMap<>();
        private long count;

        @Override
        Map<String, AttributeValue> get(Partition p, Position pos) {
            TreeMap<Position, Held> part = byKey.get(p);
            Held h = part == null ? null : part.get(pos);
            return h == null ? null : h.item();
        }

        @Override
        void put(Partition p, Position pos, Map<String, AttributeValue> item, long size) {
            TreeMap<Position, Held> part = byKey.get(p);
            if (part == null) {
                part = new TreeMap<>();
                byKey.put(p, part);
                partitions.put(p, part);
            }
            if (part.put(pos, new Held(item, size)) == null) {
                count++;
            }
        }

        @Override
        void remove(Partition p, Position pos) {
            TreeMap<Position, Held> part = byKey.get(p);
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
            NavigableMap<Position, Held> part = byKey.get(p);
            if (part == null) {
                return Collections.emptyIterator();
            }
            if (after != null) {
                part = forward ? part.tailMap(after, false) : part.headMap(after, false);
            }
            Iterator<Map.Entry<Position, Held>> it =
                    (forward ? part : part.descendingMap()).entrySet().iterator();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public Entry next() {
                    Map.Entry<Position, Held> e = it.next();
                    return new Entry(p, e.getKey(), e.getValue().item(), e.getValue().size());
                }
            };
        }

        @Override
        Iterator<Entry> from(Partition from, Position after) {
            Iterator<Map.Entry<Partition, TreeMap<Position, Held>>> parts =
                    partitions.tailMap(from, true).entrySet().iterator();
            return new Iterator<>() {
                private Partition current;
                /** Only the first partition met can be {@code from}: later ones need no comparing. */
                private boolean first = true;
                private Iterator<Map.Entry<Position, Held>> inPart =
                        Collections.emptyIterator();

                @Override
                public boolean hasNext() {
                    while (!inPart.hasNext() && parts.hasNext()) {
                        Map.Entry<Partition, TreeMap<Position, Held>> e = parts.next();
                        current = e.getKey();
                        NavigableMap<Position, Held> part = e.getValue();
                        if (first && after != null && current.equals(from)) {
                            part = part.tailMap(after, false);
                        }
                        first = false;
                        inPart = part.entrySet().iterator();
                    }
                    return inPart.hasNext();
                }

                @Override
                public Entry next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    Map.Entry<Position, Held> e = inPart.next();
                    return new Entry(current, e.getKey(), e.getValue().item(), e.getValue().size());
                }
            };
        }
    }
}
