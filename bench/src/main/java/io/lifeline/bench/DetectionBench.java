package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Figure 5: detection latency in Lifeline Local with scaled timing (stale after 2 s, a sweep every 0.5 s,
 * grace 2): agents join in small waves so their deadlines fall at every phase of the sweep, then go silent;
 * for each, the time from its last heartbeat to its {@code heartbeat_expired} transition (both on the
 * server's clock, from the agent view) is compared with the configured bound staleAfter + grace x sweep.
 * Self-preservation is switched off here: every agent goes silent on purpose.
 */
final class DetectionBench {
    static final Duration STALE_AFTER = Duration.ofSeconds(2);
    static final Duration SWEEP = Duration.ofMillis(500);
    static final int GRACE = 2;
    private static final int WAVE = 10;

    private DetectionBench() {
    }

    /**
     * Lifeline Local at the bench's scaled timing, with self-preservation out of the way, the team's and the fleet's
     * (every agent of the run goes silent, which the fleet-wide guard would rightly hold): every death is measured.
     */
    private static LifelineLocal startLocal() throws Exception {
        return LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(),
                Map.of("StaleAfterSeconds", Long.toString(STALE_AFTER.toSeconds()),
                        "SweepIntervalMillis", Long.toString(SWEEP.toMillis()), "GraceMisses", Integer.toString(GRACE),
                        "SelfPreservationMinAlive", "1000000", "FleetSelfPreservationMinAlive", "1000000"),
                Clock.systemUTC()));
    }

    static void run(Report r, int n) throws Exception {
        Duration bound = STALE_AFTER.plus(SWEEP.multipliedBy(GRACE));
        HttpClient http = HttpClient.newHttpClient();
        try (LifelineLocal local = startLocal()) {
            URI base = local.url();
            for (int i = 0; i < n; i++) {
                call(http, base, local.adminKey(), "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"d-" + i + "\",\"name\":\"d" + i + "\",\"role\":\"bench\"}");
            }
            for (int i = 0; i < n; i++) {
                call(http, base, local.adminKey(), "POST", "/v1/teams/local/agents/d-" + i + "/join", null);
                if (i % WAVE == WAVE - 1) {
                    Thread.sleep(SWEEP.toMillis() / 5); // spread deadlines over the sweep's phases
                }
            }
            List<Double> latencies = new ArrayList<>();
            Instant giveUp = Instant.now().plus(bound.multipliedBy(4)).plusSeconds(30);
            while (Instant.now().isBefore(giveUp)) {
                JsonNode dead = Json.parse(call(http, base, local.adminKey(), "GET",
                        "/v1/teams/local/agents?status=dead", null)).get("agents");
                if (dead.size() >= n) {
                    for (JsonNode a : dead) {
                        Instant beat = Instant.parse(a.get("heartbeatTs").asText());
                        Instant died = diedAt(http, base, local.adminKey(), a);
                        latencies.add(Duration.between(beat, died).toMillis() / 1000.0);
                    }
                    break;
                }
                Thread.sleep(200);
            }
            if (latencies.size() < n) {
                r.note("figure 5: only " + latencies.size() + " of " + n + " agents were reported dead in time");
                return;
            }
            Collections.sort(latencies);
            double boundS = bound.toMillis() / 1000.0;
            r.add("5", "detection latency p50 (" + n + " deaths)", pct(latencies, 50), "s", "bound stale+grace x sweep",
                    boundS, "-", null);
            r.add("5", "detection latency p99 (" + n + " deaths)", pct(latencies, 99), "s", "bound stale+grace x sweep",
                    boundS, "<= bound + 1 s", pct(latencies, 99) <= boundS + 1);
            r.add("5", "detection latency max (" + n + " deaths)", latencies.get(latencies.size() - 1), "s",
                    "bound stale+grace x sweep", boundS, "-", null);
            long early = latencies.stream().filter(l -> l < STALE_AFTER.toMillis() / 1000.0).count();
            r.add("5", "deaths before stale-after (false early deaths)", early, "agents", "0", early == 0);
        }
    }

    /**
     * Figure 5 for hosted agents: the same timing; agents in hosts of 10, each host renewing its lease
     * every 250 ms (its daemon stays alive) with each agent's time since its last local beat; each agent hangs (its
     * local beats stop, its process runs) at a different moment over one second. For each, the time from its last
     * sign of life (the {@code heartbeatTs} its host's batch was answered with) to its death, against the same bound.
     */
    static void runHosted(Report r, int n) throws Exception {
        Duration bound = STALE_AFTER.plus(SWEEP.multipliedBy(GRACE));
        HttpClient http = HttpClient.newHttpClient();
        try (LifelineLocal local = startLocal()) {
            URI base = local.url();
            String key = local.adminKey();
            for (int i = 0; i < n; i++) {
                call(http, base, key, "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"hd-" + i + "\",\"name\":\"hd" + i + "\",\"role\":\"bench\"}");
                call(http, base, key, "POST", "/v1/teams/local/agents/hd-" + i + "/join", null);
            }
            long t0 = System.nanoTime();
            long[] stopNanos = new long[n];
            for (int i = 0; i < n; i++) {
                stopNanos[i] = t0 + Duration.ofMillis(1000 + (i * 617L) % 1000).toNanos();
            }
            Map<String, Instant> lastBeat = new HashMap<>();
            Map<String, Instant> died = new HashMap<>();
            Instant giveUp = Instant.now().plus(bound.multipliedBy(4)).plusSeconds(30);
            long nextCheck = 0;
            while (Instant.now().isBefore(giveUp) && died.size() < n) {
                for (int h = 0; h * 10 < n; h++) {
                    StringBuilder body = new StringBuilder("{\"hostId\":\"bench-host-" + h + "\",\"heartbeats\":[");
                    long now = System.nanoTime();
                    boolean any = false;
                    for (int i = h * 10; i < Math.min(n, h * 10 + 10); i++) {
                        if (died.containsKey("hd-" + i)) {
                            continue;
                        }
                        long age = Math.max(0, (now - stopNanos[i]) / 1_000_000);
                        body.append(any ? "," : "").append("{\"agentId\":\"hd-").append(i)
                                .append("\",\"localBeatAgeMs\":").append(age).append('}');
                        any = true;
                    }
                    if (!any) {
                        continue;
                    }
                    JsonNode answer = Json.parse(call(http, base, key, "POST", "/v1/teams/local/heartbeats",
                            body.append("]}").toString()));
                    for (JsonNode res : answer.path("results")) {
                        if (res.path("success").asBoolean()) {
                            lastBeat.put(res.get("agentId").asText(), Instant.parse(res.get("heartbeatTs").asText()));
                        }
                    }
                }
                if (System.nanoTime() > nextCheck) {
                    for (JsonNode a : Json.parse(call(http, base, key, "GET", "/v1/teams/local/agents?status=dead",
                            null)).get("agents")) {
                        if (a.get("agentId").asText().startsWith("hd-")) {
                            died.putIfAbsent(a.get("agentId").asText(), diedAt(http, base, key, a));
                        }
                    }
                    nextCheck = System.nanoTime() + 200_000_000L;
                }
                Thread.sleep(250);
            }
            if (died.size() < n) {
                r.note("figure 5 (hosted): only " + died.size() + " of " + n + " agents were reported dead in time");
                return;
            }
            List<Double> latencies = new ArrayList<>();
            died.forEach((id, at) -> latencies.add(Duration.between(lastBeat.get(id), at).toMillis() / 1000.0));
            Collections.sort(latencies);
            double boundS = bound.toMillis() / 1000.0;
            r.add("5", "hosted: detection latency p50 (" + n + " hung, hosts of 10)", pct(latencies, 50), "s",
                    "bound stale+grace x sweep", boundS, "-", null);
            r.add("5", "hosted: detection latency p99 (" + n + " hung, hosts of 10)", pct(latencies, 99), "s",
                    "bound stale+grace x sweep", boundS, "<= bound + 1 s", pct(latencies, 99) <= boundS + 1);
            r.add("5", "hosted: detection latency max (" + n + " hung, hosts of 10)", latencies.get(latencies.size() - 1),
                    "s", "bound stale+grace x sweep", boundS, "-", null);
            long early = latencies.stream().filter(l -> l < STALE_AFTER.toMillis() / 1000.0).count();
            r.add("5", "hosted: deaths before stale-after (false early deaths)", early, "agents", "0", early == 0);
        }
    }

    static double pct(List<Double> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static String call(HttpClient http, URI base, String key, String method, String path, String body)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * When a dead agent of the list died: its lastTransition's time, which the list carries only until the outbox
     * has published it (openapi.yaml, AgentView.lastTransition); then GET agent, which always carries it.
     */
    static Instant diedAt(HttpClient http, URI base, String key, JsonNode listed) throws Exception {
        JsonNode t = listed.path("lastTransition");
        if (!t.has("at")) {
            t = Json.parse(call(http, base, key, "GET", "/v1/teams/local/agents/" + listed.get("agentId").asText(),
                    null)).path("lastTransition");
        }
        return Instant.parse(t.get("at").asText());
    }
}
