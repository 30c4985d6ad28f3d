package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.SweepPlan;
import io.lifeline.api.HeartbeatHandler;
import io.lifeline.app.Sweeper;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.engine.Engine;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Figure 9: Lifeline Local on its in-process engine at 10,000, 100,000 and 1,000,000 agents, in teams of 100 with a
 * quarter of each team hosted in one lease of 25 ({@link FleetItems}). For each size, in a fresh engine behind the
 * template's functions ({@link MeteredStack}): the time to seed the live table; the functions' own {@link Sweeper}
 * over {@link SweepStore} (the template's default timing and policy), its wall time and peak heap on a healthy
 * fleet and again with 5 % of the agents stale; and heartbeats a second through the heartbeat handler called in
 * process from 4 threads. Then, once, what an open dashboard reads on each refresh of a team of 100,000 agents:
 * the three requests its poll makes, through Local's gateway, counted by the {@link CapacityMeter}.
 */
public final class MillionBench {
    static final String SECTION = "9";

    /** One size's figures, for the side-by-side table. */
    record Size(int agents, int items, double seedSeconds, double residentMb, double healthySeconds,
                double healthyPeakMb, int aliveSeen, int healthyWrites, double staleSeconds, double stalePeakMb,
                int stale, int staleWrites, double beatsPerSecond) {
    }

    private MillionBench() {
    }

    static void run(Report report, int[] sizes, int dashboardAgents, int beats) throws Exception {
        FleetItems fleet = FleetItems.sample();
        List<Size> done = new ArrayList<>();
        for (int n : sizes) {
            done.add(size(report, fleet, n, beats));
            EngineBench.heapAfterGc();
        }
        dashboard(report, fleet, dashboardAgents);
        sideBySide(report, done);
    }

    private static Size size(Report report, FleetItems fleet, int n, int beats) throws Exception {
        System.out.printf(Locale.ROOT, "  %,d agents%n", n);
        Engine engine = new Engine(Clock.systemUTC());
        try (MeteredStack stack = new MeteredStack(engine.client(), "million-" + n, Map.of(), Clock.systemUTC())) {
            DynamoDbClient db = stack.plain;
            Instant now = Instant.now();
            long before = EngineBench.heapAfterGc();
            long t0 = System.nanoTime();
            int items = fleet.seed(db, stack.tables, n, b -> "m" + b, now, false);
            double seedSeconds = (System.nanoTime() - t0) / 1e9;
            double residentMb = (EngineBench.heapAfterGc() - before) / 1e6;
            String at = String.format(Locale.ROOT, "%,d agents", n);
            report.add(SECTION, at + ": seeding (BatchWriteItem, 4 threads)", seedSeconds, "s",
                    null, null);
            report.add(SECTION, at + ": items written", items, "items", "agents x 2 (roster) + teams + leases",
                    2.0 * n + 2.0 * FleetItems.teams(n), "= all", items == 2 * n + 2 * FleetItems.teams(n));
            report.add(SECTION, at + ": heap the live table holds (after GC)", residentMb, "MB", null, null);
            report.note(SECTION + ": " + at + " seeded in " + Report.num(seedSeconds) + " s; " + EngineBench.load());
            Sweeper sweeper = sweeper(db, stack);
            sweeper.sweepOnce(); // the store sizes its segments from the last scan's count: the first run sizes them
            Measured healthy = sweep(sweeper);
            report.add(SECTION, at + ", healthy: sweep wall time", healthy.seconds, "s", "the sweep interval",
                    15, "<= 15 s", healthy.seconds <= 15);
            heap(report, at + ", healthy", healthy, residentMb);
            report.add(SECTION, at + ", healthy: agents seen alive", healthy.report.aliveSeen(), "agents", "seeded",
                    n, "= all", healthy.report.aliveSeen() == n);
            report.add(SECTION, at + ", healthy: sweep writes", healthy.writes(), "req", "0", 0, "0",
                    healthy.writes() == 0);
            report.note(SECTION + ": " + at + ", healthy sweep: " + EngineBench.load());
            int stale = fleet.seed(db, stack.tables, n, b -> "m" + b, now, true) - FleetItems.teams(n);
            Measured staleRun = sweep(sweeper);
            String s = at + ", 5 % stale (" + stale + ")";
            report.add(SECTION, s + ": sweep wall time", staleRun.seconds, "s", "the sweep interval", 15,
                    "<= 15 s", staleRun.seconds <= 15);
            heap(report, s, staleRun, residentMb);
            report.add(SECTION, s + ": sweep writes (a miss each)", staleRun.writes(), "req", "stale agents", stale,
                    "= stale", staleRun.writes() == stale);
            report.note(SECTION + ": " + s + " sweep: " + staleRun.report.itemsScanned() + " items scanned, "
                    + staleRun.report.missesRecorded() + " misses, " + staleRun.report.markedDead().size()
                    + " dead, teams held " + staleRun.report.teamsHeld().size() + "; " + EngineBench.load());
            double perSecond = heartbeats(db, stack, n, beats);
            report.add(SECTION, at + ": heartbeats/s through the in-process handler (4 threads)", perSecond, "1/s",
                    null, null);
            report.note(SECTION + ": " + at + ", " + beats + " heartbeats from 4 threads; " + EngineBench.load());
            Size size = new Size(n, items, seedSeconds, residentMb, healthy.seconds, healthy.peakMb,
                    healthy.report.aliveSeen(), healthy.writes(), staleRun.seconds, staleRun.peakMb, stale,
                    staleRun.writes(), perSecond);
            System.out.println("    " + size);
            return size;
        }
    }

    private static Sweeper sweeper(DynamoDbClient db, MeteredStack stack) {
        SweepStore store = new SweepStore(db, stack.tables, SweepBench.SEGMENTS);
        return new Sweeper(store, new TeamStore(db, stack.tables), new SweepPlan.Policy(0.5, 4),
                new Sweeper.Timing(Duration.ofMillis(11_250), Duration.ofMinutes(11)), Clock.systemUTC());
    }

    /**
     * A sweep's peak heap, the live table included (Local holds it in the same heap), and beyond the table: the
     * sweep's own, against the 1 GB a sweep has. The peak counts garbage not yet collected, so it is an upper bound;
     * a run with {@code -Xmx} at the table plus 1 GB shows whether the sweep fits.
     */
    private static void heap(Report report, String at, Measured run, double residentMb) {
        report.add(SECTION, at + ": sweep peak heap (table included)", run.peakMb, "MB", "table resident",
                residentMb, null, null);
        double beyond = run.peakMb - residentMb;
        report.add(SECTION, at + ": sweep peak heap beyond the table", beyond, "MB", "a sweep's memory", 1024,
                "<= 1024 MB", beyond <= 1024);
    }

    /** One sweep: its report, wall time and peak heap (the heap pools' peaks since a reset just before). */
    private record Measured(Sweeper.Report report, double seconds, double peakMb) {
        int writes() {
            return report.markedDead().size() + report.missesRecorded();
        }
    }

    private static Measured sweep(Sweeper sweeper) {
        System.gc();
        EngineBench.resetPeaks();
        long w = System.nanoTime();
        Sweeper.Report rep = sweeper.sweepOnce();
        double seconds = (System.nanoTime() - w) / 1e9;
        return new Measured(rep, seconds, EngineBench.peakHeap() / 1e6);
    }

    /** {@code total} heartbeats through the heartbeat handler, 4 threads, each beating its own healthy agents. */
    private static double heartbeats(DynamoDbClient db, MeteredStack stack, int n, int total) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("LIVE_TABLE", stack.tables.live());
        env.put("LEDGER_TABLE", stack.tables.ledger());
        HeartbeatHandler handler = new HeartbeatHandler(new Wiring(Config.fromEnvironment(env), Clock.systemUTC(), db));
        List<Integer> singles = new ArrayList<>();
        for (int i = 0; i < n && singles.size() < 4_000; i += 7) {
            if (!FleetItems.hosted(i) && !FleetItems.stale(i)) {
                singles.add(i);
            }
        }
        AtomicInteger failures = new AtomicInteger();
        int[] next = new int[4];
        // Thread t beats agents t, t + 4, t + 8, ... of the list, round and round: no two threads share an agent.
        ThroughputBench.Beat beat = t -> {
            int i = singles.get(t + 4 * (next[t]++ % (singles.size() / 4)));
            APIGatewayV2HTTPResponse r = handler.handleRequest(FleetItems.beatEvent("m" + i / FleetItems.BLOCK, i),
                    null);
            if (r.getStatusCode() != 200) {
                failures.incrementAndGet();
            }
        };
        ThroughputBench.measure("warm-up", beat, 4, Math.max(400, total / 10));
        ThroughputBench.Result r = ThroughputBench.measure("heartbeats, " + n + " agents", beat, 4, total);
        if (failures.get() > 0) {
            throw new IllegalStateException(failures.get() + " heartbeats were not answered 200");
        }
        return r.perSecond();
    }

    /** An open dashboard on a team of {@code agents}: the requests of one refresh, as its poll makes them. */
    private static void dashboard(Report report, FleetItems fleet, int agents) throws Exception {
        System.out.printf(Locale.ROOT, "  dashboard, a team of %,d agents%n", agents);
        Engine engine = new Engine(Clock.systemUTC());
        try (MeteredStack stack = new MeteredStack(engine.client(), "million-dash", Map.of(), Clock.systemUTC())) {
            fleet.seedTeam(stack.plain, stack.tables, MeteredStack.TEAM, agents, Instant.now());
            stack.warmAuthorizer();
            String team = "/v1/teams/" + MeteredStack.TEAM;
            Map<String, String> requests = new LinkedHashMap<>();
            requests.put("agents", team + "/agents");
            requests.put("events", team + "/events?limit=25");
            requests.put("settings", team + "/settings");
            ObjectNode d = report.details().putObject("dashboard");
            double units = 0;
            int calls = 0;
            long started = System.nanoTime();
            for (Map.Entry<String, String> e : requests.entrySet()) {
                stack.meter.reset();
                long s = System.nanoTime();
                String[] pathQuery = e.getValue().split("\\?", 2);
                LocalGateway.Response reply = stack.gateway.handle("GET", pathQuery[0],
                        pathQuery.length > 1 ? pathQuery[1] : null, Map.of("Authorization",
                                List.of("Bearer " + stack.adminKey)), null);
                double ms = (System.nanoTime() - s) / 1e6;
                CapacityMeter.Totals t = stack.meter.totals();
                units += t.readUnits();
                calls += t.requests();
                if (reply.status() != 200) {
                    throw new IllegalStateException(e.getValue() + " answered " + reply.status() + ": "
                            + reply.body());
                }
                int bytes = reply.body().getBytes(StandardCharsets.UTF_8).length;
                d.putObject(e.getKey()).put("path", e.getValue()).put("storeRequests", t.requests())
                        .put("readUnits", t.readUnits()).put("byOperation", t.byOperation().toString())
                        .put("bodyBytes", bytes).put("ms", ms);
                report.add(SECTION, "dashboard refresh, team of " + agents + ": GET " + e.getKey()
                        + " read units", t.readUnits(), "RCU", null, null);
                if (e.getKey().equals("agents")) {
                    report.add(SECTION, "dashboard refresh, team of " + agents + ": GET agents body", bytes / 1e6,
                            "MB", "Lambda's response limit", 6, "<= 6 MB", bytes <= 6_000_000);
                    int listed = Json.parse(reply.body()).get("agents").size();
                    // The list is paged: the dashboard's first read is one page of the route's default 100.
                    report.add(SECTION, "dashboard refresh, team of " + agents + ": agents listed", listed,
                            "agents", "one page", Math.min(agents, 100), "= a page", listed == Math.min(agents, 100));
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            report.add(SECTION, "dashboard refresh, team of " + agents + ": store requests", calls, "req", null,
                    null);
            report.add(SECTION, "dashboard refresh, team of " + agents + ": read units", units, "RCU",
                    "a new on-demand table's reads a second", 12_000, null, null);
            report.add(SECTION, "dashboard refresh, team of " + agents + ": wall time", seconds, "s",
                    "the poll interval", 2, "<= 2 s", seconds <= 2);
            report.note(SECTION + ": dashboard refresh: " + EngineBench.load());
        }
    }

    /** The sizes side by side, printed and in the results' details, so the growth shows. */
    private static void sideBySide(Report report, List<Size> sizes) {
        ObjectNode d = report.details().putObject("million");
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "  %-44s", "agents"));
        for (Size s : sizes) {
            head.append(String.format(Locale.ROOT, "%14s", String.format(Locale.ROOT, "%,d", s.agents())));
            d.set(Integer.toString(s.agents()), Json.MAPPER.valueToTree(s));
        }
        System.out.println(head);
        row(sizes, "seed (s)", Size::seedSeconds);
        row(sizes, "live table on the heap (MB)", Size::residentMb);
        row(sizes, "sweep, healthy (s)", Size::healthySeconds);
        row(sizes, "sweep, healthy: peak heap (MB)", Size::healthyPeakMb);
        row(sizes, "sweep, 5 % stale (s)", Size::staleSeconds);
        row(sizes, "sweep, 5 % stale: peak heap (MB)", Size::stalePeakMb);
        row(sizes, "sweep, 5 % stale: writes", s -> s.staleWrites());
        row(sizes, "heartbeats/s, in-process handler, 4 threads", Size::beatsPerSecond);
    }

    private static void row(List<Size> sizes, String name, ToDoubleFunction<Size> f) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "  %-44s", name));
        for (Size s : sizes) {
            b.append(String.format(Locale.ROOT, "%14s", Report.num(f.applyAsDouble(s))));
        }
        System.out.println(b);
    }
}
