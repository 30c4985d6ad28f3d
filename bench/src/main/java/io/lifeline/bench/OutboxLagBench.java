package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.template.SamTemplate;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figure 7: the outbox's lag under load in Lifeline Local. For {@code seconds}, {@code beats}
 * heartbeats a second reach the front door over HTTP, {@code changes} of them a second change the agent's status
 * (working and ready by report, alternately), so the live table's stream carries every beat and the publisher is
 * invoked only for the changes (FilterCriteria). The lag of a change is the time from its transition (its {@code at},
 * the API's clock) to its {@code AgentStatusChanged} arriving on the bus (Local's bus stamps arrival); the figure is
 * its p50, p99 and max over every change of the run, printed with the machine's load average (1 minute, read from
 * {@code /proc/loadavg} before and after the run: the machine is shared, and the figure follows its load). Local's
 * stream pump polls every 10 ms while records flow and every 100 ms when the stream is quiet.
 *
 * <p>The lag is broken down by stage with the pump's {@link io.lifeline.local.aws.StreamPump.Observer} (timestamps of
 * each batch the publisher is given; nothing is logged): the transition's {@code at} to the read that brought its
 * record (the stream wait: the write, the poll interval, the pass ahead of it), the read to the publisher's invocation
 * (the filter, the batch's conversion), and the invocation to the event's arrival on the bus (the publisher's work
 * before its PutEvents). Counts beside it: the pump's calls to the streams API, publisher invocations and batch sizes.
 */
final class OutboxLagBench {
    private static final int AGENTS = 200;
    private static final int SENDERS = 16;

    private OutboxLagBench() {
    }

    static void run(Report r, int seconds, int beatsPerSecond, int changesPerSecond) throws Exception {
        HttpClient http = HttpClient.newBuilder().executor(Executors.newFixedThreadPool(SENDERS)).build();
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(),
                Map.of("StaleAfterSeconds", "600"), Clock.systemUTC()))) {
            URI base = local.url();
            String key = local.adminKey();
            for (int i = 0; i < AGENTS; i++) {
                call(http, base, key, "/v1/teams/local/agents",
                        "{\"agentId\":\"lag-" + i + "\",\"name\":\"lag" + i + "\",\"role\":\"bench\"}");
                call(http, base, key, "/v1/teams/local/agents/lag-" + i + "/join", null);
            }
            Map<String, long[]> stages = observeStages(local);
            Map<String, Long> callsBefore = local.pump().streamCalls();
            long invocationsBefore = local.pump().invocations("PublisherFunction");
            double loadBefore = loadAverage();
            int before = local.bus().delivered().size();
            long startMs = System.currentTimeMillis();
            Beats beats = new Beats();
            long gcBefore = gcMillis();
            double achieved = beats.send(http, base, key, seconds, beatsPerSecond, changesPerSecond);
            Thread.sleep(3_000); // the last changes' events
            double loadAfter = loadAverage();
            long gcDuring = gcMillis() - gcBefore;
            Changes ch = Changes.read(local.bus().delivered(), before, startMs, stages);
            String load = String.format("%.0f beats/s, %d changes/s, %d s", achieved, changesPerSecond, seconds);
            var details = r.details().putObject("outboxLag").put("beatsPerSecondAchieved", achieved)
                    .put("changes", ch.lags.size()).put("failedBeats", beats.failed.get())
                    .put("loadAverageBefore", loadBefore).put("loadAverageAfter", loadAfter)
                    .put("streamRecordsRead", local.pump().recordsRead())
                    .put("publisherInvocations", local.pump().invocations("PublisherFunction"))
                    .put("publisherRecords", local.pump().recordsDelivered("PublisherFunction"));
            List<Double> answered = new ArrayList<>(beats.answers);
            Collections.sort(answered);
            if (!answered.isEmpty()) {
                details.putObject("heartbeatAnswerMs").put("p50", pct(answered, 50)).put("p99", pct(answered, 99))
                        .put("max", answered.get(answered.size() - 1));
            }
            details.put("gcMillisDuringRun", gcDuring);
            var timeline = details.putObject("worstLagBySecondOfRun");
            ch.worstBySecond.forEach((sec, ms) -> timeline.put(Long.toString(sec), ms));
            var calls = details.putObject("streamCallsDuringRun");
            local.pump().streamCalls().forEach((op, n) -> calls.put(op, n - callsBefore.getOrDefault(op, 0L)));
            long invocations = local.pump().invocations("PublisherFunction") - invocationsBefore;
            details.put("publisherInvocationsDuringRun", invocations);
            if (!ch.waits.isEmpty()) {
                var stage = details.putObject("stagesMs");
                stage.putObject("atToStreamRead").put("p50", pct(ch.waits, 50)).put("p99", pct(ch.waits, 99));
                stage.putObject("readToPublisherInvoked").put("p50", pct(ch.filters, 50))
                        .put("p99", pct(ch.filters, 99));
                stage.putObject("invokedToBus").put("p50", pct(ch.publishes, 50)).put("p99", pct(ch.publishes, 99));
                stage.putObject("batchSize").put("p50", pct(ch.batches, 50))
                        .put("max", ch.batches.get(ch.batches.size() - 1));
            }
            if (ch.lags.isEmpty()) {
                r.note("figure 7: no status change reached the bus during the run");
                return;
            }
            String loadAvg = String.format("load avg %.1f -> %.1f", loadBefore, loadAfter);
            report(r, local, ch, load, loadAvg, answered, invocations, calls);
            if (beats.failed.get() > 0) {
                r.note("figure 7: " + beats.failed.get() + " heartbeats were not answered 200");
            }
        }
    }

    /** Per status change (agent#seq), when the publisher's stream read it, invoked it, returned, and its batch size. */
    private static Map<String, long[]> observeStages(LifelineLocal local) {
        Map<String, long[]> stages = new ConcurrentHashMap<>();
        local.pump().observe((functionId, records, readAt, invokedAt, returnedAt) -> {
            if (!"PublisherFunction".equals(functionId)) {
                return;
            }
            for (var rec : records) {
                var image = rec.dynamodb().newImage();
                if (image == null || !image.containsKey("tseq") || !image.containsKey("pk")) {
                    continue;
                }
                String pk = image.get("pk").s();
                String agent = pk.substring(pk.indexOf("#AGENT#") + "#AGENT#".length());
                stages.put(agent + "#" + image.get("tseq").n(),
                        new long[] {readAt, invokedAt, returnedAt, records.size()});
            }
        });
        return stages;
    }

    /** Figure 7's rows: the lag's percentiles, then its stages and the run's heartbeat answers. */
    private static void report(Report r, LifelineLocal local, Changes ch, String load, String loadAvg,
                               List<Double> answered, long invocations, JsonNode calls) {
        List<Double> lags = ch.lags;
        r.add("7", "outbox lag p50 (" + load + ")", pct(lags, 50), "ms", loadAvg, Double.NaN, "-", null);
        r.add("7", "outbox lag p99 (" + load + ")", pct(lags, 99), "ms", loadAvg, Double.NaN, "<= 2000",
                pct(lags, 99) <= 2000);
        r.add("7", "outbox lag max (" + lags.size() + " changes)", lags.get(lags.size() - 1), "ms", "-", null);
        r.add("7", "publisher records / stream records", local.pump().recordsDelivered("PublisherFunction"),
                "records", "of " + local.pump().recordsRead() + " read", null);
        if (!ch.waits.isEmpty()) {
            r.add("7", "  stage: at -> stream read p50 / p99", pct(ch.waits, 50), "ms", "p99", pct(ch.waits, 99),
                    "-", null);
            r.add("7", "  stage: read -> publisher invoked p50 / p99", pct(ch.filters, 50), "ms", "p99",
                    pct(ch.filters, 99), "-", null);
            r.add("7", "  stage: invoked -> on the bus p50 / p99", pct(ch.publishes, 50), "ms", "p99",
                    pct(ch.publishes, 99), "-", null);
            r.add("7", "  publisher invocations / changes in the run", invocations, "calls", "changes",
                    lags.size(), "-", null);
        }
        if (!answered.isEmpty()) {
            r.add("7", "  heartbeat answer p50 / p99 (the same run)", pct(answered, 50), "ms", "p99",
                    pct(answered, 99), "-", null);
        }
        r.add("7", "  stream GetRecords during the run (empty)", calls.path("GetRecords").asLong(), "calls",
                "empty", calls.path("GetRecords.empty").asDouble(), "-", null);
    }

    /** The run's heartbeats: paced at the asked rate, every changeEvery-th one flipping its agent's work. */
    private static final class Beats {
        final AtomicLong sent = new AtomicLong();
        final AtomicInteger failed = new AtomicInteger();
        final List<Double> answers = Collections.synchronizedList(new ArrayList<>());

        /** Sends them all and answers the rate achieved, in beats a second. */
        double send(HttpClient http, URI base, String key, int seconds, int beatsPerSecond, int changesPerSecond)
                throws InterruptedException {
            ExecutorService pool = Executors.newFixedThreadPool(SENDERS);
            boolean[] working = new boolean[AGENTS];
            long periodNanos = 1_000_000_000L / beatsPerSecond;
            int changeEvery = Math.max(1, beatsPerSecond / Math.max(1, changesPerSecond));
            long t0 = System.nanoTime();
            long total = (long) seconds * beatsPerSecond;
            for (long n = 0; n < total; n++) {
                long due = t0 + n * periodNanos;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                int agent = (int) (n % AGENTS);
                String body;
                if (n % changeEvery == 0) {
                    synchronized (working) {
                        working[agent] = !working[agent];
                        body = "{\"status\":\"" + (working[agent] ? "active" : "idle") + "\"}";
                    }
                } else {
                    body = "{}";
                }
                pool.submit(() -> beat(http, base, key, agent, body));
            }
            pool.shutdown();
            pool.awaitTermination(2, TimeUnit.MINUTES);
            return sent.get() / ((System.nanoTime() - t0) / 1e9);
        }

        private void beat(HttpClient http, URI base, String key, int agent, String body) {
            long sentAt = System.nanoTime();
            try {
                HttpResponse<String> resp = http.send(HttpRequest.newBuilder(
                        base.resolve("/v1/teams/local/agents/lag-" + agent + "/heartbeat"))
                        .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + key)
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofString());
                answers.add((System.nanoTime() - sentAt) / 1e6);
                if (resp.statusCode() != 200) {
                    failed.incrementAndGet();
                }
            } catch (Exception e) {
                failed.incrementAndGet();
            }
            sent.incrementAndGet();
        }
    }

    /** The run's reported status changes on the bus: each one's lag, and its stages where the publisher saw it. */
    private static final class Changes {
        final TreeMap<Long, Double> worstBySecond = new TreeMap<>();
        final List<Double> lags = new ArrayList<>();
        final List<Double> waits = new ArrayList<>();
        final List<Double> filters = new ArrayList<>();
        final List<Double> publishes = new ArrayList<>();
        final List<Double> batches = new ArrayList<>();

        /** The changes delivered after the first {@code before}, made at or after {@code startMs}; sorted. */
        static Changes read(List<LocalEventBus.Delivered> all, int before, long startMs, Map<String, long[]> stages) {
            Changes c = new Changes();
            synchronized (all) {
                for (LocalEventBus.Delivered d : all.subList(before, all.size())) {
                    JsonNode detail = d.event().get("detail");
                    if (!"AgentStatusChanged".equals(d.detailType()) || !"report_working".equals(detail.path("trigger")
                            .asText()) && !"report_ready".equals(detail.path("trigger").asText())) {
                        continue;
                    }
                    long at = Instant.parse(detail.get("at").asText()).toEpochMilli();
                    if (at >= startMs) {
                        c.lags.add((double) (d.receivedAtMillis() - at));
                        c.worstBySecond.merge((at - startMs) / 1000, (double) (d.receivedAtMillis() - at), Math::max);
                        long[] st = stages.get(detail.path("agentId").asText() + "#" + detail.path("seq").asText());
                        if (st != null) {
                            c.waits.add((double) (st[0] - at));
                            c.filters.add((double) (st[1] - st[0]));
                            c.publishes.add((double) (d.receivedAtMillis() - st[1]));
                            c.batches.add((double) st[3]);
                        }
                    }
                }
            }
            Collections.sort(c.lags);
            List.of(c.waits, c.filters, c.publishes, c.batches).forEach(Collections::sort);
            return c;
        }
    }

    /** Milliseconds the JVM's collectors have spent so far. */
    static long gcMillis() {
        long total = 0;
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /** The 1-minute load average ({@code /proc/loadavg}), NaN where there is none. */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    static double pct(List<Double> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static void call(HttpClient http, URI base, String key, String path, String body) throws Exception {
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + key)
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() / 100 != 2) {
            throw new IllegalStateException(path + ": " + resp.statusCode() + " " + resp.body());
        }
    }
}
