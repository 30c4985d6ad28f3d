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

    /** One section of the run: its number for {@code --only}, its title, and what it measures. */
    private record Section(int number, String title, Body body) {
    }

    /** A section's measurement, given the report, the parsed options and the figures shared between sections. */
    @FunctionalInterface
    private interface Body {
        void run(Report report, Options o, Measured measured) throws Exception;
    }

    /** The sections in the order they run (the cost model last: it reads what the others measured). */
    private static final List<Section> SECTIONS = List.of(
            new Section(1, "1 store cost per operation", (report, o, measured) -> {
                DynamoDbClient store = new Engine(Clock.systemUTC()).client();
                try (MeteredStack stack = new MeteredStack(store, "bench-cost", Map.of(), Clock.systemUTC())) {
                    Map<String, StoreCost.OpCost> costs = new StoreCost(stack).measure(o.quick ? 3 : 10, 10);
                    Figures.storeCost(report, costs, measured);
                }
            }),
            new Section(2, "2 sweep cost and scaling", (report, o, measured) -> {
                int[] n = o.sizes != null ? o.sizes
                        : o.quick ? new int[] {1_000, 5_000} : new int[] {1_000, 10_000, 100_000};
                // Agents with the full 30 days of history on the ledger (the first ones of every size): seeding is
                // the bench's slowest part.
                int h = o.historyAgents >= 0 ? o.historyAgents : o.quick ? 100 : 1_000;
                SweepBench.run(report, n, 5, h, measured);
            }),
            new Section(3, "3 heartbeat throughput", (report, o, measured) ->
                    ThroughputBench.run(report, o.quick ? 4 : 4, o.quick ? 2_000 : 6_000, measured)),
            new Section(4, "4 cold start", (report, o, measured) -> ColdStartBench.run(report, o.quick ? 3 : 7)),
            new Section(5, "5 detection latency", (report, o, measured) -> {
                DetectionBench.run(report, o.quick ? 40 : 200);
                DetectionBench.runHosted(report, o.quick ? 40 : 200);
            }),
            new Section(7, "7 outbox lag under load", (report, o, measured) ->
                    OutboxLagBench.run(report, o.quick ? 10 : 30, 300, 20)),
            // Quick: a tenth of the fleet and of the history, so the whole run stays short.
            new Section(8, "8 store engine", (report, o, measured) ->
                    EngineBench.run(report, o.quick ? new EngineBench.Sizes(o.engineSizes.agents() / 10,
                            o.engineSizes.historyAgents() / 10, o.engineSizes.memoryUpdates() / 10,
                            o.engineSizes.durableUpdates() / 10) : o.engineSizes)),
            // Quick: the two smaller sizes, a team of 10,000 for the dashboard.
            new Section(9, "9 a million agents on Local", (report, o, measured) ->
                    MillionBench.run(report, o.quick ? new int[] {10_000, 100_000} : o.millionSizes,
                            o.quick ? 10_000 : 100_000, o.quick ? 4_000 : 20_000)),
            new Section(6, "6 cost model", (report, o, measured) -> CostReport.run(report, measured)));

    /** The command line's options. */
    private static final class Options {
        boolean quick;
        int[] sizes;
        int historyAgents = -1;
        EngineBench.Sizes engineSizes = EngineBench.Sizes.full();
        int[] millionSizes = {10_000, 100_000, 1_000_000};
        final List<Integer> only = new ArrayList<>();
        Path out;

        static Options parse(String[] args) {
            Options o = new Options();
            for (String a : args) {
                if (a.equals("--quick")) {
                    o.quick = true;
                } else if (a.startsWith("--only=")) {
                    for (String s : a.substring(7).split(",")) {
                        o.only.add(Integer.parseInt(s.trim()));
                    }
                } else if (a.startsWith("--sizes=")) {
                    o.sizes = Arrays.stream(a.substring(8).split(",")).mapToInt(x -> Integer.parseInt(x.trim()))
                            .toArray();
                } else if (a.startsWith("--history-agents=")) {
                    o.historyAgents = Integer.parseInt(a.substring(17));
                } else if (a.startsWith("--engine-agents=")) {
                    o.engineSizes = new EngineBench.Sizes(Integer.parseInt(a.substring(16)),
                            o.engineSizes.historyAgents(), o.engineSizes.memoryUpdates(),
                            o.engineSizes.durableUpdates());
                } else if (a.startsWith("--engine-history-agents=")) {
                    o.engineSizes = new EngineBench.Sizes(o.engineSizes.agents(), Integer.parseInt(a.substring(24)),
                            o.engineSizes.memoryUpdates(), o.engineSizes.durableUpdates());
                } else if (a.startsWith("--million-sizes=")) {
                    o.millionSizes = Arrays.stream(a.substring(16).split(","))
                            .mapToInt(x -> Integer.parseInt(x.trim())).toArray();
                } else if (a.startsWith("--out=")) {
                    o.out = Path.of(a.substring(6));
                } else {
                    System.err.println("usage: java -jar lifeline-bench.jar [--quick] [--only=1,2,3,4,5,6,7,8,9] "
                            + "[--sizes=N,...] [--history-agents=N] [--engine-agents=N] [--engine-history-agents=N] "
                            + "[--million-sizes=N,...] [--out=file]");
                    System.exit(2);
                }
            }
            if (o.out == null) {
                // A partial run must not replace the full run's figures: it writes beside them unless --out says
                // where.
                o.out = Path.of(o.only.isEmpty() ? "bench/results/latest.json"
                        : "bench/results/only-" + o.only.stream().map(String::valueOf).collect(
                                Collectors.joining("-")) + ".json");
            }
            return o;
        }
    }

    public static void main(String[] args) throws Exception {
        // Section 1 starts Local's event bus (a JDK HTTP server) before LifelineLocal's class sets this, and the
        // JDK reads it once: set it first so section 3's front door runs as Lifeline Local does on its own.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        Options o = Options.parse(args);
        long started = System.nanoTime();
        Report report = new Report();
        Measured measured = new Measured();
        for (Section sec : SECTIONS) {
            if (o.only.isEmpty() || o.only.contains(sec.number())) {
                section(sec.title());
                sec.body().run(report, o, measured);
            }
        }
        double took = (System.nanoTime() - started) / 1e9;
        var meta = Json.object().put("at", Instant.now().toString()).put("mode", o.quick ? "quick" : "full")
                .put("seconds", Math.round(took * 10) / 10.0)
                .put("java", System.getProperty("java.version"))
                .put("cpus", Runtime.getRuntime().availableProcessors())
                .put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        System.out.println();
        System.out.println(report.table());
        System.out.printf("ran in %.1f s (%s)%n", took, o.quick ? "quick" : "full");
        Files.createDirectories(o.out.toAbsolutePath().getParent());
        Files.writeString(o.out, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(report.json(meta)));
        System.out.println("wrote " + o.out);
        System.exit(0);
    }

    private static void section(String name) {
        System.out.println("== " + name);
    }
}
