package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.client.daemon.AgentProcesses;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A throttled answer is retried, not lost: 60 fail reports sent at once under Local's default concurrency cap (the
 * agents function's reserved concurrency, which Local enforces as Lambda does) are all recorded, through the SDK,
 * through the daemon, and through a plain HTTP client that follows README's retry rules. To make the throttle
 * certain rather than a matter of timing, the cap is first taken whole (as a burst of other requests would) and
 * given back only once the first attempts have been throttled.
 */
@Timeout(120)
@Tag("e2e")
class ThrottledFailReportsTest {
    static final int REPORTS = 60;
    static final String AGENTS_FUNCTION = "AgentsFunction";

    @AutoClose
    static final LifelineLocal local = start();

    static LifelineLocal start() {
        try {
            // A long stale-after: no sweep kills an agent before its report lands.
            return LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(),
                    Map.of("StaleAfterSeconds", "3600"), Clock.systemUTC()));
        } catch (Exception e) {
            throw new IllegalStateException("Lifeline Local did not start", e);
        }
    }

    static LifelineClient client() {
        return LocalHarness.client(local);
    }

    static List<String> readyAgents(String prefix) {
        LifelineClient c = client();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < REPORTS; i++) {
            String id = prefix + "-" + i;
            c.register(RegisterAgent.of(id, id, "worker"));
            c.join(id);
            ids.add(id);
        }
        return ids;
    }

    /**
     * Runs {@code burst} while the agents function's whole reserved concurrency is held, and gives it back once
     * {@code throttledAtLeast} invocations have been throttled (or 20 s passed). Answers how many were throttled.
     */
    static int underAFullCap(int throttledAtLeast, Consumer<ExecutorService> burst) throws Exception {
        FunctionHost host = local.host();
        // Local runs the reserved profile, as production does: the agents function's cap (ApiMaxConcurrency).
        int cap = SamTemplate.bundled().reservedConcurrency(AGENTS_FUNCTION, Map.of("ConcurrencyProfile", "reserved"))
                .orElseThrow();
        int before = host.throttles(AGENTS_FUNCTION);
        CountDownLatch holding = new CountDownLatch(cap);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService holders = Executors.newFixedThreadPool(cap);
        ExecutorService senders = Executors.newFixedThreadPool(REPORTS);
        try {
            for (int i = 0; i < cap; i++) {
                holders.submit(() -> host.invoke(AGENTS_FUNCTION, () -> {
                    holding.countDown();
                    try {
                        return release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                }));
            }
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the cap is held");
            burst.accept(senders);
            LocalHarness.eventually(Duration.ofSeconds(20),
                    () -> host.throttles(AGENTS_FUNCTION) - before >= throttledAtLeast);
            int throttled = host.throttles(AGENTS_FUNCTION) - before;
            release.countDown();
            senders.shutdown();
            assertTrue(senders.awaitTermination(90, TimeUnit.SECONDS), "every report ended");
            return throttled;
        } finally {
            release.countDown();
            holders.shutdownNow();
            senders.shutdownNow();
        }
    }

    static void assertAllRecorded(List<String> ids) {
        LifelineClient c = client();
        for (String id : ids) {
            AgentView a = c.agent(id);
            assertEquals("dead", a.status(), id);
        }
    }

    @Test
    void sixtyFailReports_throughTheSdk_areAllRecorded() throws Exception {
        List<String> ids = readyAgents("sdk");
        LifelineClient c = client();
        Map<String, Throwable> failed = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        int throttled = underAFullCap(REPORTS, pool -> {
            for (String id : ids) {
                pool.submit(() -> {
                    try {
                        go.await();
                        c.fail(id, "process exited with status 1");
                    } catch (Throwable t) {
                        failed.put(id, t);
                    }
                    return null;
                });
            }
            go.countDown();
        });
        assertTrue(throttled >= REPORTS, "every first attempt was throttled: " + throttled);
        assertEquals(Map.of(), failed);
        assertAllRecorded(ids);
    }

    @Test
    void sixtyFailReports_throughDaemons_areAllRecorded() throws Exception {
        List<String> ids = readyAgents("daemon");
        // Three hosts of 20 agents, every process gone at once: each daemon's round reports its 20 crashes.
        List<HostDaemon> daemons = new ArrayList<>();
        AgentProcesses exited = new AgentProcesses() {
            @Override
            public boolean isRunning(String agentId) {
                return false;
            }

            @Override
            public void restart(String agentId, String reason) {
                throw new AssertionError("restartOnExit is off");
            }
        };
        for (int h = 0; h < 3; h++) {
            daemons.add(HostDaemon.builder(client(), "host-" + h, exited).agents(ids.subList(h * 20, h * 20 + 20))
                    .restartOnExit(false).interval(Duration.ofSeconds(30)).build());
        }
        List<Future<?>> rounds = new ArrayList<>();
        int throttled = underAFullCap(3, pool -> daemons.forEach(d -> rounds.add(pool.submit(d::runOnce))));
        assertTrue(throttled >= 3, "the daemons' first reports were throttled: " + throttled);
        for (Future<?> r : rounds) {
            r.get();
        }
        assertAllRecorded(ids);
        // A second round has nothing left to report.
        daemons.forEach(d -> assertEquals(List.of(), d.runOnce().crashesReported()));
    }

    /** README's retry rules, as any HTTP client would follow them (here java.net.http, no SDK). */
    @Test
    void sixtyFailReports_fromAPlainClientFollowingTheDocumentedRules_areAllRecorded_neverAnInternalError()
            throws Exception {
        List<String> ids = readyAgents("plain");
        HttpClient http = HttpClient.newHttpClient();
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        AtomicInteger internalErrors = new AtomicInteger();
        Map<String, Integer> finalStatus = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        int throttled = underAFullCap(REPORTS, pool -> {
            for (String id : ids) {
                pool.submit(() -> {
                    go.await();
                    HttpRequest request = HttpRequest.newBuilder(URI.create(local.url() + "/v1/teams/"
                                    + LifelineLocal.LOCAL_TEAM + "/agents/" + id + "/fail"))
                            .header("Authorization", "Bearer " + local.adminKey())
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"reason\":\"crashed\"}")).build();
                    for (int attempt = 0; attempt < 6; attempt++) {
                        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
                        JsonNode body = LifelineClient.mapper().readTree(r.body().isBlank() ? "{}" : r.body());
                        seen.merge(r.statusCode() + " " + body.path("code").asText(body.path("message").asText()), 1,
                                Integer::sum);
                        if ("INTERNAL_ERROR".equals(body.path("code").asText())) {
                            internalErrors.incrementAndGet();
                        }
                        if (!retryable(r.statusCode(), body)) {
                            finalStatus.put(id, r.statusCode());
                            break;
                        }
                        // Exponential backoff with full jitter: a random wait up to 0.5 s x 2^attempt (or Retry-After).
                        long backoff = r.headers().firstValue("Retry-After").map(s -> Long.parseLong(s) * 1000)
                                .orElse(500L << attempt);
                        Thread.sleep(ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    }
                    return null;
                });
            }
            go.countDown();
        });
        System.out.println("plain client, 60 fail reports under a full cap: answers " + seen + ", throttled "
                + throttled);
        assertTrue(throttled >= REPORTS, "every first attempt was throttled: " + throttled);
        assertTrue(seen.getOrDefault("500 Internal Server Error", 0) > 0, "the HTTP API's throttled answer: " + seen);
        assertEquals(0, internalErrors.get(), seen.toString());
        assertEquals(REPORTS, finalStatus.size(), finalStatus.toString());
        assertTrue(finalStatus.values().stream().allMatch(s -> s == 200), finalStatus.toString());
        assertAllRecorded(ids);
        assertFalse(seen.keySet().stream().anyMatch(k -> k.startsWith("500 INTERNAL_ERROR")), seen.toString());
    }

    /** README, "Throttled answers": 429, 503, and a 500 that carries no Lifeline code (the gateway's own). */
    static boolean retryable(int status, JsonNode body) {
        return status == 429 || status == 503 || (status == 500 && !body.has("code"));
    }
}
