package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.engine.endpoint.Endpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.OperationType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.StreamViewType;
import software.amazon.awssdk.services.dynamodb.model.Stream;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The endpoint's wire as other clients see it: another language's SDK (boto3, when python3 has it), raw HTTP (the
 * error bodies AWS's shape, the protocol refusals), clients that stall mid-request, and a rough speed figure.
 */
@Tag("store")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EndpointTest implements Cases {
    private static Endpoint endpoint;
    private static DynamoDbClient client;
    private static DynamoDbStreamsClient streams;

    @BeforeAll
    static void start() throws IOException {
        endpoint = Endpoint.start(new Engine(Clock.systemUTC()), 0);
        client = sdk(endpoint.uri());
        streams = DynamoDbStreamsClient.builder().endpointOverride(endpoint.uri()).region(Region.US_WEST_2)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("k", "s")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
    }

    static DynamoDbClient sdk(URI uri) {
        return DynamoDbClient.builder().endpointOverride(uri).region(Region.US_WEST_2)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("k", "s")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
    }

    @AfterAll
    static void stop() {
        client.close();
        streams.close();
        endpoint.close();
    }

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public DynamoDbStreamsClient streams() {
        return streams;
    }

    @Override
    public String target() {
        return "endpoint";
    }

    @Test
    void boto3TalksToItUnchanged() throws Exception {
        String missing = missingBoto3();
        assumeTrue(missing == null, () -> "boto3 check skipped: " + missing);
        Path script = Files.createTempFile("boto3_endpoint", ".py");
        try (InputStream in = EndpointTest.class.getResourceAsStream("/boto3_endpoint.py")) {
            Files.write(script, in.readAllBytes());
        }
        Process p = new ProcessBuilder("python3", script.toString(), endpoint.uri().toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "boto3 script did not end: " + out);
        Files.delete(script);
        System.out.print("boto3:\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("conditional update refused with the item: ready"), out);
        assertTrue(out.contains("transaction cancelled: None, ConditionalCheckFailed"), out);
        assertTrue(out.endsWith("ok\n"), out);
    }

    private static String missingBoto3() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import boto3").redirectErrorStream(true).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? null : "python3 has no boto3";
        } catch (IOException e) {
            return "no python3 on PATH";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    @Test
    void aRefusedWriteIsAwsErrorBodyWithTheItem() throws Exception {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "status", "ready")));
        String body = "{\"TableName\":\"" + t + "\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}},"
                + "\"ConditionExpression\":\"attribute_not_exists(pk)\",\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}";
        Reply r = post("DynamoDB_20120810.PutItem", body);
        assertEquals(400, r.status, r.body);
        assertEquals("{\"__type\":\"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException\","
                + "\"message\":\"The conditional request failed\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"},"
                + "\"status\":{\"S\":\"ready\"}}}", r.body);
        assertEquals("application/x-amz-json-1.0", r.type);
        ConditionalCheckFailedException e = assertThrows(ConditionalCheckFailedException.class,
                () -> db().putItem(p -> p.tableName(t).item(map("pk", "a", "sk", "1"))
                        .conditionExpression("attribute_not_exists(pk)")
                        .returnValuesOnConditionCheckFailure("ALL_OLD")));
        assertEquals(map("pk", "a", "sk", "1", "status", "ready"), e.item());
        assertEquals(400, e.statusCode());
    }

    @Test
    void protocolRefusalsAreAwsErrors() throws Exception {
        Reply unknown = post("DynamoDB_20120810.NoSuchThing", "{}");
        assertEquals(400, unknown.status);
        assertEquals("{\"__type\":\"com.amazon.coral.service#UnknownOperationException\"}", unknown.body);
        assertEquals(400, post(null, "{}").status);
        Reply notJson = post("DynamoDB_20120810.ListTables", "{\"Limit\":");
        assertEquals(400, notJson.status);
        assertTrue(notJson.body.startsWith("{\"__type\":\"com.amazon.coral.service#SerializationException\""),
                notJson.body);
        Reply strange = post("DynamoDB_20120810.ListTables", "{\"Limt\":3}");
        assertEquals(400, strange.status);
        assertTrue(strange.body.contains("Unknown member Limt in ListTables"), strange.body);
        Reply wrongType = post("DynamoDB_20120810.ListTables", "{\"Limit\":\"three\"}");
        assertTrue(wrongType.body.contains("Expected a number for ListTables.Limit"), wrongType.body);
        Reply notImplemented = post("DynamoDB_20120810.DescribeContinuousBackups", "{\"TableName\":\"x\"}");
        assertEquals(400, notImplemented.status);
        assertTrue(notImplemented.body.startsWith("{\"__type\":\"com.amazon.coral.validate#ValidationException\","
                + "\"message\":\"The Lifeline engine does not implement the operation DescribeContinuousBackups\""),
                notImplemented.body);
        try (Endpoint tablesOnly = Endpoint.start(new Engine(Clock.systemUTC()).client(), null, 0)) {
            Reply streams = post(tablesOnly.uri(), "DynamoDBStreams_20120810.ListStreams", "{}");
            assertEquals(400, streams.status);
            assertTrue(streams.body.contains("started without a streams client"), streams.body);
        }
        HttpURLConnection get = (HttpURLConnection) endpoint.uri().toURL().openConnection();
        assertEquals(200, get.getResponseCode());
        get.disconnect();
    }

    /** The engine's own streams, over the wire: a write's record read back through the SDK's streams client. */
    @Test
    void theEnginesStreamsAreServed() {
        String t = "streamed-" + System.nanoTime();
        db().createTable(r -> r.tableName(t)
                .keySchema(k -> k.attributeName("pk").keyType(KeyType.HASH))
                .attributeDefinitions(a -> a.attributeName("pk").attributeType(ScalarAttributeType.S))
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .streamSpecification(x -> x.streamEnabled(true).streamViewType(StreamViewType.NEW_AND_OLD_IMAGES)));
        db().putItem(r -> r.tableName(t).item(Map.of("pk", AttributeValue.fromS("a"),
                "status", AttributeValue.fromS("ready"))));
        Stream listed = streams().listStreams(r -> r.tableName(t)).streams().get(0);
        assertEquals(t, listed.tableName());
        String shard = streams().describeStream(r -> r.streamArn(listed.streamArn())).streamDescription().shards()
                .get(0).shardId();
        String iterator = streams().getShardIterator(r -> r.streamArn(listed.streamArn()).shardId(shard)
                .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).shardIterator();
        GetRecordsResponse page = streams().getRecords(r -> r.shardIterator(iterator));
        assertEquals(1, page.records().size());
        assertEquals(OperationType.INSERT, page.records().get(0).eventName());
        assertEquals("ready", page.records().get(0).dynamodb().newImage().get("status").s());
        assertNotNull(page.nextShardIterator());
    }

    /**
     * Clients that open a connection and stop halfway through a request's head each hold one of the endpoint's
     * threads; they never hold the endpoint: an SDK call made meanwhile is answered.
     */
    @Test
    void clientsStalledMidRequestDoNotHoldOthersUp() throws Exception {
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                Socket s = new Socket(InetAddress.getByName("127.0.0.1"), endpoint.port());
                s.getOutputStream().write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Tar".getBytes(
                        StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                stalled.add(s);
            }
            String t = table();
            db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1")));
            assertEquals(1, db().scan(r -> r.tableName(t)).count());
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
        }
    }

    /**
     * A rough figure, never asserted: conditional UpdateItems a second through the SDK over the loopback wire, next
     * to the same calls on the engine in process (the wire's cost is the SDK's HTTP pipeline plus the server).
     */
    @Test
    void conditionalUpdatesPerSecondOverHttp() {
        double wire = updatesPerSecond(db());
        double inProcess = updatesPerSecond(new Engine(Clock.systemUTC()).client());
        System.out.printf("endpoint: %,.0f conditional UpdateItems a second over loopback HTTP (one thread, SDK "
                + "url-connection-client); %,.0f in process in the same run%n", wire, inProcess);
    }

    private double updatesPerSecond(DynamoDbClient dynamo) {
        String t = "speed-" + TABLES.incrementAndGet();
        dynamo.createTable(r -> r.tableName(t).billingMode("PAY_PER_REQUEST")
                .attributeDefinitions(a -> a.attributeName("pk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH")));
        int agents = 500;
        for (int i = 0; i < agents; i++) {
            int k = i;
            dynamo.putItem(r -> r.tableName(t).item(map("pk", "TEAM#t#AGENT#" + k, "status", "ready", "beat", n("0"))));
        }
        Map<String, String> names = Cases.names("#s", "status");
        int ops = 2_000;
        long start = 0;
        for (int i = -1_000; i < ops; i++) {
            if (i == 0) {
                start = System.nanoTime();
            }
            int k = Math.floorMod(i, agents);
            int at = Math.abs(i);
            dynamo.updateItem(r -> r.tableName(t).key(map("pk", "TEAM#t#AGENT#" + k))
                    .updateExpression("SET beat = :now").conditionExpression("#s = :ready")
                    .expressionAttributeNames(names)
                    .expressionAttributeValues(map(":now", n(Integer.toString(at)), ":ready", "ready")));
        }
        return ops / ((System.nanoTime() - start) / 1e9);
    }

    private record Reply(int status, String type, String body) {
    }

    /** A raw POST of {@code body} with {@code target} (none when null), as a non-SDK client sends it. */
    private static Reply post(String target, String body) throws IOException {
        return post(endpoint.uri(), target, body);
    }

    private static Reply post(URI uri, String target, String body) throws IOException {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setRequestProperty("Content-Type", "application/x-amz-json-1.0");
        if (target != null) {
            c.setRequestProperty("X-Amz-Target", target);
        }
        try (OutputStream out = c.getOutputStream()) {
            out.write(body.getBytes(StandardCharsets.UTF_8));
        }
        int status = c.getResponseCode();
        try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
            return new Reply(status, c.getContentType(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            c.disconnect();
        }
    }
}
