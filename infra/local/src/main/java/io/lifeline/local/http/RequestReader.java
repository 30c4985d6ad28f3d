package io.lifeline.local.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Reads the HTTP/1.1 requests of one front-door connection, under {@link FrontDoorLimits}: each read against a
 * deadline (monotonic nanos), a head and body past their limits refused as the front door answers them, and what a
 * refused client still sends drained before the connection closes.
 */
final class RequestReader {
    /** A refusal the front door answers itself; the connection closes after it. */
    static final class Refusal extends Exception {
        final int status;
        final String code;

        Refusal(int status, String code, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
        }
    }

    /** The head and body did not arrive in time. */
    static final class TooSlow extends Exception {
        TooSlow() {
            super(null, null, false, false);
        }
    }

    /** A request as it arrived: its method, its target (path and query), its head, and its whole body. */
    record Request(String method, String target, Map<String, List<String>> headers, boolean keepAlive,
                   byte[] body) {
    }

    private interface Read {
        int read() throws IOException;
    }

    private final Socket socket;
    private final InputStream in;
    private final FrontDoorLimits limits;
    private final LongSupplier nanoTime;
    /** Told when the first byte of a request arrives (the connection marks its head begun). */
    private final Runnable headBegun;
    private final byte[] buffer = new byte[8192];
    private int pos;
    private int end;

    RequestReader(Socket socket, InputStream in, FrontDoorLimits limits, LongSupplier nanoTime, Runnable headBegun) {
        this.socket = socket;
        this.in = in;
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.headBegun = headBegun;
    }

    /** The next request, or null when the connection ends before one begins. */
    Request read(boolean first, long started) throws IOException, Refusal, TooSlow {
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
        headBegun.run();
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
        byte[] body = body(headers);
        return new Request(parts[0], parts[1], headers, keepAlive, body);
    }

    /** The body the head announces: chunked, or its Content-Length's bytes (none without one). */
    private byte[] body(Map<String, List<String>> headers) throws IOException, Refusal, TooSlow {
        long bodyDeadline = nanoTime.getAsLong() + limits.bodyTimeout().toNanos();
        String encoding = value(headers, "transfer-encoding");
        if (encoding != null && !"identity".equalsIgnoreCase(encoding)) {
            if (!"chunked".equalsIgnoreCase(encoding)) {
                throw new Refusal(501, "NOT_IMPLEMENTED", "transfer-encoding " + encoding + " is not supported");
            }
            return chunked(bodyDeadline);
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
            return exactly((int) n, bodyDeadline);
        }
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

    /**
     * After a refusal (the answer sent, our side shut): reads and drops what the client is still sending, up to
     * {@code maxBytes} and {@code timeoutNanos}, none of it kept, so that closing does not reset the connection
     * before a client that sends its whole request before reading (the JDK's HttpClient does) reads the answer.
     */
    void drain(long maxBytes, long timeoutNanos) {
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

    static String value(Map<String, List<String>> headers, String name) {
        for (Map.Entry<String, List<String>> h : headers.entrySet()) {
            if (h.getKey().equalsIgnoreCase(name)) {
                return String.join(",", h.getValue());
            }
        }
        return null;
    }
}
