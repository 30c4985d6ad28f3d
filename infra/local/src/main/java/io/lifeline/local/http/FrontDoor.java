package io.lifeline.local.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Lifeline Local's HTTP/1.1 listener on 127.0.0.1: hands every request to the {@link LocalGateway}.
 *
 * <p>Each connection has its own thread, so no answer waits behind another client's stalled connection (the
 * JDK's HttpServer read request heads on a 16-thread pool with no timeout: 16 half-sent heads froze Local). A
 * request's head must arrive within {@link FrontDoorLimits#headerTimeout} and its body within {@link FrontDoorLimits#bodyTimeout},
 * else {@code 408}; a request line over {@link FrontDoorLimits#maxUriBytes} is {@code 414}, a head over
 * {@link FrontDoorLimits#maxHeaderBytes} or {@link FrontDoorLimits#maxHeaders} lines {@code 431}, and a body declared over
 * {@link FrontDoorLimits#maxBodyBytes} is {@code 413} as soon as its Content-Length is read, before any of it. Every
 * such answer is JSON in the API's error shape and closes the connection. One client address holds at most
 * {@link FrontDoorLimits#maxConnectionsPerClient} connections without a request in progress: a new one past that closes
 * the address's connection that has waited longest without one (a held half-sent head, an idle keep-alive).
 * Requests in progress are never closed; past {@link #MAX_BUSY_CONNECTIONS_PER_CLIENT} of them a new connection
 * is answered {@code 503} with Retry-After.
 *
 * <p>{@link #oldestWaitNanos()} is how long the oldest request that has fully arrived has waited for its
 * answer: Local's scheduler treats a sweep as late while that exceeds half an interval, so heartbeats queued at
 * the front door are not judged missing.
 */
public final class FrontDoor implements AutoCloseable {
    /** A request's handler: {@link LocalGateway#handle}. */
    @FunctionalInterface
    interface Handler {
        LocalGateway.Response handle(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                                     String body);

        /** As {@link #handle(String, String, String, Map, String)}, from {@code client} (the connection's peer). */
        default LocalGateway.Response handle(String method, String rawPath, String rawQuery,
                                             Map<String, List<String>> headers, String body, String client) {
            return handle(method, rawPath, rawQuery, headers, body);
        }

        /** True when {@code authorization} was authorized recently ({@link LocalGateway#recentlyAuthorized}). */
        default boolean recentlyAuthorized(String authorization) {
            return false;
        }
    }

    /** What is read and dropped after a refusal, at most (see {@code drain}): above API Gateway's 10 MB. */
    private static final long DRAIN_BYTES = 16L * 1024 * 1024;

    private final ServerSocket listener;
    private final Handler handler;
    private final FrontDoorLimits limits;
    private final LongSupplier nanoTime;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final RefusalThrottle throttle;
    private final Thread acceptor;
    private volatile boolean closed;

    public FrontDoor(LocalGateway gateway, int port) throws IOException {
        this(handler(gateway), port, FrontDoorLimits.defaults());
    }

    /** The gateway as the front door's handler. */
    static Handler handler(LocalGateway gateway) {
        return new Handler() {
            @Override
            public LocalGateway.Response handle(String method, String rawPath, String rawQuery,
                                                Map<String, List<String>> headers, String body) {
                return gateway.handle(method, rawPath, rawQuery, headers, body);
            }

            @Override
            public LocalGateway.Response handle(String method, String rawPath, String rawQuery,
                                                Map<String, List<String>> headers, String body, String client) {
                return gateway.handle(method, rawPath, rawQuery, headers, body, client);
            }

            @Override
            public boolean recentlyAuthorized(String authorization) {
                return gateway.recentlyAuthorized(authorization);
            }
        };
    }

    FrontDoor(Handler handler, int port, FrontDoorLimits limits) throws IOException {
        this.handler = handler;
        this.limits = limits;
        this.nanoTime = System::nanoTime;
        this.throttle = new RefusalThrottle(limits, nanoTime, handler::recentlyAuthorized);
        ServerSocket socket = new ServerSocket();
        try {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 512);
        } catch (BindException e) {
            socket.close();
            throw portInUse(port);
        }
        listener = socket;
        acceptor = new Thread(this::acceptLoop, "front-door-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Refuses, in one line, a port something else already listens on, before Local spends seconds starting its
     * functions (the bind in the constructor refuses the same way should another process take it meanwhile).
     * Port 0 is always free.
     */
    public static void requireFree(int port) throws IOException {
        if (port == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true); // as the front door binds: a port in TIME_WAIT is free
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (BindException e) {
            throw portInUse(port);
        }
    }

    /** The one line a user reads when the port is taken (the app answers it as a refusal to start). */
    private static BindException portInUse(int port) {
        return new BindException("port " + port + " is in use; use --port");
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Connections open now (all client addresses). */
    int openConnections() {
        return connections.size();
    }

    /**
     * How long, in nanoseconds, the oldest request that has fully arrived (head and body) has waited for its
     * answer; 0 when none waits. A client still sending is not counted: a slow client cannot make Local look
     * stalled, only requests Local has accepted and not yet answered can.
     */
    public long oldestWaitNanos() {
        long now = nanoTime.getAsLong();
        long oldest = 0;
        for (Connection c : connections) {
            long since = c.answeringSince;
            if (since != 0) {
                oldest = Math.max(oldest, now - since);
            }
        }
        return oldest;
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            try {
                socket.setTcpNoDelay(true);
            } catch (IOException ignored) {
                // The connection is already gone; its thread finds out.
            }
            Connection c = new Connection(socket, nanoTime.getAsLong());
            boolean refused = !makeRoomFor(c.address);
            c.refused = refused;
            connections.add(c);
            Thread t = new Thread(() -> c.run(refused), "front-door");
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Connections of one address with a request in progress, at most: the threads a client can keep busy. Every
     * client of Local is 127.0.0.1, so this is the whole machine's queue of requests in flight (a stop-the-world
     * pause with 2,000 agents beating every 10 s leaves about 400 waiting); it is far above
     * {@link FrontDoorLimits#maxConnectionsPerClient}, which counts only the connections that hold no request in progress.
     */
    static final int MAX_BUSY_CONNECTIONS_PER_CLIENT = 1024;

    /**
     * True when {@code address} may open one more connection. Only its connections without a request in progress
     * (a half-sent head, an idle keep-alive) count against {@link FrontDoorLimits#maxConnectionsPerClient}: at that limit
     * the one that has waited longest is closed to make room. Connections whose request has arrived are work in
     * progress, never closed and not refused below {@link #MAX_BUSY_CONNECTIONS_PER_CLIENT}.
     */
    private synchronized boolean makeRoomFor(InetAddress address) {
        List<Connection> mine = new ArrayList<>();
        for (Connection c : connections) {
            if (c.address.equals(address)) {
                mine.add(c);
            }
        }
        long waiting = mine.stream().filter(c -> !c.busy && !c.refused).count();
        if (waiting < limits.maxConnectionsPerClient()
                && mine.size() < limits.maxConnectionsPerClient() + MAX_BUSY_CONNECTIONS_PER_CLIENT) {
            return true;
        }
        // A half-sent head goes first (the oldest), then the longest idle: a client's live keep-alive is kept longest.
        return mine.stream().filter(c -> !c.busy && !c.refused)
                .min(Comparator.comparingInt((Connection c) -> c.headSince != 0 ? 0 : 1)
                        .thenComparingLong(c -> c.headSince != 0 ? c.headSince : c.waitingSince))
                .map(c -> {
                    c.evict();
                    return true;
                }).orElse(false);
    }

    private final class Connection {
        final Socket socket;
        final InetAddress address;
        /** Monotonic nanos since which the connection has had no request in progress (its head not yet begun). */
        volatile long waitingSince;
        /** Monotonic nanos at which the first byte of a request still arriving came; 0 when none is arriving. */
        volatile long headSince;
        /** Monotonic nanos at which the request in progress fully arrived; 0 when none is being answered. */
        volatile long answeringSince;
        /** True from a request's full arrival until its answer is written: such a connection is never evicted. */
        volatile boolean busy;
        volatile boolean refused;
        private RequestReader reader;

        Connection(Socket socket, long now) {
            this.socket = socket;
            this.address = socket.getInetAddress();
            this.waitingSince = now;
        }

        void evict() {
            connections.remove(this);
            closeQuietly();
        }

        void run(boolean refusedAtAccept) {
            refused = refusedAtAccept;
            try (socket) {
                InputStream in = socket.getInputStream();
                reader = new RequestReader(socket, in, limits, nanoTime,
                        () -> headSince = Math.max(1, nanoTime.getAsLong()));
                OutputStream out = socket.getOutputStream();
                if (refusedAtAccept) {
                    Answers.write(socket, out, Answers.error(503, "TOO_MANY_CONNECTIONS", "this client has "
                            + MAX_BUSY_CONNECTIONS_PER_CLIENT + " requests in progress; retry shortly",
                            Map.of("retry-after", "1")), false, false);
                    return;
                }
                boolean first = true;
                while (!closed) {
                    long started = nanoTime.getAsLong();
                    waitingSince = started;
                    RequestReader.Request request;
                    try {
                        request = reader.read(first, started);
                    } catch (RequestReader.Refusal r) {
                        Answers.write(socket, out, Answers.error(r.status, r.code, r.getMessage(), Map.of()), false,
                                false);
                        reader.drain(DRAIN_BYTES, limits.bodyTimeout().toNanos());
                        return;
                    } catch (RequestReader.TooSlow slow) {
                        Answers.write(socket, out, Answers.error(408, "REQUEST_TIMEOUT", "the request did not arrive "
                                + "within " + limits.headerTimeout().toSeconds() + " s (head) and "
                                + limits.bodyTimeout().toSeconds() + " s (body)", Map.of()), false, false);
                        reader.drain(DRAIN_BYTES, 1_000_000_000L);
                        return;
                    }
                    if (request == null) {
                        return; // the client closed, or an idle keep-alive ended
                    }
                    first = false;
                    busy = true;
                    answeringSince = Math.max(1, nanoTime.getAsLong());
                    headSince = 0;
                    LocalGateway.Response response;
                    try {
                        response = answer(request);
                    } finally {
                        // Writing the answer is the client's pace, not Local's: it does not count as a wait.
                        answeringSince = 0;
                    }
                    Answers.write(socket, out, response, request.keepAlive(), "HEAD".equals(request.method()));
                    busy = false;
                    if (!request.keepAlive()) {
                        return;
                    }
                }
            } catch (IOException e) {
                // The client went away (or was evicted): nothing to answer.
            } finally {
                answeringSince = 0;
                headSince = 0;
                busy = false;
                connections.remove(this);
            }
        }

        private LocalGateway.Response answer(RequestReader.Request request) {
            String authorization = RequestReader.value(request.headers(), "authorization");
            long retryAfter = throttle.throttledFor(address, authorization);
            if (retryAfter > 0) {
                return Answers.error(429, "TOO_MANY_REFUSALS", "too many requests from this client were refused "
                        + "(401/403); retry after " + retryAfter + " s", Map.of("retry-after", Long.toString(retryAfter)));
            }
            LocalGateway.Response response = pass(request);
            if (response.status() == 401 || response.status() == 403) {
                throttle.refused(address);
            }
            return response;
        }

        private LocalGateway.Response pass(RequestReader.Request request) {
            String target = request.target();
            int q = target.indexOf('?');
            String path = q < 0 ? target : target.substring(0, q);
            String query = q < 0 ? null : target.substring(q + 1);
            try {
                return handler.handle(request.method(), path, query, request.headers(),
                        new String(request.body(), StandardCharsets.UTF_8), address.getHostAddress());
            } catch (RuntimeException e) {
                System.err.println("front door: " + e);
                return Answers.error(500, "INTERNAL_ERROR", "internal error", Map.of());
            }
        }

        void closeQuietly() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Already closed.
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        for (Connection c : connections) {
            c.closeQuietly();
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
