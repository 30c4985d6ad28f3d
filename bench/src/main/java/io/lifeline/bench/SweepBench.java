package io.lifeline.bench;

import io.lifeline.agent.SweepPlan;
import io.lifeline.local.LocalDynamo;
import io.lifeline.store.SweepStore;
import io.lifeline.store.TeamStore;
import io.lifeline.sweep.Sweeper;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntPredicate;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Figure 2: the sweep (the functions' own {@link Sweeper} over {@link SweepStore}) on tables of N agents, 5%
 * stale, against a bare parallel Scan (same segments, no filter, no projection) of the same table in the same
 * run. Agents are copies of one agent the API registered and joined, written with BatchWriteItem.
 */
public final class SweepBench {
    static final int AGENTS_PER_TEAM = 100;
    static final int SEGMENTS = 4;

    private SweepBench() {
    }

    static void run(Report report, int[] sizes, int reps, Measured measured) throws Exception {
        try (LocalDynamo dynamo = LocalDynamo.start(null);
             MeteredStack stack = new MeteredStack(dynamo, "sweep-sample", Map.of(), Clock.systemUTC())) {
            stack.readyAgent("sample");
            Map<String, AttributeValue> sampleAgent = stack.plain.getItem(g -> g.tableName(stack.tables.live())
                    .key(Map.of("pk", AttributeValue.fromS("TEAM#" + MeteredStack.TEAM + "#AGENT#sample"),
                            "sk", AttributeValue.fromS("AGENT")))).item();
            Map<String, AttributeValue> sampleTeam = stack.plain.getItem(g -> g.tableName(stack.tables.live())
                    .key(Map.of("pk", AttributeValue.fromS("TEAM#" + MeteredStack.TEAM),
                            "sk", AttributeValue.fromS("TEAM")))).item();
            var details = report.details().putObject("sweep");
            details.put("sampleAgentItemBytes", itemBytes(sampleAgent));
            details.put("sampleAgentAttributes", sampleAgent.keySet().toString());
            for (int n : sizes) {
                String table = "sweep-" + n;
                // The template's table without its stream: DynamoDB Local's stream makes bulk seeding several
                // times slower, and neither the sweep's Scan nor a bare Scan reads it.
                stack.plain.createTable(stack.template.createTableRequest(
                        stack.template.globalEnvironmentReference("LIVE_TABLE"), table).toBuilder()
                        .streamSpecification((software.amazon.awssdk.services.dynamodb.model.StreamSpecification) null)
                        .build());
                long t0 = System.nanoTime();
                IntPredicate stale = i -> i % 20 == 0;
                seed(stack.plain, table, sampleAgent, sampleTeam, n, stale, Instant.now());
                double seedSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf("  seeded %d agents in %.1f s%n", n, seedSeconds);
                // The sweep reads and writes the live table only; the ledger is named but never touched.
                io.lifeline.store.Tables tables = new io.lifeline.store.Tables(table, table + "-ledger");
                SweepStore store = new SweepStore(stack.metered, tables, SEGMENTS);
                // The template's default timing: misses 11.25 s apart at least (each rep reseeds the agents, so
                // the spacing never refuses a rep's writes), restarting agents ended after the flow's longest run.
                Sweeper sweeper = new Sweeper(store, new TeamStore(stack.metered, tables),
                        new SweepPlan.Policy(0.5, 4),
                        new Sweeper.Timing(java.time.Duration.ofMillis(11_250), java.time.Duration.ofMinutes(11)),
                        Clock.systemUTC());
                double[] sweepMs = new double[reps];
                double[] scanMs = new double[reps];
                double[] readMs = new double[reps];
                double sweepUnits = 0;
                double scanUnits = 0;
                int writes = 0;
                int scanned = 0;
                int staleCount = n / 20 + (n % 20 == 0 ? 0 : 1);
                for (int r = 0; r < reps; r++) {
                    if (r > 0) {
                        // Put the stale agents back as they were (the last sweep recorded a miss on each).
                        seedAgents(stack.plain, table, sampleAgent, n, stale, Instant.now(), true);
                    }
                    long rs = System.nanoTime();
                    store.scan();
                    readMs[r] = (System.nanoTime() - rs) / 1e6;
                    boolean scanFirst = r % 2 == 0;
                    if (scanFirst) {
                        long s = System.nanoTime();
                        scanUnits = bareScan(stack.plain, table)[0];
                        scanMs[r] = (System.nanoTime() - s) / 1e6;
                    }
                    stack.meter.reset();
                    long s = System.nanoTime();
                    Sweeper.Report rep = sweeper.sweepOnce();
                    sweepMs[r] = (System.nanoTime() - s) / 1e6;
                    var t = stack.meter.totals();
                    writes = t.byOperation().getOrDefault("UpdateItem", 0) + t.byOperation().getOrDefault("PutItem", 0);
                    sweepUnits = rep.consumedReadUnits();
                    scanned = rep.itemsScanned();
                    if (!scanFirst) {
                        long s2 = System.nanoTime();
                        scanUnits = bareScan(stack.plain, table)[0];
                        scanMs[r] = (System.nanoTime() - s2) / 1e6;
                    }
                }
                double sweepMedian = median(sweepMs);
                double scanMedian = median(scanMs);
                int items = n + (n + AGENTS_PER_TEAM - 1) / AGENTS_PER_TEAM;
                double ruleUnits = Math.ceil(items * (double) itemBytes(sampleAgent) / 4096.0) * 0.5;
                String label = "sweep N=" + n + " (" + staleCount + " stale)";
                report.add("2", label + ": read units per sweep", sweepUnits, "RCU", "bare parallel Scan", scanUnits,
                        null, null);
                double perAgent = sweepUnits / n;
                report.add("2", label + ": read units per agent", perAgent, "RCU", "published rule (size/4KB/2)",
                        ruleUnits / n, "<= 0.05", perAgent <= 0.05);
                report.add("2", label + ": writes per sweep", writes, "req", "stale agents", staleCount,
                        "= stale (0 healthy)", writes == staleCount);
                report.add("2", label + ": wall time (median of " + reps + ")", sweepMedian, "ms", "bare parallel Scan",
                        scanMedian, "<= 1.3x", sweepMedian <= 1.3 * scanMedian);
                double readMedian = median(readMs);
                report.add("2", label + ": the sweep's Scan alone (SweepStore.scan)", readMedian, "ms",
                        "bare parallel Scan", scanMedian, "<= 1.3x", readMedian <= 1.3 * scanMedian);
                var d = details.putObject("n" + n);
                d.put("sweepScanOnlyMs", Arrays.toString(readMs));
                d.put("items", items).put("itemsScanned", scanned).put("seedSeconds", seedSeconds)
                        .put("sweepUnits", sweepUnits).put("bareScanUnits", scanUnits).put("ruleUnits", ruleUnits)
                        .put("writes", writes).put("stale", staleCount)
                        .put("sweepMs", Arrays.toString(sweepMs)).put("bareScanMs", Arrays.toString(scanMs));
                measured.sweepReadUnitsPerAgent = perAgent;
                if (n == sizes[0]) {
                    // How writes grow with the number of stale agents (same table, same N).
                    for (int share : new int[] {0, 20}) {
                        IntPredicate st = share == 0 ? i -> false : i -> i % 5 == 0;
                        seedAgents(stack.plain, table, sampleAgent, n, i -> true, Instant.now(), false);
                        seedAgents(stack.plain, table, sampleAgent, n, st, Instant.now(), true);
                        stack.meter.reset();
                        long ws = System.nanoTime();
                        Sweeper.Report rep = sweeper.sweepOnce();
                        double wall = (System.nanoTime() - ws) / 1e6;
                        long bs = System.nanoTime();
                        bareScan(stack.plain, table);
                        double bare = (System.nanoTime() - bs) / 1e6;
                        report.add("2", "sweep N=" + n + " with " + share + "% stale: wall time (one run)", wall, "ms",
                                "bare parallel Scan", bare, "<= 1.3x", wall <= 1.3 * bare);
                        int w = stack.meter.totals().byOperation().getOrDefault("UpdateItem", 0);
                        int expected = share == 0 ? 0 : n / 5;
                        report.add("2", "sweep N=" + n + " with " + share + "% stale: writes per sweep", w, "req",
                                "stale agents", expected, "= stale", w == expected);
                        d.put("writesAt" + share + "PercentStale", w).put("unitsAt" + share + "PercentStale",
                                rep.consumedReadUnits());
                    }
                }
                stack.plain.deleteTable(x -> x.tableName(table));
            }
        }
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }

    /** {units, scanned}: every item of the table, 4 segments in parallel, eventually consistent. */
    static double[] bareScan(DynamoDbClient dynamo, String table) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(SEGMENTS);
        try {
            List<Future<double[]>> parts = new ArrayList<>();
            for (int seg = 0; seg < SEGMENTS; seg++) {
                int segment = seg;
                parts.add(pool.submit(() -> {
                    double units = 0;
                    double count = 0;
                    Map<String, AttributeValue> start = null;
                    do {
                        Map<String, AttributeValue> from = start;
                        ScanResponse page = dynamo.scan(s -> s.tableName(table).segment(segment)
                                .totalSegments(SEGMENTS).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
                                .exclusiveStartKey(from));
                        count += page.scannedCount();
                        if (page.consumedCapacity() != null && page.consumedCapacity().capacityUnits() != null) {
                            units += page.consumedCapacity().capacityUnits();
                        }
                        start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
                                ? page.lastEvaluatedKey() : null;
                    } while (start != null);
                    return new double[] {units, count};
                }));
            }
            double units = 0;
            double count = 0;
            for (Future<double[]> f : parts) {
                units += f.get()[0];
                count += f.get()[1];
            }
            return new double[] {units, count};
        } finally {
            pool.shutdownNow();
        }
    }

    static void seed(DynamoDbClient dynamo, String table, Map<String, AttributeValue> agent,
                     Map<String, AttributeValue> team, int n, IntPredicate stale, Instant now) throws Exception {
        List<Map<String, AttributeValue>> teams = new ArrayList<>();
        for (int t = 0; t * AGENTS_PER_TEAM < n; t++) {
            Map<String, AttributeValue> item = new HashMap<>(team);
            item.put("pk", AttributeValue.fromS("TEAM#" + teamName(t)));
            teams.add(item);
        }
        write(dynamo, table, teams);
        seedAgents(dynamo, table, agent, n, i -> true, now, false);
        seedAgents(dynamo, table, agent, n, stale, now, true);
    }

    static String teamName(int t) {
        return "sw" + t;
    }

    /** Writes the agents {@code which} selects: alive and recently heard from, or stale (deadline passed). */
    static void seedAgents(DynamoDbClient dynamo, String table, Map<String, AttributeValue> sample, int n,
                           IntPredicate which, Instant now, boolean stale) throws Exception {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (which.test(i)) {
                items.add(agentItem(sample, i, now, stale));
            }
        }
        write(dynamo, table, items);
    }

    static Map<String, AttributeValue> agentItem(Map<String, AttributeValue> sample, int i, Instant now,
                                                 boolean stale) {
        Map<String, AttributeValue> item = new HashMap<>(sample);
        String id = String.format("agent-%06d", i);
        String team = teamName(i / AGENTS_PER_TEAM);
        item.put("pk", AttributeValue.fromS("TEAM#" + team + "#AGENT#" + id));
        item.put("sk", AttributeValue.fromS("AGENT"));
        item.put("tpk", AttributeValue.fromS("TEAM#" + team));
        item.put("tsk", AttributeValue.fromS(id));
        item.put("name", AttributeValue.fromS(id));
        item.put("status", AttributeValue.fromS("ready"));
        item.put("misses", AttributeValue.fromN("0"));
        long hb = stale ? now.toEpochMilli() - 120_000 : now.toEpochMilli() - 5_000;
        item.put("hbAt", AttributeValue.fromN(Long.toString(hb)));
        // A healthy agent's deadline lies an hour ahead: at 100,000 agents seeding and the measured sweeps take
        // minutes, and a 60 s deadline would turn the healthy agents stale mid-run (self-preservation then
        // holds the whole team and the sweep writes nothing).
        item.put("deadline", AttributeValue.fromN(Long.toString(stale ? hb + 60_000 : hb + 3_600_000)));
        return item;
    }

    /** BatchWriteItem in 25s from 4 threads, retrying what DynamoDB left unprocessed. */
    static void write(DynamoDbClient dynamo, String table, List<Map<String, AttributeValue>> items) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int from = 0; from < items.size(); from += 25) {
                List<Map<String, AttributeValue>> chunk = items.subList(from, Math.min(items.size(), from + 25));
                done.add(pool.submit(() -> {
                    Map<String, List<WriteRequest>> pending = Map.of(table, chunk.stream()
                            .map(it -> WriteRequest.builder().putRequest(PutRequest.builder().item(it).build()).build())
                            .toList());
                    while (!pending.isEmpty()) {
                        Map<String, List<WriteRequest>> req = pending;
                        BatchWriteItemResponse r = dynamo.batchWriteItem(b -> b.requestItems(req));
                        pending = r.hasUnprocessedItems() ? r.unprocessedItems() : Map.of();
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** An item's size by DynamoDB's published rules (numbers: about 1 byte per 2 digits, plus 1). */
    static int itemBytes(Map<String, AttributeValue> item) {
        int total = 0;
        for (var e : item.entrySet()) {
            total += utf8(e.getKey());
            AttributeValue v = e.getValue();
            if (v.s() != null) {
                total += utf8(v.s());
            } else if (v.n() != null) {
                total += (v.n().replace("-", "").replace(".", "").length() + 1) / 2 + 1;
            } else if (v.bool() != null || v.nul() != null) {
                total += 1;
            } else {
                total += utf8(v.toString());
            }
        }
        return total;
    }

    private static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
