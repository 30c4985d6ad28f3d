package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The SDK with a heartbeat URL: single and batch heartbeats go there, in the Function URL's event
 * shape through Lifeline Local's second path, and every other call goes to the API URL.
 */
@Tag("e2e")
class HeartbeatUrlClientTest {
    static LifelineLocal local;

    @BeforeAll
    static void start() throws Exception {
        local = LocalHarness.start();
    }

    @AfterAll
    static void stop() throws Exception {
        local.close();
    }

    @Test
    void heartbeats_goToTheHeartbeatUrl_andEverythingElseToTheApiUrl() {
        LifelineClient api = LocalHarness.client(local);
        api.register(new RegisterAgent("url-1", "URL one", "worker", null, 600L, null, null,
                null)); // long enough that the harness's fast sweep leaves it alive
        api.join("url-1");
        URI beats = local.heartbeatUrl();
        assertTrue(beats.getPath().startsWith("/lambda-url/"), beats.toString());
        // The API URL goes nowhere: only calls that reach the heartbeat URL can succeed.
        LifelineClient split = LifelineClient.builder().url("http://127.0.0.1:1").heartbeatUrl(beats)
                .team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey()).retry(RetryPolicy.none()).build();
        assertEquals(beats, split.heartbeatUrl());
        HeartbeatResult r = split.heartbeat("url-1", new Heartbeat("working", null, null, null, null, null));
        assertTrue(r.success());
        assertEquals("working", r.agentStatus());
        var batch = split.heartbeats(List.of(new BatchEntry("url-1", null), new BatchEntry("ghost", null)));
        assertEquals(2, batch.results().size());
        assertTrue(batch.results().get(0).success());
        assertEquals("AGENT_NOT_FOUND", batch.results().get(1).code());
        assertThrows(LifelineConnectionException.class, () -> split.join("url-1"), "join goes to the API URL");
        // A refusal through the URL is the API's JSON error.
        LifelineClient wrongKey = LifelineClient.builder().url(local.url()).heartbeatUrl(beats)
                .team(LifelineLocal.LOCAL_TEAM).apiKey("ll_" + "z".repeat(43)).retry(RetryPolicy.none()).build();
        LifelineApiException e = assertThrows(LifelineApiException.class, () -> wrongKey.heartbeat("url-1", null));
        assertEquals(401, e.status());
        assertEquals("UNAUTHENTICATED", e.code());
        // Without a heartbeat URL, heartbeats go to the API URL.
        assertEquals(api.url(), api.heartbeatUrl());
        assertEquals("working", api.agent("url-1").status());
    }
}
