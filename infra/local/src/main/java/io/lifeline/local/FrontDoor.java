package io.lifeline.local;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Lifeline Local's HTTP listener on 127.0.0.1: hands every request to the {@link LocalGateway}. */
final class FrontDoor implements AutoCloseable {
    /** API Gateway's own payload limit; our handlers refuse far smaller bodies with a JSON 413. */
    private static final int GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

    private final HttpServer server;
    private final ExecutorService workers;

    FrontDoor(LocalGateway gateway, int port) throws IOException {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (BindException e) {
            throw portInUse(port);
        }
        workers = Executors.newFixedThreadPool(16, r -> {
            Thread t = new Thread(r, "front-door");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(workers);
        server.createContext("/", exchange -> serve(gateway, exchange));
        server.start();
    }

    /**
     * Refuses, in one line, a port something else already listens on, before Local spends seconds starting its
     * functions (the bind in the constructor refuses the same way should another process take it meanwhile).
     * Port 0 is always free.
     */
    static void requireFree(int port) throws IOException {
        if (port == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true); // as the HTTP server binds: a port in TIME_WAIT is free
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (BindException e) {
            throw portInUse(port);
        }
    }

    private static StartRefusedException portInUse(int port) {
        return new StartRefusedException("port " + port + " is in use; use --port");
    }

    int port() {
        return server.getAddress().getPort();
    }

    private static void serve(LocalGateway gateway, HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readNBytes(GATEWAY_MAX_BODY_BYTES + 1);
            }
            LocalGateway.Response response;
            if (body.length > GATEWAY_MAX_BODY_BYTES) {
                response = new LocalGateway.Response(413, Map.of("content-type", "application/json"),
                        "{\"message\":\"Request Entity Too Large\"}");
            } else {
                response = gateway.handle(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
                        exchange.getRequestURI().getRawQuery(), exchange.getRequestHeaders(),
                        new String(body, StandardCharsets.UTF_8));
            }
            byte[] out = response.body().getBytes(StandardCharsets.UTF_8);
            response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
            exchange.sendResponseHeaders(response.status(), out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(out);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        workers.shutdownNow();
    }
}
