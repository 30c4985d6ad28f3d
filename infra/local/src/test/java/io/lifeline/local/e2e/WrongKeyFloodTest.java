package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
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
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A flood of wrong keys does not starve the control loop. Lifeline Local over real HTTP with
 * scaled timing (stale after 2 s, a sweep every 0.5 s, grace 2) and the authorizer capped at 2 concurrent
 * invocations (AuthorizerMaxConcurrency, which Local enforces as Lambda would): six threads send random keys to
 * the heartbeat route as fast as they can while a fleet of ten beats every 0.3 s and one agent falls silent.
 * The flood is refused (401, 429 from the front door, or 500 when the capped authorizer throttles it), the fleet's
 * beats keep being taken (their keys' answers are cached), the sweep keeps running (judging, or judging nobody while
 * it starts late under the flood), no beating agent is marked dead, and the silent agent dies once the flood ends.
 */
@Tag("e2e")
class WrongKeyFloodTest {
    private static final int FLEET = 10;
    private static final Duration FLOOD = Duration.ofSeconds(8);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> call(URI base, String key, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @Timeout(120)
    void wrongKeyFlood_whileTheFleetBeats_refusesTheFlood_andMarksNoBeatingAgentDead() throws Exception {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Log.sink(lines::add);
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicBoolean flooding = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        List<Thread> flooders = new ArrayList<>();
        Map<Integer, AtomicInteger> floodAnswers = new ConcurrentHashMap<>();
        AtomicInteger fleetBeats = new AtomicInteger();
        AtomicInteger fleetRefused = new AtomicInteger();
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", "2", "SweepIntervalMillis", "500", "GraceMisses", "2",
                        "AuthorizerMaxConcurrency", "2"), Clock.systemUTC()))) {
            URI base = local.url();
            String key = local.adminKey();
            List<String> fleet = new ArrayList<>();
            for (int i = 0; i < FLEET; i++) {
                fleet.add("fleet-" + i);
            }
            for (String id : concat(fleet, "silent")) {
                assertEquals(201, call(base, key, "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}").statusCode());
                assertEquals(200, call(base, key, "POST", "/v1/teams/local/agents/" + id + "/join", null).statusCode());
            }
            for (String id : fleet) {
                threads.add(start(() -> {
                    while (running.get()) {
                        int status = call(base, key, "POST", "/v1/teams/local/agents/" + id + "/heartbeat", "{}")
                                .statusCode();
                        (status == 200 ? fleetBeats : fleetRefused).incrementAndGet();
                        Thread.sleep(300);
                    }
                }));
            }
            for (int i = 0; i < 6; i++) {
                flooders.add(start(() -> {
                    while (flooding.get()) {
                        // Well-formed keys (ll_ and 43 characters), so each unknown one costs the authorizer a look-up.
                        String junk = (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "").substring(0, 43);
                        int status = call(base, "ll_" + junk, "POST",
                                "/v1/teams/local/agents/fleet-0/heartbeat", "{}").statusCode();
                        floodAnswers.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                    }
                }));
            }
            Instant end = Instant.now().plus(FLOOD);
            while (Instant.now().isBefore(end)) {
                Thread.sleep(100);
            }
            flooding.set(false);
            for (Thread t : flooders) {
                t.join(15_000);
            }
            // While the flood saturates Local, a sweep that starts late judges nobody (by design: the beats queued
            // meanwhile must land first); once it ends the sweeps judge again and the silent agent dies. The fleet
            // beats on until then.
            JsonNode silent = null;
            Instant giveUp = Instant.now().plusSeconds(30);
            while (Instant.now().isBefore(giveUp)) {
                silent = Json.parse(call(base, key, "GET", "/v1/teams/local/agents/silent", null).body());
                if (silent.path("status").asText().equals("dead")) {
                    break;
                }
                Thread.sleep(100);
            }
            running.set(false);
            for (Thread t : threads) {
                t.join(15_000);
            }

            Map<Integer, Integer> flood = new TreeMap<>();
            floodAnswers.forEach((status, n) -> flood.put(status, n.get()));
            System.out.println("wrong-key flood: answers " + flood + ", authorizer throttles "
                    + local.host().throttles("AuthorizerFunction") + ", fleet beats taken " + fleetBeats.get());
            assertTrue(flood.keySet().stream().allMatch(s -> s == 401 || s == 403 || s == 500 || s == 429),
                    "the flood was refused, never served: " + flood);
            assertTrue(flood.getOrDefault(500, 0) > 0 && local.host().throttles("AuthorizerFunction") > 0,
                    "the capped authorizer throttled part of the flood: " + flood);
            assertTrue(flood.values().stream().mapToInt(Integer::intValue).sum() > 100, "a flood: " + flood);
            assertEquals(0, fleetRefused.get(), "every fleet beat was taken; taken: " + fleetBeats.get());
            assertTrue(fleetBeats.get() >= FLEET, "the fleet beat: " + fleetBeats.get());
            assertEquals(0, local.host().throttles("HeartbeatFunction"));

            List<String> logged;
            synchronized (lines) { // the sweeps still log while we read
                logged = new ArrayList<>(lines);
            }
            Map<String, Long> sweepOutcomes = new TreeMap<>();
            logged.stream().map(WrongKeyFloodTest::parse).filter(l -> l.path("msg").asText().equals("sweep"))
                    .forEach(l -> sweepOutcomes.merge(l.path("outcome").asText(), 1L, Long::sum));
            System.out.println("wrong-key flood: sweep outcomes " + sweepOutcomes);
            long sweeps = sweepOutcomes.values().stream().mapToLong(Long::longValue).sum();
            assertTrue(sweeps >= 8, "the sweep kept running (judging, or holding off while late): " + sweepOutcomes);
            for (String id : fleet) {
                JsonNode agent = Json.parse(call(base, key, "GET", "/v1/teams/local/agents/" + id, null).body());
                assertTrue(agent.path("alive").asBoolean(), "no false death: " + agent);
                JsonNode transitions = Json.parse(call(base, key, "GET",
                        "/v1/teams/local/agents/" + id + "/transitions", null).body());
                assertTrue(transitions.toString().indexOf("heartbeat_expired") < 0, id + ": " + transitions);
            }
            assertEquals("dead", silent.path("status").asText(), "the sweep judged the silent agent: " + silent);
        } finally {
            running.set(false);
            flooding.set(false);
            Log.sink(null);
        }
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread start(Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static List<String> concat(List<String> list, String more) {
        List<String> out = new ArrayList<>(list);
        out.add(more);
        return out;
    }

    private static JsonNode parse(String line) {
        try {
            return Json.parse(line);
        } catch (Exception e) {
            return Json.object();
        }
    }
}
