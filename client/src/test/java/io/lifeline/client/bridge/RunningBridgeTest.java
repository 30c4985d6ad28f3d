package io.lifeline.client.bridge;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.Sleeper;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bridge's lifecycle as {@code lifeline daemon --opencode} and {@code lifeline bridge opencode} run it: with
 * opencode unreachable it keeps reconnecting with backoff, and a stop ends it within its bound even mid-backoff.
 * (With a live stream, {@code BridgeCliOpencodeTest} stops it through SIGTERM against a real opencode.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("e2e")
class RunningBridgeTest {
    @Test
    void close_whileOpencodeIsUnreachableAndTheBridgeBacksOff_endsItWithinTheBound() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        List<String> log = new CopyOnWriteArrayList<>();
        LifelineClient nowhere = LifelineClient.builder().url("http://127.0.0.1:" + closedPort).team("t")
                .apiKey("k").build();
        OpencodeBridge bridge = new OpencodeBridge(new OpencodeApi(URI.create("http://127.0.0.1:" + closedPort), null),
                team -> nowhere, Map.of(), Duration.ofMillis(300), Clock.systemUTC(), Sleeper.REAL, log::add);
        RunningBridge running = RunningBridge.start(bridge, Duration.ofMillis(300), "bridge-under-test", log::add);
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(30), () -> log.stream()
                .filter(l -> l.contains("reconnecting")).count() >= 3), "it keeps reconnecting: " + log);
        assertTrue(running.isRunning());
        assertTrue(running.close(Duration.ofSeconds(10)), "the reader ended within the bound: " + log);
        assertFalse(running.isRunning(), "the thread that reconnects is gone: no reconnect follows the stop");
    }
}
