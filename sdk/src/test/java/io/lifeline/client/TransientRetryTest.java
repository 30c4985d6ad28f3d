package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The SDK retries what AWS may answer while a function is not ready (502 from a Function URL whose invocation
 * failed, 504 from a gateway that gave up waiting) as it retries a throttle, for long enough to ride out a SnapStart
 * version made ready again (about ten minutes); and a request that creates a key or a team, which may have run
 * before a 502, is not sent twice. Against a real HTTP server on loopback, the waits recorded, not waited.
 */
@Tag("e2e")
class TransientRetryTest {
    static final String BEAT = "{\"success\":true,\"agentId\":\"a1\",\"agentStatus\":\"ready\"}";

    private static LifelineClient client(StubServer stub, List<Duration> slept) {
        return LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                .retry(RetryPolicy.defaults().withJitter(() -> 0)).sleeper(slept::add).build();
    }

    @Test
    void aHeartbeat_answered502Twice_thenTaken_inThreeAttempts() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.then(502, "{\"message\":\"Internal Server Error\"}", null)
                    .then(502, "{\"message\":\"Internal Server Error\"}", null).otherwise(200, BEAT);
            List<Duration> slept = new ArrayList<>();
            assertTrue(client(stub, slept).heartbeat("a1", null).success());
            System.out.println("SDK: 502, 502, 200 -> attempts " + stub.seen().size() + ", waits " + slept);
            assertEquals(3, stub.seen().size());
            assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4)), slept);
        }
    }

    @Test
    void aGatewayTimeout_isRetriedForAboutTenMinutes_thenThrown() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(504, "{\"message\":\"Endpoint request timed out\"}");
            List<Duration> slept = new ArrayList<>();
            LifelineApiException e = assertThrows(LifelineApiException.class,
                    () -> client(stub, slept).join("a1"));
            assertEquals(504, e.status());
            assertEquals(RetryPolicy.NOT_READY_RETRIES + 1, stub.seen().size());
            assertEquals(List.of(2L, 4L, 8L, 16L, 32L, 60L, 60L, 60L, 60L, 60L, 60L, 60L, 60L, 60L),
                    slept.stream().map(Duration::toSeconds).toList());
            assertEquals(602, slept.stream().mapToLong(Duration::toSeconds).sum());
        }
    }

    @Test
    void aThrottle_keepsItsShortSchedule() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(429, "{\"message\":\"Rate Exceeded.\"}");
            List<Duration> slept = new ArrayList<>();
            assertThrows(LifelineApiException.class, () -> client(stub, slept).heartbeat("a1", null));
            assertEquals(4, stub.seen().size());
            assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8)), slept);
        }
    }

    @Test
    void aKeyCreation_answered502_isNotSentAgain_butAThrottledOneIs() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(502, "{\"message\":\"Internal Server Error\"}");
            List<Duration> slept = new ArrayList<>();
            LifelineApiException e = assertThrows(LifelineApiException.class,
                    () -> client(stub, slept).createKey("agent", "ci"));
            assertEquals(502, e.status());
            assertTrue(e.getMessage().contains("may have run: not sent again"), e.getMessage());
            assertEquals(1, stub.seen().size());
            assertEquals(List.of(), slept);
        }
        try (StubServer stub = new StubServer()) {
            stub.then(503, "{\"success\":false,\"code\":\"THROTTLED\",\"error\":\"busy\"}", "1")
                    .otherwise(201, "{\"keyId\":\"k1\",\"key\":\"ll_x\",\"scope\":\"agent\"}");
            List<Duration> slept = new ArrayList<>();
            assertEquals("k1", client(stub, slept).createKey("agent", "ci").keyId());
            assertEquals(2, stub.seen().size(), "a throttled request did not run: sent again");
        }
    }
}
