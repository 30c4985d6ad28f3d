package io.lifeline.client.hooks;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Stands where the forwarders post (the daemon's {@code $LIFELINE_DAEMON} or Lifeline's hook route) and records
 * each POST: when, its path, the headers that matter and its body; answers {@code 200 {}}.
 */
public final class HookRecorder implements AutoCloseable {
    public record Post(long atNanos, String path, Map<String, String> headers, String body) {
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final List<Post> posts = new CopyOnWriteArrayList<>();

    private HookRecorder() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "hook-recorder");
            t.setDaemon(true);
            return t;
        });
        server.createContext("/", ex -> {
            try (ex) {
                byte[] body = ex.getRequestBody().readAllBytes();
                Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                for (String h : List.of("Authorization", "X-Lifeline-Agent", "Content-Type")) {
                    String v = ex.getRequestHeaders().getFirst(h);
                    if (v != null) {
                        headers.put(h, v);
                    }
                }
                posts.add(new Post(System.nanoTime(), ex.getRequestURI().getPath(), headers,
                        new String(body, StandardCharsets.UTF_8)));
                byte[] answer = "{}".getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(200, answer.length);
                ex.getResponseBody().write(answer);
            }
        });
        server.setExecutor(executor);
        server.start();
    }

    public static HookRecorder start() throws IOException {
        return new HookRecorder();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    public List<Post> posts() {
        return List.copyOf(posts);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
