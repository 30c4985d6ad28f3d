package io.lifeline.local.e2e;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.lifeline.agent.SweepPlan;
import io.lifeline.auth.Scope;
import io.lifeline.local.http.FrontDoor;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.team.TeamStore;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * openapi.yaml is the contract: its routes are exactly the gateway's (template.yaml's), its examples validate
 * against its own schemas (networknt json-schema-validator, draft 2020-12 as OpenAPI 3.1 uses), the real
 * answers of the handlers validate against the schema of their route and status (every operation answers at
 * least once, its success and a refusal, and one a 500), every error code of the README's table is in it, and
 * Lifeline Local serves it at GET /openapi.yaml without a key. The document itself is checked by
 * openapi-spec-validator and Redocly's linter in .ci/run.
 */
@Tag("e2e")
public class OpenApiTest {
    public static final Path SPEC = Path.of(System.getProperty("lifeline.template", "../../template.yaml"))
            .resolveSibling("openapi.yaml");
    static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    static TestStack stack;
    static final StoreFaults FAULTS = new StoreFaults();
    static JsonNode spec;
    static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
    static final SchemaValidatorsConfig CONFIG = SchemaValidatorsConfig.builder().formatAssertionsEnabled(true)
            .build();
    static final Map<String, JsonSchema> SCHEMAS = new HashMap<>();
    /** The statuses each operation (route key) answered in {@link #realAnswers_validateAgainstTheSchemaOfTheirRouteAndStatus}. */
    static final Map<String, Set<Integer>> RECORDED = new TreeMap<>();

