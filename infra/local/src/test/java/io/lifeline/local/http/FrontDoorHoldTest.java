package io.lifeline.local.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.support.Json;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Lifeline Local with scaled timing (stale after 2 s, a sweep every 0.5 s, grace 2)
 * while 100 raw connections on 127.0.0.1 hold half-sent request heads for 8 s, reconnecting whenever the front
 * door closes one. Agents beating every 0.5 s are never marked dead, a fresh request is answered within 1 s
 * (a client timeout of 1 s, else the test fails), and a silent agent still dies: the sweep kept judging.
 */
@Tag("e2e")
class FrontDoorHoldTest {
    private static final int HELD = 100;
    private static final Duration HOLD = Duration.ofSeconds(8);
    private static final List<String> BEATING = List.of("b1", "b2", "b3", "b4", "b5");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void hundredHeldHalfSentConnections_beatingAgentsStayAlive_andAFreshRequestIsAnsweredWithinASecond()
            throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        List<Socket> open = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failedBeats = new AtomicInteger();
        AtomicInteger acceptedBeats = new AtomicInteger();
        AtomicInteger heldClosedByDoor = new AtomicInteger();
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", "2", "SweepIntervalMillis", "500", "GraceMisses", "2"),
                Clock.systemUTC()))) {
            URI base = local.url();
            String key = local.adminKey();
            List<String> all = new ArrayList<>(BEATING);
            all.add("silent");
            for (String id : all) {
                assertEquals(201, call(base, key, "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}",
                        Duration.ofSeconds(10)).statusCode());
                assertEquals(200, call(base, key, "POST", "/v1/teams/local/agents/" + id + "/join", null,
                        Duration.ofSeconds(10)).statusCode());
            }
            for (String id : BEATING) {
                threads.add(start(() -> {
                    while (running.get()) {
                        try {
                            if (call(base, key, "POST", "/v1/teams/local/agents/" + id + "/heartbeat", "{}",
                                    Duration.ofSeconds(5)).statusCode() == 200) {
                                acceptedBeats.incrementAndGet();
                            }
                        } catch (IOException e) {
                            failedBeats.incrementAndGet();
                        }
                        pause(500);
                    }
                }));
            }
            String half = "POST /v1/teams/local/agents/b1/heartbeat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bea";
            for (int i = 0; i < HELD; i++) {
                threads.add(start(() -> {
                    while (running.get()) {
                        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), base.getPort())) {
                            open.add(s);
                            s.getOutputStream().write(half.getBytes(StandardCharsets.US_ASCII));
                            s.getOutputStream().flush();
                            s.getInputStream().read(); // until the door closes it (or answers 408)
                            open.remove(s);
                            heldClosedByDoor.incrementAndGet();
                        } catch (IOException closed) {
                            // Evicted or reset: hold again.
                        }
                        pause(200);
                    }
                }));
            }
            Instant end = Instant.now().plus(HOLD);
            int fresh = 0;
            while (Instant.now().isBefore(end)) {
                // Throws HttpTimeoutException (failing the test) unless answered within 1 s.
                HttpResponse<String> r = call(base, key, "GET", "/v1/teams/local/agents", null, Duration.ofSeconds(1));
                assertEquals(200, r.statusCode(), r.body());
                fresh++;
                Thread.sleep(500);
            }
            assertTrue(fresh >= 8, "fresh requests answered: " + fresh);
            System.out.println("FrontDoorHoldTest: " + fresh + " fresh requests answered within 1 s, "
                    + acceptedBeats.get() + " beats accepted, " + failedBeats.get() + " unanswered, held connections"
                    + " closed by the door: " + heldClosedByDoor.get());

            JsonNode events = Json.parse(call(base, key, "GET",
                    "/v1/teams/local/events?type=AgentStatusChanged&limit=100", null, Duration.ofSeconds(10)).body());
            boolean silentDied = false;
            for (JsonNode e : events.get("events")) {
                JsonNode d = e.get("detail");
                if ("dead".equals(d.path("to").asText())) {
                    assertFalse(BEATING.contains(d.path("agentId").asText()), "a beating agent died: " + e);
                    silentDied |= "silent".equals(d.path("agentId").asText());
                }
            }
            assertTrue(silentDied, "the sweep kept judging during the hold: the silent agent died: " + events);
            for (String id : BEATING) {
                JsonNode agent = Json.parse(call(base, key, "GET", "/v1/teams/local/agents/" + id, null,
                        Duration.ofSeconds(10)).body());
                assertTrue(agent.get("alive").asBoolean(), agent.toString());
            }
            assertEquals(0, failedBeats.get(), "heartbeats that got no answer");
        } finally {
            running.set(false);
            synchronized (open) {
                for (Socket s : open) {
                    s.close();
                }
            }
            for (Thread t : threads) {
                t.join(5_000);
            }
        }
    }

    private static Thread start(Runnable r) {
        Thread t = new Thread(r, "hold-test");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private HttpResponse<String> call(URI base, String key, String method, String path, String body, Duration timeout)
            throws IOException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
                .header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
