package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.LifelineLocal;
import io.lifeline.local.LocalEventBus;
import io.lifeline.local.SamTemplate;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figure 7 (issue 14, item 2): the outbox's lag under load in Lifeline Local. For {@code seconds}, {@code beats}
 * heartbeats a second reach the front door over HTTP, {@code changes} of them a second change the agent's status
 * (working and ready by report, alternately), so the live table's stream carries every beat and the publisher is
 * invoked only for the changes (FilterCriteria). The lag of a change is the time from its transition (its {@code at},
 * the API's clock) to its {@code AgentStatusChanged} arriving on the bus (Local's bus stamps arrival); the figure is
 * its p50, p99 and max over every change of the run. Local's stream pump polls every 100 ms, as Lambda polls a
 * stream shard about four times a second.
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
            int before = local.bus().delivered().size();
            long startMs = System.currentTimeMillis();
            ExecutorService pool = Executors.newFixedThreadPool(SENDERS);
            AtomicLong sent = new AtomicLong();
            AtomicInteger failed = new AtomicInteger();
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
                pool.submit(() -> {
                    try {
                        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(
                                base.resolve("/v1/teams/local/agents/lag-" + agent + "/heartbeat"))
                                .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + key)
                                .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (resp.statusCode() != 200) {
                            failed.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                    sent.incrementAndGet();
                });
            }
            pool.shutdown();
            pool.awaitTermination(2, TimeUnit.MINUTES);
            double achieved = sent.get() / ((System.nanoTime() - t0) / 1e9);
            Thread.sleep(3_000); // the last changes' events
            List<Double> lags = new ArrayList<>();
            List<LocalEventBus.Delivered> all = local.bus().delivered();
            synchronized (all) {
                for (LocalEventBus.Delivered d : all.subList(before, all.size())) {
                    JsonNode detail = d.event().get("detail");
                    if (!"AgentStatusChanged".equals(d.detailType()) || !"report_working".equals(detail.path("trigger")
                            .asText()) && !"report_ready".equals(detail.path("trigger").asText())) {
                        continue;
                    }
                    long at = Instant.parse(detail.get("at").asText()).toEpochMilli();
                    if (at >= startMs) {
                        lags.add((double) (d.receivedAtMillis() - at));
                    }
                }
            }
            Collections.sort(lags);
            String load = String.format("%.0f beats/s, %d changes/s, %d s", achieved, changesPerSecond, seconds);
            r.details().putObject("outboxLag").put("beatsPerSecondAchieved", achieved).put("changes", lags.size())
                    .put("failedBeats", failed.get()).put("streamRecordsRead", local.pump().recordsRead())
                    .put("publisherInvocations", local.pump().invocations("PublisherFunction"))
                    .put("publisherRecords", local.pump().recordsDelivered("PublisherFunction"));
            if (lags.isEmpty()) {
                r.note("figure 7: no status change reached the bus during the run");
                return;
            }
            r.add("7", "outbox lag p50 (" + load + ")", pct(lags, 50), "ms", "-", null);
            r.add("7", "outbox lag p99 (" + load + ")", pct(lags, 99), "ms", "<= 2000", pct(lags, 99) <= 2000);
            r.add("7", "outbox lag max (" + lags.size() + " changes)", lags.get(lags.size() - 1), "ms", "-", null);
            r.add("7", "publisher records / stream records", local.pump().recordsDelivered("PublisherFunction"),
                    "records", "of " + local.pump().recordsRead() + " read", null);
            if (failed.get() > 0) {
                r.note("figure 7: " + failed.get() + " heartbeats were not answered 200");
            }
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
