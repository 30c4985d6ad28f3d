package io.lifeline.local.contract.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every API Gateway v2 fixture, exactly as stored (only the key and the team set), goes through the gateway
 * and its route's function: the answer is JSON, never a 500, and has the shape that route's handler gives,
 * its success shape when the fixture's request can succeed and the JSON error otherwise. And there is one
 * fixture for every route of template.yaml.
 */
@Tag("contract")
class FixtureRoutesTest {
    static TestStack stack;

    /**
     * Per fixture: the agent-1 status to set up first (null: leave as is), the status expected, and the
     * fields of the answer (success fields, or the error's code).
     */
    record Expectation(String agentStatus, int status, List<String> fields, String code) {
        static Expectation ok(String agentStatus, int status, String... fields) {
            return new Expectation(agentStatus, status, List.of(fields), null);
        }

        static Expectation error(int status, String code) {
            return new Expectation(null, status, List.of("success", "error", "code"), code);
        }
    }

    private static final List<String> AGENT = List.of("agentId", "teamName", "name", "role", "status",
            "consecutiveMisses");

    static final Map<String, Expectation> EXPECTED = Map.ofEntries(
            // The fixtures' bodies are "{}": the routes that need fields answer their 400.
            Map.entry("register", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("list-agents", Expectation.ok(null, 200, "count", "agents")),
            Map.entry("get-agent", Expectation.ok(null, 200, concat(AGENT, "errorsReported", "sessionRotations"))),
            // A ready agent cannot be deleted (AgentDeletionTest deletes offline ones): agent-1 stays for the rest.
            Map.entry("delete-agent", new Expectation("ready", 409, List.of("success", "error", "code"),
                    "AGENT_NOT_RETIRABLE")),
            Map.entry("join", Expectation.ok("offline", 200, concat(AGENT, "heartbeatTs", "deadline",
                    "heartbeatIntervalSeconds"))),
            Map.entry("heartbeat", Expectation.ok("ready", 200, "success", "heartbeatTs", "nextDeadline",
                    "agentStatus", "heartbeatIntervalSeconds")),
            Map.entry("batch-heartbeats", Expectation.error(400, "INVALID_FIELD")),
            // A runtime's hook body as Claude Code and Codex's notify send it: always 200 with an empty object.
            Map.entry("hook", Expectation.ok("ready", 200)),
            Map.entry("team-hook", Expectation.ok("working", 200)),
            Map.entry("leave", Expectation.ok("ready", 200, concat(AGENT, "tasksHandedBack"))),
            Map.entry("cleanup", Expectation.ok("dead", 200, AGENT.toArray(String[]::new))),
            Map.entry("transitions", Expectation.ok(null, 200, "agentId", "transitions")),
            Map.entry("errors", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("recovery", Expectation.ok(null, 200, "available", "reason", "agentStatus")),
            Map.entry("create-task", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("list-tasks", Expectation.ok(null, 200, "count", "tasks")),
            Map.entry("claim", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("complete", Expectation.error(400, "MISSING_FIELD")),
            // POST /v1/teams takes only an operator key: the admin key is refused (OperatorTest covers the rest).
            Map.entry("create-team", Expectation.error(403, "INSUFFICIENT_SCOPE")),
            // POST /v1/teams/{team}/admin-keys is the operator's too (KeysContractTest covers the rest).
            Map.entry("mint-admin-key", Expectation.error(403, "INSUFFICIENT_SCOPE")),
            Map.entry("create-key", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("list-keys", Expectation.ok(null, 200, "keys")),
            Map.entry("revoke-key", Expectation.error(404, "KEY_NOT_FOUND")),
            Map.entry("fail", Expectation.ok("working", 200, AGENT.toArray(String[]::new))),
            Map.entry("pause-agent", Expectation.error(400, "INVALID_FIELD")),
            Map.entry("resume-agent", Expectation.ok(null, 200, AGENT.toArray(String[]::new))),
            Map.entry("inbox", Expectation.ok(null, 200, "agentId", "messages")),
            Map.entry("get-settings", Expectation.ok(null, 200, "team")),
            Map.entry("put-settings", Expectation.error(400, "MISSING_FIELD")),
            Map.entry("pause-team", Expectation.error(400, "INVALID_FIELD")),
            Map.entry("resume-team", Expectation.ok(null, 200, "team")),
            // No hold stands on a team whose agents all beat: nothing to release (DeadBoxTest releases a real one).
            Map.entry("release-hold", Expectation.error(409, "NO_HOLD")),
            // The fleet-wide hold is released by the operator's key alone (FleetSelfPreservationTest releases one).
            Map.entry("release-fleet-hold", Expectation.error(403, "INSUFFICIENT_SCOPE")),
            Map.entry("events", Expectation.ok(null, 200, "count", "events")),
            Map.entry("revive", Expectation.error(409, "INVALID_TRANSITION")),
            Map.entry("revivals", Expectation.ok(null, 200, "agentId", "revivals")),
            Map.entry("host-commands", Expectation.ok(null, 200, "count", "commands")),
            Map.entry("ack-command", Expectation.error(404, "COMMAND_NOT_FOUND")));

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        stack.register("agent-1");
        stack.team("create-task", "{\"taskId\":\"task-1\",\"title\":\"T\"}");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    static Stream<String> fixtures() throws IOException, URISyntaxException {
        return fixtureNames().stream();
    }

    static List<String> fixtureNames() throws IOException, URISyntaxException {
        Path dir = Path.of(FixtureRoutesTest.class.getResource("/apigw").toURI());
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json"))
                    .map(n -> n.substring(0, n.length() - ".json".length())).sorted().toList();
        }
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void fixture_sentAsStoredWithAdminKey_answersJsonInItsRoutesShape(String name) throws Exception {
        Expectation expected = EXPECTED.get(name);
        assertTrue(expected != null, "no expectation for the fixture " + name + "; add one");
        if (expected.agentStatus() != null) {
            stack.forceStatus("agent-1", expected.agentStatus());
        }
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent("apigw/" + name + ".json");
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        headers.put("authorization", "Bearer " + stack.adminKey);
        event.setHeaders(headers);
        if (event.getPathParameters() != null) { // POST /v1/teams has none
            Map<String, String> path = new HashMap<>(event.getPathParameters());
            path.put("team", TestStack.TEAM);
            event.setPathParameters(path);
        }

        LocalGateway.Response r = stack.gateway.invoke(event);
        assertNotEquals(500, r.status(), r.body());
        assertEquals("application/json", r.headers().get("content-type"));
        JsonNode body = Json.parse(r.body());
        assertTrue(body.isObject(), r.body());
        assertEquals(expected.status(), r.status(), name + ": " + r.body());
        for (String field : expected.fields()) {
            assertTrue(body.has(field), name + " answers without '" + field + "': " + r.body());
        }
        if (expected.code() != null) {
            assertFalse(body.get("success").asBoolean());
            assertEquals(expected.code(), body.get("code").asText(), name);
        }
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void fixture_withUnknownKey_ignoresTheAuthorizerContextStoredInIt(String name) {
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent("apigw/" + name + ".json");
        assertEquals(Set.of("create-team", "release-fleet-hold").contains(name) ? "operator" : "admin",
                event.getRequestContext().getAuthorizer().getLambda().get("scope"), name);
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        headers.put("authorization", "Bearer ll_placeholder");
        event.setHeaders(headers);
        LocalGateway.Response r = stack.gateway.invoke(event);
        assertEquals(401, r.status(), name + ": " + r.body());
        assertTrue(r.body().contains("UNAUTHENTICATED"), r.body());
    }

    @Test
    void fixtures_coverEveryRouteOfTheTemplateOnce() throws Exception {
        Set<String> fixtureRoutes = new TreeSet<>();
        for (String name : fixtureNames()) {
            APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent("apigw/" + name + ".json");
            assertTrue(fixtureRoutes.add(event.getRouteKey()), "two fixtures for " + event.getRouteKey());
            assertEquals(event.getRouteKey(), event.getRequestContext().getRouteKey(), name);
            assertEquals(event.getRouteKey().substring(0, event.getRouteKey().indexOf(' ')),
                    event.getRequestContext().getHttp().getMethod(), name);
        }
        // The JSON API's routes; the public routes (Authorizer NONE: the dashboard's page) need no key and
        // answer HTML, so they are left out here and tested by DashboardHandlerTest and DashboardTest.
        assertEquals(new TreeSet<>(stack.gateway.apiRouteKeys()), fixtureRoutes);
        assertEquals(new TreeSet<>(EXPECTED.keySet()), new TreeSet<>(fixtureNames()));
    }

    private static String[] concat(List<String> base, String... more) {
        return Stream.concat(base.stream(), Stream.of(more)).toArray(String[]::new);
    }
}
