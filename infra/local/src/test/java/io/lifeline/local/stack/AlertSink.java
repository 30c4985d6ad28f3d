package io.lifeline.local.stack;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.support.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/**
 * The people's side of the alert rules, for tests that count what reaches each destination: one loopback HTTP
 * server taking Slack's webhook ({@code /slack}), PagerDuty's Events v2 ({@code /pagerduty}: the template's
 * endpoint, replaced in a copy of the template) and the alert webhook ({@code /hook}), answering 200; the alerts
 * topic is counted from the bus ({@link #topic}).
 */
public final class AlertSink implements AutoCloseable {
    public record Received(String path, JsonNode body) {
    }

    public static final List<String> TOPIC_RULES = List.of("DeathAlertRule", "RecoveryAlertRule", "MassStaleAlertRule",
            "HostLeaseAlertRule", "HostLeaseRestoredAlertRule", "FleetMassStaleAlertRule", "AwaitingInputAlertRule", "StallAlertRule",
            "ParkAlertRule", "DigestAlertRule",
            "BurstResolvedAlertRule", "StallDigestAlertRule", "StallBurstResolvedAlertRule", "FlappingAlertRule",
            "FlappingResolvedAlertRule");

    private final HttpServer server;
    public final List<Received> received = new CopyOnWriteArrayList<>();

    public AlertSink() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                received.add(new Received(exchange.getRequestURI().getPath(),
                        Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8))));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
    }

    public String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The template with PagerDuty's endpoint on this sink, and a stack builder with every alert destination here. */
    public TestStack.Builder stack() throws IOException {
        // Beside the template: it names the state machine's definition by a relative path.
        Path copy = Files.createTempFile(TestStack.templatePath().toAbsolutePath().getParent(), ".alert-sink-", ".yaml");
        copy.toFile().deleteOnExit();
        Files.writeString(copy, Files.readString(TestStack.templatePath())
                .replace("https://events.pagerduty.com/v2/enqueue", base() + "/pagerduty"));
        return TestStack.builder().template(copy)
                .parameter("SlackWebhookUrl", base() + "/slack")
                .parameter("AlertWebhookUrl", base() + "/hook")
                .parameter("PagerDutyRoutingKey", "0123456789abcdef0123456789abcdef");
    }

    public List<JsonNode> at(String path) {
        return received.stream().filter(r -> r.path().equals(path)).map(Received::body).toList();
    }

    public List<JsonNode> slack() {
        return at("/slack");
    }

    public List<JsonNode> pagerDuty(String action) {
        return at("/pagerduty").stream().filter(b -> b.path("event_action").asText().equals(action)).toList();
    }

    /** The alerts topic's messages: each event the bus took, once per topic rule it matched. */
    public static List<String> topic(TestStack s) {
        return s.bus.delivered().stream().flatMap(d -> d.rules().stream().filter(TOPIC_RULES::contains)
                .map(r -> r + " " + d.detailType() + " " + d.event().path("detail").path("agentId").asText(
                        d.event().path("detail").path("hostId").asText()))).toList();
    }

    /** Every delivery settled (the stream pump drained first by the caller). */
    public static void settled(TestStack s) throws InterruptedException {
        await("every delivery settled", () -> s.bus.inFlight() == 0);
    }

    public static void await(String what, BooleanSupplier done) throws InterruptedException {
        Instant until = Instant.now().plus(Duration.ofSeconds(30));
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(until)) {
                throw new AssertionError("not within 30 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
