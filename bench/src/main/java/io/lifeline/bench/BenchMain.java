package io.lifeline.bench;

import io.lifeline.engine.Engine;
import io.lifeline.support.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * {@code java -jar bench/target/lifeline-bench.jar [--quick] [--only=1,2,...] [--sizes=1000,10000]
 * [--history-agents=N] [--engine-agents=N] [--engine-history-agents=N] [--million-sizes=N,...]}: measures the figures of
 * BENCHMARKS.md side by side with their references, prints the table and writes bench/results/latest.json.
 * Exits 0 when it ran; it asserts no timings.
 */
public final class BenchMain {
    /** LIFELINE_BENCH_DEBUG set: the capacity meter prints each call it counts (CapacityMeter). */
    static final boolean DEBUG = System.getenv("LIFELINE_BENCH_DEBUG") != null;

    public static void main(String[] args) throws Exception {
        // Section 1 starts Local's event bus (a JDK HTTP server) before LifelineLocal's class sets this, and the
        // JDK reads it once: set it first so section 3's front door runs as Lifeline Local does on its own.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        boolean quick = false;
        int[] sizes = null;
        int historyAgents = -1;
        EngineBench.Sizes engineSizes = EngineBench.Sizes.full();
        int[] millionSizes = {10_000, 100_000, 1_000_000};
        List<Integer> only = new ArrayList<>();
        Path out = null;
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.startsWith("--only=")) {
                for (String s : a.substring(7).split(",")) {
                    only.add(Integer.parseInt(s.trim()));
                }
            } else if (a.startsWith("--sizes=")) {
                sizes = Arrays.stream(a.substring(8).split(",")).mapToInt(x -> Integer.parseInt(x.trim()))
                        .toArray();
            } else if (a.startsWith("--history-agents=")) {
                historyAgents = Integer.parseInt(a.substring(17));
            } else if (a.startsWith("--engine-agents=")) {
                engineSizes = new EngineBench.Sizes(Integer.parseInt(a.substring(16)), engineSizes.historyAgents(),
                        engineSizes.memoryUpdates(), engineSizes.durableUpdates());
            } else if (a.startsWith("--engine-history-agents=")) {
                engineSizes = new EngineBench.Sizes(engineSizes.agents(), Integer.parseInt(a.substring(24)),
                        engineSizes.memoryUpdates(), engineSizes.durableUpdates());
            } else if (a.startsWith("--million-sizes=")) {
                millionSizes = Arrays.stream(a.substring(16).split(",")).mapToInt(x -> Integer.parseInt(x.trim()))
                        .toArray();
            } else if (a.startsWith("--out=")) {
                out = Path.of(a.substring(6));
            } else {
                System.err.println("usage: java -jar lifeline-bench.jar [--quick] [--only=1,2,3,4,5,6,7,8,9] [--sizes=N,...] "
                        + "[--history-agents=N] [--engine-agents=N] [--engine-history-agents=N] [--million-sizes=N,...] "
                        + "[--out=file]");
                System.exit(2);
            }
        }
        if (out == null) {
            // A partial run must not replace the full run's figures: it writes beside them unless --out says where.
            out = Path.of(only.isEmpty() ? "bench/results/latest.json"
                    : "bench/results/only-" + only.stream().map(String::valueOf).collect(
                            Collectors.joining("-")) + ".json");
        }
        long started = System.nanoTime();
        Report report = new Report();
        Measured measured = new Measured();
        boolean all = only.isEmpty();
        if (all || only.contains(1)) {
            section("1 store cost per operation");
            DynamoDbClient store = new Engine(Clock.systemUTC()).client();
            try (MeteredStack stack = new MeteredStack(store, "bench-cost", Map.of(), Clock.systemUTC())) {
                Map<String, StoreCost.OpCost> costs = new StoreCost(stack).measure(quick ? 3 : 10, 10);
                Figures.storeCost(report, costs, measured);
            }
        }
        if (all || only.contains(2)) {
            section("2 sweep cost and scaling");
            int[] n = sizes != null ? sizes : quick ? new int[] {1_000, 5_000} : new int[] {1_000, 10_000, 100_000};
            // Agents with the full 30 days of history on the ledger (the first ones of every size): seeding is
            // the bench's slowest part.
            int h = historyAgents >= 0 ? historyAgents : quick ? 100 : 1_000;
            SweepBench.run(report, n, 5, h, measured);
        }
        if (all || only.contains(3)) {
            section("3 heartbeat throughput");
            ThroughputBench.run(report, quick ? 4 : 4, quick ? 2_000 : 6_000, measured);
        }
        if (all || only.contains(4)) {
            section("4 cold start");
            ColdStartBench.run(report, quick ? 3 : 7);
        }
        if (all || only.contains(5)) {
            section("5 detection latency");
            DetectionBench.run(report, quick ? 40 : 200);
            DetectionBench.runHosted(report, quick ? 40 : 200);
        }
        if (all || only.contains(7)) {
            section("7 outbox lag under load");
            OutboxLagBench.run(report, quick ? 10 : 30, 300, 20);
        }
        if (all || only.contains(8)) {
            section("8 store engine");
            // Quick: a tenth of the fleet and of the history, so the whole run stays short.
            EngineBench.run(report, quick ? new EngineBench.Sizes(engineSizes.agents() / 10,
                    engineSizes.historyAgents() / 10, engineSizes.memoryUpdates() / 10,
                    engineSizes.durableUpdates() / 10) : engineSizes);
        }
        if (all || only.contains(9)) {
            section("9 a million agents on Local");
            // Quick: the two smaller sizes, a team of 10,000 for the dashboard.
            MillionBench.run(report, quick ? new int[] {10_000, 100_000} : millionSizes,
                    quick ? 10_000 : 100_000, quick ? 4_000 : 20_000);
        }
        if (all || only.contains(6)) {
            section("6 cost model");
            CostReport.run(report, measured);
        }
        double took = (System.nanoTime() - started) / 1e9;
        var meta = Json.object().put("at", Instant.now().toString()).put("mode", quick ? "quick" : "full")
                .put("seconds", Math.round(took * 10) / 10.0)
                .put("java", System.getProperty("java.version"))
                .put("cpus", Runtime.getRuntime().availableProcessors())
                .put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        System.out.println();
        System.out.println(report.table());
        System.out.printf("ran in %.1f s (%s)%n", took, quick ? "quick" : "full");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(report.json(meta)));
        System.out.println("wrote " + out);
        System.exit(0);
    }

    private static void section(String name) {
        System.out.println("== " + name);
    }
}
