package io.lifeline.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The engine's data dir: the store on disk, the write-ahead log, the format and the lock.
 *
 * <ul>
 *   <li>{@code engine.format}: "lifeline-engine-format N". A dir of another format is refused in one line.
 *   <li>{@code engine.lock}: held (an OS file lock) while one engine has the dir open; a second is refused.
 *   <li>{@code engine.mv}: H2's MVStore, one B-tree map per table and per index ({@link Stored}), one per stream
 *       ({@link StreamLog}), the table definitions ({@code catalog}) and the sequence number of the last log record
 *       it holds and the streams' last sequence number ({@code state}).
 *   <li>{@code engine-wal-<first seq>.log}: the write-ahead log ({@link Wal}).
 * </ul>
 *
 * <p>A write is applied to the maps under the engine's lock and recorded in the log; it answers once its record is
 * fsynced. The store itself is written only at a checkpoint (under the lock, so it holds whole operations only):
 * when the log passes {@link #WAL_LIMIT} (by default), when unsaved pages pass {@link #UNSAVED_LIMIT}, and on close. A checkpoint
 * commits and syncs the store with the last record's number, then starts a new log segment and deletes the old.
 * Opening replays the records after the store's number, stopping at a torn tail, then checkpoints.
 */
final class Durable {
    static final int FORMAT = 1;
    static final long WAL_LIMIT = 32L << 20;
    static final int UNSAVED_LIMIT = 128 << 20;
    static final int CACHE_MB = 64;
    /** At each checkpoint, chunks of the store less full than this (percent) are rewritten, up to COMPACT_WRITE. */
    static final int COMPACT_FILL = 60;
    static final int COMPACT_WRITE = 16 << 20;
    private static final String FORMAT_LINE = "lifeline-engine-format " + FORMAT;
    private static final byte PUT = 1;
    private static final byte DELETE = 2;
    private static final byte CREATE = 3;
    private static final byte DROP = 4;
    /** A table's settings as a dir from before stream identities were kept logged them (the view type alone). */
    private static final byte SETTINGS = 5;
    /** A table's settings: its stream (view type and identity) and its TTL attribute. */
    private static final byte DEFINED = 6;
    /** The number, time and author of the stream record the next item written made. */
    private static final byte STAMP = 7;

    private final Path dir;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final MVStore store;
    private final MVMap<String, String> state;
    private final MVMap<String, byte[]> catalog;
    private final Wal wal;
    private final Codec.Out pending = new Codec.Out(1 << 12);
    private final long walLimit;
    private boolean replaying;
    /** While replaying: the stream record the log says the next item written made, or null. */
    private Stamp stamp;
    /** The stream maps opened since the dir was (the others, of streams no longer kept, go at opening). */
    private final Set<String> streamMaps = new HashSet<>();
    private Streams streams;
    private long nextId;
    private long checkpoints;
    private long longestCheckpoint;

    private Durable(Path dir, FileChannel lockChannel, FileLock lock, MVStore store, long walLimit) {
        this.dir = dir;
        this.walLimit = walLimit;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.store = store;
        this.state = store.openMap("state");
        this.catalog = store.openMap("catalog");
        String format = state.get("format");
        if (format != null && !format.equals(Integer.toString(FORMAT))) {
            throw refuse(dir, "its store is of format " + format);
        }
        state.put("format", Integer.toString(FORMAT));
        this.nextId = Long.parseLong(state.getOrDefault("nextId", "1"));
        this.wal = new Wal(dir, Long.parseLong(state.getOrDefault("seq", "0")));
    }

    /** The one-line refusal of a dir this engine cannot open, saying what to do. */
    static IllegalStateException refuse(Path dir, String why) {
        return new IllegalStateException("The data dir " + dir + " was written by another storage format (" + why
                + "); this Lifeline reads engine format " + FORMAT + ": move that dir aside (or delete it) and start "
                + "again with an empty one.");
    }

    /** Opens (or creates) the dir, takes its lock and checks its format; {@link #load} then reads the tables. */
    static Durable open(Path dir, long walLimit) {
        try {
            Files.createDirectories(dir);
            refuseDynamoDbLocal(dir);
            FileChannel ch = FileChannel.open(dir.resolve("engine.lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            FileLock l;
            try {
                l = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                l = null;
            }
            if (l == null) {
                ch.close();
                throw new IllegalStateException("The data dir " + dir + " is open in another Lifeline process (it "
                        + "holds " + dir.resolve("engine.lock") + "): stop that one first, or give this one another "
                        + "dir.");
            }
            try {
                checkFormat(dir);
                // no auto-commit, by time or by buffered changes: the store is written at checkpoints only, under the
                // engine's lock, so it never holds part of an operation
                MVStore store = new MVStore.Builder().fileName(dir.resolve("engine.mv").toString())
                        .autoCommitDisabled().autoCommitBufferSize(0).cacheSize(CACHE_MB).open();
                return new Durable(dir, ch, l, store, walLimit);
            } catch (RuntimeException | IOException e) {
                l.release();
                ch.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("The data dir " + dir + " could not be opened", e);
        }
    }

    private static void refuseDynamoDbLocal(Path dir) {
        for (Path d : new Path[] {dir, dir.toAbsolutePath().getParent()}) {
            if (d != null && Files.exists(d.resolve("dynamodb").resolve("shared-local-instance.db"))) {
                throw new IllegalStateException("The data dir " + d + " holds a DynamoDB Local store (dynamodb/"
                        + "shared-local-instance.db), which this Lifeline no longer reads: move that dir aside (or "
                        + "delete it) and start again with an empty one.");
            }
        }
    }

    private static void checkFormat(Path dir) throws IOException {
        Path f = dir.resolve("engine.format");
        if (Files.exists(f)) {
            String line = Files.readString(f, StandardCharsets.UTF_8).strip();
            if (!line.equals(FORMAT_LINE)) {
                throw refuse(dir, "engine.format says \"" + line + "\"");
            }
            return;
        }
        if (Files.exists(dir.resolve("engine.mv")) || !Wal.segments(dir).isEmpty()) {
            throw refuse(dir, "it has engine files but no engine.format");
        }
        Path tmp = dir.resolve("engine.format.tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ch.write(StandardCharsets.UTF_8.encode(FORMAT_LINE + "\n"));
            ch.force(true);
        }
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE);
        syncDir(dir);
    }

    /** Fsyncs a directory, so a file created or renamed in it survives a crash. */
    static void syncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * The tables on disk, each given its stream by {@code streams}, with the log's records after the store's replayed
     * onto them (their stream records made again); then a checkpoint.
     */
    Map<String, Table> load(Streams streams) {
        this.streams = streams;
        streams.restore(Long.parseLong(state.getOrDefault("streams.sequence", "0")));
        Map<String, Table> tables = new HashMap<>();
        for (Map.Entry<String, byte[]> e : catalog.entrySet()) {
            Table t = Definitions.table(e.getValue(), this);
            t.bytes = Long.parseLong(state.getOrDefault("bytes." + t.name, "0"));
            tables.put(t.name, t);
            streams.reopened(t);
        }
        long applied = Long.parseLong(state.getOrDefault("seq", "0"));
        replaying = true;
        try {
            for (Wal.Record r : Wal.read(dir)) {
                if (r.seq() <= applied) {
                    continue;
                }
                if (r.seq() != applied + 1) {
                    throw new IllegalStateException("The data dir " + dir + " lacks write-ahead log records "
                            + (applied + 1) + " to " + (r.seq() - 1) + ": it cannot be recovered");
                }
                apply(tables, r.payload());
                applied = r.seq();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("The data dir " + dir + " could not be read", e);
        } finally {
            replaying = false;
            stamp = null;
        }
        for (String name : store.getMapNames()) {
            if (name.startsWith("stream/") && !streamMaps.contains(name)) {
                store.removeMap(name);
            }
        }
        checkpoint(tables, applied);
        return tables;
    }

    private void apply(Map<String, Table> tables, byte[] payload) {
        Codec.In in = new Codec.In(payload);
        while (in.more()) {
            int op = in.tag();
            switch (op) {
                case PUT -> {
                    Table t = tables.get(in.string());
                    Map<String, AttributeValue> item = in.item();
                    Map<String, AttributeValue> key = t.keyOf(item);
                    t.write(key, t.get(key), item);
                }
                case DELETE -> {
                    Table t = tables.get(in.string());
                    Map<String, AttributeValue> key = in.item();
                    t.write(key, t.get(key), null);
                }
                case CREATE -> {
                    Table t = Definitions.table(in.bytes(), this);
                    nextId = Math.max(nextId, t.id + 1);
                    created(t);
                    tables.put(t.name, t);
                    streams.reopened(t);
                }
                case DROP -> {
                    Table t = tables.remove(in.string());
                    if (t != null) {
                        streams.deleted(t);
                    }
                    dropped(t);
                }
                case SETTINGS -> {
                    Table t = tables.get(in.string());
                    String view = Definitions.blankNull(in.string());
                    t.recordedStream = view == null ? null : new StreamLog.Spec(view, -1, 0, 0, "");
                    t.ttlAttribute = Definitions.blankNull(in.string());
                    streams.reopened(t);
                    settings(t);
                }
                case DEFINED -> {
                    Table t = tables.get(in.string());
                    Definitions.settings(new Codec.In(in.bytes()), t);
                    streams.reopened(t);
                    settings(t);
                }
                case STAMP -> stamp = new Stamp(in.varint(), in.varint(), in.varint() == 1);
                default -> throw new IllegalStateException("unknown log operation " + op);
            }
        }
    }

    /** A fresh map name for a table being created. */
    long newId() {
        return nextId++;
    }

    /** Makes the entries of table {@code id}: the table's ("") or an index's. */
    Sorted sorted(long id, String part) {
        return new Stored(store, mapName(id, part));
    }

    private static String mapName(long id, String part) {
        return "t" + id + (part.isEmpty() ? "" : "/" + part);
    }

    /** Records a new table (its maps, named by an id never used before, start empty). */
    void created(Table t) {
        byte[] def = Definitions.of(t);
        catalog.put(t.name, def);
        if (!replaying) {
            pending.write(CREATE);
            pending.bytes(def);
        }
    }

    /** Drops a deleted table's maps. */
    void dropped(Table t) {
        if (t == null) {
            return;
        }
        for (String part : parts(t)) {
            store.removeMap(mapName(t.id, part));
        }
        catalog.remove(t.name);
        if (!replaying) {
            pending.write(DROP);
            pending.string(t.name);
        }
    }

    /**
     * Records a table's changed settings: its stream (view type, ARN, shard and first number) and its TTL attribute.
     */
    void settings(Table t) {
        catalog.put(t.name, Definitions.of(t));
        if (!replaying) {
            Codec.Out settings = new Codec.Out(64);
            Definitions.settings(settings, t);
            pending.write(DEFINED);
            pending.string(t.name);
            pending.bytes(settings.bytes());
        }
    }

    /** Whether the log is being replayed (opening the dir): writes then are not logged again. */
    boolean replaying() {
        return replaying;
    }

    /** The number, time and author of a stream record, as the log keeps it. */
    record Stamp(long seq, long at, boolean byService) {
    }

    /** Logs the stream record the item written next makes (before that item, so the replay finds it first). */
    void stamped(long seq, long at, boolean byService) {
        if (!replaying) {
            pending.write(STAMP);
            pending.varint(seq);
            pending.varint(at);
            pending.varint(byService ? 1 : 0);
        }
    }

    /** While replaying: the stream record the log says the item being written made (once), or null. */
    Stamp takeStamp() {
        Stamp s = stamp;
        stamp = null;
        return s;
    }

    /** The map of a stream's records (see {@link StreamLog}). */
    MVMap<Long, byte[]> streamRecords(long tableId, long salt) {
        String name = "stream/" + tableId + "/" + Long.toHexString(salt);
        streamMaps.add(name);
        return store.openMap(name);
    }

    /** Drops the map of a stream no longer kept. */
    void dropStream(MVMap<Long, byte[]> records) {
        store.removeMap(records);
    }

    private static String blank(String s) {
        return s == null ? "" : s;
    }

    private static Set<String> parts(Table t) {
        Set<String> out = new HashSet<>();
        out.add("");
        out.addAll(t.indexes.keySet());
        return out;
    }

    /** Records an item written ({@code item}) or deleted (null). */
    void written(Table t, Map<String, AttributeValue> key, Map<String, AttributeValue> item) {
        if (replaying) {
            return;
        }
        pending.write(item == null ? DELETE : PUT);
        pending.string(t.name);
        pending.item(item == null ? key : item);
    }

    /**
     * Ends an operation under the engine's lock: seals its changes as one log record (checkpointing if the log or
     * the unsaved pages have grown past their limits); answers the number to {@link #await} once the lock is let go.
     */
    long seal(Map<String, Table> tables) {
        if (pending.size() == 0) {
            return wal.sealed();
        }
        long seq = wal.append(pending.raw(), pending.size());
        pending.reset();
        if (wal.size() > walLimit || store.getUnsavedMemory() > UNSAVED_LIMIT) {
            checkpoint(tables, seq);
        }
        return seq;
    }

    /** Waits (outside the engine's lock) until record {@code seq} is on disk. */
    void await(long seq) {
        wal.await(seq);
    }

    /** Writes the store as of record {@code seq} and starts a new log. Caller holds the engine's lock. */
    private void checkpoint(Map<String, Table> tables, long seq) {
        long start = System.nanoTime();
        for (Table t : tables.values()) {
            state.put("bytes." + t.name, Long.toString(t.bytes));
        }
        state.put("seq", Long.toString(seq));
        state.put("nextId", Long.toString(nextId));
        state.put("streams.sequence", Long.toString(streams.sequence()));
        store.commit();
        store.sync();
        if (store.compact(COMPACT_FILL, COMPACT_WRITE)) {
            store.commit();
            store.sync();
        }
        wal.rotate(seq);
        checkpoints++;
        longestCheckpoint = Math.max(longestCheckpoint, System.nanoTime() - start);
    }

    long fsyncs() {
        return wal.fsyncs();
    }

    long checkpoints() {
        return checkpoints;
    }

    /** The longest a checkpoint has held the engine's lock, in nanoseconds. */
    long longestCheckpoint() {
        return longestCheckpoint;
    }

    /** Checkpoints and closes the store, the log and the lock. Caller holds the engine's lock. */
    void close(Map<String, Table> tables) {
        try {
            checkpoint(tables, wal.sealed());
            store.close();
            wal.close();
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("The data dir " + dir + " could not be closed", e);
        }
    }

    /** Table definitions as bytes, for the catalog and the log. */
    static final class Definitions {
        private Definitions() {
        }

        static byte[] of(Table t) {
            Codec.Out out = new Codec.Out();
            out.varint(t.id);
            out.string(t.name);
            out.string(t.hash);
            out.string(t.range == null ? "" : t.range);
            out.varint(t.created);
            out.varint(t.types.size());
            t.types.forEach((k, v) -> {
                out.string(k);
                out.string(v);
            });
            out.varint(t.indexes.size());
            for (Table.Index ix : t.indexes.values()) {
                out.string(ix.name);
                out.string(ix.hash);
                out.string(ix.range == null ? "" : ix.range);
                out.string(ix.projection);
                out.varint(ix.nonKey.size());
                ix.nonKey.forEach(out::string);
            }
            settings(out, t);
            return out.bytes();
        }

        /**
         * A table's settings: the stream's view type and TTL attribute (all a dir of the first version holds), then
         * the stream's identity.
         */
        static void settings(Codec.Out out, Table t) {
            StreamLog.Spec spec = t.streamSpec();
            out.string(spec == null ? "" : spec.viewType());
            out.string(blank(t.ttlAttribute));
            if (spec != null && spec.created() >= 0) {
                out.varint(spec.created());
                out.varint(spec.start());
                out.varint(spec.salt());
                out.string(spec.suffix());
            }
        }

        /** Reads {@link #settings(Codec.Out, Table)} from the end of a definition (or all of a logged change). */
        static void settings(Codec.In in, Table t) {
            String view = blankNull(in.string());
            t.ttlAttribute = blankNull(in.string());
            if (view == null) {
                t.recordedStream = null;
            } else if (in.more()) {
                t.recordedStream = new StreamLog.Spec(view, in.varint(), in.varint(), in.varint(), in.string());
            } else {
                t.recordedStream = new StreamLog.Spec(view, -1, 0, 0, "");
            }
        }

        static Table table(byte[] def, Durable d) {
            Codec.In in = new Codec.In(def);
            long id = in.varint();
            String name = in.string();
            String hash = in.string();
            String range = blankNull(in.string());
            long created = in.varint();
            Map<String, String> types = new LinkedHashMap<>();
            for (long i = in.varint(); i > 0; i--) {
                types.put(in.string(), in.string());
            }
            Table t = new Table(name, hash, range, types, created, part -> d.sorted(id, part));
            t.id = id;
            for (long i = in.varint(); i > 0; i--) {
                String ixName = in.string();
                String ixHash = in.string();
                String ixRange = blankNull(in.string());
                String projection = in.string();
                Set<String> nonKey = new HashSet<>();
                for (long j = in.varint(); j > 0; j--) {
                    nonKey.add(in.string());
                }
                t.indexes.put(ixName, new Table.Index(ixName, ixHash, ixRange, projection, nonKey,
                        t.storage.apply(ixName)));
            }
            t.log = d;
            settings(in, t);
            return t;
        }

        static String blankNull(String s) {
            return s.isEmpty() ? null : s;
        }
    }
}
