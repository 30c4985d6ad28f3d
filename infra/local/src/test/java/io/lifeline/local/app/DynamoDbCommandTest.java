package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.ChildLocal;
import io.lifeline.local.CrashRestartTest;
import io.lifeline.local.LocalCommandLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * {@code lifeline-local.jar dynamodb}: the engine alone as a DynamoDB endpoint, started as users start it (a JVM
 * of its own running {@code LocalMain}), used through the SDK with an interceptor that counts its calls, as the
 * tests point their clients at DynamoDB Local today, then stopped with SIGTERM; and its refusals, each one line.
 */
@Tag("e2e")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DynamoDbCommandTest {
    @Test
    void servesTheEngineUntilStopped() throws Exception {
        Process p = new ProcessBuilder(ChildLocal.command("256m", "dynamodb", "--port", "0", "--in-memory"))
                .redirectErrorStream(true).start();
        List<String> output = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    output.add(line);
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "dynamodb-output");
        reader.setDaemon(true);
        reader.start();
        try {
            CrashRestartTest.poll(Duration.ofSeconds(60), "the endpoint line; output: " + output, () -> {
                assertTrue(p.isAlive(), () -> "exited: " + output);
                return endpoint(output) != null;
            });
            URI uri = endpoint(output);
            assertEquals("127.0.0.1", uri.getHost());
            AtomicInteger calls = new AtomicInteger();
            try (DynamoDbClient db = DynamoDbClient.builder().endpointOverride(uri).region(Region.EU_CENTRAL_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("a", "b")))
                    .httpClient(UrlConnectionHttpClient.create())
                    .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
                        @Override
                        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
                            calls.incrementAndGet();
                        }
                    })).build()) {
                use(db);
            }
            assertEquals(4, calls.get(), "the calls that succeeded, each counted once by the interceptor");
        } finally {
            // SIGTERM through the handle: Process.destroy() would also close our end of its output, losing the
            // lines its shutdown prints.
            p.toHandle().destroy();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "SIGTERM did not stop it: " + output);
        }
        reader.join(5_000);
        assertTrue(output.contains("Lifeline engine stopped; its tables were in memory and are gone."),
                () -> "exit " + p.exitValue() + ": " + output);
    }

    private static void use(DynamoDbClient db) {
        db.createTable(r -> r.tableName("t").billingMode("PAY_PER_REQUEST")
                .attributeDefinitions(a -> a.attributeName("pk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH")));
        Map<String, AttributeValue> item = Map.of("pk", AttributeValue.fromS("a"), "n", AttributeValue.fromN("1"));
        db.putItem(r -> r.tableName("t").item(item));
        ConditionalCheckFailedException refused = assertThrows(ConditionalCheckFailedException.class,
                () -> db.putItem(r -> r.tableName("t").item(item).conditionExpression("attribute_not_exists(pk)")
                        .returnValuesOnConditionCheckFailure("ALL_OLD")));
        assertEquals(item, refused.item());
        assertEquals(List.of("t"), db.listTables().tableNames());
        assertEquals(item, db.getItem(r -> r.tableName("t").key(Map.of("pk", AttributeValue.fromS("a")))).item());
    }

    private static URI endpoint(List<String> output) {
        for (String line : output) {
            if (line.startsWith(DynamoDbCommand.SERVING)) {
                return URI.create(line.substring(DynamoDbCommand.SERVING.length()).split(" ")[0]);
            }
        }
        return null;
    }

    @Test
    void aDataDirIsRefusedInOneLine_untilTheEngineIsDurable() {
        LocalCommandLine.Run run = LocalCommandLine.run("dynamodb", "--port", "0", "--data-dir", "/tmp/nowhere");
        assertEquals(1, run.exit());
        assertEquals("--data-dir is not available in this build: the engine keeps its tables in memory only; use "
                + "--in-memory\n", run.err());
        LocalCommandLine.Run neither = LocalCommandLine.run("dynamodb", "--port", "0");
        assertEquals(1, neither.exit());
        assertFalse(neither.err().contains("Exception"), neither.err());
    }

    @Test
    void aPortInUseIsRefusedInOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            LocalCommandLine.Run run = LocalCommandLine.run("dynamodb", "--port",
                    Integer.toString(taken.getLocalPort()), "--in-memory");
            assertEquals(1, run.exit());
            assertEquals("port " + taken.getLocalPort() + " on 127.0.0.1 is in use; use --port\n", run.err());
        }
    }
}
