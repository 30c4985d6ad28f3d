package io.lifeline.local.contract.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.testing.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every API request logs exactly one JSON line (README.md, "Logs and metrics"): team, agentId, requestId, route,
 * status, outcome (ok / refused with code / error) and durationMs; except a routine heartbeat (accepted, no status
 * change), which only counts in its function's summary (HeartbeatLogVolumeTest). Captured through {@link LogCapture}.
 */
@Tag("contract")
class RequestLogTest {
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

    /** The request lines captured, each parsed (so each must be valid JSON). */
    private List<JsonNode> requestLines() throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : List.copyOf(lines)) {
            assertFalse(line.contains("\n"), "one line: " + line);
            JsonNode n = Json.parse(line);
            assertTrue(n.hasNonNull("level") && n.hasNonNull("msg"), line);
            if ("request".equals(n.get("msg").asText())) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void heartbeat_thatChangesStatus_logsOneOkLineWithEveryField() throws Exception {
        stack.ready("log-1");
        lines.clear();
        TestStack.Reply r = stack.heartbeat("log-1", "{\"status\":\"working\"}");
        assertEquals(200, r.status());
        List<JsonNode> logged = requestLines();
        assertEquals(1, logged.size(), "one line per request: " + lines);
        JsonNode l = logged.get(0);
        assertEquals("INFO", l.get("level").asText());
        assertEquals(TestStack.TEAM, l.get("team").asText());
        assertEquals("log-1", l.get("agentId").asText());
        assertEquals("POST /v1/teams/{team}/agents/{agentId}/heartbeat", l.get("route").asText());
        assertEquals(200, l.get("status").asInt());
        assertEquals("ok", l.get("outcome").asText());
        assertFalse(l.has("code"));
        assertEquals("log-1: ready -> working", l.path("changes").get(0).asText());
        assertNotNull(l.get("requestId").textValue());
        assertFalse(l.get("requestId").asText().isEmpty());
        assertTrue(l.get("durationMs").isNumber() && l.get("durationMs").asDouble() >= 0, l.toString());
    }

    @Test
    void refusal_logsRefusedWithItsCode() throws Exception {
        lines.clear();
        TestStack.Reply r = stack.heartbeat("nobody-here", "{}");
        assertEquals(404, r.status());
        JsonNode l = requestLines().get(0);
        assertEquals("refused", l.get("outcome").asText());
        assertEquals("AGENT_NOT_FOUND", l.get("code").asText());
        assertEquals(404, l.get("status").asInt());
        assertEquals("nobody-here", l.get("agentId").asText());
    }

    @Test
    void teamRoute_hasNoAgentId_andScopeRefusalIsLogged() throws Exception {
        lines.clear();
        String readKey = stack.key(TestStack.TEAM, Scope.READ);
        TestStack.Reply r = stack.send("create-key", readKey, Map.of("team", TestStack.TEAM), null,
                "{\"scope\":\"read\"}");
        assertEquals(403, r.status());
        JsonNode l = requestLines().get(0);
        assertEquals("POST /v1/teams/{team}/keys", l.get("route").asText());
        assertEquals(TestStack.TEAM, l.get("team").asText());
        assertFalse(l.has("agentId"));
        assertEquals("INSUFFICIENT_SCOPE", l.get("code").asText());
    }
}
