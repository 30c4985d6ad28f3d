package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.model.RegisterAgent;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LifelineClient.Builder#readsFailFast}: against a port nobody listens on (refused at once), a read is tried
 * once and fails naming the URL; a write keeps its retries; without the setting a read keeps them too. The waits go to
 * a recording {@link Sleeper}, so the retry budget is counted, not waited out.
 */
@Tag("unit")
@Timeout(30)
class ReadsFailFastTest {
    private final List<Duration> slept = new CopyOnWriteArrayList<>();

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort(); // closed when this returns: nothing listens there
        }
    }

    private LifelineClient client(int port, boolean failFast) {
        return LifelineClient.builder().url("http://127.0.0.1:" + port).team("t").apiKey("k")
                .retry(RetryPolicy.defaults().withJitter(() -> 0)).sleeper(slept::add).readsFailFast(failFast).build();
    }

    @Test
    void aRead_onARefusedConnection_isTriedOnce_andSaysHowToStartLocal() throws Exception {
        int port = closedPort();
        LifelineConnectionException e = assertThrows(LifelineConnectionException.class,
                () -> client(port, true).agents());
        assertEquals(List.of(), slept, "no retry");
        assertEquals("Cannot reach Lifeline at http://127.0.0.1:" + port + " (connection refused); is Lifeline Local "
                + "running? Start it with: java -jar infra/local/target/lifeline-local.jar", e.getMessage());
    }

    @Test
    void aWrite_onARefusedConnection_keepsItsRetries() throws Exception {
        int port = closedPort();
        assertThrows(LifelineConnectionException.class,
                () -> client(port, true).register(RegisterAgent.of("a", "a", "worker")));
        assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8)), slept);
    }

    @Test
    void withoutTheSetting_aReadKeepsItsRetries() throws Exception {
        int port = closedPort();
        assertThrows(LifelineConnectionException.class, () -> client(port, false).agents());
        assertEquals(3, slept.size(), slept.toString());
    }

    @Test
    void anUnresolvableHost_isDescribedAsSuch_notAsARefusal() {
        ConnectException unresolved = new ConnectException();
        unresolved.initCause(new UnresolvedAddressException());
        assertEquals("unknown host", ApiTransport.describe(unresolved));
        assertTrue(ApiTransport.describe(new ConnectException("Connection refused")).contains("refused"));
    }
}
