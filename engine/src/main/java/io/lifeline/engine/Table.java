package io.lifeline.engine;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One table: its key schema, its global secondary indexes and its items (in memory, or on disk with a data dir: see
 * {@link Sorted}). Callers hold the engine's lock.
 */
final class Table {
    /** A global secondary index: its key, what it projects, and its entries. */
    static final class Index {
        final String name;
        final String hash;
        final String range;
        final String projection;
        final Set<String> nonKey;
        final Sorted entries;

        Index(String name, String hash, String range, String projection, Set<String> nonKey, Sorted entries) {
            this.name = name;
            this.entries = entries;
            this.hash = hash;
            this.range = range;
            this.projection = projection;
            this.nonKey = nonKey;
        }
    }

    final String name;
    final String hash;
    final String range;
    final Map<String, String> types;
    final Map<String, Index> indexes = new LinkedHashMap<>();
    final Sorted items;
    final long created;
    /** The table's latest stream (enabled, or disabled and kept for reading), or null when it never had one. */
    StreamLog stream;
    /** The TTL attribute while time to live is enabled, else null. */
    String ttlAttribute;
    /**
     * With a data dir: the stream the dir records as enabled, from reading the table's settings until the engine
     * gives the table that stream ({@link Streams#reopened}).
     */
    StreamLog.Spec recordedStream;
    /** The table's number in a data dir (names its maps there; 0 without one). */
    long id;
    /** Where each write is recorded before it answers (null without a data dir). */
    Durable log;
    /** The table's items' size in bytes, kept as they are written (DescribeTable's TableSizeBytes). */
    long bytes;
    /** The table's key attribute names, hash first (every write checks its key against them). */
    private final List<String> keyNames;
    /** Makes the entries of the table ("") or of an index (its name). */
    final Function<String, Sorted> storage;

    Table(String name, String hash, String range, Map<String, String> types, long created,
            Function<String, Sorted> storage) {
        this.name = name;
        this.storage = storage;
        this.items = storage.apply("");
        this.hash = hash;
        this.range = range;
        this.types = types;
        this.created = created;
        this.keyNames = range == null ? List.of(hash) : List.of(hash, range);
    }

    Partition partition(Map<String, AttributeValue> key) {
        return Partition.of(new Key(key.get(hash)));
    }

    Sorted.Position position(Map<String, AttributeValue> key) {
        return new Sorted.Position(range == null ? Key.NONE : new Key(key.get(range)), Key.NONE, Key.NONE);
    }

    Map<String, AttributeValue> get(Map<String, AttributeValue> key) {
        return items.get(partition(key), position(key));
    }

    /** The item's primary key alone. */
    Map<String, AttributeValue> keyOf(Map<String, AttributeValue> item) {
        Map<String, AttributeValue> k = new LinkedHashMap<>();
        k.put(hash, item.get(hash));
        if (range != null) {
            k.put(range, item.get(range));
        }
        return k;
    }

    /** Writes (or, with null, deletes) the item at {@code key}, keeping every index in step. */
    void write(Map<String, AttributeValue> key, Map<String, AttributeValue> old, Map<String, AttributeValue> item) {
        if (stream != null) {
            // a committed change: its stream record (none when nothing changed); a write the log replays at opening
            // makes the record it made before, with the same number
            stream.append(key, old, item);
        }
        Partition p = partition(key);
        Sorted.Position pos = position(key);
        if (old != null) {
            for (Index ix : indexes.values()) {
                if (inIndex(ix, old)) {
                    ix.entries.remove(indexPartition(ix, old), indexPosition(ix, old));
                }
            }
        }
        long size = item == null ? 0 : Values.itemSize(item);
        bytes += size - (old == null ? 0 : Values.itemSize(old));
        if (log != null) {
            log.written(this, key, item);
        }
        if (item == null) {
            items.remove(p, pos);
            return;
        }
        items.put(p, pos, item, size);
        for (Index ix : indexes.values()) {
            if (inIndex(ix, item)) {
                ix.entries.put(indexPartition(ix, item), indexPosition(ix, item), item, -1);
            }
        }
    }

    /** The table's enabled stream, or null when it has none (what a data dir records). */
    StreamLog.Spec streamSpec() {
        if (stream == null) {
            return recordedStream;
        }
        return stream.enabled() ? stream.spec : null;
    }

    /** The table's size in bytes, as DescribeTable reports it. */
    long bytes() {
        return bytes;
    }

    /** Whether the item has the index's key attributes with their declared types (sparse indexes skip it). */
    boolean inIndex(Index ix, Map<String, AttributeValue> item) {
        return typed(item.get(ix.hash), types.get(ix.hash))
                && (ix.range == null || typed(item.get(ix.range), types.get(ix.range)));
    }

    private static boolean typed(AttributeValue v, String type) {
        return v != null && Values.type(v).equals(type);
    }

    Partition indexPartition(Index ix, Map<String, AttributeValue> item) {
        return Partition.of(new Key(item.get(ix.hash)));
    }

    Sorted.Position indexPosition(Index ix, Map<String, AttributeValue> item) {
        return new Sorted.Position(ix.range == null ? Key.NONE : new Key(item.get(ix.range)),
                new Key(item.get(hash)), range == null ? Key.NONE : new Key(item.get(range)));
    }

    /** The item as the index holds it: its projection of the item. */
    Map<String, AttributeValue> project(Index ix, Map<String, AttributeValue> item) {
        if (ix.projection.equals("ALL")) {
            return item;
        }
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            String n = e.getKey();
            if (n.equals(hash) || n.equals(range) || n.equals(ix.hash) || n.equals(ix.range)
                    || ix.projection.equals("INCLUDE") && ix.nonKey.contains(n)) {
                out.put(n, e.getValue());
            }
        }
        return out;
    }

    /** The attribute names that form a key of the table or any index (updates may not change the table's). */
    List<String> keyNames() {
        return keyNames;
    }
}
