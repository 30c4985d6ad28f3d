package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import io.lifeline.engine.Engine;
import java.time.Clock;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The storage libraries the engine's data dir was chosen among, on one durable workload, each with its own way to
 * make a write durable before it is acknowledged: ledger-like items (a 30-byte key, a 200-byte value) written in
 * batches of 25 with one sync per batch (BatchWriteItem's shape), then conditional updates, one synced write each
 * (read the item, check it, write it back), then random point reads and one ordered scan of everything. Printed:
 * wall and CPU time per phase, bytes on disk, heap used after GC with the store open. A measurement, not a gate:
 * opt-in with {@code -Dlifeline.storageCandidates=true} (the figures are in docs/design/storage/decisions.md).
 */
@Tag("unit")
class StorageCandidatesTest {
    private static final int ITEMS = Integer.getInteger("lifeline.storageCandidates.items", 50_000);
    private static final int UPDATES = 2_000;
    private static final int READS = 20_000;

    /** One candidate: the four phases over its own files in {@code dir}. */
    interface Store extends AutoCloseable {
        void writeBatch(List<String> keys, List<byte[]> values) throws Exception;

        byte[] get(String key) throws Exception;

        /** One synced write of one item. */
        void put(String key, byte[] value) throws Exception;

        /** Every item in key order; answers how many. */
        long scan() throws Exception;
    }

    @Test
    void measure() throws Exception {
        assumeTrue(Boolean.getBoolean("lifeline.storageCandidates"), "opt-in: -Dlifeline.storageCandidates=true");
        RocksDB.loadLibrary();
        Class.forName("org.sqlite.JDBC");
        System.out.println("candidate | write s (CPU s) | update s (CPU s) | read s | scan s | disk MB | heap MB");
        for (String name : List.of("engine", "mvstore", "rocksdb", "sqlite", "log+index", "engine")) {
            Path dir = Files.createTempDirectory("lifeline-candidates");
            try {
                run(name, dir);
            } finally {
                delete(dir);
            }
        }
    }

    private static void run(String name, Path dir) throws Exception {
        long heapBefore = heap();
        try (Store s = open(name, dir)) {
            long[] w = timed(() -> {
                for (int from = 0; from < ITEMS; from += 25) {
                    List<String> keys = new ArrayList<>();
                    List<byte[]> values = new ArrayList<>();
                    for (int i = from; i < Math.min(ITEMS, from + 25); i++) {
                        keys.add(key(i));
                        values.add(value(i, 0));
                    }
                    s.writeBatch(keys, values);
                }
            });
            Random r = new Random(3);
            long[] u = timed(() -> {
                for (int k = 0; k < UPDATES; k++) {
                    String key = key(r.nextInt(ITEMS));
                    byte[] old = s.get(key);
                    if (old == null || old.length < 10) {
                        throw new IllegalStateException("missing " + key);
                    }
                    s.put(key, value(k, old[0] + 1));
                }
            });
            long[] g = timed(() -> {
                for (int k = 0; k < READS; k++) {
                    if (s.get(key(r.nextInt(ITEMS))) == null) {
                        throw new IllegalStateException("a read found nothing");
                    }
                }
            });
            long[] count = new long[1];
            long[] sc = timed(() -> count[0] = s.scan());
            assertEquals(ITEMS, count[0], name + " scanned");
            long heapMb = (heap() - heapBefore) / 1_000_000;
            System.out.printf(Locale.ROOT, "%s | %.2f (%.2f) | %.2f (%.2f) | %.2f | %.2f | %.1f | %d  [load %s]%n",
                    name, w[0] / 1e9, w[1] / 1e9, u[0] / 1e9, u[1] / 1e9, g[0] / 1e9, sc[0] / 1e9,
                    size(dir) / 1e6, heapMb, EngineBench.load());
        }
    }

    private static Store open(String name, Path dir) throws Exception {
        return switch (name) {
            case "mvstore" -> new MvStore(dir);
            case "rocksdb" -> new Rocks(dir);
            case "sqlite" -> new Sqlite(dir);
            case "engine" -> new EngineStore(dir);
            default -> new LogIndex(dir);
        };
    }

    /**
     * The engine's own data dir (its log, synced per operation with writers sharing a sync, and MVStore written at
     * checkpoints) through its DynamoDbClient: BatchWriteItem, a conditional UpdateItem, GetItem, Scan.
     */
    static final class EngineStore implements Store {
        private final Engine engine;
        private final DynamoDbClient db;

        EngineStore(Path dir) {
            engine = Engine.open(dir, Clock.systemUTC());
            db = engine.client();
            db.createTable(t -> t.tableName("items")
                    .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"),
                            d -> d.attributeName("sk").attributeType("S"))
                    .keySchema(k -> k.attributeName("pk").keyType("HASH"), k -> k.attributeName("sk").keyType("RANGE")));
        }

        @Override
        public void writeBatch(List<String> keys, List<byte[]> values) {
            List<WriteRequest> puts = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                String k = keys.get(i);
                byte[] v = values.get(i);
                puts.add(WriteRequest.builder().putRequest(p -> p.item(Map.of("pk", AttributeValue.fromS(k),
                        "sk", AttributeValue.fromS("I"), "v", AttributeValue.fromB(SdkBytes.fromByteArray(v)))))
                        .build());
            }
            db.batchWriteItem(b -> b.requestItems(Map.of("items", puts)));
        }

        @Override
        public byte[] get(String key) {
            var item = db.getItem(g -> g.tableName("items").key(Map.of("pk", AttributeValue.fromS(key),
                    "sk", AttributeValue.fromS("I")))).item();
            return item == null || item.isEmpty() ? null : item.get("v").b().asByteArray();
        }

        @Override
        public void put(String key, byte[] value) {
            db.updateItem(u -> u.tableName("items").key(Map.of("pk", AttributeValue.fromS(key),
                    "sk", AttributeValue.fromS("I"))).updateExpression("SET v = :v")
                    .conditionExpression("attribute_exists(pk)")
                    .expressionAttributeValues(Map.of(":v", AttributeValue.fromB(SdkBytes.fromByteArray(value)))));
        }

        @Override
        public long scan() {
            return EngineBench.scan(db, "items");
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    /** MVStore alone, committing and syncing per batch (the engine instead syncs its own log and commits later). */
    static final class MvStore implements Store {
        private final MVStore store;
        private final MVMap<String, byte[]> map;

        MvStore(Path dir) {
            store = new MVStore.Builder().fileName(dir.resolve("s.mv").toString()).autoCommitDisabled().open();
            map = store.openMap("items");
        }

        @Override
        public void writeBatch(List<String> keys, List<byte[]> values) {
            for (int i = 0; i < keys.size(); i++) {
                map.put(keys.get(i), values.get(i));
            }
            store.commit();
            store.sync();
        }

        @Override
        public byte[] get(String key) {
            return map.get(key);
        }

        @Override
        public void put(String key, byte[] value) {
            writeBatch(List.of(key), List.of(value));
        }

        @Override
        public long scan() {
            long n = 0;
            for (var it = map.cursor(null); it.hasNext(); it.next()) {
                n++;
            }
            return n;
        }

        @Override
        public void close() {
            store.close();
        }
    }

    /** RocksDB with its write-ahead log synced on every write batch. */
    static final class Rocks implements Store {
        private final Options options = new Options().setCreateIfMissing(true);
        private final WriteOptions sync = new WriteOptions().setSync(true);
        private final RocksDB db;

        Rocks(Path dir) throws Exception {
            db = RocksDB.open(options, dir.toString());
        }

        @Override
        public void writeBatch(List<String> keys, List<byte[]> values) throws Exception {
            try (WriteBatch b = new WriteBatch()) {
                for (int i = 0; i < keys.size(); i++) {
                    b.put(keys.get(i).getBytes(StandardCharsets.UTF_8), values.get(i));
                }
                db.write(sync, b);
            }
        }

        @Override
        public byte[] get(String key) throws Exception {
            return db.get(key.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void put(String key, byte[] value) throws Exception {
            db.put(sync, key.getBytes(StandardCharsets.UTF_8), value);
        }

        @Override
        public long scan() {
            long n = 0;
            try (RocksIterator it = db.newIterator()) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    n++;
                }
            }
            return n;
        }

        @Override
        public void close() {
            db.close();
            sync.close();
            options.close();
        }
    }

    /** SQLite over JDBC: WAL journal, synchronous=FULL, a transaction per batch. */
    static final class Sqlite implements Store {
        private final Connection c;
        private final PreparedStatement insert;
        private final PreparedStatement select;

        Sqlite(Path dir) throws Exception {
            c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("s.db"));
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA journal_mode=WAL");
                s.execute("PRAGMA synchronous=FULL");
                s.execute("CREATE TABLE items (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID");
            }
            c.setAutoCommit(false);
            insert = c.prepareStatement("INSERT OR REPLACE INTO items (k, v) VALUES (?, ?)");
            select = c.prepareStatement("SELECT v FROM items WHERE k = ?");
        }

        @Override
        public void writeBatch(List<String> keys, List<byte[]> values) throws Exception {
            for (int i = 0; i < keys.size(); i++) {
                insert.setString(1, keys.get(i));
                insert.setBytes(2, values.get(i));
                insert.executeUpdate();
            }
            c.commit();
        }

        @Override
        public byte[] get(String key) throws Exception {
            select.setString(1, key);
            try (ResultSet r = select.executeQuery()) {
                return r.next() ? r.getBytes(1) : null;
            }
        }

        @Override
        public void put(String key, byte[] value) throws Exception {
            writeBatch(List.of(key), List.of(value));
        }

        @Override
        public long scan() throws Exception {
            long n = 0;
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT k, v FROM items ORDER BY k")) {
                while (r.next()) {
                    r.getBytes(2);
                    n++;
                }
            }
            return n;
        }

        @Override
        public void close() throws Exception {
            c.commit();
            c.close();
        }
    }

    /** A plain append-only log (forced per batch) and an in-memory index of where each key's latest value is. */
    static final class LogIndex implements Store {
        private final FileChannel log;
        private final TreeMap<String, long[]> index = new TreeMap<>();

        LogIndex(Path dir) throws IOException {
            log = FileChannel.open(dir.resolve("log"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.READ);
        }

        @Override
        public void writeBatch(List<String> keys, List<byte[]> values) throws IOException {
            long at = log.size();
            int total = 0;
            List<byte[]> encoded = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                byte[] k = keys.get(i).getBytes(StandardCharsets.UTF_8);
                byte[] v = values.get(i);
                ByteBuffer b = ByteBuffer.allocate(8 + k.length + v.length).putInt(k.length).putInt(v.length).put(k)
                        .put(v);
                encoded.add(b.array());
                index.put(keys.get(i), new long[] {at + total + 8 + k.length, v.length});
                total += b.capacity();
            }
            ByteBuffer all = ByteBuffer.allocate(total);
            encoded.forEach(all::put);
            all.flip();
            while (all.hasRemaining()) {
                log.write(all, at + all.position());
            }
            log.force(false);
        }

        @Override
        public byte[] get(String key) throws IOException {
            long[] where = index.get(key);
            if (where == null) {
                return null;
            }
            ByteBuffer b = ByteBuffer.allocate((int) where[1]);
            log.read(b, where[0]);
            return b.array();
        }

        @Override
        public void put(String key, byte[] value) throws IOException {
            writeBatch(List.of(key), List.of(value));
        }

        @Override
        public long scan() throws IOException {
            long n = 0;
            for (Map.Entry<String, long[]> e : index.entrySet()) {
                if (get(e.getKey()) != null) {
                    n++;
                }
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            log.close();
        }
    }

    interface Phase {
        void run() throws Exception;
    }

    /** {wall ns, this thread's CPU ns}. */
    private static long[] timed(Phase p) throws Exception {
        var bean = ManagementFactory.getThreadMXBean();
        long cpu = bean.getCurrentThreadCpuTime();
        long t = System.nanoTime();
        p.run();
        return new long[] {System.nanoTime() - t, bean.getCurrentThreadCpuTime() - cpu};
    }

    private static String key(int i) {
        return String.format(Locale.ROOT, "TEAM#t%03d#AGENT#a%05d#T#%07d", i % 100, i % 2_000, i);
    }

    private static byte[] value(int i, int version) {
        byte[] v = new byte[200];
        new Random(i).nextBytes(v);
        v[0] = (byte) version;
        return v;
    }

    private static long heap() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long size(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
