package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
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
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Healthy agents heartbeat through Lifeline Local's HTTP front door on the real clock with
 * scaled timing (a beat every 2 s with up to half an interval of jitter either way, stale after 5 s, a sweep
 * every second, grace 2), while the service is stopped for up to 2 s at random moments (every function and the
 * sweep, as in a GC pause: {@link LifelineLocal#stopTheWorld}). Hosted agents beat in batches of 25 through
 * host leases, each with its time since its last local beat. Phase 1: no agent may be marked dead. Phase 2: 5% of
 * the agents stop (a hosted one stops beating locally while its process runs), and one host is killed; exactly
 * those die, and the killed host is the one HostLeaseExpired. Throughput and detection latency are printed and written to
 * target/reliability/. The short run is in the default build; the full one (2,000 agents, minutes) runs with
 * {@code -Psoak}.
 */
@Tag("e2e")
class SoakTest {
    /** Scaled timing: the beat interval, stale-after, sweep interval and grace, and the longest service pause. */
    record Timing(Duration interval, int staleAfterSeconds, Duration sweep, int grace, Duration maxPause) {
    }

    /** 1/15 of the defaults' ratios is too tight for a busy 2-core machine at 2,000 agents; 1/3 keeps them. */
    static final Timing SHORT = new Timing(Duration.ofSeconds(2), 5, Duration.ofSeconds(1), 2, Duration.ofSeconds(2));
    static final Timing FULL = new Timing(Duration.ofSeconds(10), 20, Duration.ofSeconds(5), 2, Duration.ofSeconds(2));

    @Test
    void shortSoak_200DirectAnd100HostedAgents_noFalseDeaths_thenExactlyTheStoppedDie() throws Exception {
        soak("short", SHORT, 200, 4, Duration.ofSeconds(20), Duration.ofSeconds(15), false);
    }

    @Test
    @Tag("soak")
    void fullSoak_2000DirectAnd500HostedAgents_noFalseDeaths_thenExactlyTheStoppedDie() throws Exception {
        soak("full", FULL, Integer.getInteger("lifeline.soakAgents", 2000),
                Integer.getInteger("lifeline.soakHosts", 20),
                Duration.ofSeconds(Long.getLong("lifeline.soakSeconds", 180)), Duration.ofSeconds(60), true);
    }

    /** Agents per simulated host daemon (one batch, one host lease). */
    static final int PER_HOST = 25;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** One simulated agent: beats until stopped; remembers the server's time of its last answered beat. */
    final class Agent {
        final String id;
        final AtomicBoolean beating = new AtomicBoolean(true);
        volatile Instant lastBeat;
        /** A hosted agent: when it stopped beating locally (its process still runs), on the local clock (ns). */
        volatile long stoppedNanos;

        Agent(String id) {
            this.id = id;
        }
    }

    /**
     * One simulated host daemon: every interval, with jitter, one batch through its host lease for its
     * agents, each with its time since its last local beat (a running agent beats locally every interval / 2;
     * a stopped one stopped beating, though its process runs). A killed host sends nothing more.
     */
    final class Host {
        final String id;
        final List<Agent> agents;
        final AtomicBoolean alive = new AtomicBoolean(true);

        Host(String id, List<Agent> agents) {
            this.id = id;
            this.agents = agents;
        }
    }

    /**
     * {@code boundDetection}: also assert how soon the stopped agents were found, by the wall clock. Only the full
     * soak does, run on its own (-Psoak); the short one runs inside the whole build on a shared machine, where the
     * scheduler's lateness is not ours to bound: it asserts the counts and reports the latency.
     */
    private void soak(String name, Timing timing, int agents, int hosts, Duration healthy, Duration stoppedPhase,
                      boolean boundDetection)
            throws Exception {
        Duration interval = timing.interval();
        int staleAfterSeconds = timing.staleAfterSeconds();
        Duration sweep = timing.sweep();
        int grace = timing.grace();
        Duration maxPause = timing.maxPause();
        long seed = Long.getLong("lifeline.soakSeed", System.nanoTime());
        System.out.println("SoakTest " + name + " seed: " + seed);
        Random random = new Random(seed);
        Map<String, String> params = Map.of("StaleAfterSeconds", Integer.toString(staleAfterSeconds),
                "SweepIntervalMillis", Long.toString(sweep.toMillis()), "GraceMisses", Integer.toString(grace),
                "HeartbeatIntervalSeconds", Long.toString(interval.toSeconds()));
        AtomicLong sent = new AtomicLong();
        AtomicLong answered = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        List<Long> latenciesMicros = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService timers = Executors.newScheduledThreadPool(4);
        AtomicBoolean running = new AtomicBoolean(true);
        List<Duration> pauses = Collections.synchronizedList(new ArrayList<>());
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                params, Clock.systemUTC()))) {
            URI base = local.url();
            String key = local.adminKey();
            List<Agent> fleet = new ArrayList<>();
            for (int i = 0; i < agents; i++) {
                Agent a = new Agent(String.format("soak-%05d", i));
                fleet.add(a);
                call(base, key, "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"" + a.id + "\",\"name\":\"" + a.id + "\",\"role\":\"worker\"}", 201);
            }
            for (Agent a : fleet) {
                JsonNode joined = Json.parse(call(base, key, "POST", "/v1/teams/local/agents/" + a.id + "/join",
                        null, 200));
                a.lastBeat = Instant.parse(joined.get("heartbeatTs").asText());
                // Spread the first beats over one interval, as a fleet that started at different times.
                schedule(timers, a, base, key, random.nextInt((int) interval.toMillis()), interval, random, sent,
                        answered, refused, latenciesMicros, running);
            }
            List<Host> daemons = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
                List<Agent> onHost = new ArrayList<>();
                for (int i = 0; i < PER_HOST; i++) {
                    Agent a = new Agent(String.format("soak-h%02d-%02d", h, i));
                    call(base, key, "POST", "/v1/teams/local/agents",
                            "{\"agentId\":\"" + a.id + "\",\"name\":\"" + a.id + "\",\"role\":\"worker\"}", 201);
                    a.lastBeat = Instant.parse(Json.parse(call(base, key, "POST", "/v1/teams/local/agents/" + a.id
                            + "/join", null, 200)).get("heartbeatTs").asText());
                    onHost.add(a);
                }
                Host host = new Host(String.format("soak-host-%02d", h), onHost);
                daemons.add(host);
                fleet.addAll(onHost);
                scheduleHost(timers, host, base, key, random.nextInt((int) interval.toMillis()), interval, random,
                        sent, answered, refused, latenciesMicros, running);
            }
            Thread pauser = new Thread(() -> {
                Random r = new Random(seed + 1);
                while (running.get()) {
                    try {
                        Thread.sleep(2000 + r.nextInt(6000));
                        Duration d = Duration.ofMillis(200 + r.nextInt((int) maxPause.toMillis() - 199));
                        local.stopTheWorld(d);
                        pauses.add(d);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "stop-the-world");
            pauser.start();

            long t0 = System.nanoTime();
            long beatsAtT0 = answered.get();
            Thread.sleep(healthy.toMillis());
            double phase1Seconds = (System.nanoTime() - t0) / 1e9;
            long phase1Beats = answered.get() - beatsAtT0;
            Set<String> deadAfterPhase1 = deadAgents(base, key);
            int pausesPhase1 = pauses.size();

            // Phase 2: every 20th agent stops (a hosted one stops beating locally: it hangs); one host is killed.
            List<Agent> stopped = new ArrayList<>();
            for (int i = 0; i < fleet.size(); i += 20) {
                stopped.add(fleet.get(i));
                fleet.get(i).stoppedNanos = System.nanoTime();
                fleet.get(i).beating.set(false);
            }
            Host killed = daemons.isEmpty() ? null : daemons.get(daemons.size() - 1);
            if (killed != null) {
                killed.alive.set(false);
                killed.agents.stream().filter(a -> !stopped.contains(a)).forEach(stopped::add);
            }
            Instant stopAt = Instant.now();
            Set<String> expected = new TreeSet<>();
            stopped.forEach(a -> expected.add(a.id));
            Set<String> dead = deadAgents(base, key);
            long giveUp = System.nanoTime() + stoppedPhase.toNanos();
            while (!dead.containsAll(expected) && System.nanoTime() < giveUp) {
                Thread.sleep(500);
                dead = deadAgents(base, key);
            }
            // Keep the others beating a little longer: nobody else may die meanwhile.
            Thread.sleep(3 * sweep.toMillis());
            dead = deadAgents(base, key);
            running.set(false);
            pauser.interrupt();
            pauser.join();
            timers.shutdownNow();
            timers.awaitTermination(10, TimeUnit.SECONDS);

            List<Double> detection = new ArrayList<>();
            for (Agent a : stopped) {
                List<JsonNode> history = new ArrayList<>();
                Json.parse(call(base, key, "GET", "/v1/teams/local/agents/" + a.id + "/transitions?limit=1", null,
                        200)).get("transitions").forEach(history::add);
                if (!history.isEmpty() && "dead".equals(history.get(0).get("to").asText())) {
                    detection.add(Duration.between(a.lastBeat, Instant.parse(history.get(0).get("at").asText()))
                            .toMillis() / 1000.0);
                }
            }
            Collections.sort(detection);
            List<Long> lat = new ArrayList<>(latenciesMicros);
            Collections.sort(lat);
            String report = String.format("SoakTest %s (seed %d): %d agents, beat every %d s +-%d ms, stale after %d s,"
                            + " sweep %d ms, grace %d; %d stop-the-world pauses (max %d ms) in phase 1, %d in all.%n"
                            + "  phase 1: %.1f s, %d heartbeats answered (%.0f/s), %d refused; agents marked dead: %d%n"
                            + "  heartbeat round trip: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n"
                            + "  phase 2: %d stopped at %s; dead: %d (the stopped: %d, others: %d);"
                            + " detection after the last beat: min %.2f s, p50 %.2f s, max %.2f s (bound %d s + %d x %d ms"
                            + " + pause %d ms)%n",
                    name, seed, agents, interval.toSeconds(), interval.toMillis() / 2, staleAfterSeconds,
                    sweep.toMillis(), grace, pausesPhase1,
                    pauses.stream().mapToLong(Duration::toMillis).max().orElse(0), pauses.size(),
                    phase1Seconds, phase1Beats, phase1Beats / phase1Seconds, refused.get(), deadAfterPhase1.size(),
                    pct(lat, 0.5) / 1000.0, pct(lat, 0.99) / 1000.0, lat.isEmpty() ? 0 : lat.get(lat.size() - 1) / 1000.0,
                    stopped.size(), stopAt, dead.size(), countIn(dead, expected), dead.size() - countIn(dead, expected),
                    detection.isEmpty() ? 0 : detection.get(0), pctD(detection, 0.5),
                    detection.isEmpty() ? 0 : detection.get(detection.size() - 1), staleAfterSeconds, grace,
                    sweep.toMillis(), maxPause.toMillis());
            System.out.print(report);
            Path out = Path.of("target", "reliability");
            Files.createDirectories(out);
            Files.writeString(out.resolve("soak-" + name + ".txt"), report);

            if (killed != null) {
                JsonNode expired = Json.parse(call(base, key, "GET", "/v1/teams/local/events?type=HostLeaseExpired",
                        null, 200)).get("events");
                List<String> silentHosts = new ArrayList<>();
                expired.forEach(e -> silentHosts.add(e.path("detail").path("hostId").asText()));
                System.out.println("  hosts: " + hosts + " x " + PER_HOST + " agents; HostLeaseExpired: " + silentHosts);
                assertEquals(List.of(killed.id), silentHosts, "the killed host, and only it, went silent");
            }
            assertEquals(Set.of(), deadAfterPhase1, "healthy agents were marked dead");
            assertEquals(expected, dead, "exactly the stopped agents die");
            assertEquals(0, refused.get(), "every heartbeat of a healthy agent was accepted");
            double bound = staleAfterSeconds + (grace + 1) * sweep.toMillis() / 1000.0 + maxPause.toMillis() / 1000.0
                    + 2;
            if (boundDetection) {
                assertTrue(detection.get(detection.size() - 1) <= bound, "detected within " + bound + " s: " + detection);
            }
        } finally {
            running.set(false);
            timers.shutdownNow();
        }
    }

    private void schedule(ScheduledExecutorService timers, Agent a, URI base, String key, long delayMillis,
                          Duration interval, Random random, AtomicLong sent, AtomicLong answered, AtomicLong refused,
                          List<Long> latencies, AtomicBoolean running) {
        if (!running.get() || timers.isShutdown()) {
            return;
        }
        try {
            timers.schedule(() -> {
                if (!a.beating.get() || !running.get()) {
                    return;
                }
                sent.incrementAndGet();
                long start = System.nanoTime();
                http.sendAsync(HttpRequest.newBuilder(base.resolve("/v1/teams/local/agents/" + a.id + "/heartbeat"))
                                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + key)
                                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                        HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
                            if (r != null && r.statusCode() == 200) {
                                answered.incrementAndGet();
                                latencies.add((System.nanoTime() - start) / 1000);
                                try {
                                    a.lastBeat = Instant.parse(Json.parse(r.body()).get("heartbeatTs").asText());
                                } catch (Exception ignored) {
                                    // A 200 always carries heartbeatTs; a parse failure shows as a refused count.
                                    refused.incrementAndGet();
                                }
                            } else if (running.get()) {
                                refused.incrementAndGet();
                                System.out.println("heartbeat of " + a.id + " failed: "
                                        + (r != null ? r.statusCode() + " " + r.body() : e));
                            }
                            // The next beat one interval later, with up to half an interval of jitter either way.
                            long jitter;
                            synchronized (random) {
                                jitter = (long) ((random.nextDouble() - 0.5) * interval.toMillis());
                            }
                            schedule(timers, a, base, key, interval.toMillis() + jitter, interval, random, sent,
                                    answered, refused, latencies, running);
                        });
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // The run is over.
        }
    }

    private void scheduleHost(ScheduledExecutorService timers, Host host, URI base, String key, long delayMillis,
                              Duration interval, Random random, AtomicLong sent, AtomicLong answered,
                              AtomicLong refused, List<Long> latencies, AtomicBoolean running) {
        if (!running.get() || timers.isShutdown()) {
            return;
        }
        try {
            timers.schedule(() -> {
                if (!host.alive.get() || !running.get()) {
                    return;
                }
                StringBuilder body = new StringBuilder("{\"hostId\":\"" + host.id + "\",\"heartbeats\":[");
                long now = System.nanoTime();
                for (int i = 0; i < host.agents.size(); i++) {
                    Agent a = host.agents.get(i);
                    long age;
                    if (a.beating.get()) {
                        synchronized (random) {
                            age = random.nextInt((int) interval.toMillis() / 2); // its last local beat
                        }
                    } else {
                        age = (now - a.stoppedNanos) / 1_000_000;
                    }
                    body.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(a.id)
                            .append("\",\"localBeatAgeMs\":").append(age).append('}');
                }
                body.append("]}");
                sent.addAndGet(host.agents.size());
                long start = System.nanoTime();
                http.sendAsync(HttpRequest.newBuilder(base.resolve("/v1/teams/local/heartbeats"))
                                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + key)
                                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
                        HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
                            if (r != null && r.statusCode() == 200) {
                                latencies.add((System.nanoTime() - start) / 1000);
                                try {
                                    for (JsonNode result : Json.parse(r.body()).get("results")) {
                                        Agent a = host.agents.stream()
                                                .filter(x -> x.id.equals(result.get("agentId").asText()))
                                                .findFirst().orElseThrow();
                                        if (result.get("success").asBoolean()) {
                                            answered.incrementAndGet();
                                            Instant ts = Instant.parse(result.get("heartbeatTs").asText());
                                            if (a.lastBeat == null || ts.isAfter(a.lastBeat)) {
                                                a.lastBeat = ts;
                                            }
                                        } else if (a.beating.get() && running.get()) {
                                            refused.incrementAndGet();
                                            System.out.println("hosted heartbeat of " + a.id + " refused: " + result);
                                        }
                                    }
                                } catch (Exception parse) {
                                    refused.incrementAndGet();
                                }
                            } else if (running.get()) {
                                refused.addAndGet(host.agents.size());
                                System.out.println("batch of " + host.id + " failed: "
                                        + (r != null ? r.statusCode() + " " + r.body() : e));
                            }
                            long jitter;
                            synchronized (random) {
                                jitter = (long) ((random.nextDouble() - 0.5) * interval.toMillis());
                            }
                            scheduleHost(timers, host, base, key, interval.toMillis() + jitter, interval, random, sent,
                                    answered, refused, latencies, running);
                        });
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // The run is over.
        }
    }

    private Set<String> deadAgents(URI base, String key) throws Exception {
        Set<String> dead = new TreeSet<>();
        for (String status : List.of("dead", "restarting", "dead_failed_revive")) {
            Json.parse(call(base, key, "GET", "/v1/teams/local/agents?status=" + status, null, 200)).get("agents")
                    .forEach(a -> dead.add(a.get("agentId").asText()));
        }
        return dead;
    }

    private String call(URI base, String key, String method, String path, String body, int expect) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(expect, r.statusCode(), method + " " + path + ": " + r.body());
        return r.body();
    }

    private static int countIn(Set<String> dead, Set<String> expected) {
        return (int) dead.stream().filter(expected::contains).count();
    }

    private static double pct(List<Long> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) (p * sorted.size())));
    }

    private static double pctD(List<Double> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) (p * sorted.size())));
    }
}
