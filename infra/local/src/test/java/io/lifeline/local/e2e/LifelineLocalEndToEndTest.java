package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lifeline Local as a newcomer runs it: real HTTP on a free loopback port, data kept across a restart. */
@Tag("e2e")
class LifelineLocalEndToEndTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dataDir;

    @Test
    void lifecycleOverHttp_survivesRestartOnSameDataDir() throws Exception {
        String key;
        try (LifelineLocal local = start()) {
            key = local.adminKey();
            URI base = local.url();
            assertEquals(201, call(base, key, "POST", "/v1/teams/local/agents",
                    "{\"agentId\":\"e2e-1\",\"name\":\"End to end\",\"role\":\"worker\"}").statusCode());
            assertEquals(200, call(base, key, "POST", "/v1/teams/local/agents/e2e-1/join", null).statusCode());
            HttpResponse<String> beat = call(base, key, "POST", "/v1/teams/local/agents/e2e-1/heartbeat",
                    "{\"status\":\"working\"}");
            assertEquals(200, beat.statusCode());
            JsonNode beatBody = Json.parse(beat.body());
            assertTrue(beatBody.get("success").asBoolean());
            assertEquals("working", beatBody.get("agentStatus").asText());
            assertEquals(200, call(base, key, "POST", "/v1/teams/local/agents/e2e-1/leave", null).statusCode());
            // The outbox runs in the background: wait, with a bound, until it has recorded all three changes.
            awaitTransitions(base, key, 3);
            HttpResponse<String> after = call(base, key, "POST", "/v1/teams/local/agents/e2e-1/heartbeat", "{}");
            assertEquals(409, after.statusCode());
            assertTrue(Json.parse(after.body()).get("rejoinRequired").asBoolean());
        }
        try (LifelineLocal local = start()) {
            assertEquals(key, local.adminKey(), "the same admin key is printed after a restart");
            HttpResponse<String> agent = call(local.url(), key, "GET", "/v1/teams/local/agents/e2e-1", null);
            assertEquals(200, agent.statusCode());
            assertEquals("offline", Json.parse(agent.body()).get("status").asText());
            JsonNode history = awaitTransitions(local.url(), key, 3);
            assertEquals("leave", history.get(0).get("trigger").asText());
            assertEquals("join", history.get(2).get("trigger").asText());
        }
        assertTrue(Files.exists(dataDir.resolve(LifelineLocal.ADMIN_KEY_FILE)));
    }

    private LifelineLocal start() throws Exception {
        return LifelineLocal.start(new LifelineLocal.Options(0, dataDir, TestStack.template(), Map.of(),
                Clock.systemUTC()));
    }

    private JsonNode awaitTransitions(URI base, String key, int count) throws Exception {
        Instant giveUp = Instant.now().plusSeconds(10);
        while (true) {
            JsonNode list = Json.parse(call(base, key, "GET", "/v1/teams/local/agents/e2e-1/transitions", null)
                    .body()).get("transitions");
            if (list.size() >= count || Instant.now().isAfter(giveUp)) {
                assertEquals(count, list.size(), list.toString());
                return list;
            }
            Thread.sleep(50);
        }
    }

    private HttpResponse<String> call(URI base, String key, String method, String path, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
