package io.lifeline.local;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Amazon's DynamoDB Local, run as a server on a free loopback port: persisted under a data directory, or in
 * memory. Clients use the same lean HTTP client as the Lambdas, with dummy credentials.
 */
public final class LocalDynamo implements AutoCloseable {
    /** The AWS SDK v1 inside DynamoDB Local warns about JAXB on every start: harmless noise here. Held so the
     *  level sticks (java.util.logging keeps loggers weakly). */
    private static final java.util.logging.Logger SDK_V1_LOGGER = java.util.logging.Logger.getLogger("com.amazonaws");

    private final DynamoDBProxyServer server;
    private final URI endpoint;

    private LocalDynamo(DynamoDBProxyServer server, URI endpoint) {
        this.server = server;
        this.endpoint = endpoint;
    }

    /** Starts DynamoDB Local; {@code dataDir} null means in memory. */
    public static LocalDynamo start(Path dataDir) throws Exception {
        int port = freePort();
        String[] args = dataDir == null
                ? new String[] {"-inMemory", "-sharedDb", "-port", Integer.toString(port), "-disableTelemetry"}
                : new String[] {"-dbPath", createDirectories(dataDir).toString(), "-sharedDb", "-port",
                        Integer.toString(port), "-disableTelemetry"};
        SDK_V1_LOGGER.setLevel(java.util.logging.Level.SEVERE);
        DynamoDBProxyServer server;
        PrintStream console = System.out;
        try {
            // DynamoDB Local prints its configuration banner to stdout; keep Lifeline's console readable.
            System.setOut(new PrintStream(OutputStream.nullOutputStream()));
            server = ServerRunner.createServerFromCommandLineArgs(args);
            server.start();
        } finally {
            System.setOut(console);
        }
        return new LocalDynamo(server, URI.create("http://127.0.0.1:" + port));
    }

    private static Path createDirectories(Path dir) throws IOException {
        return Files.createDirectories(dir).toAbsolutePath();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    public URI endpoint() {
        return endpoint;
    }

    public DynamoDbClient client() {
        return LocalClients.build(DynamoDbClient.builder(), endpoint);
    }

    public DynamoDbStreamsClient streamsClient() {
        return LocalClients.build(DynamoDbStreamsClient.builder(), endpoint);
    }

    /** Creates {@code tableName} from the template's definition unless it exists; true when created. */
    public static boolean ensureTable(DynamoDbClient dynamo, SamTemplate template, String tableName) {
        try {
            dynamo.describeTable(d -> d.tableName(tableName));
            return false;
        } catch (ResourceNotFoundException e) {
            dynamo.createTable(template.createTableRequest(tableName));
            String ttl = template.timeToLiveAttribute();
            if (ttl != null) {
                dynamo.updateTimeToLive(u -> u.tableName(tableName)
                        .timeToLiveSpecification(t -> t.attributeName(ttl).enabled(true)));
            }
            return true;
        }
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
