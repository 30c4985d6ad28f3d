package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The engine's figures, run by {@link FiguresTest} in a child JVM (so the heap it reports is its own): conditional
 * UpdateItems a second in memory and over a data dir (one thread and several, with the fsyncs they shared), the
 * heap used after GC holding many small ledger items and a thousand live ones, and the time of a full Scan. Prints
 * "figure ..." lines and "items N" (the Scan's count) for the test to check; nothing is asserted on time.
 *
 * <p>Arguments: {@code memory|durable items [dir]}.
 */
final class Figures {
    private Figures() {
    }

    public static void main(String[] args) throws Exception {
        boolean durable = args[0].equals("durable");
        int items = Integer.parseInt(args[1]);
        Engine engine = durable ? Engine.open(Path.of(args[2]), Clock.systemUTC()) : new Engine(Clock.systemUTC());
        DynamoDbClient db = engine.client();
        create(db, "live");
        create(db, "ledger");
        String mode = durable ? "data dir" : "in memory";
        System.out.printf("figure %s: heap used after GC, empty: %,d KB%n", mode, heapAfterGc() / 1024);
        for (int threads : durable ? new int[] {1, 4, 16, 64} : new int[] {1}) {
            updates(engine, db, threads, mode);
        }
        long start = System.nanoTime();
        long cpu = cpu();
        load(db, items);
        System.out.printf("figure %s: %,d ledger items (about 200 bytes each) written in %.1f s, %.1f s of CPU "
                + "(batches of 25, 4 threads; %d checkpoints so far, the longest %,d ms)%n", mode, items,
                (System.nanoTime() - start) / 1e9, (cpu() - cpu) / 1e9, engine.checkpoints(),
                engine.longestCheckpointMillis());
        long heap = heapAfterGc();
        System.out.printf("figure %s: heap used after GC with %,d ledger items and 1,000 live items: %,d MB "
                + "(%,d bytes per item)%n", mode, items, heap >> 20, heap / (items + 1000L));
        start = System.nanoTime();
        cpu = cpu();
        long count = scan(db);
        System.out.printf("figure %s: a full Scan of %,d items in %.2f s, %.2f s of CPU%n", mode, count,
                (System.nanoTime() - start) / 1e9, (cpu() - cpu) / 1e9);
        System.out.println("items " + count);
        if (durable) {
            engine.close();
            long disk = 0;
            try (var files = Files.list(Path.of(args[2]))) {
                for (Path p : files.toList()) {
                    disk += Files.size(p);
                }
            }
            System.out.printf("figure %s: %,d MB on disk after close%n", mode, disk >> 20);
        }
    }

    private static void create(DynamoDbClient db, String name) {
        db.createTable(r -> r.tableName(name)
                .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"),
                        d -> d.attributeName("sk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH"), k -> k.attributeName("sk").keyType("RANGE")));
    }

    /** Conditional UpdateItems on 1,000 live items, from {@code threads} threads, each on its own items. */
    private static void updates(Engine engine, DynamoDbClient db, int threads, String mode) throws Exception {
        for (int i = 0; i < 1000; i++) {
            int k = i;
            db.putItem(r -> r.tableName("live").item(map("pk", "TEAM#t#AGENT#" + k, "sk", "AGENT", "status",
                    "ready", "beat", n("0"))));
        }
        int perThread = mode.equals("in memory") ? 200_000 : threads == 1 ? 2000 : 40_000 / threads;
        long fsyncs = engine.fsyncs();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicLong done = new AtomicLong();
        long start = System.nanoTime();
        long cpu = cpu();
        List<Future<?>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            all.add(pool.submit(() -> {
                for (int i = 0; i < perThread; i++) {
                    int k = (me + i * threads) % 1000;
                    int at = i;
                    db.updateItem(r -> r.tableName("live").key(map("pk", "TEAM#t#AGENT#" + k, "sk", "AGENT"))
                            .updateExpression("SET beat = :now").conditionExpression("#s = :ready")
                            .expressionAttributeNames(Map.of("#s", "status"))
                            .expressionAttributeValues(map(":now", n(Integer.toString(at)), ":ready", "ready")));
                    done.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : all) {
            f.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();
        long syncs = engine.fsyncs() - fsyncs;
        System.out.printf("figure %s: %,d conditional UpdateItems from %d thread(s) in %.2f s (%.2f s of CPU): "
                + "%,.0f per second%s%n", mode, done.get(), threads, seconds, (cpu() - cpu) / 1e9, done.get() / seconds,
                syncs == 0 ? "" : String.format(", %,d fsyncs (%.1f writes each)", syncs, done.get() / (double) syncs));
    }

    /**
     * Ledger items like Lifeline's: 1,000 agents' partitions, each item's sort key the time it was written (so each
     * partition grows at its end, as history does), a kind and a short note; 25 to a BatchWriteItem.
     */
    private static void load(DynamoDbClient db, int items) throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            all.add(pool.submit(() -> {
                List<WriteRequest> batch = new ArrayList<>();
                for (int i = me; i < items; i += threads) {
                    Map<String, AttributeValue> item = map("pk", "TEAM#t" + (i % 50) + "#AGENT#a" + (i % 1000),
                            "sk", String.format("LEDGER#%013d", 1_764_000_000_000L + i), "kind", "transition",
                            "from", "running", "to", "stalled", "reason",
                            "no heartbeat within the agent's allowance of 90 seconds", "at", n(Long.toString(
                                    1_764_000_000_000L + i)), "ttl", n(Long.toString(1_766_000_000L + i)));
                    batch.add(WriteRequest.builder().putRequest(p -> p.item(item)).build());
                    if (batch.size() == 25) {
                        List<WriteRequest> b = batch;
                        db.batchWriteItem(r -> r.requestItems(Map.of("ledger", b)));
                        batch = new ArrayList<>();
                    }
                }
                if (!batch.isEmpty()) {
                    List<WriteRequest> b = batch;
                    db.batchWriteItem(r -> r.requestItems(Map.of("ledger", b)));
                }
                return null;
            }));
        }
        for (Future<?> f : all) {
            f.get();
        }
        pool.shutdown();
    }

    private static long scan(DynamoDbClient db) {
        long count = 0;
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = db.scan(r -> r.tableName("ledger").exclusiveStartKey(from));
            count += page.count();
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return count;
    }

    /** The process's CPU time in nanoseconds: on a loaded machine, a fairer figure than the wall clock. */
    private static long cpu() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
