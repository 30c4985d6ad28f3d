package io.lifeline.engine.endpoint;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.engine.Engine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.SdkPojo;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.protocols.jsoncore.JsonNodeParser;
import software.amazon.awssdk.protocols.jsoncore.JsonWriter;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * A DynamoDB endpoint on 127.0.0.1: DynamoDB's JSON 1.0 protocol over HTTP ({@code POST /} with
 * {@code X-Amz-Target: DynamoDB_20120810.<Operation>} or {@code DynamoDBStreams_20120810.<Operation>}), answered by
 * a {@link DynamoDbClient} (the engine's) and, when given, a {@link DynamoDbStreamsClient}. Any SDK pointed at
 * {@link #uri()} talks to it unchanged: any region and any credentials are accepted (the signature is not
 * checked; the socket is loopback only), and errors come back as AWS sends them (HTTP 400 with {@code __type},
 * {@code message} and the exception's own members, such as {@code Item} and {@code CancellationReasons}; 500 only
 * for a bug), so the SDK throws the same exception classes with the same fields as in process.
 *
 * <p>Served by the JDK's {@code HttpServer} on a pool of daemon threads that grows with the requests in progress
 * (the engine runs one at a time under its lock; a thread per request in progress means a client that stalls
 * mid-request holds one thread, never the endpoint). See docs/engine.md, "As an endpoint".
 */
public final class Endpoint implements AutoCloseable {
    static final String CONTENT_TYPE = "application/x-amz-json-1.0";
    /** Above DynamoDB's own largest request (a BatchWriteItem of 25 items of 400 KB). */
    static final int MAX_BODY = 16 * 1024 * 1024;
    private static final String CORAL = "com.amazon.coral.service#";
    private static final String DYNAMODB = "com.amazonaws.dynamodb.v20120810#";
    private static final JsonNodeParser PARSER = JsonNodeParser.create();

    static {
        // The JDK's HTTP server leaves Nagle's algorithm on unless told, and it writes an answer's head and body
        // apart: the body then waits for the client's delayed ACK, about 40 ms a request on Linux (measured:
        // EndpointTest's 3,500 calls did not finish in 3 minutes with it on). It reads the setting once, when
        // its first server starts in the JVM, so a value set before (by the user, or by Lifeline Local) is kept.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    /** A refusal the endpoint itself makes (not the engine): its status, error code and message. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;
        final String code;

        Refusal(int status, String code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }

    private final HttpServer server;
    private final ExecutorService pool;
    private final Operations operations;
    private final URI uri;

    private Endpoint(HttpServer server, ExecutorService pool, Operations operations) {
        this.server = server;
        this.pool = pool;
        this.operations = operations;
        this.uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Serves {@code engine}, its tables and its streams, on 127.0.0.1:{@code port}; port 0 picks a free one. */
    public static Endpoint start(Engine engine, int port) throws IOException {
        return start(engine.client(), engine.streamsClient(), port);
    }

    /**
     * Serves {@code dynamo} and, when not null, {@code streams} on 127.0.0.1:{@code port} (0 picks a free one).
     * Without a streams client, a streams operation answers a ValidationException saying so.
     *
     * @throws java.net.BindException when the port is in use
     */
    public static Endpoint start(DynamoDbClient dynamo, DynamoDbStreamsClient streams, int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 128);
        AtomicInteger threads = new AtomicInteger();
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "engine-endpoint-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        Endpoint endpoint = new Endpoint(server, pool, new Operations(dynamo, streams));
        server.createContext("/", endpoint::handle);
        server.setExecutor(pool);
        server.start();
        return endpoint;
    }

    /** {@code http://127.0.0.1:<port>}: what an SDK's endpointOverride (or {@code --endpoint-url}) takes. */
    public URI uri() {
        return uri;
    }

    public int port() {
        return uri.getPort();
    }

    /** Stops listening and ends the pool's threads; a request in progress is cut off. */
    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            if (x.getRequestMethod().equals("GET")) {
                // What DynamoDB answers a GET / with: a health line (a readiness probe for scripts and child JVMs).
                send(x, 200, "text/plain", "healthy: lifeline engine".getBytes(StandardCharsets.UTF_8));
                return;
            }
            byte[] reply;
            int status = 200;
            try {
                reply = answer(x);
            } catch (Refusal r) {
                status = r.status;
                reply = error(r.code, r.getMessage(), null);
            } catch (AwsServiceException e) {
                status = e.statusCode() == 0 ? 400 : e.statusCode();
                reply = error(e.awsErrorDetails().errorCode(), message(e), e);
            } catch (UnsupportedOperationException e) {
                // The SDK interface's own default for an operation the client given does not implement.
                status = 400;
                reply = error("ValidationException", "The Lifeline engine does not implement the operation "
                        + x.getRequestHeaders().getFirst("X-Amz-Target"), null);
            } catch (RuntimeException bug) {
                status = 500;
                bug.printStackTrace();
                reply = error("InternalServerError", "The Lifeline engine failed: " + bug, null);
            }
            send(x, status, CONTENT_TYPE, reply);
        }
    }

    private byte[] answer(HttpExchange x) throws IOException {
        String target = x.getRequestHeaders().getFirst("X-Amz-Target");
        if (!x.getRequestMethod().equals("POST") || target == null || !operations.knows(target)) {
            throw operations.unknown(target);
        }
        byte[] body = body(x.getRequestBody());
        String name = target.substring(target.indexOf('.') + 1);
        JsonNode node;
        try {
            node = body.length == 0 ? JsonNode.emptyObjectNode() : PARSER.parse(body);
        } catch (RuntimeException malformed) {
            throw new Refusal(400, "SerializationException", "The body of " + name + " is not JSON");
        }
        Object request;
        try {
            request = Json.read(operations.requestBuilder(target), node, name);
        } catch (Json.BadShape e) {
            throw new Refusal(400, "SerializationException", e.getMessage());
        }
        SdkPojo response = operations.call(target, request);
        JsonWriter w = JsonWriter.create();
        w.writeStartObject();
        Json.members(w, response);
        w.writeEndObject();
        return w.getBytes();
    }

    private static byte[] body(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
            out.write(buf, 0, n);
            if (out.size() > MAX_BODY) {
                throw new Refusal(413, "RequestEntityTooLarge", "Request body over " + MAX_BODY + " bytes");
            }
        }
        return out.toByteArray();
    }

    private static String message(AwsServiceException e) {
        String m = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage();
        return m != null ? m : e.getMessage();
    }

    /**
     * An error body as AWS writes one: {@code __type} with the namespace DynamoDB gives the code (the coral
     * namespaces for validation and protocol errors), {@code message}, then the exception's modelled members.
     */
    static byte[] error(String code, String message, SdkPojo exception) {
        String namespace = switch (code) {
            case "ValidationException" -> "com.amazon.coral.validate#";
            case "SerializationException", "UnknownOperationException", "RequestEntityTooLarge" -> CORAL;
            default -> DYNAMODB;
        };
        JsonWriter w = JsonWriter.create();
        w.writeStartObject();
        w.writeFieldName("__type");
        w.writeValue(namespace + code);
        if (message != null) {
            w.writeFieldName("message");
            w.writeValue(message);
        }
        if (exception != null) {
            Json.members(w, exception);
        }
        w.writeEndObject();
        return w.getBytes();
    }

    private static void send(HttpExchange x, int status, String type, byte[] body) throws IOException {
        CRC32 crc = new CRC32();
        crc.update(body);
        x.getResponseHeaders().set("Content-Type", type);
        x.getResponseHeaders().set("x-amzn-RequestId", UUID.randomUUID().toString());
        // DynamoDB's checksum of the body, which the SDKs verify when it is present.
        x.getResponseHeaders().set("x-amz-crc32", Long.toString(crc.getValue()));
        x.sendResponseHeaders(status, body.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(body);
        }
    }
}
