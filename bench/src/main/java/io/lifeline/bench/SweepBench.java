package io.lifeline.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.SweepPlan;
import io.lifeline.app.Sweeper;
import io.lifeline.engine.Engine;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.team.TeamStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
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
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Figure 2: the sweep (the functions' own {@link Sweeper} over {@link SweepStore}) on live tables of N agents,
 * against a bare parallel Scan (same segments, no filter, no projection) of the same table in the same run, with
 * 30 days of history on the ledger. Agents are copies of one busy agent the API drove through a day (20 tasks
 * claimed and completed, a leave with a reason and a rejoin, an error that asked for a session rotation, a task
 * held at the end); its history is what the real outbox and handlers wrote for that day (transition records,
 * both copies of every event, tasks, its side item with metadata and checkpoint near their 4 KB limits and a
 * 4 KB last error), copied per day and agent with BatchWriteItem (history goes to the
 * ledger, the sweep scans the live table only).
 */
public final class SweepBench {
    static final int AGENTS_PER_TEAM = 100;
    static final int SEGMENTS = 4;
    /** Tasks the sample agent claims and completes in its day (20 tasks a day each). */
    static final int TASKS_A_DAY = 20;
    static final int HISTORY_DAYS = 30;
    /** The template's EventRetentionDays default: the event log keeps a week. */
    static final int EVENT_DAYS = 7;
    static final String SAMPLE = "sample";
    static final String LEDGER = "sweep-ledger";

    private SweepBench() {
    }

    /** One agent's history for one day, as the real code wrote it: items kept a day, items kept once. */
    record History(List<Map<String, AttributeValue>> daily, List<Map<String, AttributeValue>> events,
                   List<Map<String, AttributeValue>> once) {
        int itemsPerAgent() {
            return daily.size() * HISTORY_DAYS + events.size() * EVENT_DAYS + once.size();
        }

        long bytesPerAgent() {
            long b = 0;
            for (var i : daily) {
                b += (long) itemBytes(i) * HISTORY_DAYS;
            }
            for (var i : events) {
                b += (long) itemBytes(i) * EVENT_DAYS;
            }
            for (var i : once) {
                b += itemBytes(i);
            }
            return b;
        }
    }

    /** The sample agent and team items copies are made of, what its busy day left, and the run's details. */
    private record Sample(History history, Map<String, AttributeValue> agent, Map<String, AttributeValue> team,
                          int agentBytes, ObjectNode details) {
    }

    /**
     * {@code historyAgents}: how many agents (the first ones of every size) get the full 30 days of history on
     * the ledger; the ledger is seeded once and shared by every size.
     */
    static void run(Report report, int[] sizes, int reps, int historyAgents, Measured measured) throws Exception {
        // -Dlifeline.bench.sweepReps=1: one timed healthy sweep a size, for sizes where a Scan takes minutes.
        int timed = Integer.getInteger("lifeline.bench.sweepReps", reps);
        Engine engine = new Engine(Clock.systemUTC());
        try (MeteredStack stack = new MeteredStack(engine.client(), engine.streamsClient(), "sweep-sample", Map.of(),
                Clock.systemUTC())) {
            Sample sample = sample(stack, report, historyAgents, measured);
            stack.plain.createTable(stack.template.createTableRequest(
                    stack.template.globalEnvironmentReference("LEDGER_TABLE"), LEDGER));
            boolean ledgerSeeded = false;
            for (int n : sizes) {
                sweepSize(stack, report, sample, n, timed, historyAgents, !ledgerSeeded, measured);
                ledgerSeeded = true;
            }
        }
    }

    /** Drives the sample agent through its busy day and records what its items and history weigh. */
    private static Sample sample(MeteredStack stack, Report report, int historyAgents, Measured measured)
            throws Exception {
        History history = busyDay(stack);
        Map<String, AttributeValue> sampleAgent = stack.plain.getItem(g -> g.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS("TEAM#" + MeteredStack.TEAM + "#AGENT#" + SAMPLE),
                        "sk", AttributeValue.fromS("AGENT")))).item();
        Map<String, AttributeValue> sampleTeam = stack.plain.getItem(g -> g.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS("TEAM#" + MeteredStack.TEAM),
                        "sk", AttributeValue.fromS("TEAM")))).item();
        var details = report.details().putObject("sweep");
        int agentBytes = itemBytes(agentItem(sampleAgent, 123, Instant.now(), false));
        details.put("sampleAgentItemBytes", agentBytes);
        details.put("sampleAgentAttributes", new TreeSet<>(sampleAgent.keySet()).toString());
        // What each attribute of a copy (agent-000123 of team sw1) costs every sweep, largest first.
        var byAttribute = details.putObject("copiedAgentBytesByAttribute");
        Map<String, AttributeValue> copied = agentItem(sampleAgent, 123, Instant.now(), false);
        copied.entrySet().stream().sorted((a, b) -> Integer.compare(itemBytes(Map.of(b.getKey(), b.getValue())),
                itemBytes(Map.of(a.getKey(), a.getValue()))))
                .forEach(e -> byAttribute.put(e.getKey(), itemBytes(Map.of(e.getKey(), e.getValue()))));
        details.put("copiedAgentItemBytes", itemBytes(copied));
        details.put("historyItemsPerAgentDay", history.daily().size()).put("eventItemsPerAgentDay",
                history.events().size()).put("onceItemsPerAgent", history.once().size())
                .put("historyItemsPerAgent", history.itemsPerAgent())
                .put("historyBytesPerAgent", history.bytesPerAgent()).put("historyAgents", historyAgents);
        System.out.printf("  busy agent: live item %d bytes; history %d items (%.1f MB) per agent over %d days%n",
                agentBytes, history.itemsPerAgent(), history.bytesPerAgent() / 1e6, HISTORY_DAYS);
        measured.liveAgentItemBytes = agentBytes;
        measured.historyItemsPerAgent = history.itemsPerAgent();
        return new Sample(history, sampleAgent, sampleTeam, agentBytes, details);
    }

    /**
     * One size: a live table of {@code n} copies, the ledger's history seeded before its first healthy sweep when
     * {@code seedLedger} (with the same sweep before and after, for the with/without comparison), healthy sweeps
     * against a bare Scan, then a sweep with 5% stale.
     */
    private static void sweepSize(MeteredStack stack, Report report, Sample sample, int n, int reps,
                                  int historyAgents, boolean seedLedger, Measured measured) throws Exception {
        String table = "sweep-" + n;
        // The template's live table without its stream: it would hold a record of every seeded item, and
        // neither the sweep's Scan nor a bare Scan reads it.
        stack.plain.createTable(stack.template.createTableRequest(
                stack.template.globalEnvironmentReference("LIVE_TABLE"), table).toBuilder()
                .streamSpecification((StreamSpecification) null)
                .build());
        long t0 = System.nanoTime();
        seed(stack.plain, table, sample.agent(), sample.team(), n, i -> false, Instant.now());
        double seedSeconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf("  seeded %d agents in %.1f s%n", n, seedSeconds);
        Tables tables = new Tables(table, LEDGER);
        SweepStore store = new SweepStore(stack.metered, tables, SEGMENTS);
        // The template's default timing: misses 11.25 s apart at least, restarting agents ended after the
        // flow's longest run.
        Sweeper sweeper = new Sweeper(store, new TeamStore(stack.metered, tables),
                new SweepPlan.Policy(0.5, 4),
                new Sweeper.Timing(Duration.ofMillis(11_250), Duration.ofMinutes(11)),
                Clock.systemUTC());
        var d = sample.details().putObject("n" + n);
        d.put("seedSeconds", seedSeconds);
        if (seedLedger) {
            withAndWithoutHistory(stack, report, sample, sweeper, n, historyAgents, d, measured);
        }
        int segments = healthy(stack, report, sample, store, sweeper, table, n, reps, historyAgents, d, measured);
        stale(stack, report, sample, sweeper, table, n, segments, d);
        stack.plain.deleteTable(x -> x.tableName(table));
    }

    /** The same sweep before any history exists and after the ledger is seeded. */
    private static void withAndWithoutHistory(MeteredStack stack, Report report, Sample sample, Sweeper sweeper,
                                              int n, int historyAgents, ObjectNode d, Measured measured)
            throws Exception {
        Sweeper.Report bare = sweeper.sweepOnce();
        double before = bare.consumedReadUnits() / bare.aliveSeen();
        d.put("unitsPerAliveAgentWithoutHistory", before).put("itemsScannedWithoutHistory",
                bare.itemsScanned());
        measured.sweepReadUnitsPerAgentNoHistory = before;
        long h0 = System.nanoTime();
        long written = seedHistory(stack.plain, sample.history(), historyAgents);
        double hs = (System.nanoTime() - h0) / 1e9;
        System.out.printf("  seeded the ledger: %d history items for %d agents in %.1f s%n", written,
                historyAgents, hs);
        sample.details().put("ledgerItems", written).put("ledgerSeedSeconds", hs);
        report.add("2", "ledger history: " + historyAgents + " agents x 30 days (20 tasks a day)",
                written, "items", "items per agent", sample.history().itemsPerAgent(), null, null);
        Sweeper.Report after = sweeper.sweepOnce();
        report.add("2", "sweep N=" + n + ": read units per alive agent, with / without history",
                after.consumedReadUnits() / after.aliveSeen(), "RCU", "same table, ledger empty", before,
                "no more", after.consumedReadUnits() / after.aliveSeen() <= before);
    }

    /**
     * Warm up once (and let the store size its segments to the table), then time healthy sweeps against a bare
     * parallel Scan with the same segments, alternating which goes first; answers the segments.
     */
    private static int healthy(MeteredStack stack, Report report, Sample sample, SweepStore store, Sweeper sweeper,
                               String table, int n, int reps, int historyAgents, ObjectNode d, Measured measured)
            throws Exception {
        store.scan(page -> { });
        int segments = store.segments();
        double[] sweepMs = new double[reps];
        double[] scanMs = new double[reps];
        double[] readMs = new double[reps];
        double sweepUnits = 0;
        double scanUnits = 0;
        int scanned = 0;
        int alive = 0;
        int writes = 0;
        for (int r = 0; r < reps; r++) {
            boolean scanFirst = r % 2 == 0;
            long rs = System.nanoTime();
            store.scan(page -> { });
            readMs[r] = (System.nanoTime() - rs) / 1e6;
            if (scanFirst) {
                long s = System.nanoTime();
                scanUnits = bareScan(stack.plain, table, segments)[0];
                scanMs[r] = (System.nanoTime() - s) / 1e6;
            }
            stack.meter.reset();
            HeapWatch heap = r == reps - 1 ? new HeapWatch() : null;
            long s = System.nanoTime();
            Sweeper.Report rep = sweeper.sweepOnce();
            sweepMs[r] = (System.nanoTime() - s) / 1e6;
            System.out.printf("  sweep N=%d, healthy: %.0f ms (its Scan alone %.0f ms)%n", n, sweepMs[r], readMs[r]);
            if (heap != null) {
                heap.close();
                heap.report(report, label(n, historyAgents), d);
            }
            var t = stack.meter.totals();
            writes += t.byOperation().getOrDefault("UpdateItem", 0) + t.byOperation().getOrDefault("PutItem", 0);
            sweepUnits = rep.consumedReadUnits();
            scanned = rep.itemsScanned();
            alive = rep.aliveSeen();
            if (!scanFirst) {
                long s2 = System.nanoTime();
                scanUnits = bareScan(stack.plain, table, segments)[0];
                scanMs[r] = (System.nanoTime() - s2) / 1e6;
            }
        }
        double sweepMedian = median(sweepMs);
        double scanMedian = median(scanMs);
        int items = n + (n + AGENTS_PER_TEAM - 1) / AGENTS_PER_TEAM;
        double ruleUnits = Math.ceil(items * (double) sample.agentBytes() / 4096.0) * 0.5;
        String label = label(n, historyAgents);
        double perAgent = sweepUnits / alive;
        report.add("2", label + ": read units per alive agent per sweep", perAgent, "RCU",
                "published rule (size/4KB/2)", ruleUnits / n, "<= 0.03", perAgent <= 0.03);
        report.add("2", label + ": items scanned per alive agent", (double) scanned / alive, "items",
                "agents + team items", (double) items / n, "<= 1.5", (double) scanned / alive <= 1.5);
        report.add("2", label + ": writes", writes, "req", "stale agents", 0, "0", writes == 0);
        report.add("2", label + ": wall time (median of " + reps + ")", sweepMedian, "ms",
                "bare parallel Scan, " + segments + " segments", scanMedian, "<= 1.3x",
                sweepMedian <= 1.3 * scanMedian);
        double readMedian = median(readMs);
        report.add("2", label + ": the sweep's Scan alone (SweepStore.scan)", readMedian, "ms",
                "bare parallel Scan, " + segments + " segments", scanMedian, "<= 1.3x",
                readMedian <= 1.3 * scanMedian);
        d.put("sweepScanOnlyMs", Arrays.toString(readMs));
        d.put("items", items).put("itemsScanned", scanned).put("aliveSeen", alive).put("segments", segments)
                .put("sweepUnits", sweepUnits).put("bareScanUnits", scanUnits).put("ruleUnits", ruleUnits)
                .put("sweepMs", Arrays.toString(sweepMs)).put("bareScanMs", Arrays.toString(scanMs));
        measured.sweepReadUnitsPerAgent = perAgent;
        measured.sweepAgents = n;
        return segments;
    }

    private static String label(int n, int historyAgents) {
        return "sweep N=" + n + ", healthy, " + Math.min(n, historyAgents) + " with 30 days of history";
    }

    /** 5% stale: the sweep writes one conditional miss per stale agent and nothing else. */
    private static void stale(MeteredStack stack, Report report, Sample sample, Sweeper sweeper, String table,
                              int n, int segments, ObjectNode d) throws Exception {
        IntPredicate stale = i -> i % 20 == 0;
        int staleCount = (n + 19) / 20;
        seedAgents(stack.plain, table, sample.agent(), n, stale, Instant.now(), true);
        stack.meter.reset();
        HeapWatch heap = new HeapWatch();
        long ws = System.nanoTime();
        Sweeper.Report rep = sweeper.sweepOnce();
        double wall = (System.nanoTime() - ws) / 1e6;
        heap.close();
        System.out.printf("  sweep N=%d, 5%% stale: %.0f ms, %d dead or missed%n", n, wall,
                rep.markedDead().size() + rep.missesRecorded());
        long bs = System.nanoTime();
        bareScan(stack.plain, table, segments);
        double bareMs = (System.nanoTime() - bs) / 1e6;
        int w = stack.meter.totals().byOperation().getOrDefault("UpdateItem", 0);
        String staleLabel = "sweep N=" + n + ", 5% stale (" + staleCount + ")";
        report.add("2", staleLabel + ": writes per sweep", w, "req", "stale agents", staleCount, "= stale",
                w == staleCount);
        report.add("2", staleLabel + ": wall time (one run)", wall, "ms", "bare parallel Scan", bareMs, null,
                null);
        heap.report(report, staleLabel, d);
        d.put("staleWrites", w).put("staleUnits", rep.consumedReadUnits()).put("staleSweepMs", wall)
                .put("staleBareScanMs", bareMs);
    }

    /**
     * Drives the sample agent through one busy day with the API, lets the outbox catch up, and answers what
     * the day left on the ledger for that agent.
     */
    static History busyDay(MeteredStack stack) throws Exception {
        stack.meter.enabled(false);
        stack.readyAgent(SAMPLE);
        String path = stack.agentPath(SAMPLE);
        String teamPath = "/v1/teams/" + MeteredStack.TEAM;
        // Metadata and checkpoint near their 4 KB limits; a last error of 4,096 characters.
        String blob = "x".repeat(4_000);
        stack.expect(200, "POST", path + "/heartbeat", "{\"metadata\":{\"notes\":\"" + blob + "\"},\"checkpoint\":"
                + "{\"state\":\"" + blob + "\"}}");
        String error = "prompt is too long: context window exceeded ";
        stack.expect(200, "POST", path + "/errors", "{\"message\":\"" + error + "y".repeat(4_096 - error.length())
                + "\"}");
        String title = "t".repeat(256);
        for (int t = 0; t <= TASKS_A_DAY; t++) {
            String task = SAMPLE + "-task-" + t;
            stack.expect(201, "POST", teamPath + "/tasks", "{\"taskId\":\"" + task + "\",\"title\":\"" + title + "\"}");
            stack.expect(200, "POST", teamPath + "/tasks/" + task + "/claim", "{\"agentId\":\"" + SAMPLE + "\"}");
            stack.expect(200, "POST", path + "/heartbeat", "{\"status\":\"working\",\"stats\":{\"messagesProcessed\":"
                    + (t * 37) + ",\"toolCallsExecuted\":" + (t * 211) + ",\"errorsEncountered\":" + t + "}}");
            if (t < TASKS_A_DAY) {
                stack.expect(200, "POST", teamPath + "/tasks/" + task + "/complete", "{\"agentId\":\"" + SAMPLE + "\"}");
            }
            if (t == TASKS_A_DAY - 1) {
                stack.expect(200, "POST", path + "/leave", "{\"reason\":\"" + "r".repeat(160) + "\"}");
                stack.expect(200, "POST", path + "/join", null);
            }
        }
        stack.pump.drain();
        stack.meter.enabled(true);
        List<Map<String, AttributeValue>> daily = new ArrayList<>();
        List<Map<String, AttributeValue>> events = new ArrayList<>();
        List<Map<String, AttributeValue>> once = new ArrayList<>();
        for (var page : stack.plain.scanPaginator(r -> r.tableName(stack.tables.ledger()))) {
            for (Map<String, AttributeValue> item : page.items()) {
                String pk = item.get("pk").s();
                boolean mine = item.values().stream().anyMatch(v -> v.s() != null && v.s().contains(SAMPLE));
                if (!mine || pk.startsWith("KEY#") || pk.startsWith("OPERATOR")) {
                    continue;
                }
                if ("DATA".equals(item.get("sk").s()) || item.get("sk").s().startsWith("AGENT#")) {
                    once.add(item); // its side item, and its entry in the team's roster
                } else if (item.containsKey("eventId") && item.containsKey("type")) {
                    events.add(item);
                } else {
                    daily.add(item);
                }
            }
        }
        if (daily.isEmpty() || events.isEmpty() || once.isEmpty()) {
            throw new IllegalStateException("the busy day left no history on the ledger: " + daily.size() + " / "
                    + events.size() + " / " + once.size());
        }
        return new History(daily, events, once);
    }

    /** Writes {@code agents} agents' 30 days of history to the ledger; answers how many items. */
    static long seedHistory(DynamoDbClient dynamo, History history, int agents) throws Exception {
        long written = 0;
        List<Map<String, AttributeValue>> batch = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
            String id = agentId(i);
            String team = teamName(i / AGENTS_PER_TEAM);
            for (var item : history.once()) {
                batch.add(copy(item, id, team, -1));
            }
            for (int day = 0; day < HISTORY_DAYS; day++) {
                for (var item : history.daily()) {
                    batch.add(copy(item, id, team, day));
                }
                if (day < EVENT_DAYS) {
                    for (var item : history.events()) {
                        batch.add(copy(item, id, team, day));
                    }
                }
            }
            if (batch.size() >= 20_000 || i == agents - 1) {
                write(dynamo, LEDGER, batch);
                written += batch.size();
                batch = new ArrayList<>();
            }
        }
        return written;
    }

    /** The sample's item as agent {@code id} of {@code team} wrote it on {@code day} (-1: kept once). */
    static Map<String, AttributeValue> copy(Map<String, AttributeValue> item, String id, String team, int day) {
        Map<String, AttributeValue> out = new HashMap<>();
        item.forEach((k, v) -> {
            if (v.s() != null) {
                String s = v.s().replace(SAMPLE, id).replace("TEAM#" + MeteredStack.TEAM, "TEAM#" + team);
                if (k.equals("sk") && day >= 0) {
                    s = s + "#d" + day;
                }
                out.put(k, AttributeValue.fromS(s));
            } else {
                out.put(k, v);
            }
        });
        return out;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }

    /** {units, scanned}: every item of the table, {@code segments} in parallel, eventually consistent. */
    static double[] bareScan(DynamoDbClient dynamo, String table, int segments) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(segments);
        try {
            List<Future<double[]>> parts = new ArrayList<>();
            for (int seg = 0; seg < segments; seg++) {
                int segment = seg;
                parts.add(pool.submit(() -> {
                    double units = 0;
                    double count = 0;
                    Map<String, AttributeValue> start = null;
                    do {
                        Map<String, AttributeValue> from = start;
                        ScanResponse page = dynamo.scan(s -> s.tableName(table).segment(segment)
                                .totalSegments(segments).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)
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

    static String agentId(int i) {
        return String.format("agent-%06d", i);
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
        Map<String, AttributeValue> item = copy(sample, agentId(i), teamName(i / AGENTS_PER_TEAM), -1);
        String id = agentId(i);
        String team = teamName(i / AGENTS_PER_TEAM);
        item.put("pk", AttributeValue.fromS("TEAM#" + team + "#AGENT#" + id));
        item.put("sk", AttributeValue.fromS("AGENT"));
        item.remove("misses");
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
