package io.lifeline.local.http;

import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Lifeline Local's HTTP/1.1 listener on 127.0.0.1: hands every request to the {@link LocalGateway}.
 *
 * <p>Each connection has its own thread, so no answer waits behind another client's stalled connection (the
 * JDK's HttpServer read request heads on a 16-thread pool with no timeout: 16 half-sent heads froze Local). A
 * request's head must arrive within {@link Limits#headerTimeout} and its body within {@link Limits#bodyTimeout},
 * else {@code 408}; a request line over {@link Limits#maxUriBytes} is {@code 414}, a head over
 * {@link Limits#maxHeaderBytes} or {@link Limits#maxHeaders} lines {@code 431}, and a body declared over
 * {@link Limits#maxBodyBytes} is {@code 413} as soon as its Content-Length is read, before any of it. Every
 * such answer is JSON in the API's error shape and closes the connection. One client address holds at most
 * {@link Limits#maxConnectionsPerClient} connections without a request in progress: a new one past that closes
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

    /** One client address's refusals in the current window (monotonic nanos). */
    private static final class Refusals {
        long windowStart;
        int refused;
        int throttled;
    }

    /** The front door's limits (README, "Lifeline Local's front door"). */
    record Limits(Duration headerTimeout, Duration bodyTimeout, Duration idleTimeout, int maxUriBytes,
                  int maxHeaderBytes, int maxHeaders, int maxBodyBytes, int maxConnectionsPerClient,
                  int refusalsPerWindow, Duration refusalWindow) {
        /**
         * 10 s for a head, 30 s for a body, 60 s idle between keep-alive requests; an 8 KiB request line, a
         * 16 KiB head of at most 100 lines, API Gateway's 10 MB payload (the handlers refuse far smaller bodies
         * with their own 413), 64 connections per client address; 20 refusals (401/403) per client address a
         * second, past which its requests with a key not recently authorized are answered 429.
         */
        static Limits defaults() {
            return new Limits(Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60), 8 * 1024,
                    16 * 1024, 100, 10 * 1024 * 1024, 64, 20, Duration.ofSeconds(1));
        }
    }

    /** What is read and dropped after a refusal, at most (see {@code drain}): above API Gateway's 10 MB. */
    private static final long DRAIN_BYTES = 16L * 1024 * 1024;

    private final ServerSocket listener;
    private final Handler handler;
    private final Limits limits;
    private final LongSupplier nanoTime;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Map<InetAddress, Refusals> refusals = new ConcurrentHashMap<>();
    private final Thread acceptor;
    private volatile boolean closed;

    public FrontDoor(LocalGateway gateway, int port) throws IOException {
        this(handler(gateway), port, Limits.defaults());
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

    FrontDoor(Handler handler, int port, Limits limits) throws IOException {
        this.handler = handler;
        this.limits = limits;
        this.nanoTime = System::nanoTime;
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
     * {@link Limits#maxConnectionsPerClient}, which counts only the connections that hold no request in progress.
     */
    static final int MAX_BUSY_CONNECTIONS_PER_CLIENT = 1024;

    /**
     * True when {@code address} may open one more connection. Only its connections without a request in progress
     * (a half-sent head, an idle keep-alive) count against {@link Limits#maxConnectionsPerClient}: at that limit
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

    /** A refusal the front door answers itself; the connection closes after it. */
    private static final class Refusal extends Exception {
        final int status;
        final String code;

        Refusal(int status, String code, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
        }
    }

    /** The head and body did not arrive in time. */
    private static final class TooSlow extends Exception {
        TooSlow() {
            super(null, null, false, false);
        }
    }

    private record Request(String method, String target, Map<String, List<String>> headers, boolean keepAlive,
                           byte[] body) {
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
        private final byte[] buffer = new byte[8192];
        private int pos;
        private int end;
        private InputStream in;

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
                in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                if (refusedAtAccept) {
                    write(out, error(503, "TOO_MANY_CONNECTIONS", "this client has "
                            + MAX_BUSY_CONNECTIONS_PER_CLIENT + " requests in progress; retry shortly",
                            Map.of("retry-after", "1")), false, false);
                    return;
                }
                boolean first = true;
                while (!closed) {
                    long started = nanoTime.getAsLong();
                    waitingSince = started;
                    Request request;
                    try {
                        request = read(first, started);
                    } catch (Refusal r) {
                        write(out, error(r.status, r.code, r.getMessage(), Map.of()), false, false);
                        drain(DRAIN_BYTES, limits.bodyTimeout().toNanos());
                        return;
                    } catch (TooSlow slow) {
                        write(out, error(408, "REQUEST_TIMEOUT", "the request did not arrive within "
                                + limits.headerTimeout().toSeconds() + " s (head) and "
                                + limits.bodyTimeout().toSeconds() + " s (body)", Map.of()), false, false);
                        drain(DRAIN_BYTES, 1_000_000_000L);
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
                    write(out, response, request.keepAlive(), "HEAD".equals(request.method()));
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

        private LocalGateway.Response answer(Request request) {
            String authorization = value(request.headers(), "authorization");
            long retryAfter = throttledFor(address, authorization);
            if (retryAfter > 0) {
                return error(429, "TOO_MANY_REFUSALS", "too many requests from this client were refused (401/403); "
                        + "retry after " + retryAfter + " s", Map.of("retry-after", Long.toString(retryAfter)));
            }
            LocalGateway.Response response = pass(request);
            if (response.status() == 401 || response.status() == 403) {
                refused(address);
            }
            return response;
        }

        private LocalGateway.Response pass(Request request) {
            String target = request.target();
            int q = target.indexOf('?');
            String path = q < 0 ? target : target.substring(0, q);
            String query = q < 0 ? null : target.substring(q + 1);
            try {
                return handler.handle(request.method(), path, query, request.headers(),
                        new String(request.body(), StandardCharsets.UTF_8), address.getHostAddress());
            } catch (RuntimeException e) {
                System.err.println("front door: " + e);
                return error(500, "INTERNAL_ERROR", "internal error", Map.of());
            }
        }

        /** The next request, or null when the connection ends before one begins. */
        private Request read(boolean first, long started) throws IOException, Refusal, TooSlow {
            // A new connection's first request must arrive within the head timeout; between keep-alive requests
            // the connection may idle longer, and closes quietly if no new request begins.
            long idleDeadline = started + (first ? limits.headerTimeout() : limits.idleTimeout()).toNanos();
            int b;
            try {
                b = next(idleDeadline);
            } catch (TooSlow slow) {
                if (first) {
                    throw slow;
                }
                return null;
            }
            if (b < 0) {
                return null;
            }
            pos--; // the first byte belongs to the request line
            headSince = Math.max(1, nanoTime.getAsLong());
            long headDeadline = nanoTime.getAsLong() + limits.headerTimeout().toNanos();
            if (first) {
                headDeadline = Math.min(headDeadline, started + limits.headerTimeout().toNanos());
            }
            String requestLine = line(headDeadline, limits.maxUriBytes(), true);
            if (requestLine == null) {
                return null;
            }
            String[] parts = requestLine.split(" ");
            if (parts.length != 3 || !parts[2].startsWith("HTTP/1.") || parts[0].isEmpty()
                    || !parts[1].startsWith("/")) {
                throw new Refusal(400, "BAD_REQUEST", "malformed request line");
            }
            Map<String, List<String>> headers = new LinkedHashMap<>();
            int headBytes = 0;
            int count = 0;
            while (true) {
                String h = line(headDeadline, limits.maxHeaderBytes() - headBytes, false);
                if (h == null) {
                    return null;
                }
                if (h.isEmpty()) {
                    break;
                }
                headBytes += h.length() + 2;
                if (++count > limits.maxHeaders()) {
                    throw new Refusal(431, "HEADERS_TOO_LARGE", "more than " + limits.maxHeaders() + " header lines");
                }
                int colon = h.indexOf(':');
                if (colon <= 0) {
                    throw new Refusal(400, "BAD_REQUEST", "malformed header line");
                }
                headers.computeIfAbsent(h.substring(0, colon).trim(), k -> new ArrayList<>())
                        .add(h.substring(colon + 1).trim());
            }
            String connection = value(headers, "connection");
            boolean keepAlive = "HTTP/1.1".equals(parts[2])
                    ? !"close".equalsIgnoreCase(connection) : "keep-alive".equalsIgnoreCase(connection);
            if ("100-continue".equalsIgnoreCase(value(headers, "expect")) && declaredWithin(headers)) {
                // curl asks before sending a body over 1 KiB; the JDK's server answered the same.
                socket.getOutputStream().write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                socket.getOutputStream().flush();
            }
            long bodyDeadline = nanoTime.getAsLong() + limits.bodyTimeout().toNanos();
            byte[] body;
            String encoding = value(headers, "transfer-encoding");
            if (encoding != null && !"identity".equalsIgnoreCase(encoding)) {
                if (!"chunked".equalsIgnoreCase(encoding)) {
                    throw new Refusal(501, "NOT_IMPLEMENTED", "transfer-encoding " + encoding + " is not supported");
                }
                body = chunked(bodyDeadline);
            } else {
                String length = value(headers, "content-length");
                long n;
                try {
                    n = length == null ? 0 : Long.parseLong(length.trim());
                } catch (NumberFormatException e) {
                    throw new Refusal(400, "BAD_REQUEST", "invalid Content-Length");
                }
                if (n < 0) {
                    throw new Refusal(400, "BAD_REQUEST", "invalid Content-Length");
                }
                if (n > limits.maxBodyBytes()) {
                    throw new Refusal(413, "PAYLOAD_TOO_LARGE", "the body is over " + limits.maxBodyBytes() + " bytes");
                }
                body = exactly((int) n, bodyDeadline);
            }
            return new Request(parts[0], parts[1], headers, keepAlive, body);
        }

        /** True unless the Content-Length is declared and over the limit (then no 100 Continue: 413 follows). */
        private boolean declaredWithin(Map<String, List<String>> headers) {
            String length = value(headers, "content-length");
            try {
                return length == null || Long.parseLong(length.trim()) <= limits.maxBodyBytes();
            } catch (NumberFormatException e) {
                return false;
            }
        }

        private byte[] chunked(long deadline) throws IOException, Refusal, TooSlow {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            while (true) {
                String sizeLine = line(deadline, 1024, false);
                if (sizeLine == null) {
                    throw new IOException("closed mid-body");
                }
                int semi = sizeLine.indexOf(';');
                long size;
                try {
                    size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
                } catch (NumberFormatException e) {
                    throw new Refusal(400, "BAD_REQUEST", "invalid chunk size");
                }
                if (size < 0 || body.size() + size > limits.maxBodyBytes()) {
                    throw new Refusal(413, "PAYLOAD_TOO_LARGE", "the body is over " + limits.maxBodyBytes() + " bytes");
                }
                if (size == 0) {
                    while (true) { // trailers, up to the empty line
                        String trailer = line(deadline, limits.maxHeaderBytes(), false);
                        if (trailer == null || trailer.isEmpty()) {
                            return body.toByteArray();
                        }
                    }
                }
                body.writeBytes(exactly((int) size, deadline));
                if (!"".equals(line(deadline, 2, false))) {
                    throw new Refusal(400, "BAD_REQUEST", "malformed chunk");
                }
            }
        }

        /** A CRLF- (or LF-) ended line of at most {@code max} bytes, without its end; null at end of stream. */
        private String line(long deadline, int max, boolean requestLine) throws IOException, Refusal, TooSlow {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            while (true) {
                int b = next(deadline);
                if (b < 0) {
                    return null;
                }
                if (b == '\n') {
                    byte[] bytes = line.toByteArray();
                    int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                    return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
                }
                if (line.size() >= max) {
                    throw requestLine
                            ? new Refusal(414, "URI_TOO_LONG", "the request line is over " + max + " bytes")
                            : new Refusal(431, "HEADERS_TOO_LARGE", "the request head is over "
                                    + limits.maxHeaderBytes() + " bytes");
                }
                line.write(b);
            }
        }

        private byte[] exactly(int n, long deadline) throws IOException, TooSlow {
            byte[] out = new byte[n];
            int have = Math.min(n, end - pos);
            System.arraycopy(buffer, pos, out, 0, have);
            pos += have;
            while (have < n) {
                int from = have;
                int read = timed(deadline, () -> in.read(out, from, n - from));
                if (read < 0) {
                    throw new IOException("closed mid-body");
                }
                have += read;
            }
            return out;
        }

        private int next(long deadline) throws IOException, TooSlow {
            if (pos < end) {
                return buffer[pos++] & 0xff;
            }
            int read = timed(deadline, () -> in.read(buffer, 0, buffer.length));
            if (read < 0) {
                return -1;
            }
            pos = 0;
            end = read;
            return buffer[pos++] & 0xff;
        }

        private interface Read {
            int read() throws IOException;
        }

        /** One read that must return before the deadline (monotonic nanos). */
        private int timed(long deadline, Read read) throws IOException, TooSlow {
            long left = deadline - nanoTime.getAsLong();
            if (left <= 0) {
                throw new TooSlow();
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)));
            try {
                return read.read();
            } catch (SocketTimeoutException e) {
                throw new TooSlow();
            }
        }

        private void write(OutputStream out, LocalGateway.Response response, boolean keepAlive, boolean headOnly)
                throws IOException {
            byte[] body = response.body() == null ? new byte[0] : response.body().getBytes(StandardCharsets.UTF_8);
            StringBuilder head = new StringBuilder("HTTP/1.1 ").append(response.status()).append(' ')
                    .append(reason(response.status())).append("\r\n");
            response.headers().forEach((k, v) -> {
                String name = k.toLowerCase(Locale.ROOT);
                if (!name.equals("content-length") && !name.equals("connection")
                        && !name.equals("transfer-encoding")) {
                    head.append(k).append(": ").append(v).append("\r\n");
                }
            });
            if (response.status() != 204 && response.status() != 304) {
                head.append("Content-Length: ").append(body.length).append("\r\n");
            }
            head.append("Connection: ").append(keepAlive ? "keep-alive" : "close").append("\r\n\r\n");
            out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (response.status() != 204 && response.status() != 304 && !headOnly) {
                out.write(body);
            }
            out.flush();
            if (!keepAlive) {
                socket.shutdownOutput();
            }
        }

        /**
         * After a refusal (the answer sent, our side shut): reads and drops what the client is still sending, up to
         * {@code maxBytes} and {@code timeoutNanos}, none of it kept, so that closing does not reset the connection
         * before a client that sends its whole request before reading (the JDK's HttpClient does) reads the answer.
         */
        private void drain(long maxBytes, long timeoutNanos) {
            long deadline = nanoTime.getAsLong() + timeoutNanos;
            long dropped = 0;
            byte[] sink = new byte[8192];
            try {
                while (dropped < maxBytes) {
                    long left = deadline - nanoTime.getAsLong();
                    if (left <= 0) {
                        return;
                    }
                    socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
                    int n = in.read(sink);
                    if (n < 0) {
                        return;
                    }
                    dropped += n;
                }
            } catch (IOException e) {
                // Timed out or gone: close now.
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

    /**
     * Seconds until {@code address} may be refused again, when it was refused more than
     * {@link Limits#refusalsPerWindow} times in this window and {@code authorization} is not a key authorized
     * recently (so a flood of wrong keys from one machine does not stop the beats of agents on it); else 0. The
     * first throttled request of a window logs one line; the rest of the window logs nothing.
     */
    private long throttledFor(InetAddress address, String authorization) {
        Refusals r = refusals.get(address);
        if (r == null || (authorization != null && handler.recentlyAuthorized(authorization))) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long windowNanos = limits.refusalWindow().toNanos();
        synchronized (r) {
            if (now - r.windowStart >= windowNanos || r.refused < limits.refusalsPerWindow()) {
                return 0;
            }
            if (r.throttled++ == 0) {
                Log.emit(Log.line("WARN", "front_door")
                        .put("outcome", "refusals_throttled").put("client", address.getHostAddress())
                        .put("refused", r.refused).put("windowSeconds", limits.refusalWindow().toSeconds()));
            }
            long left = windowNanos - (now - r.windowStart);
            return Math.max(1, (left + 999_999_999L) / 1_000_000_000L);
        }
    }

    private void refused(InetAddress address) {
        Refusals r = refusals.computeIfAbsent(address, a -> new Refusals());
        long now = nanoTime.getAsLong();
        synchronized (r) {
            if (r.refused == 0 || now - r.windowStart >= limits.refusalWindow().toNanos()) {
                r.windowStart = now;
                r.refused = 0;
                r.throttled = 0;
            }
            r.refused++;
        }
    }

    private static String value(Map<String, List<String>> headers, String name) {
        for (Map.Entry<String, List<String>> h : headers.entrySet()) {
            if (h.getKey().equalsIgnoreCase(name)) {
                return String.join(",", h.getValue());
            }
        }
        return null;
    }

    /** The front door's own answers, in the API's error shape. */
    static LocalGateway.Response error(int status, String code, String message, Map<String, String> extra) {
        Map<String, String> headers = new LinkedHashMap<>(extra);
        headers.put("content-type", "application/json");
        String body = Json.object().put("success", false).put("error", message).put("code", code)
                .toString();
        return new LocalGateway.Response(status, headers, body);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 201 -> "Created";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 304 -> "Not Modified";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 413 -> "Payload Too Large";
            case 414 -> "URI Too Long";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
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
