package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("e2e")
class HttpCheckRunnerTest {
    @TempDir
    Path dir;

    private HttpServer server;
    private final CountDownLatch release = new CountDownLatch(1);
    private String base;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/health", ex -> {
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        server.createContext("/created", ex -> {
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        server.createContext("/down", ex -> {
            ex.sendResponseHeaders(503, -1);
            ex.close();
        });
        server.createContext("/hang", ex -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        server.setExecutor(Executors.newCachedThreadPool());
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop(0);
    }

    private ActionRunner.Outcome check(String path, String timeout) {
        String text = "---\nversion: 1\n---\n### [HIGH] Check\n- **id**: c\n- **type**: http_check\n- **target**: "
                + base + path + "\n" + (timeout == null ? "" : "- **timeout**: " + timeout + "\n");
        return new HttpCheckRunner().run(HeartbeatFile.parse(text).action("c"), dir);
    }

    @Test
    void run_2xx_succeedsWithStatusInResult() {
        ActionRunner.Outcome ok = check("/health", null);
        assertTrue(ok.success());
        assertEquals("OK (200)", ok.message());
        assertEquals("OK (204)", check("/created", null).message());
    }

    @Test
    void run_503_failsWithStatus() {
        ActionRunner.Outcome down = check("/down", null);
        assertFalse(down.success());
        assertEquals("HTTP 503", down.message());
    }

    @Test
    void run_noAnswerWithinTimeout_failsWithTimeout() {
        ActionRunner.Outcome slow = check("/hang", "300ms");
        assertFalse(slow.success());
        assertEquals("Connection timeout after 300ms", slow.message());
    }

    @Test
    void run_nothingListening_failsWithConnectionError() throws Exception {
        server.stop(0);
        ActionRunner.Outcome r = check("/health", "2s");
        assertFalse(r.success());
        assertTrue(r.message().startsWith("Connection failed"), r.message());
    }

    @Test
    void wake_httpCheckFailsThenServerRecovers_writesRetryThenCompletion() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, "---\nversion: 1\n---\n### [HIGH] Check API health\n- **id**: action-001\n"
                + "- **type**: http_check\n- **target**: " + base + "/down\n- **retry**: 3\n- **status**: pending\n");
        MutableClock clock = new MutableClock(Instant.parse("2024-01-15T10:32:15Z"));
        Wake.run(file, clock);
        Action failed = HeartbeatFile.parse(Files.readString(file)).action("action-001");
        assertEquals("HTTP 503", failed.field("error"));
        assertEquals("1/3", failed.field("retry_count"));

        Files.writeString(file, Files.readString(file).replace("/down", "/health"));
        clock.set(Instant.parse("2024-01-15T10:33:15Z"));
        WakeResult r = Wake.run(file, clock);
        Action done = HeartbeatFile.parse(Files.readString(file)).action("action-001");
        assertEquals(ActionStatus.COMPLETED, done.status());
        assertEquals("OK (200)", done.field("result"));
        assertEquals("2024-01-15T10:33:15Z", done.field("completed_at"));
        // The fix is an edit of the action's definition: it runs afresh, a new chain of attempts.
        assertEquals(1, r.ran().get(0).attempt());
    }
}
