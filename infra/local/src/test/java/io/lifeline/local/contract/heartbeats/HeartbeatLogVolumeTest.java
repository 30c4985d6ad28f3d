package io.lifeline.local.contract.heartbeats;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Metrics;
import io.lifeline.testing.LogCapture;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the heartbeat function writes to its log for routine heartbeats: counted in bytes, never
 * timed. One agent beating every 30 s is the worst case per beat (the summary's cost is spread over the fewest
 * beats): 1,000 plain beats must average at most 50 bytes each, with every beat still counted in the summary's
 * EMF documents. The figures are printed for BENCHMARKS.md ("Observability: measured").
 */
@Tag("contract")
class HeartbeatLogVolumeTest {
    static final int BEATS = 1_000;
    static final Duration EVERY = Duration.ofSeconds(30);
    static final int MAX_BYTES_PER_BEAT = 50;

    static TestStack stack;
    @RegisterExtension
    final LogCapture log = new LogCapture();
    private final List<String> lines = log.lines();

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Bytes of the captured lines (UTF-8, one newline each, as CloudWatch Logs ingests them). */
    static long bytes(List<String> of) {
        return of.stream().mapToLong(l -> l.getBytes(StandardCharsets.UTF_8).length + 1L).sum();
    }

    /** Beats counted by the summaries among the lines. */
    static long summarized(List<String> of) throws Exception {
        long n = 0;
        for (String l : of) {
            JsonNode j = Json.parse(l);
            if ("summary".equals(j.path("msg").asText()) && Metrics.HEARTBEAT_FUNCTION.equals(j.path("service").asText())) {
                n += j.path(Metrics.HEARTBEATS).asLong();
            }
        }
        return n;
    }

    /** Lines the heartbeat function wrote (the authorizer's lines are its own function's log). */
    static List<String> heartbeatLines(List<String> of) throws Exception {
        List<String> out = new ArrayList<>();
        for (String l : of) {
            if (!"authorize".equals(Json.parse(l).path("msg").asText())) {
                out.add(l);
            }
        }
        return out;
    }

    @Test
    void thousandPlainHeartbeats_throughTheUrl_writeAtMost50BytesEach() throws Exception {
        String id = TestStack.newId("v");
        ok(stack.ready(id));
        String key = stack.key(TestStack.TEAM, Scope.AGENT);
        String path = LocalGateway.urlPath(LifelineLocal.HEARTBEAT_URL_FUNCTION) + "/v1/teams/" + TestStack.TEAM + "/agents/" + id
                + "/heartbeat";
        lines.clear();
        for (int i = 0; i < BEATS; i++) {
            stack.clock.advance(EVERY);
            LocalGateway.Response r = stack.gateway.handle("POST", path, null, Map.of("Authorization",
                    List.of("Bearer " + key), "Content-Type", List.of("application/json")), "{}");
            assertEquals(200, r.status(), r.body());
        }
        List<String> written = heartbeatLines(lines);
        long bytes = bytes(written);
        System.out.printf("log bytes, Function URL, 1 agent at 30 s: %d lines, %d bytes for %d beats = %.1f bytes/beat%n",
                written.size(), bytes, BEATS, (double) bytes / BEATS);
        assertTrue(bytes <= (long) MAX_BYTES_PER_BEAT * BEATS, bytes + " bytes for " + BEATS + " beats: " + written);
        assertTrue(written.stream().allMatch(l -> l.contains("\"msg\":\"summary\"")), "only summaries: " + written);
        // Every beat is counted; only the interval still open when the test ends (at most 11 beats of 30 s in a
        // 300 s interval) is not written yet. (A few beats of another test of this class may be in the first.)
        long counted = summarized(written);
        assertTrue(counted >= BEATS - 11 && counted <= BEATS + 5, counted + " beats summarized");
    }

    @Test
    void thousandPlainHeartbeats_throughTheApi_writeAtMost50BytesEach() throws Exception {
        String id = TestStack.newId("w");
        ok(stack.ready(id));
        String key = stack.key(TestStack.TEAM, Scope.AGENT);
        lines.clear();
        for (int i = 0; i < BEATS; i++) {
            stack.clock.advance(EVERY);
            ok(stack.send("heartbeat", key, Map.of("team", TestStack.TEAM, "agentId", id), null, "{}"));
        }
        List<String> written = heartbeatLines(lines);
        long bytes = bytes(written);
        long authorizer = bytes(lines) - bytes;
        System.out.printf("log bytes, HTTP API, 1 agent at 30 s: heartbeat function %.1f bytes/beat, authorizer %.1f"
                + " bytes/beat (one line per ReauthorizeEvery)%n", (double) bytes / BEATS, (double) authorizer / BEATS);
        assertTrue(bytes <= (long) MAX_BYTES_PER_BEAT * BEATS, bytes + " bytes for " + BEATS + " beats");
        long counted = summarized(written);
        assertTrue(counted >= BEATS - 11 && counted <= BEATS + 5, counted + " beats summarized");
    }

    @Test
    void refusalsAndStatusChanges_stillWriteTheirOwnLine() throws Exception {
        String id = TestStack.newId("x");
        ok(stack.ready(id));
        lines.clear();
        ok(stack.heartbeat(id, "{\"status\":\"working\"}"));
        assertEquals(404, stack.heartbeat("ghost-" + id, "{}").status());
        List<JsonNode> requestLines = new ArrayList<>();
        for (String l : heartbeatLines(lines)) {
            JsonNode j = Json.parse(l);
            if ("request".equals(j.path("msg").asText())) {
                requestLines.add(j);
            }
        }
        assertEquals(2, requestLines.size(), lines.toString());
        assertEquals(id + ": ready -> working", requestLines.get(0).path("changes").get(0).asText());
        assertEquals("AGENT_NOT_FOUND", requestLines.get(1).path("code").asText());
        assertTrue(requestLines.get(1).has("_aws"), "a refusal carries its HeartbeatsRejected document");
    }
}
