package io.lifeline.local.contract.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Coverage-guided fuzzing of the API's request parsing (Jazzer): bytes sent as the body of the routes that read
 * one, through the real gateway, authorizer and handlers over the engine. Whatever the body, the answer is a
 * success or a documented JSON error (openapi.yaml's ErrorCode, never INTERNAL_ERROR), never a 500.
 * In a normal build the target runs once per file of
 * {@code src/test/resources/io/lifeline/local/contract/gateway/ApiRequestFuzzTestInputs/<method>/}; with {@code JAZZER_FUZZ=1} it
 * fuzzes (README, "Fuzzing"). Input: the first byte picks the route, the rest is the body.
 */
@Tag("contract")
class ApiRequestFuzzTest {
    /** Routes whose handler parses a body: Json, Fields, and the register and heartbeat parsing. */
    private static final List<String> ROUTES = List.of("register", "heartbeat", "batch-heartbeats", "errors", "fail",
            "put-settings", "create-task", "create-key");
    private static final String AGENT = "fz-agent";

    private static TestStack stack;
    private static Set<String> codes;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(
                TestStack.templatePath().resolveSibling("openapi.yaml").toFile());
        codes = new HashSet<>();
        spec.at("/components/schemas/ErrorCode/enum").forEach(c -> codes.add(c.asText()));
        codes.remove("INTERNAL_ERROR");
        assertFalse(codes.isEmpty(), "openapi.yaml lists the error codes");
        assertEquals(201, stack.register(AGENT).status());
        assertEquals(200, stack.agent("join", AGENT, null).status());
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    @FuzzTest(maxDuration = "2m")
    void anyBody_toARouteThatReadsOne_answersSuccessOrADocumentedJsonError(byte[] data) {
        if (data.length == 0) {
            return;
        }
        String route = ROUTES.get((data[0] & 0xFF) % ROUTES.size());
        String body = new String(data, 1, data.length - 1, StandardCharsets.UTF_8);
        // Local's event bus is reached over a local socket, which Jazzer's SSRF detector would report. (BugDetectors is
        // first touched here, once Jazzer's agent is in: touched before, in @BeforeAll, it cannot set the policy.)
        TestStack.Reply r;
        try (SilentCloseable allowed = BugDetectors.allowNetworkConnections()) {
            r = send(route, body);
        }
        assertDocumented(route, body, r);
    }

    /** The schedules Jazzer found that made cron-utils throw, sent to the real register route. */
    @ParameterizedTest
    @ValueSource(strings = {"cron:9-17/ * * * *", "cron:0| 1|2 * * *"})
    void register_withACronTheLibraryFailsOn_answers400InvalidScheduleAndWritesNothing(String schedule) {
        String body = Json.write(Json.object().put("agentId", "fz-cron").put("name", "Cron").put("role", "worker")
                .put("schedule", schedule));

        TestStack.Reply r = stack.writesNothing(() -> stack.team("register", body));

        assertEquals(400, r.status(), r.body().toString());
        assertEquals("INVALID_SCHEDULE", r.code());
        assertTrue(r.text("error").startsWith("invalid cron expression '" + schedule.substring(5) + "'"),
                r.text("error"));
        assertEquals(404, stack.agent("get-agent", "fz-cron", null).status());
    }

    private static TestStack.Reply send(String route, String body) {
        Map<String, String> path = switch (route) {
            case "register", "put-settings", "create-task", "create-key", "batch-heartbeats" ->
                    Map.of("team", TestStack.TEAM);
            default -> Map.of("team", TestStack.TEAM, "agentId", AGENT);
        };
        return stack.send(route, stack.adminKey, path, null, body);
    }

    private static void assertDocumented(String route, String body, TestStack.Reply r) {
        String what = route + " with body " + Json.write(Json.object().put("body", body)) + " answered " + r.status()
                + " " + r.body();
        assertTrue(r.status() >= 200 && r.status() < 500, what);
        if (r.status() >= 400) {
            assertNotNull(r.code(), what);
            assertTrue(codes.contains(r.code()), "an undocumented code: " + what);
            assertNotNull(r.text("error"), what);
        }
    }
}