    @BeforeAll
    static void start() throws Exception {
        spec = new ObjectMapper(new YAMLFactory()).readTree(SPEC.toFile());
        stack = TestStack.builder().interceptor(FAULTS).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Routes. */
    @Nested
    class Routes {
        static Set<String> specRouteKeys() {
            Set<String> keys = new TreeSet<>();
            spec.get("paths").fields().forEachRemaining(p -> p.getValue().fieldNames().forEachRemaining(m -> {
                if (METHODS.contains(m)) {
                    keys.add(m.toUpperCase() + " " + p.getKey());
                }
            }));
            return keys;
        }

        @Test
        void everyRouteInTheSpecIsServed_andEveryServedRouteIsInTheSpec() {
            // The JSON API: the public non-/v1 routes (the dashboard's page and assets) are not part of it.
            Set<String> served = new TreeSet<>(stack.gateway.apiRouteKeys());
            Set<String> described = specRouteKeys();
            Set<String> undescribed = new TreeSet<>(served);
            undescribed.removeAll(described);
            Set<String> unserved = new TreeSet<>(described);
            unserved.removeAll(served);
            assertTrue(undescribed.isEmpty(), "served but not in openapi.yaml: " + undescribed);
            assertTrue(unserved.isEmpty(), "in openapi.yaml but not served: " + unserved);
            assertEquals(38, described.size());
        }

        @Test
        void everyOperation_declaresItsPathParameters_aScope_andItsErrors() {
            Pattern param = Pattern.compile("\\{([A-Za-z]+)}");
            spec.get("paths").fields().forEachRemaining(p -> {
                Set<String> inPath = new TreeSet<>();
                Matcher m = param.matcher(p.getKey());
                while (m.find()) {
                    inPath.add(m.group(1));
                }
                Set<String> declared = new TreeSet<>();
                for (JsonNode par : p.getValue().path("parameters")) {
                    JsonNode resolved = resolve(par);
                    if ("path".equals(resolved.path("in").asText())) {
                        assertTrue(resolved.path("required").asBoolean(), p.getKey());
                        declared.add(resolved.get("name").asText());
                    }
                }
                assertEquals(inPath, declared, "path parameters of " + p.getKey());
                p.getValue().fields().forEachRemaining(op -> {
                    if (!METHODS.contains(op.getKey())) {
                        return;
                    }
                    String where = op.getKey() + " " + p.getKey();
                    JsonNode scopes = op.getValue().path("security").path(0).path("apiKey");
                    assertEquals(1, scopes.size(), "one scope on " + where);
                    assertTrue(Set.of("read", "agent", "admin", "operator").contains(scopes.get(0).asText()), where);
                    JsonNode responses = op.getValue().get("responses");
                    assertTrue(responses.has("401") && responses.has("403") && responses.has("500")
                            && responses.has("503"), where);
                    assertTrue(responses.has("200") || responses.has("201") || responses.has("202"), where);
                });
            });
        }

        @Test
        void everyErrorCodeOfTheReadmeTable_isInTheSpec_underItsStatus() throws Exception {
            List<String> readme = Files.readAllLines(SPEC.resolveSibling("docs/api.md"));
            Set<String> specCodes = new TreeSet<>();
            resolveSchema("ErrorCode").get("enum").forEach(c -> specCodes.add(c.asText()));
            Pattern row = Pattern.compile("^\\| (\\d{3})[^|]*\\| (.*)\\|$");
            Pattern code = Pattern.compile("`([A-Z][A-Z_]+)`");
            int rows = 0;
            for (String line : readme) {
                Matcher r = row.matcher(line);
                if (!r.matches()) {
                    continue;
                }
                rows++;
                String status = r.group(1);
                String responseName = switch (status) {
                    case "400" -> "BadRequest";
                    case "401" -> "Unauthorized";
                    case "403" -> "Forbidden";
                    case "404" -> "NotFound";
                    case "409" -> "Conflict";
                    case "413" -> "TooLarge";
                    case "500" -> "InternalError";
                    case "503" -> "Unavailable";
                    default -> throw new AssertionError("status " + status);
                };
                String described = spec.at("/components/responses/" + responseName + "/description").asText();
                Matcher c = code.matcher(r.group(2));
                while (c.find()) {
                    assertTrue(specCodes.contains(c.group(1)), c.group(1) + " in ErrorCode");
                    assertTrue(described.contains(c.group(1)), c.group(1) + " described under " + status);
                }
            }
            assertEquals(8, rows, "the README's error table");
        }
    }

    /** Examples. */
    @Nested
    class Examples {
        @Test
        void everyExample_validatesAgainstItsSchema() {
            int checked = 0;
            List<String> failures = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> paths = spec.get("paths").fields(); paths.hasNext(); ) {
                Map.Entry<String, JsonNode> p = paths.next();
                for (Iterator<Map.Entry<String, JsonNode>> ops = p.getValue().fields(); ops.hasNext(); ) {
                    Map.Entry<String, JsonNode> op = ops.next();
                    if (!METHODS.contains(op.getKey())) {
                        continue;
                    }
                    String where = op.getKey().toUpperCase() + " " + p.getKey();
                    List<JsonNode> mediaTypes = new ArrayList<>();
                    if (op.getValue().has("requestBody")) {
                        mediaTypes.add(resolve(op.getValue().get("requestBody")).path("content").path("application/json"));
                    }
                    op.getValue().get("responses").forEach(r ->
                            mediaTypes.add(resolve(r).path("content").path("application/json")));
                    for (JsonNode media : mediaTypes) {
                        for (Iterator<Map.Entry<String, JsonNode>> ex = media.path("examples").fields(); ex.hasNext(); ) {
                            Map.Entry<String, JsonNode> e = ex.next();
                            Set<ValidationMessage> errors = schema(media.get("schema")).validate(e.getValue().get("value"));
                            if (!errors.isEmpty()) {
                                failures.add(where + " example '" + e.getKey() + "': " + errors);
                            }
                            checked++;
                        }
                    }
                }
            }
            assertTrue(failures.isEmpty(), String.join("\n", failures));
            assertTrue(checked >= 40, "examples checked: " + checked);
        }

        @Test
        void theValidatorRefusesWhatTheSchemasForbid() {
            // So that a passing example is not a validator that accepts anything.
            assertEquals(1, schema(ref("HeartbeatRequest")).validate(node("{\"colour\":\"red\"}")).size());
            assertTrue(!schema(ref("HeartbeatAnswer")).validate(node("{\"success\":true,\"heartbeatTs\":\"yesterday\","
                    + "\"nextDeadline\":\"2026-03-01T12:00:00Z\",\"agentStatus\":\"working\"}")).isEmpty());
            assertTrue(!schema(ref("Error")).validate(node("{\"success\":false,\"error\":\"x\",\"code\":\"NOPE\"}")).isEmpty());
            assertTrue(!schema(ref("BatchRequest")).validate(node("{\"heartbeats\":[{\"status\":\"ready\"}]}")).isEmpty());
            assertTrue(!schema(ref("PauseRequest")).validate(node("{\"seconds\":5,\"until\":\"2026-03-01T12:00:00Z\"}"))
                    .isEmpty());
            // A heartbeat answer without nextDeadline (what an at: agent past its slot was answered) is refused.
            assertTrue(!schema(ref("HeartbeatAnswer")).validate(node("{\"success\":true,\"heartbeatTs\":"
                    + "\"2026-03-01T12:00:00Z\",\"agentStatus\":\"ready\",\"heartbeatIntervalSeconds\":30}")).isEmpty());
            assertTrue(!schema(ref("BatchResult")).validate(node("{\"agentId\":\"a\",\"success\":true,"
                    + "\"heartbeatTs\":\"2026-03-01T12:00:00Z\",\"agentStatus\":\"ready\",\"heartbeatIntervalSeconds\":30}"))
                    .isEmpty());
            assertTrue(!schema(ref("JoinRequest")).validate(node("{\"reason\":\"back\"}")).isEmpty());
        }

        @Test
        void revokeKey_documentsTheAuthorizerCacheOfTheTemplate() throws Exception {
            int seconds = TestStack.template().authorizerCacheSeconds();
            assertTrue(seconds > 0, "the template caches the authorizer's answers");
            String described = spec.at("/paths/~1v1~1teams~1{team}~1keys~1{keyId}/delete/description").asText();
            assertTrue(described.contains("up to " + seconds + " seconds"), described);
            String readme = Files.readString(SPEC.resolveSibling("docs/api.md"));
            assertTrue(readme.contains("up to " + seconds + " s"), "docs/api.md says how long a revoked key keeps working");
        }
    }

