package io.lifeline.local.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Log;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * In Local: a flood of wrong keys from one client is refused 401/403 up to the door's rate
 * (here 10 in a 60 s window), then answered 429 {@code TOO_MANY_REFUSALS} with Retry-After without reaching the
 * authorizer, and logged once for the window, not per request; a key authorized recently still gets through.
 */
@Tag("contract")
class FrontDoorRefusalsTest {
    private static final int ALLOWED = 10;
    private static final FrontDoorLimits LIMITS = new FrontDoorLimits(Duration.ofSeconds(5), Duration.ofSeconds(5),
            Duration.ofSeconds(30), 8 * 1024, 16 * 1024, 100, 64 * 1024, 8, ALLOWED, Duration.ofSeconds(60));

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void floodOfWrongKeys_beyondTheRate_isAnswered429WithRetryAfter_loggedOnce_andAGoodKeyStillPasses()
            throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        try (TestStack stack = TestStack.start();
             FrontDoor door = new FrontDoor(FrontDoor.handler(stack.gateway), 0, LIMITS);
             Socket s = new Socket(InetAddress.getLoopbackAddress(), door.port())) {
            s.setSoTimeout(10_000);
            assertEquals(200, get(s, stack.adminKey).status(), "the good key, before the flood");
            Log.sink(lines::add);
            Map<Integer, Integer> statuses = new TreeMap<>();
            for (int i = 0; i < 50; i++) {
                FrontDoorLimitsTest.Answer a = get(s, "lk_" + UUID.randomUUID().toString().replace("-", ""));
                statuses.merge(a.status(), 1, Integer::sum);
                if (a.status() == 429) {
                    assertEquals("TOO_MANY_REFUSALS", a.code(), a.body().toString());
                    String retryAfter = header(a.head(), "retry-after");
                    long seconds = Long.parseLong(retryAfter);
                    assertTrue(seconds >= 1 && seconds <= 60, retryAfter);
                }
            }
            int refused = statuses.getOrDefault(401, 0) + statuses.getOrDefault(403, 0);
            assertEquals(ALLOWED, refused, "refused before throttling: " + statuses);
            assertEquals(50 - ALLOWED, statuses.getOrDefault(429, 0), statuses.toString());
            assertEquals(200, get(s, stack.adminKey).status(), "the good key, during the flood");
            long throttleLines = lines.stream().filter(l -> l.contains("\"refusals_throttled\"")).count();
            assertEquals(1, throttleLines, String.join("\n", lines));
            // The 40 throttled requests wrote nothing else: only the 10 refused and the 1 good one reached the
            // gateway (each logs at most 2 lines: the authorizer's and the request's).
            assertTrue(lines.size() <= 1 + 2 * (ALLOWED + 1), lines.size() + " lines:\n" + String.join("\n", lines));
        } finally {
            Log.sink(null);
        }
    }

    private static FrontDoorLimitsTest.Answer get(Socket s, String key) throws Exception {
        s.getOutputStream().write(("GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return FrontDoorLimitsTest.read(s.getInputStream());
    }

    private static String header(String head, String name) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        throw new AssertionError("no " + name + " in " + head);
    }
}
