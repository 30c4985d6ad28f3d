package io.lifeline.client.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The daemon's local beat channel: a loopback HTTP listener where an agent proves it is not
 * hung, {@code POST /v1/beat/<agentId>} (204; 404 for an agent this daemon does not run). The daemon knows its
 * agents' processes are alive; a local beat says the agent inside is still working through its loop. The daemon
 * reports each agent's time since its last local beat ({@code localBeatAgeMs}) in its batch, so an agent whose
 * process lives but whose beats stopped goes stale on the server like any silent agent. Children find it in
 * {@value #ENV}; the CLI's {@code lifeline beat} and the SDK's {@link io.lifeline.client.LocalBeat} use it.
 */
public final class LocalBeats implements AutoCloseable {
    /** The environment variable that names the channel's URL for the daemon's children. */
    public static final String ENV = "LIFELINE_DAEMON";
    private static final String PREFIX = "/v1/beat/";

    private final HttpServer server;
    private final ExecutorService executor;
    private final Set<String> agents;
    private final Clock clock;
    private final Map<String, Instant> last = new ConcurrentHashMap<>();

    private LocalBeats(HttpServer server, ExecutorService executor, Collection<String> agents, Clock clock) {
        this.server = server;
        this.executor = executor;
        this.agents = Set.copyOf(agents);
        this.clock = clock;
    }

    /** Listens on 127.0.0.1 at a free port, for {@code agents}; beats are timed on {@code clock}. */
    public static LocalBeats start(Collection<String> agents, Clock clock) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lifeline-local-beats");
            t.setDaemon(true);
            return t;
        });
        LocalBeats beats = new LocalBeats(server, executor, agents, clock);
        server.createContext("/", beats::handle);
        server.setExecutor(executor);
        server.start();
        return beats;
    }

    /** {@code http://127.0.0.1:<port>}: what the children get in {@value #ENV}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The agent's last local beat, if it sent one. */
    public Optional<Instant> last(String agentId) {
        return Optional.ofNullable(last.get(agentId));
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange; InputStream in = exchange.getRequestBody()) {
            in.readNBytes(4096); // a body, if any, is not read further
            String path = exchange.getRequestURI().getPath();
            if (!path.startsWith(PREFIX)) {
                reply(exchange, 404, "{\"success\":false,\"error\":\"Not found; POST /v1/beat/<agentId>\",\"code\":\"NOT_FOUND\"}");
                return;
            }
            if (!"POST".equals(exchange.getRequestMethod())) {
                reply(exchange, 405, "{\"success\":false,\"error\":\"Use POST\",\"code\":\"METHOD_NOT_ALLOWED\"}");
                return;
            }
            String agentId = path.substring(PREFIX.length());
            if (!agents.contains(agentId)) {
                reply(exchange, 404, "{\"success\":false,\"error\":\"This daemon does not run that agent\","
                        + "\"code\":\"AGENT_NOT_FOUND\"}");
                return;
            }
            last.put(agentId, clock.instant());
            exchange.sendResponseHeaders(204, -1);
        }
    }

    private static void reply(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
