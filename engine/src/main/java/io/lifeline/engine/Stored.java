package io.lifeline.engine;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A table's or an index's entries in one map of H2's MVStore, an on-disk copy-on-write B-tree: keys are the entry's
 * {@link Partition} and {@link Sorted.Position} (compared as the in-memory kind compares them, so the order is the
 * same), values the item in {@link Codec}'s bytes ({@link BytesType}). Only MVStore's page cache (its size is set when the store opens)
 * holds decoded pages in memory. The engine's lock serializes every change; MVStore writes only when the engine
 * checkpoints ({@link Durable}).
 */
final class Stored extends Sorted {
    /** A map key: {@code position} null sorts after every position of the partition. */
    record Slot(Partition partition, Position position) implements Comparable<Slot> {
        @Override
        public int compareTo(Slot o) {
            int c = partition.compareTo(o.partition);
            if (c != 0) {
                return c;
            }
            if (position == null || o.position == null) {
                return position == null ? (o.position == null ? 0 : 1) : -1;
            }
            return position.compareTo(o.position);
        }
    }

    /** Slots on disk: the partition's hash and key, then the three keys of the position. */
    static final class SlotType extends BasicDataType<Slot> {
        static final SlotType INSTANCE = new SlotType();

        @Override
        public int getMemory(Slot s) {
            return 240;
        }

        @Override
        public void write(WriteBuffer buff, Slot s) {
            Codec.Out out = new Codec.Out(64);
            out.key(s.partition().key());
            out.key(s.position().first());
            out.key(s.position().second());
            out.key(s.position().third());
            buff.putInt(s.partition().hash()).putVarInt(out.size()).put(out.raw(), 0, out.size());
        }

        @Override
        public Slot read(ByteBuffer buff) {
            int hash = buff.getInt();
            byte[] b = new byte[readVarInt(buff)];
            buff.get(b);
            Codec.In in = new Codec.In(b);
            Partition p = new Partition(hash, in.key());
            return new Slot(p, new Position(in.key(), in.key(), in.key()));
        }

        @Override
        public int compare(Slot a, Slot b) {
            return a.compareTo(b);
        }

        @Override
        public Slot[] createStorage(int size) {
            return new Slot[size];
        }
    }

    /**
     * Items in {@link Codec}'s bytes, on disk and in the cache alike: a page in memory holds a byte array per item
     * (a tenth of the SDK's objects), so the cache and the pages changed since the last checkpoint hold ten times
     * the items; a read decodes the item it returns.
     */
    static final class BytesType extends BasicDataType<byte[]> {
        static final BytesType INSTANCE = new BytesType();

        @Override
        public int getMemory(byte[] b) {
            return 24 + b.length;
        }

        @Override
        public void write(WriteBuffer buff, byte[] b) {
            buff.putVarInt(b.length).put(b);
        }

        @Override
        public byte[] read(ByteBuffer buff) {
            byte[] b = new byte[readVarInt(buff)];
            buff.get(b);
            return b;
        }

        @Override
        public byte[][] createStorage(int size) {
            return new byte[size][];
        }
    }

    private static int readVarInt(ByteBuffer buff) {
        int v = 0;
        for (int shift = 0; ; shift += 7) {
            int b = buff.get();
            v |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
    }

    private final MVMap<Slot, byte[]> map;

    Stored(MVStore store, String mapName) {
        this.map = store.openMap(mapName, new MVMap.Builder<Slot, byte[]>()
                .keyType(SlotType.INSTANCE).valueType(BytesType.INSTANCE));
    }

    @Override
    Map<String, AttributeValue> get(Partition p, Position pos) {
        byte[] b = map.get(new Slot(p, pos));
        return b == null ? null : Codec.decode(b);
    }

    @Override
    void put(Partition p, Position pos, Map<String, AttributeValue> item, long size) {
        map.put(new Slot(p, pos), Codec.encode(item));
    }

    @Override
    void remove(Partition p, Position pos) {
        map.remove(new Slot(p, pos));
    }

    @Override
    long count() {
        return map.sizeAsLong();
    }

    @Override
    Iterator<Entry> within(Partition p, Position after, boolean forward) {
        Slot start = new Slot(p, after == null ? (forward ? Position.LOWEST : null) : after);
        Cursor<Slot, byte[]> c = map.cursor(start, null, !forward);
        return entries(c, after == null ? null : start, p);
    }

    @Override
    Iterator<Entry> from(Partition from, Position after) {
        Slot start = new Slot(from, after == null ? Position.LOWEST : after);
        return entries(map.cursor(start, null, false), after == null ? null : start, null);
    }

    /** The cursor's entries, the first skipped if it is {@code skip}, stopping past partition {@code only}. */
    private static Iterator<Entry> entries(Cursor<Slot, byte[]> c, Slot skip, Partition only) {
        return new Iterator<>() {
            private Entry next = advance(true);

            private Entry advance(boolean first) {
                while (c.hasNext()) {
                    Slot s = c.next();
                    if (first && skip != null && s.compareTo(skip) == 0) {
                        first = false;
                        continue;
                    }
                    if (only != null && only.compareTo(s.partition()) != 0) {
                        return null;
                    }
                    return new Entry(s.partition(), s.position(), Codec.decode(c.getValue()), -1);
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Entry next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                Entry e = next;
                next = advance(false);
                return e;
            }
        };
    }
}