    /** The handlers' real answers. */
    @Nested
    class RealAnswers {
        @Test
        void realAnswers_validateAgainstTheSchemaOfTheirRouteAndStatus() {
            String agent = "oa-1";
            TestStack.Reply registered = stack.team("register", "{\"agentId\":\"" + agent + "\",\"name\":\"Open API\","
                    + "\"role\":\"worker\",\"hostId\":\"host-oa\",\"schedule\":\"every:30s\"}");
            conforms("register", registered, 201);
            assertEquals("UTC", registered.text("timeZone"), "README: the default zone is UTC");
            conforms("register", stack.register(agent), 409);
            conforms("join", stack.agent("join", agent, "{\"reason\":\"back\"}"), 400);
            conforms("join", stack.agent("join", agent, null), 200);
            conforms("heartbeat", stack.heartbeat(agent, "{\"status\":\"working\",\"metadata\":{\"m\":1},"
                    + "\"stats\":{\"messagesProcessed\":3,\"uptime\":9},\"checkpoint\":{\"step\":2}}"), 200);
            conforms("heartbeat", stack.heartbeat(agent, "{\"colour\":\"red\"}"), 400);
            TestStack.Reply duplicate = stack.heartbeat(agent, "{\"status\":\"ready\",\"status\":\"working\"}");
            conforms("heartbeat", duplicate, 400);
            assertEquals("The body is not valid JSON: duplicate field \"status\" (each field may appear only once)",
                    duplicate.text("error"));
            // An at: agent whose one slot this heartbeat serves: no further beat expected, and still a datetime.
            String once = "oa-once";
            ok(stack.team("register", "{\"agentId\":\"" + once + "\",\"name\":\"Once\",\"role\":\"worker\","
                    + "\"schedule\":\"at:" + stack.clock.instant().plusSeconds(30) + "\"}"));
            conforms("join", stack.agent("join", once, "{}"), 200);
            TestStack.Reply served = stack.heartbeat(once, "{}");
            conforms("heartbeat", served, 200);
            assertEquals("9999-12-31T23:59:59Z", served.text("nextDeadline"));
            conforms("batch-heartbeats", stack.team("batch-heartbeats", "{\"heartbeats\":[{\"agentId\":\"" + once
                    + "\"}]}"), 200);
            FAULTS.fail(1, StoreFaults.touching(TestStack.TEAM, agent), StoreFaults::validation);
            TestStack.Reply bug = stack.heartbeat(agent, "{}");
            conforms("heartbeat", bug, 500);
            assertTrue(bug.text("error").contains("request id"), bug.body().toString());
            conforms("heartbeat", stack.heartbeat("oa-nobody", "{}"), 404);
            conforms("get-agent", stack.agent("get-agent", agent, null), 200);
            conforms("list-agents", stack.team("list-agents", null), 200);
            conforms("errors", stack.agent("errors", agent, "{\"message\":\"rate limit exceeded (429)\"}"), 200);
            conforms("get-agent", stack.agent("get-agent", agent, null), 200);
            conforms("recovery", stack.agent("recovery", agent, null), 200);
            conforms("create-task", stack.createTask("oa-t1"), 201);
            conforms("list-tasks", stack.team("list-tasks", null), 200);
            stack.ready("oa-2");
            conforms("claim", stack.task("claim", "oa-t1", "{\"agentId\":\"oa-2\"}"), 200);
            conforms("claim", stack.task("claim", "oa-t1", "{\"agentId\":\"oa-2\"}"), 409);
            conforms("complete", stack.task("complete", "oa-t1", "{\"agentId\":\"oa-2\",\"result\":\"ok\"}"), 200);
            stack.register("oa-3");
            stack.agent("join", "oa-3", null);
            conforms("batch-heartbeats", stack.team("batch-heartbeats", "{\"heartbeats\":[{\"agentId\":\"oa-3\"},"
                    + "{\"agentId\":\"oa-missing\"}]}"), 200);
            conforms("transitions", stack.agent("transitions", agent, null), 200);
            // Runtimes' hooks: always {} for a body that could be read; the agent waits for a person, then input.
            stack.register("oa-hook");
            conforms("hook", stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "oa-hook",
                    "runtime", "claude-code"), null, "{\"session_id\":\"s\",\"hook_event_name\":\"Notification\","
                    + "\"notification_type\":\"permission_prompt\",\"message\":\"Claude needs your permission\"}"), 200);
            conforms("get-agent", stack.agent("get-agent", "oa-hook", null), 200);
            conforms("hook", stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "oa-hook",
                    "runtime", "cursor"), null, "{}"), 400);
            conforms("hook", stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "oa-nobody",
                    "runtime", "codex"), null, "{\"type\":\"agent-turn-complete\"}"), 404);
            stack.register("agent-1"); // the fixture's X-Lifeline-Agent header
            conforms("team-hook", stack.send("team-hook", stack.adminKey, Map.of("team", TestStack.TEAM, "runtime",
                    "gemini"), null, "{\"session_id\":\"g\",\"hook_event_name\":\"AfterAgent\"}"), 200);
            conforms("team-hook", stack.send("team-hook", stack.adminKey, Map.of("team", TestStack.TEAM, "runtime",
                    "gemini"), null, "[1]"), 400);
            stack.pump.drain(); // the outbox records the history the pages are read from
            TestStack.Reply firstPage = stack.send("transitions", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "agentId", agent), Map.of("limit", "1"), null);
            conforms("transitions", firstPage, 200);
            assertTrue(firstPage.body().has("nextCursor"), firstPage.body().toString());
            conforms("transitions", stack.send("transitions", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "agentId", agent), Map.of("limit", "1", "cursor", "not-a-cursor"), null), 400);
            conforms("pause-agent", stack.agent("pause-agent", agent, "{\"seconds\":60,\"reason\":\"upgrade\"}"), 200);
            conforms("get-agent", stack.agent("get-agent", agent, null), 200);
            conforms("resume-agent", stack.agent("resume-agent", agent, null), 200);
            conforms("put-settings", stack.team("put-settings", "{\"leaderAgentId\":\"oa-2\","
                    + "\"selfPreservationThreshold\":0.6,\"selfPreservationMinAlive\":3}"), 200);
            conforms("pause-team", stack.team("pause-team", "{\"seconds\":60}"), 200);
            conforms("get-settings", stack.team("get-settings", null), 200);
            conforms("resume-team", stack.team("resume-team", null), 200);
            conforms("release-hold", stack.team("release-hold", null), 409);
            // A hold as the sweep raises it (the store's own write), then its release.
            new TeamStore(stack.dynamo, stack.tables).raiseMassStale(TestStack.TEAM, 10, 8, 0.5, stack.clock.instant());
            conforms("get-settings", stack.team("get-settings", null), 200);
            conforms("release-hold", stack.team("release-hold", null), 200);
            // A fleet-wide hold as the sweep raises it and writes the team's share (the store's own writes): the team's
            // settings carry its share, its release frees the team, the operator releases the fleet's; then it clears.
            TeamStore teams = new TeamStore(stack.dynamo, stack.tables);
            Instant fleetSince = stack.clock.instant();
            teams.fleet().raise(new SweepPlan.FleetOutcome(40, 30, List.of(TestStack.TEAM), true, 0.5), fleetSince);
            teams.shareFleetHold(TestStack.TEAM, fleetSince, 10, 8, null);
            conforms("get-settings", stack.team("get-settings", null), 200);
            conforms("release-hold", stack.team("release-hold", null), 200);
            conforms("release-fleet-hold", stack.send("release-fleet-hold", stack.operatorKey, Map.of(), null, null), 200);
            conforms("release-fleet-hold", stack.send("release-fleet-hold", stack.operatorKey, Map.of(), null, null), 409);
            teams.clearFleetShare(TestStack.TEAM, fleetSince);
            teams.fleet().clear(fleetSince, stack.clock.instant());
            conforms("leave", stack.agent("leave", "oa-3", "{\"reason\":\"done\"}"), 200);
            conforms("delete-agent", stack.agent("delete-agent", agent, null), 409);
            stack.register("oa-4");
            conforms("delete-agent", stack.agent("delete-agent", "oa-4", null), 200);
            conforms("delete-agent", stack.agent("delete-agent", "oa-4", null), 404);
            conforms("fail", stack.agent("fail", agent, "{\"reason\":\"crashed\"}"), 200);
            conforms("heartbeat", stack.heartbeat(agent, "{}"), 409);
            conforms("revive", stack.agent("revive", agent, null), 202);
            conforms("revive", stack.agent("revive", agent, null), 409);
            stack.pump.drain();
            conforms("inbox", stack.agent("inbox", "oa-2", null), 200);
            conforms("events", stack.team("events", null), 200);
            conforms("events", stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("agentId", agent, "since", TestStack.START.toString(), "type", "AgentStatusChanged"), null), 200);
            conforms("events", stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("since", "yesterday"), null), 400);
            for (JsonNode type : resolveSchema("EventType").get("enum")) {
                conforms("events", stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                        Map.of("type", type.asText()), null), 200);
            }
            conforms("events", stack.send("events", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("type", "Nope"), null), 400);
            stack.stepFunctions.runDue();
            conforms("revivals", stack.agent("revivals", agent, null), 200);
            TestStack.Reply commands = stack.send("host-commands", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "hostId", "host-oa"), null, null);
            conforms("host-commands", commands, 200);
            assertTrue(commands.body().get("count").asInt() > 0, "the revive asked host-oa to restart: " + commands.body());
            String id = commands.body().get("commands").get(0).get("commandId").asText();
            conforms("ack-command", stack.send("ack-command", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "hostId", "host-oa", "commandId", id), null, null), 200);
            conforms("ack-command", stack.send("ack-command", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "hostId", "host-oa", "commandId", id), null, null), 409);
            assertTrue(stack.agent("revivals", agent, null).body().get("revivals").size() > 0, "a revival recorded");
            conforms("ack-command", stack.send("ack-command", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "hostId", "host-oa", "commandId", "c-none"), null, null), 404);
            stack.agent("fail", "oa-2", null);
            conforms("cleanup", stack.agent("cleanup", "oa-2", null), 200);
            conforms("create-team", stack.send("create-team", stack.operatorKey, Map.of(), null,
                    "{\"team\":\"oa-team\",\"selfPreservationMinAlive\":3}"), 201);
            conforms("create-team", stack.send("create-team", stack.operatorKey, Map.of(), null,
                    "{\"team\":\"oa-team\"}"), 409);
            conforms("mint-admin-key", stack.send("mint-admin-key", stack.operatorKey, Map.of("team", "oa-team"), null,
                    "{\"label\":\"oa\"}"), 201);
            conforms("mint-admin-key", stack.send("mint-admin-key", stack.operatorKey, Map.of("team", "oa-none"), null,
                    "{}"), 404);
            conforms("revoke-key", stack.send("revoke-key", stack.key("oa-last", Scope.ADMIN),
                    Map.of("team", "oa-last", "keyId", lastAdminKeyId("oa-last")), null, null), 409);
            conforms("create-key", stack.team("create-key", "{\"scope\":\"agent\",\"label\":\"oa\"}"), 201);
            conforms("list-keys", stack.team("list-keys", null), 200);
            conforms("revoke-key", stack.send("revoke-key", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "keyId", "nokey"), null, null), 404);
            String spare = stack.team("create-key", "{\"scope\":\"read\",\"label\":\"spare\"}").text("keyId");
            conforms("revoke-key", stack.send("revoke-key", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "keyId", spare), null, null), 200);
            conforms("list-tasks", stack.send("list-tasks", stack.key(TestStack.TEAM, Scope.READ),
                    Map.of("team", TestStack.TEAM), Map.of("status", "nope"), null), 400);
            conforms("create-task", stack.send("create-task", stack.key(TestStack.TEAM, Scope.READ),
                    Map.of("team", TestStack.TEAM), null, "{\"taskId\":\"x\",\"title\":\"x\"}"), 403);
            conforms("get-agent", stack.send("get-agent", "ll_not_a_key", Map.of("team", TestStack.TEAM,
                    "agentId", agent), null, null), 401);
            conforms("get-agent", stack.send("get-agent", null, Map.of("team", TestStack.TEAM, "agentId", agent),
                    null, null), 401);

            // A refusal of each operation not refused above, each validated as the answer of its route and status.
            String read = stack.key(TestStack.TEAM, Scope.READ);
            Map<String, String> team = Map.of("team", TestStack.TEAM);
            Map<String, String> nobody = Map.of("team", TestStack.TEAM, "agentId", "oa-nobody");
            conforms("list-agents", stack.send("list-agents", stack.adminKey, team, Map.of("status", "asleep"), null), 400);
            conforms("batch-heartbeats", stack.team("batch-heartbeats", "{\"heartbeats\":[]}"), 400);
            conforms("leave", stack.send("leave", stack.adminKey, nobody, null, null), 404);
            conforms("cleanup", stack.agent("cleanup", agent, null), 409);
            conforms("transitions", stack.send("transitions", stack.adminKey, nobody, null, null), 404);
            conforms("errors", stack.agent("errors", agent, "{}"), 400);
            conforms("recovery", stack.send("recovery", stack.adminKey, nobody, null, null), 404);
            conforms("fail", stack.agent("fail", "oa-3", null), 409);
            conforms("pause-agent", stack.agent("pause-agent", agent, "{\"seconds\":0}"), 400);
            conforms("resume-agent", stack.send("resume-agent", stack.adminKey, nobody, null, null), 404);
            conforms("inbox", stack.send("inbox", stack.adminKey, nobody, null, null), 404);
            conforms("revivals", stack.send("revivals", stack.adminKey, nobody, null, null), 404);
            conforms("complete", stack.task("complete", "oa-t1", "{\"agentId\":\"oa-2\"}"), 409);
            conforms("get-settings", stack.send("get-settings", stack.operatorKey, team, null, null), 403);
            conforms("put-settings", stack.team("put-settings", "{}"), 400);
            conforms("pause-team", stack.team("pause-team", "{}"), 400);
            conforms("resume-team", stack.send("resume-team", read, team, null, null), 403);
            conforms("release-hold", stack.send("release-hold", read, team, null, null), 403);
            conforms("host-commands", stack.send("host-commands", stack.adminKey, Map.of("team", TestStack.TEAM,
                    "hostId", "not an id"), null, null), 400);
            conforms("create-key", stack.team("create-key", "{\"scope\":\"root\"}"), 400);
            conforms("list-keys", stack.send("list-keys", read, team, null, null), 403);

            // Every operation of the spec answered here, with a success and with a refusal.
            Set<String> unrecorded = new TreeSet<>(Routes.specRouteKeys());
            unrecorded.removeAll(RECORDED.keySet());
            assertTrue(unrecorded.isEmpty(), "operations with no recorded answer: " + unrecorded);
            RECORDED.forEach((route, statuses) -> {
                assertTrue(statuses.stream().anyMatch(st -> st < 300), route + " answered no success: " + statuses);
                assertTrue(statuses.stream().anyMatch(st -> st >= 400), route + " answered no refusal: " + statuses);
            });
            assertTrue(RECORDED.values().stream().anyMatch(st -> st.contains(500)), "a 500 answer was recorded");
        }

        /** The reply has the expected status and its body validates against the spec's schema for that answer. */
        private static void conforms(String fixture, TestStack.Reply reply, int status) {
            String routeKey = EventLoader.loadApiGatewayHttpEvent("apigw/" + fixture + ".json").getRouteKey();
            assertEquals(status, reply.status(), fixture + ": " + reply.body());
            RECORDED.computeIfAbsent(routeKey, k -> new TreeSet<>()).add(status);
            String method = routeKey.substring(0, routeKey.indexOf(' ')).toLowerCase();
            String path = routeKey.substring(routeKey.indexOf(' ') + 1);
            JsonNode response = spec.path("paths").path(path).path(method).path("responses").path(Integer.toString(status));
            assertTrue(!response.isMissingNode(), routeKey + " documents no " + status);
            JsonNode schemaNode = resolve(response).path("content").path("application/json").path("schema");
            Set<ValidationMessage> errors = schema(schemaNode).validate(reply.body());
            assertTrue(errors.isEmpty(), routeKey + " " + status + " " + reply.body() + ": " + errors);
        }
    }

    /** Served by Local. */
    @Nested
    class ServedByLocal {
        @Test
        void local_servesTheSpec_withoutAKey() throws Exception {
            String onDisk = Files.readString(SPEC);
            LocalGateway.Response r = stack.gateway.handle("GET", "/openapi.yaml", null, Map.of(), null);
            assertEquals(200, r.status());
            assertEquals(onDisk, r.body());
            assertTrue(r.headers().get("content-type").startsWith("application/yaml"));
            // And over HTTP, through the front door Lifeline Local listens with.
            try (FrontDoor door = new FrontDoor(stack.gateway, 0)) {
                HttpResponse<String> http = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + door.port() + "/openapi.yaml")).GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, http.statusCode());
                assertEquals(onDisk, http.body());
                assertNotNull(new ObjectMapper(new YAMLFactory()).readTree(http.body()).get("openapi"));
            }
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------

    /** Follows a local {@code $ref} (to components) once, else the node itself. */
    static JsonNode resolve(JsonNode node) {
        JsonNode ref = node.get("$ref");
        return ref == null ? node : spec.at(ref.asText().substring(1));
    }

    static JsonNode resolveSchema(String name) {
        return spec.at("/components/schemas/" + name);
    }

    static JsonNode ref(String name) {
        return Json.object().put("$ref", "#/components/schemas/" + name);
    }

    static JsonNode node(String json) {
        try {
            return Json.parse(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    /** A draft 2020-12 schema for a schema object of the spec; its refs resolve against the spec's components. */
    static synchronized JsonSchema schema(JsonNode schemaNode) {
        return SCHEMAS.computeIfAbsent(schemaNode.toString(), k -> {
            ObjectNode root = schemaNode.deepCopy();
            root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
            root.set("components", spec.get("components"));
            return FACTORY.getSchema(root, CONFIG);
        });
    }

    /** The id of the only admin key of {@code team}, made by {@link TestStack#key}. */
    private static String lastAdminKeyId(String team) {
        return stack.keys().list(team).stream().filter(k -> k.scope() == Scope.ADMIN)
                .findFirst().orElseThrow().keyId();
    }
}
