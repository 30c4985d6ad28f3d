package io.lifeline.bench;

import io.lifeline.agent.SweepPlan;
import io.lifeline.app.Sweeper;
import io.lifeline.engine.Engine;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.team.TeamStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;

/**
 * Figure 8: the store engine itself at fleet sizes, in process. Conditional UpdateItems a second in memory and over
 * a data dir (group commit shares an fsync among the writers waiting on it); a Scan of the live table and the real
 * {@link Sweeper} over {@link SweepStore} on {@code agents} copies of the busy agent {@link SweepBench} drives
 * through a day; and its 30 days of history for {@code historyAgents} agents written to a ledger in a data dir. The
 * machine's load average is noted beside each timed row: the figures move with it.
 */
public final class EngineBench {
    static final String LIVE = "engine-live";
    private static int shown;

    /** What one run measures: agents on the live table, agents with history, UpdateItems per mode. */
    record Sizes(int agents, int historyAgents, int memoryUpdates, int durableUpdates) {
        static Sizes full() {
            return new Sizes(1_000_000, 2_000, 200_000, 40_000);
        }
    }

    private EngineBench() {
    }

    static void run(Report report, Sizes sizes) throws Exception {
        SweepBench.History history;
        Map<String, AttributeValue> agent;
        Map<String, AttributeValue> team;
        SamTemplate template;
        Engine sampleEngine = new Engine(Clock.systemUTC());
        try (MeteredStack stack = new MeteredStack(sampleEngine.client(), sampleEngine.streamsClient(),
                "engine-sample", Map.of(), Clock.systemUTC())) {
            history = SweepBench.busyDay(stack);
            agent = get(stack.plain, stack.tables.live(), "TEAM#" + MeteredStack.TEAM + "#AGENT#" + SweepBench.SAMPLE,
                    "AGENT");
            team = get(stack.plain, stack.tables.live(), "TEAM#" + MeteredStack.TEAM, "TEAM");
            template = stack.template;
        }
        Path tmp = Files.createTempDirectory("lifeline-enginebench");
        try {
            updates(report, tmp, sizes);
            show(report);
            sweep(report, template, agent, team, sizes.agents());
            show(report);
            historyDurable(report, template, history, tmp.resolve("ledger"), sizes.historyAgents());
            show(report);
        } finally {
            delete(tmp);
        }
    }

    /** Prints the rows added since the last call, so a long run shows its figures as they come. */
    private static void show(Report report) {
        List<Report.Row> rows = report.rows();
        for (Report.Row r : rows.subList(Math.min(shown, rows.size()), rows.size())) {
            System.out.printf(Locale.ROOT, "  %s: %s %s%n", r.figure(), Report.num(r.value()), r.unit());
        }
        shown = rows.size();
    }

    /** Conditional UpdateItems: in memory from one thread; over a data dir from 1, 16 and 64. */
    private static void updates(Report report, Path tmp, Sizes sizes) throws Exception {
        Engine memory = new Engine(Clock.systemUTC());
        double perSecond = updates(memory, 1, sizes.memoryUpdates())[0];
        report.add("8", "conditional UpdateItem, in memory, 1 thread", perSecond, "req/s", null, null);
        report.note("8: in-memory UpdateItems, " + sizes.memoryUpdates() + " from 1 thread; " + load());
        try (Engine durable = Engine.open(tmp.resolve("updates"), Clock.systemUTC())) {
            for (int threads : new int[] {1, 16, 64}) {
                int total = threads == 1 ? Math.max(1, sizes.durableUpdates() / 20) : sizes.durableUpdates();
                double[] measured = updates(durable, threads, total);
                perSecond = measured[0];
                long syncs = (long) measured[1];
                report.add("8", "conditional UpdateItem, data dir (group commit), " + threads + " thread(s)",
                        perSecond, "req/s", null, null);
                report.note(String.format(Locale.ROOT, "8: data dir, %d threads: %d UpdateItems, %d fsyncs "
                        + "(%.1f writes each); %s", threads, total, syncs, syncs == 0 ? 0.0 : total / (double) syncs,
                        load()));
            }
        }
    }

