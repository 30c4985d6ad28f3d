package io.lifeline.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

/**
 * A loopback reverse proxy in front of a real Lifeline Local that records each request's method and path, so a
 * test can count which path (the API's or the heartbeat URL's, {@code /lambda-url/...}) a client's calls took.
 * Everything is forwarded as it came (method, path, query, body, Authorization, Content-Type and X-Lifeline-Agent)
 * and answered as Local answered it; the answers are kept too.
 */
public final class CountingProxy implements AutoCloseable {
    /** One request as forwarded: {@code "POST /lambda-url/HeartbeatUrlFunction/v1/teams/local/agents/a1/heartbeat"}. */
    public record Seen(String method, String path) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    private final URI target;
    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "counting-proxy");
        t.setDaemon(true);
        return t;
    });
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final List<Answer> answers = new CopyOnWriteArrayList<>();

    /** What Local answered one request: its status and body (empty for none). */
    public record Answer(String method, String path, int status, String body) {
    }

    public CountingProxy(URI target) throws IOException {
        String t = target.toString();
        this.target = URI.create(t.endsWith("/") ? t.substring(0, t.length() - 1) : t);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(pool);
        server.createContext("/", this::forward);
        server.start();
    }

    private void forward(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body = ex.getRequestBody().readAllBytes();
            URI in = ex.getRequestURI();
            seen.add(new Seen(ex.getRequestMethod(), in.getPath()));
            HttpRequest.Builder out = HttpRequest.newBuilder(URI.create(target + in.getRawPath()
                    + (in.getRawQuery() == null ? "" : "?" + in.getRawQuery()))).timeout(Duration.ofSeconds(30))
                    .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(body));
            for (String h : List.of("Authorization", "Content-Type", "Accept", "X-Lifeline-Agent")) {
                String v = ex.getRequestHeaders().getFirst(h);
                if (v != null) {
                    out.header(h, v);
                }
            }
            HttpResponse<byte[]> answer;
            try {
                answer = http.send(out.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.sendResponseHeaders(502, -1);
                return;
            } catch (IOException e) {
                ex.sendResponseHeaders(502, -1);
                return;
            }
            for (String h : List.of("Content-Type", "Retry-After")) {
                answer.headers().firstValue(h).ifPresent(v -> ex.getResponseHeaders().add(h, v));
            }
            byte[] bytes = answer.body();
            answers.add(new Answer(ex.getRequestMethod(), in.getPath(), answer.statusCode(),
                    new String(bytes, StandardCharsets.UTF_8)));
            ex.sendResponseHeaders(answer.statusCode(), bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(bytes);
                }
            }
        }
    }

    /** This proxy's base URL, the API URL to give a client. */
    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** The heartbeat URL through this proxy: Local's Function URL path. */
    public URI heartbeatUrl(URI localHeartbeatUrl) {
        return URI.create(url() + localHeartbeatUrl.getRawPath());
    }

    /** Every answer Local gave through this proxy, in order. */
    public List<Answer> answers() {
        return List.copyOf(answers);
    }

    public List<Seen> seen() {
        return List.copyOf(seen);
    }

    /** How many requests matched. */
    public long count(Predicate<Seen> which) {
        return seen.stream().filter(which).count();
    }

    /** Requests to the heartbeat URL (Local's Function URL path) whose path ends with {@code suffix}. */
    public long viaHeartbeatUrl(String suffix) {
        return count(s -> s.path().startsWith("/lambda-url/") && s.path().endsWith(suffix));
    }

    /** Requests to the API URL (not the Function URL path) whose path ends with {@code suffix}. */
    public long viaApi(String suffix) {
        return count(s -> s.path().startsWith("/v1/") && s.path().endsWith(suffix));
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
