package io.lifeline.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The people's side of the alert rules for the daemon's end-to-end tests: one loopback HTTP server taking Slack's
 * webhook ({@code /slack}), PagerDuty's Events v2 ({@code /pagerduty}: the template's endpoint, replaced in a copy of
 * the template) and the alert webhook ({@code /hook}), answering 200, and the Lifeline Local that sends them here.
 */
final class AlertSink implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Received(String path, JsonNode body) {
    }

    private final HttpServer server;
    final List<Received> received = new CopyOnWriteArrayList<>();

    AlertSink() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                received.add(new Received(exchange.getRequestURI().getPath(),
                        JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8))));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
    }

    /**
     * A Lifeline Local on the template with every alert destination on this sink, stale after 10 s and swept every
     * 500 ms; the template's copy is named {@code prefix...}.
     */
    LifelineLocal local(String prefix) throws Exception {
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        // Beside the template: it names its state machines' definitions by relative paths.
        Path template = Path.of(System.getProperty("lifeline.template", "../template.yaml")).toAbsolutePath();
        Path copy = Files.createTempFile(template.getParent(), prefix, ".yaml");
        copy.toFile().deleteOnExit();
        Files.writeString(copy, Files.readString(template)
                .replace("https://events.pagerduty.com/v2/enqueue", base + "/pagerduty"));
        Map<String, String> parameters = Map.of("StaleAfterSeconds", "10", "SweepIntervalMillis", "500",
                "SlackWebhookUrl", base + "/slack", "AlertWebhookUrl", base + "/hook",
                "PagerDutyRoutingKey", "0123456789abcdef0123456789abcdef");
        return LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.read(copy), parameters,
                Clock.systemUTC()));
    }

    /** The bodies received on {@code path}, in order. */
    List<JsonNode> at(String path) {
        return received.stream().filter(r -> r.path().equals(path)).map(Received::body).toList();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
