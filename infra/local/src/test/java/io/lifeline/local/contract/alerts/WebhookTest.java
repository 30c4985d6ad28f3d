package io.lifeline.local.contract.alerts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The AlertWebhookUrl parameter end to end: a death in Local reaches an HTTP endpoint as the EventBridge
 * event, through the template's AlertWebhookRule and its API destination.
 */
@Tag("contract")
class WebhookTest {
    /** A request the webhook received. */
    record Received(String path, String contentType, String token, JsonNode body) {
    }

    static HttpServer server;
    static final List<Received> received = new CopyOnWriteArrayList<>();
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/hook", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                received.add(new Received(exchange.getRequestURI().getPath(),
                        exchange.getRequestHeaders().getFirst("Content-Type"),
                        exchange.getRequestHeaders().getFirst("X-Lifeline-Token"), Json.parse(body)));
                exchange.sendResponseHeaders(204, -1);
            }
        });
        server.start();
        stack = TestStack.builder()
                .parameter("AlertWebhookUrl", "http://127.0.0.1:" + server.getAddress().getPort() + "/hook")
                .build();
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
        server.stop(0);
    }

    /** Waits, with a bound, for the webhook to receive a request {@code test} accepts (delivery is async). */
    private static Received awaitReceived(Predicate<Received> test) throws InterruptedException {
        Instant until = Instant.now().plus(Duration.ofSeconds(10));
        while (Instant.now().isBefore(until)) {
            Optional<Received> hit = received.stream().filter(test).findFirst();
            if (hit.isPresent()) {
                return hit.get();
            }
            Thread.sleep(25);
        }
        throw new AssertionError("the webhook did not receive it within 10 s; it received: " + received);
    }

    private static Predicate<Received> deathOf(String agentId) {
        return r -> r.body().path("detail-type").asText().equals("AgentStatusChanged")
                && r.body().path("detail").path("agentId").asText().equals(agentId)
                && r.body().path("detail").path("to").asText().equals("dead");
    }

    private static void assertEnvelope(JsonNode e) {
        assertEquals("0", e.get("version").asText());
        assertTrue(!e.get("id").asText().isEmpty());
        assertEquals("lifeline", e.get("source").asText());
        assertTrue(e.hasNonNull("account") && e.hasNonNull("region") && e.get("resources").isArray(), e.toString());
        Instant.parse(e.get("time").asText());
        assertEquals(TestStack.TEAM, e.get("detail").get("team").asText());
    }

    @Test
    void reportedFailure_reachesTheWebhook_asAnEventBridgeEnvelope() throws Exception {
        ok(stack.ready("hook-1"));
        stack.clock.advance(Duration.ofSeconds(2));
        Instant diedAt = stack.clock.instant();
        ok(stack.agent("fail", "hook-1", "{\"reason\":\"kernel panic\"}"));
        stack.pump.drain();

        Received r = awaitReceived(deathOf("hook-1"));
        assertEquals("/hook", r.path());
        assertTrue(r.contentType().startsWith("application/json"), r.contentType());
        assertEquals(stack.secrets().get("AlertWebhookSecret"), r.token(),
                "the connection's API key header: the stack's generated secret");
        JsonNode e = r.body();
        assertEnvelope(e);
        assertEquals("AgentStatusChanged", e.get("detail-type").asText());
        assertEquals(diedAt, Instant.parse(e.get("time").asText()));
        JsonNode d = e.get("detail");
        assertEquals("acme/hook-1/status/2", d.get("eventId").asText());
        assertEquals("ready", d.get("from").asText());
        assertEquals("reported_failure", d.get("trigger").asText());
        assertEquals("failure reported: kernel panic", d.get("reason").asText());
    }

    @Test
    void sweepDeath_reachesTheWebhook() throws Exception {
        ok(stack.ready("hook-2"));
        stack.clock.advance(Duration.ofSeconds(61));
        stack.sweep();
        stack.clock.advance(Duration.ofSeconds(15));
        assertTrue(stack.sweep().contains(TestStack.TEAM + "/hook-2"), "marked dead at the grace");
        stack.pump.drain();

        JsonNode e = awaitReceived(deathOf("hook-2")).body();
        assertEnvelope(e);
        assertEquals("heartbeat_expired", e.get("detail").get("trigger").asText());
        assertTrue(e.get("detail").get("reason").asText().startsWith("no heartbeat for 76 s"),
                e.get("detail").toString());
    }
}
