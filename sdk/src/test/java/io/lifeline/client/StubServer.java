package io.lifeline.client;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/** A tiny HTTP stub on 127.0.0.1, only for fault injection: answers queued replies, then a default. */
public final class StubServer implements AutoCloseable {
    public record Reply(int status, String body, String retryAfter) {
    }

    /** A request as received; {@code query} is the raw (still encoded) query string, or null. */
    public record Seen(String method, String path, String body, String query) {
    }

    private final HttpServer server;
    private final Queue<Reply> queued = new ConcurrentLinkedQueue<>();
    private volatile Reply fallback = new Reply(200, "{}", null);
    private final List<Seen> seen = new CopyOnWriteArrayList<>();

    public StubServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), body,
                    ex.getRequestURI().getRawQuery()));
            Reply r = queued.poll();
            if (r == null) {
                r = fallback;
            }
            if (r.retryAfter() != null) {
                ex.getResponseHeaders().add("Retry-After", r.retryAfter());
            }
            byte[] bytes = r.body().getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(r.status(), bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    public StubServer then(int status, String body, String retryAfter) {
        queued.add(new Reply(status, body, retryAfter));
        return this;
    }

    public StubServer otherwise(int status, String body) {
        fallback = new Reply(status, body, null);
        return this;
    }

    public List<Seen> seen() {
        return seen;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
