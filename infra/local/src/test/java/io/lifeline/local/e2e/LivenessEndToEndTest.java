package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifeline Local with scaled timing (stale after 2 s, a sweep every 0.5 s, grace 2), over real HTTP: an
 * agent that stops heartbeating is reported dead on the events route and the alert webhook within
 * staleAfter + grace x sweep + 1 s of its last heartbeat (measured on the server's clock, so a busy test
 * machine does not skew it); an agent that keeps heartbeating is never marked dead.
 */
@Tag("e2e")
class LivenessEndToEndTest {
    private static final Duration STALE_AFTER = Duration.ofSeconds(2);
    private static final Duration SWEEP = Duration.ofMillis(500);
    private static final int GRACE = 2;
    private static final Duration BOUND = STALE_AFTER.plus(SWEEP.multipliedBy(GRACE)).plusSeconds(1);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void silentAgent_isReportedDeadWithinTheBound_andBeatingAgentNeverIs() throws Exception {
        List<JsonNode> webhook = new CopyOnWriteArrayList<>();
        HttpServer hook = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        hook.createContext("/hook", exchange -> {
            try (exchange) {
                webhook.add(Json.parse(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
                exchange.sendResponseHeaders(204, -1);
            }
        });
        hook.start();
        AtomicBoolean beating = new AtomicBoolean(true);
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", Long.toString(STALE_AFTER.toSeconds()),
                        "SweepIntervalMillis", Long.toString(SWEEP.toMillis()),
                        "GraceMisses", Integer.toString(GRACE),
                        "AlertWebhookUrl", "http://127.0.0.1:" + hook.getAddress().getPort() + "/hook"),
                Clock.systemUTC()))) {
            URI base = local.url();
            String key = local.adminKey();
            for (String id : List.of("silent", "steady")) {
                assertEquals(201, call(base, key, "POST", "/v1/teams/local/agents",
                        "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}").statusCode());
            }
            Thread steady = new Thread(() -> {
                while (beating.get()) {
                    try {
                        call(base, key, "POST", "/v1/teams/local/agents/steady/heartbeat", "{}");
                        Thread.sleep(300);
                    } catch (Exception e) {
                        return;
                    }
                }
            });
            assertEquals(200, call(base, key, "POST", "/v1/teams/local/agents/steady/join", null).statusCode());
            steady.start();
            JsonNode joined = Json.parse(call(base, key, "POST", "/v1/teams/local/agents/silent/join", null).body());
            Instant lastBeat = Instant.parse(joined.get("heartbeatTs").asText());

            JsonNode death = awaitEvent(base, key, "silent", Duration.ofSeconds(15));
            Duration latency = Duration.between(lastBeat, Instant.parse(death.get("at").asText()));
            assertTrue(latency.compareTo(BOUND) <= 0, "detected after " + latency + ", bound " + BOUND);
            assertTrue(latency.compareTo(STALE_AFTER) > 0, "not before the agent was stale: " + latency);
            assertEquals("heartbeat_expired", death.get("trigger").asText());

            Instant giveUp = Instant.now().plusSeconds(10);
            while (webhook.stream().noneMatch(e -> isDeathOf(e.path("detail"), "silent")) && Instant.now().isBefore(giveUp)) {
                Thread.sleep(50);
            }
            JsonNode delivered = webhook.stream().filter(e -> isDeathOf(e.path("detail"), "silent")).findFirst()
                    .orElseThrow(() -> new AssertionError("no death on the webhook: " + webhook));
            assertEquals("AgentStatusChanged", delivered.get("detail-type").asText());
            assertEquals("lifeline", delivered.get("source").asText());

            // Keep the steady agent beating past one more bound: it must never die.
            Thread.sleep(BOUND.toMillis());
            JsonNode events = Json.parse(call(base, key, "GET", "/v1/teams/local/events?limit=100", null).body());
            for (JsonNode e : events.get("events")) {
                assertFalse(isDeathOf(e.get("detail"), "steady"), "the steady agent was marked dead: " + e);
            }
            JsonNode steadyNow = Json.parse(call(base, key, "GET", "/v1/teams/local/agents/steady", null).body());
            assertTrue(steadyNow.get("alive").asBoolean(), steadyNow.toString());
        } finally {
            beating.set(false);
            hook.stop(0);
        }
    }

    private static boolean isDeathOf(JsonNode detail, String agentId) {
        return agentId.equals(detail.path("agentId").asText()) && "dead".equals(detail.path("to").asText());
    }

    private JsonNode awaitEvent(URI base, String key, String agentId, Duration bound) throws Exception {
        Instant giveUp = Instant.now().plus(bound);
        while (Instant.now().isBefore(giveUp)) {
            JsonNode events = Json.parse(call(base, key, "GET",
                    "/v1/teams/local/events?type=AgentStatusChanged&limit=100", null).body());
            for (JsonNode e : events.get("events")) {
                if (isDeathOf(e.get("detail"), agentId)) {
                    return e.get("detail");
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError(agentId + " was not reported dead within " + bound);
    }

    private HttpResponse<String> call(URI base, String key, String method, String path, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
