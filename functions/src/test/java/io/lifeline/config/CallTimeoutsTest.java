package io.lifeline.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The DynamoDB client's call and attempt timeouts. A store that accepts connections and never
 * answers ends the call with the SDK's call timeout after more than one attempt, instead of holding the
 * invocation until the function's own timeout.
 */
@Tag("e2e")
class CallTimeoutsTest {

    @Test
    void fromEnvironment_readsBothTimeouts_andDefaultsToThreeAndOneSeconds() {
        assertEquals(new Config.CallTimeouts(Duration.ofMillis(3000), Duration.ofMillis(1000)),
                Config.CallTimeouts.fromEnvironment(Map.of()));
        assertEquals(new Config.CallTimeouts(Duration.ofMillis(2500), Duration.ofMillis(800)),
                Config.CallTimeouts.fromEnvironment(Map.of("DYNAMODB_CALL_TIMEOUT_MS", "2500",
                        "DYNAMODB_ATTEMPT_TIMEOUT_MS", "800")));
    }

    @Test
    void fromEnvironment_withAnAttemptLongerThanTheCall_isRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Config.CallTimeouts.fromEnvironment(
                Map.of("DYNAMODB_CALL_TIMEOUT_MS", "500", "DYNAMODB_ATTEMPT_TIMEOUT_MS", "900")));
        assertTrue(e.getMessage().contains("must not exceed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> Config.CallTimeouts.fromEnvironment(
                Map.of("DYNAMODB_CALL_TIMEOUT_MS", "0")));
    }

    @Test
    @Timeout(30)
    void aStoreThatNeverAnswers_endsTheCallWithTheCallTimeout_afterMoreThanOneAttempt() throws Exception {
        AtomicInteger connections = new AtomicInteger();
        List<Socket> held = new ArrayList<>();
        try (ServerSocket hung = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!hung.isClosed()) {
                    try {
                        Socket s = hung.accept(); // read nothing, answer nothing
                        synchronized (held) {
                            held.add(s);
                        }
                        connections.incrementAndGet();
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "hung-store");
            acceptor.setDaemon(true);
            acceptor.start();

            Config.CallTimeouts timeouts = new Config.CallTimeouts(Duration.ofMillis(1500), Duration.ofMillis(300));
            try (DynamoDbClient dynamo = Wiring.dynamoDb(timeouts, DynamoDbClient.builder()
                    .httpClient(UrlConnectionHttpClient.create())
                    .endpointOverride(URI.create("http://127.0.0.1:" + hung.getLocalPort()))
                    .region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("k", "s"))))) {
                assertThrows(ApiCallTimeoutException.class,
                        () -> dynamo.getItem(r -> r.tableName("t").key(Map.of())));
            }
            assertTrue(connections.get() >= 2, "each attempt timed out and was retried within the call: "
                    + connections.get());
        } finally {
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
