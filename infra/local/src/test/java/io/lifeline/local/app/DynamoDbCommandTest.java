package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.engine.Engine;
import io.lifeline.local.e2e.ChildLocal;
import io.lifeline.local.e2e.CrashRestartTest;
import io.lifeline.local.e2e.LocalCommandLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
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
 * tests point their clients at DynamoDB Local today, then stopped with SIGTERM; over a data dir, stopped and started
 * again with its item still there; and its refusals, each one line.
 */
@Tag("e2e")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DynamoDbCommandTest {
    /** A {@code dynamodb} child JVM and the lines it prints. */
    private record Child(Process process, List<String> output, Thread reader) {
        static Child start(String... args) {
            List<String> command = ChildLocal.command("256m", args);
            Process p;
            try {
                p = new ProcessBuilder(command).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
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
            return new Child(p, output, reader);
        }

        URI endpoint() throws Exception {
            CrashRestartTest.poll(Duration.ofSeconds(60), "the endpoint line; output: " + output, () -> {
                assertTrue(process.isAlive(), () -> "exited: " + output);
                return DynamoDbCommandTest.endpoint(output) != null;
            });
            return DynamoDbCommandTest.endpoint(output);
        }

        /**
         * SIGTERM through the handle (Process.destroy() would also close our end of its output, losing the lines
         * its shutdown prints); answers once it has exited and its output is read.
         */
        void stop() throws InterruptedException {
            process.toHandle().destroy();
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "SIGTERM did not stop it: " + output);
            reader.join(5_000);
        }
    }

    private static DynamoDbClient client(URI uri, AtomicInteger calls) {
        return DynamoDbClient.builder().endpointOverride(uri).region(Region.EU_CENTRAL_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("a", "b")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
                    @Override
                    public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
                        calls.incrementAndGet();
                    }
                })).build();
    }

    @Test
    void servesTheEngineUntilStopped() throws Exception {
        Child child = Child.start("dynamodb", "--port", "0", "--in-memory");
        try {
            URI uri = child.endpoint();
            assertEquals("127.0.0.1", uri.getHost());
            AtomicInteger calls = new AtomicInteger();
            try (DynamoDbClient db = client(uri, calls)) {
                use(db);
            }
            assertEquals(4, calls.get(), "the calls that succeeded, each counted once by the interceptor");
        } finally {
            child.stop();
        }
        assertTrue(child.output().contains("Lifeline engine stopped; its tables were in memory and are gone."),
                () -> "exit " + child.process().exitValue() + ": " + child.output());
    }

    @Test
    void aDataDirKeepsItsTablesAcrossAStop(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("engine");
        Child first = Child.start("dynamodb", "--port", "0", "--data-dir", data.toString());
        try {
            URI uri = first.endpoint();
            assertTrue(first.output().get(first.output().size() - 1).endsWith("(in " + data + "). Stop with Ctrl-C."),
                    first.output()::toString);
            try (DynamoDbClient db = client(uri, new AtomicInteger())) {
                use(db);
            }
        } finally {
            first.stop();
        }
        assertTrue(first.output().contains("Lifeline engine stopped; its tables are kept in " + data + "."),
                first.output()::toString);
        assertTrue(Files.exists(data.resolve("engine.format")));
        Child second = Child.start("dynamodb", "--port", "0", "--data-dir", data.toString());
        try (DynamoDbClient db = client(second.endpoint(), new AtomicInteger())) {
            assertEquals(List.of("t"), db.listTables().tableNames());
            assertEquals(Map.of("pk", AttributeValue.fromS("a"), "n", AttributeValue.fromN("1")),
                    db.getItem(r -> r.tableName("t").key(Map.of("pk", AttributeValue.fromS("a")))).item(),
                    "the item written before the stop");
        } finally {
            second.stop();
        }
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
    void neitherOrBothStoresAreRefusedInOneLine(@TempDir Path dir) {
        LocalCommandLine.Run neither = LocalCommandLine.run("dynamodb", "--port", "0");
        assertEquals(1, neither.exit());
        assertEquals("give --in-memory (tables gone when it stops) or --data-dir DIR (tables kept in DIR)\n",
                neither.err());
        LocalCommandLine.Run both = LocalCommandLine.run("dynamodb", "--port", "0", "--in-memory", "--data-dir",
                dir.toString());
        assertEquals(1, both.exit());
        assertEquals("give --in-memory or --data-dir DIR, not both\n", both.err());
    }

    @Test
    void aDataDirOpenElsewhereIsRefusedInOneLine(@TempDir Path dir) {
        try (Engine held = Engine.open(dir, Clock.systemUTC())) {
            LocalCommandLine.Run run = LocalCommandLine.run("dynamodb", "--port", "0", "--data-dir", dir.toString());
            assertEquals(1, run.exit());
            assertTrue(run.err().contains("is open in another Lifeline process"), run.err());
            assertFalse(run.err().strip().contains("\n"), run.err());
            assertFalse(run.err().contains("Exception"), run.err());
            assertEquals(List.of(), held.client().listTables().tableNames());
        }
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