    /**
     * {@code total} conditional UpdateItems on 1,000 live items from {@code threads} threads; answers {per second,
     * fsyncs the updates took} (the puts that seed the table not counted).
     */
    static double[] updates(Engine engine, int threads, int total) throws Exception {
        DynamoDbClient db = engine.client();
        String table = "updates-" + threads;
        db.createTable(r -> r.tableName(table)
                .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"),
                        d -> d.attributeName("sk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH"), k -> k.attributeName("sk").keyType("RANGE")));
        for (int i = 0; i < 1000; i++) {
            int k = i;
            db.putItem(r -> r.tableName(table).item(Map.of("pk", s("TEAM#t#AGENT#" + k), "sk", s("AGENT"),
                    "status", s("ready"), "beat", AttributeValue.fromN("0"))));
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long fsyncs = engine.fsyncs();
            long start = System.nanoTime();
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                all.add(pool.submit(() -> {
                    for (int i = me; i < total; i += threads) {
                        int at = i;
                        db.updateItem(r -> r.tableName(table)
                                .key(Map.of("pk", s("TEAM#t#AGENT#" + at % 1000), "sk", s("AGENT")))
                                .updateExpression("SET beat = :now").conditionExpression("#s = :ready")
                                .expressionAttributeNames(Map.of("#s", "status"))
                                .expressionAttributeValues(Map.of(":now", AttributeValue.fromN(Integer.toString(at)),
                                        ":ready", s("ready"))));
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            return new double[] {total / seconds, engine.fsyncs() - fsyncs};
        } finally {
            pool.shutdownNow();
        }
    }

    /** The live table of {@code n} healthy agents in memory: one Scan of it, then the real sweep, twice. */
    private static void sweep(Report report, SamTemplate template, Map<String, AttributeValue> agent,
                              Map<String, AttributeValue> team, int n) throws Exception {
        Engine engine = new Engine(Clock.systemUTC());
        DynamoDbClient db = engine.client();
        db.createTable(template.createTableRequest(template.globalEnvironmentReference("LIVE_TABLE"), LIVE)
                .toBuilder().streamSpecification((StreamSpecification) null).build());
        db.createTable(template.createTableRequest(template.globalEnvironmentReference("LEDGER_TABLE"),
                SweepBench.LEDGER));
        long t0 = System.nanoTime();
        SweepBench.seed(db, LIVE, agent, team, n, i -> false, Instant.now());
        System.out.printf("  seeded %d agents in %.1f s%n", n, (System.nanoTime() - t0) / 1e9);
        int items = n + (n + SweepBench.AGENTS_PER_TEAM - 1) / SweepBench.AGENTS_PER_TEAM;
        long s = System.nanoTime();
        long scanned = scan(db, LIVE);
        double scanSeconds = (System.nanoTime() - s) / 1e9;
        report.add("8", "Scan of the live table, " + n + " agents: items scanned", scanned, "items",
                "agents + team items", items, "= all", scanned == items);
        report.add("8", "Scan of the live table, " + n + " agents (1 thread, 1 MB pages): wall time", scanSeconds,
                "s", null, null);
        report.add("8", "Scan of the live table, " + n + " agents: items per second", scanned / scanSeconds,
                "items/s", null, null);
        report.note("8: Scan of " + scanned + " items; " + load());
        Tables tables = new Tables(LIVE, SweepBench.LEDGER);
        SweepStore store = new SweepStore(db, tables, SweepBench.SEGMENTS);
        Sweeper sweeper = new Sweeper(store, new TeamStore(db, tables),
                new SweepPlan.Policy(0.5, 4), new Sweeper.Timing(Duration.ofMillis(11_250), Duration.ofMinutes(11)),
                Clock.systemUTC());
        long residentBytes = heapAfterGc();
        for (int run = 1; run <= 2; run++) {
            System.gc();
            resetPeaks();
            // The store sizes its Scan segments from the last scan's count: 4 the first time, then up to 64.
            int segments = store.segments();
            long w = System.nanoTime();
            Sweeper.Report rep = sweeper.sweepOnce();
            double seconds = (System.nanoTime() - w) / 1e9;
            long peak = peakHeap();
            String label = "sweep of " + n + " healthy agents (" + (run == 1 ? "first" : "second") + " run)";
            report.add("8", label + ": wall time", seconds, "s", null, Double.NaN, "<= 10 s", seconds <= 10);
            report.add("8", label + ": agents seen alive", rep.aliveSeen(), "agents", "seeded", n, "= all",
                    rep.aliveSeen() == n);
            report.add("8", label + ": peak heap used", peak / 1e6, "MB", "heap after GC, table resident",
                    residentBytes / 1e6, null, null);
            report.add("8", label + ": writes (dead, misses)", rep.markedDead().size() + rep.missesRecorded(),
                    "req", "0 for a healthy fleet", 0, "0", rep.markedDead().isEmpty() && rep.missesRecorded() == 0);
            report.note("8: " + label + ": " + rep.itemsScanned() + " items scanned in " + segments + " segments; "
                    + load());
        }
    }

    /** 30 days of history for {@code agents} agents written to a ledger in a data dir. */
    private static void historyDurable(Report report, SamTemplate template, SweepBench.History history, Path dir,
                                       int agents) throws Exception {
        System.gc();
        try (Engine engine = Engine.open(dir, Clock.systemUTC())) {
            DynamoDbClient db = engine.client();
            db.createTable(template.createTableRequest(template.globalEnvironmentReference("LEDGER_TABLE"),
                    SweepBench.LEDGER));
            long before = heapAfterGc();
            long t0 = System.nanoTime();
            long written = SweepBench.seedHistory(db, history, agents);
            double seconds = (System.nanoTime() - t0) / 1e9;
            long after = heapAfterGc();
            long count = scanCount(db, SweepBench.LEDGER);
            String label = "history, " + agents + " agents x 30 days, into a data dir";
            report.add("8", label + ": items written", written, "items", "items per agent x agents",
                    (double) history.itemsPerAgent() * agents, "= all", written == (long) history.itemsPerAgent() * agents);
            report.add("8", label + ": items counted back (Scan COUNT)", count, "items", null, null);
            report.add("8", label + ": wall time", seconds, "s", null, null);
            report.add("8", label + ": items per second", written / seconds, "items/s", null, null);
            report.add("8", label + ": heap used after GC", after / 1e6, "MB", "before seeding", before / 1e6, null,
                    null);
            report.note("8: " + label + " (BatchWriteItem of 25 from 4 threads); " + load());
        }
    }

    /** Every item of a table, one thread, 1 MB pages; answers how many. */
    static long scan(DynamoDbClient db, String table) {
        long count = 0;
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = db.scan(r -> r.tableName(table).exclusiveStartKey(from));
            count += page.count();
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return count;
    }

    private static long scanCount(DynamoDbClient db, String table) {
        long count = 0;
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = db.scan(r -> r.tableName(table).select("COUNT").exclusiveStartKey(from));
            count += page.count();
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return count;
    }

    private static Map<String, AttributeValue> get(DynamoDbClient db, String table, String pk, String sk) {
        return db.getItem(g -> g.tableName(table).key(Map.of("pk", s(pk), "sk", s(sk)))).item();
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static List<MemoryPoolMXBean> heapPools() {
        return ManagementFactory.getMemoryPoolMXBeans().stream().filter(p -> p.getType() == MemoryType.HEAP).toList();
    }

    static void resetPeaks() {
        heapPools().forEach(MemoryPoolMXBean::resetPeakUsage);
    }

    /** The sum of the heap pools' peaks since the reset: at least the peak of their total, never less. */
    static long peakHeap() {
        return heapPools().stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
    }

    /** The machine's load average (1, 5, 15 minutes), as /proc/loadavg gives it. */
    static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return "load average " + f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "load average unknown (" + e.getClass().getSimpleName() + ")";
        }
    }

    private static void delete(Path dir) throws Exception {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
