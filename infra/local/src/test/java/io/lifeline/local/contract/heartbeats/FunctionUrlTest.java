package io.lifeline.local.contract.heartbeats;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2CustomAuthorizerEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SimpleIAMPolicyResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.Limits;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.team.KeyStore;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat function's Function URL: the same handler answers an event shaped as a Function URL
 * delivers it (route key {@code $default}, no path parameters, no authorizer; fixtures under
 * {@code lambda-url/}) exactly as it answers the HTTP API's event after the real authorizer ran, for success and
 * for every documented refusal, with the same key/scope matrix and team isolation; keys are looked up once per
 * distinct key per cache period (ReauthorizeEvery), so a revoked key stops working within that bound.
 */
@Tag("contract")
class FunctionUrlTest {
    static final String TEAM = TestStack.TEAM;
    static final String OTHER = "umbrella";
    static final String HEARTBEAT = LifelineLocal.HEARTBEAT_URL_FUNCTION;
    /** The function behind the HTTP API's heartbeat routes: the same handler, another function. */
    static final String API_HEARTBEAT = "HeartbeatFunction";

    static final HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
    static final StoreFaults faults = new StoreFaults();
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(counter).interceptor(faults).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @AfterEach
    void clearFaults() {
        faults.clear();
    }

    /** An answer as the client receives it. */
    record Answer(int status, String contentType, String retryAfter, String body) {
        JsonNode json() {
            try {
                return Json.parse(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String code() {
            return json().path("code").asText(null);
        }

        TestStack.Reply reply() {
            return new TestStack.Reply(status, Map.of(), json());
        }
    }

    static Answer answer(APIGatewayV2HTTPResponse r) {
        Map<String, String> h = r.getHeaders() == null ? Map.of() : r.getHeaders();
        return new Answer(r.getStatusCode(), h.get("content-type"), h.get("retry-after"), r.getBody());
    }

    /** The route's path with its parameters filled in ({@code heartbeat}: team and agentId; {@code batch}: team). */
    static String path(String route, String team, String agentId) {
        return route.equals("heartbeat") ? "/v1/teams/" + team + "/agents/" + agentId + "/heartbeat"
                : "/v1/teams/" + team + "/heartbeats";
    }

    static Map<String, String> headers(Map<String, String> fixture, String authorization) {
        Map<String, String> headers = new HashMap<>(fixture);
        if (authorization == null) {
            headers.remove("authorization");
        } else {
            headers.put("authorization", authorization);
        }
        return headers;
    }

    /**
     * The HTTP API's event (fixture {@code apigw/<route>-heartbeats}) as API Gateway hands it to the heartbeat
     * function after the template's authorizer ran on it (its context put on the event), answered by the handler.
     */
    static Answer viaApi(String route, String authorization, String team, String agentId, String body) {
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(
                "apigw/" + (route.equals("heartbeat") ? "heartbeat" : "batch-heartbeats") + ".json");
        Map<String, String> params = new LinkedHashMap<>();
        params.put("team", team);
        if (route.equals("heartbeat")) {
            params.put("agentId", agentId);
        }
        String raw = path(route, team, agentId);
        event.setPathParameters(params);
        event.setRawPath(raw);
        event.getRequestContext().getHttp().setPath(raw);
        event.getRequestContext().setRequestId(UUID.randomUUID().toString());
        event.setHeaders(headers(event.getHeaders(), authorization));
        event.setBody(body);
        RequestHandler<APIGatewayV2CustomAuthorizerEvent, SimpleIAMPolicyResponse> authorizer =
                stack.host.handler("AuthorizerFunction");
        SimpleIAMPolicyResponse auth = authorizer.handleRequest(APIGatewayV2CustomAuthorizerEvent.builder()
                .withVersion("2.0").withType("REQUEST").withRouteKey(event.getRouteKey())
                .withHeaders(event.getHeaders()).withRawPath(raw).withPathParameters(params)
                .withRequestContext(APIGatewayV2CustomAuthorizerEvent.RequestContext.builder()
                        .withRequestId(event.getRequestContext().getRequestId()).build())
                .build(), new LocalContext("AuthorizerFunction", UUID.randomUUID().toString()));
        event.getRequestContext().setAuthorizer(APIGatewayV2HTTPEvent.RequestContext.Authorizer.builder()
                .withLambda(new HashMap<>(auth.getContext() == null ? Map.of() : auth.getContext())).build());
        RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> handler = stack.host.handler(API_HEARTBEAT);
        return answer(handler.handleRequest(event, new LocalContext(API_HEARTBEAT, UUID.randomUUID().toString())));
    }

    /** The Function URL's event (fixture {@code lambda-url/...}) for the same request, through Lifeline Local. */
    static Answer viaUrl(String route, String authorization, String team, String agentId, String body) {
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent(
                "lambda-url/" + (route.equals("heartbeat") ? "heartbeat" : "batch-heartbeats") + ".json");
        String raw = path(route, team, agentId);
        event.setRawPath(raw);
        event.getRequestContext().getHttp().setPath(raw);
        event.getRequestContext().setRequestId(UUID.randomUUID().toString());
        event.setHeaders(headers(event.getHeaders(), authorization));
        event.setBody(body);
        LocalGateway.Response r = stack.gateway.invokeUrl(HEARTBEAT, event);
        return new Answer(r.status(), r.headers().get("content-type"), r.headers().get("retry-after"), r.body());
    }

    static String bearer(String key) {
        return "Bearer " + key;
    }

    static Answer compare(String what, Answer api, Answer url) {
        assertEquals(api, url, what + ": the Function URL answers as the HTTP API does");
        return url;
    }

    static String readyAgent() {
        String id = TestStack.newId("u");
        ok(stack.ready(id));
        return id;
    }

    /** Success. */
    @Nested
    class Success {
        @Test
        void heartbeat_throughTheUrl_answersAsThroughTheApi() {
            String id = readyAgent();
            String key = stack.key(TEAM, Scope.AGENT);
            String body = "{\"status\":\"working\",\"metadata\":{\"model\":\"m1\"}}";
            Answer api = viaApi("heartbeat", bearer(key), TEAM, id, body);
            assertEquals(200, api.status(), api.body());
            Answer url = viaUrl("heartbeat", bearer(key), TEAM, id, body);
            compare("single heartbeat", api, url);
            assertEquals("working", url.json().path("agentStatus").asText());

            String batch = "{\"heartbeats\":[{\"agentId\":\"" + id + "\"},{\"agentId\":\"ghost-" + id + "\"}]}";
            Answer apiBatch = viaApi("batch", bearer(key), TEAM, null, batch);
            Answer urlBatch = viaUrl("batch", bearer(key), TEAM, null, batch);
            compare("batch with one refused entry", apiBatch, urlBatch);
            assertEquals(200, urlBatch.status());
            assertEquals("AGENT_NOT_FOUND", urlBatch.json().path("results").get(1).path("code").asText());
        }

        @Test
        void localSecondPath_carriesTheUrlEventShape_endToEnd() throws Exception {
            String id = readyAgent();
            String key = stack.key(TEAM, Scope.AGENT);
            String base = LocalGateway.urlPath(HEARTBEAT);
            // No content type: a Function URL delivers the body base64-encoded, and the handler reads it so.
            LocalGateway.Response r = stack.gateway.handle("POST", base + path("heartbeat", TEAM, id), null,
                    Map.of("Authorization", List.of(bearer(key))), "{\"status\":\"working\"}");
            assertEquals(200, r.status(), r.body());
            assertEquals("working", Json.parse(r.body()).path("agentStatus").asText());
            assertEquals("working", stack.status(id));
            // Percent-encoded segments are decoded, as the HTTP API decodes path parameters.
            LocalGateway.Response encoded = stack.gateway.handle("POST", base + "/v1/teams/" + TEAM + "/agents/"
                    + id.replace("-", "%2D") + "/heartbeat", null, Map.of("Authorization", List.of(bearer(key)),
                    "Content-Type", List.of("application/json")), "{}");
            assertEquals(200, encoded.status(), encoded.body());
        }

        @Test
        void otherRoutes_throughTheUrl_areNotFound_andWriteNothing() {
            String id = readyAgent();
            String admin = stack.adminKey;
            String base = LocalGateway.urlPath(HEARTBEAT);
            for (String[] request : new String[][] {
                    {"POST", "/v1/teams/" + TEAM + "/agents/" + id + "/leave"},
                    {"POST", "/v1/teams/" + TEAM + "/agents/" + id + "/join"},
                    {"GET", "/v1/teams/" + TEAM + "/agents"},
                    {"POST", "/v1/teams/" + TEAM + "/keys"},
                    {"GET", "/v1/teams/" + TEAM + "/agents/" + id + "/heartbeat"},
                    {"POST", "/"},
                    {"POST", "/v1/teams/" + TEAM + "/agents/" + id + "/heartbeat/extra"}}) {
                TestStack.Reply r = stack.writesNothing(() -> {
                    LocalGateway.Response raw = stack.gateway.handle(request[0], base + request[1], null,
                            Map.of("Authorization", List.of(bearer(admin)), "Content-Type", List.of("application/json")),
                            "{\"scope\":\"admin\"}");
                    return new TestStack.Reply(raw.status(), raw.headers(), parse(raw.body()));
                });
                assertEquals(404, r.status(), String.join(" ", request) + ": " + r.body());
                assertEquals("ROUTE_NOT_FOUND", r.code(), r.body().toString());
            }
            assertEquals("ready", stack.status(id));
        }

        static JsonNode parse(String body) {
            try {
                return Json.parse(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }
    }

    /** Every documented refusal. */
    @Nested
    class Refusals {
        record Refusal(String what, String route, String authorization, String team, String agentId, String body,
                       int status, String code, Runnable arm) {
        }

        @Test
        void everyDocumentedRefusal_throughTheUrl_isTheApisAnswer_andWritesNothing() {
            String id = readyAgent();
            String dead = readyAgent();
            stack.forceStatus(dead, "dead");
            String agentKey = stack.key(TEAM, Scope.AGENT);
            String readKey = stack.key(TEAM, Scope.READ);
            String otherKey = stack.key(OTHER, Scope.ADMIN);
            String tooMany = "{\"heartbeats\":[" + String.join(",", Collections.nCopies(
                    Limits.MAX_BATCH_HEARTBEATS + 1, "{\"agentId\":\"" + id + "\"}")) + "]}";
            String huge = "{\"metadata\":{\"x\":\"" + "y".repeat(Limits.MAX_BODY_BYTES) + "\"}}";
            List<Refusal> refusals = List.of(
                    new Refusal("no Authorization header", "heartbeat", null, TEAM, id, "{}", 401, "UNAUTHENTICATED", null),
                    new Refusal("not a bearer key", "heartbeat", "Basic " + agentKey, TEAM, id, "{}", 401,
                            "UNAUTHENTICATED", null),
                    new Refusal("unknown key", "heartbeat", bearer("ll_" + "x".repeat(43)), TEAM, id, "{}", 401,
                            "UNAUTHENTICATED", null),
                    new Refusal("over-long key", "heartbeat", bearer("k".repeat(500)), TEAM, id, "{}", 401,
                            "UNAUTHENTICATED", null),
                    new Refusal("another team's key", "heartbeat", bearer(otherKey), TEAM, id, "{}", 403, "FORBIDDEN",
                            null),
                    new Refusal("a read key", "heartbeat", bearer(readKey), TEAM, id, "{}", 403, "INSUFFICIENT_SCOPE", null),
                    new Refusal("an operator key", "heartbeat", bearer(stack.operatorKey), TEAM, id, "{}", 403,
                            "INSUFFICIENT_SCOPE", null),
                    new Refusal("unknown agent", "heartbeat", bearer(agentKey), TEAM, "ghost-" + id, "{}", 404,
                            "AGENT_NOT_FOUND", null),
                    new Refusal("dead agent", "heartbeat", bearer(agentKey), TEAM, dead, "{}", 409, "REJOIN_REQUIRED", null),
                    new Refusal("not JSON", "heartbeat", bearer(agentKey), TEAM, id, "{oops", 400, "INVALID_JSON", null),
                    new Refusal("bad status", "heartbeat", bearer(agentKey), TEAM, id, "{\"status\":\"asleep\"}", 400,
                            "INVALID_STATUS", null),
                    new Refusal("too large", "heartbeat", bearer(agentKey), TEAM, id, huge, 413, "PAYLOAD_TOO_LARGE", null),
                    new Refusal("bad agent id", "heartbeat", bearer(agentKey), TEAM, "a%20b", "{}", 400, null, null),
                    new Refusal("store throttled", "heartbeat", bearer(agentKey), TEAM, id, "{}", 503, "THROTTLED",
                            () -> faults.fail(50, StoreFaults.touching(TEAM, id), StoreFaults::throttled)),
                    new Refusal("batch: too many", "batch", bearer(agentKey), TEAM, null, tooMany, 400,
                            "TOO_MANY_HEARTBEATS", null),
                    new Refusal("batch: duplicate", "batch", bearer(agentKey), TEAM, null,
                            "{\"heartbeats\":[{\"agentId\":\"" + id + "\"},{\"agentId\":\"" + id + "\"}]}", 400,
                            "DUPLICATE_AGENT", null),
                    new Refusal("batch: empty", "batch", bearer(agentKey), TEAM, null, "{\"heartbeats\":[]}", 400,
                            "INVALID_FIELD", null),
                    new Refusal("batch: another team", "batch", bearer(otherKey), TEAM, null,
                            "{\"heartbeats\":[{\"agentId\":\"" + id + "\"}]}", 403, "FORBIDDEN", null),
                    new Refusal("batch: no key", "batch", null, TEAM, null,
                            "{\"heartbeats\":[{\"agentId\":\"" + id + "\"}]}", 401, "UNAUTHENTICATED", null));
            for (Refusal r : refusals) {
                if (r.arm() != null) {
                    r.arm().run();
                }
                Answer[] api = new Answer[1];
                Answer[] url = new Answer[1];
                stack.writesNothing(() -> (api[0] = viaApi(r.route(), r.authorization(), r.team(), r.agentId(),
                        r.body())).reply());
                stack.writesNothing(() -> (url[0] = viaUrl(r.route(), r.authorization(), r.team(), r.agentId(),
                        r.body())).reply());
                faults.clear();
                compare(r.what(), api[0], url[0]);
                assertEquals(r.status(), url[0].status(), r.what() + ": " + url[0].body());
                if (r.code() != null) {
                    assertEquals(r.code(), url[0].code(), r.what());
                }
                assertFalse(url[0].json().path("success").asBoolean(true), r.what());
                assertEquals("application/json", url[0].contentType(), r.what());
                assertFalse(url[0].body().contains(agentKey) || url[0].body().contains(otherKey), r.what());
            }
            assertEquals("ready", stack.status(id));
            assertEquals("dead", stack.status(dead));
        }
    }

    /** Keys, scopes and teams. */
    @Nested
    class KeysScopesAndTeams {
        @Test
        void keyScopeMatrix_andTeamIsolation_throughTheUrl_matchTheApi() {
            String mine = readyAgent();
            String theirs = TestStack.newId("t");
            String theirAdmin = stack.key(OTHER, Scope.ADMIN);
            ok(stack.send("register", theirAdmin, Map.of("team", OTHER), null,
                    "{\"agentId\":\"" + theirs + "\",\"name\":\"x\",\"role\":\"worker\"}"));
            ok(stack.send("join", theirAdmin, Map.of("team", OTHER, "agentId", theirs), null, null));
            String theirBeat = ok(stack.send("get-agent", theirAdmin, Map.of("team", OTHER, "agentId", theirs), null,
                    null)).body().path("heartbeatTs").asText();
            stack.clock.advance(Duration.ofSeconds(1));
            Map<String, String> keys = new LinkedHashMap<>();
            keys.put("read", stack.key(TEAM, Scope.READ));
            keys.put("agent", stack.key(TEAM, Scope.AGENT));
            keys.put("admin", stack.adminKey);
            keys.put("operator", stack.operatorKey);
            // Expected answers of an acme key on its own team's agent and on umbrella's agent.
            Map<String, int[]> expected = Map.of("read", new int[] {403, 403}, "agent", new int[] {200, 403},
                    "admin", new int[] {200, 403}, "operator", new int[] {403, 403});
            List<String> rows = new ArrayList<>();
            for (Map.Entry<String, String> k : keys.entrySet()) {
                for (String route : List.of("heartbeat", "batch")) {
                    for (boolean own : new boolean[] {true, false}) {
                        String team = own ? TEAM : OTHER;
                        String agent = own ? mine : theirs;
                        String body = route.equals("heartbeat") ? "{}" : "{\"heartbeats\":[{\"agentId\":\"" + agent + "\"}]}";
                        Answer api = viaApi(route, bearer(k.getValue()), team, agent, body);
                        Supplier<TestStack.Reply> url = () -> viaUrl(route, bearer(k.getValue()), team, agent, body).reply();
                        TestStack.Reply viaUrl = expected.get(k.getKey())[own ? 0 : 1] == 200 ? url.get()
                                : stack.writesNothing(url);
                        rows.add(k.getKey() + "/" + route + "/" + (own ? "own" : "other") + " -> " + viaUrl.status()
                                + " " + viaUrl.code());
                        assertEquals(expected.get(k.getKey())[own ? 0 : 1], viaUrl.status(), rows.get(rows.size() - 1));
                        assertEquals(api.status(), viaUrl.status(), rows.get(rows.size() - 1));
                        assertEquals(api.json().path("code"), viaUrl.body().path("code"), rows.get(rows.size() - 1));
                        if (!own) {
                            assertEquals(k.getKey().equals("operator") ? "INSUFFICIENT_SCOPE" : "FORBIDDEN",
                                    viaUrl.code(), "a key of acme learns nothing of umbrella");
                        }
                    }
                }
            }
            assertEquals(16, rows.size());
            // umbrella's agent never moved: no beat of an acme key reached it.
            JsonNode theirView = ok(stack.send("get-agent", theirAdmin, Map.of("team", OTHER, "agentId", theirs), null,
                    null)).body();
            assertEquals(theirBeat, theirView.path("heartbeatTs").asText());
        }

        @Test
        void keys_neverAppearInTheLogs_throughTheUrl() {
            String id = readyAgent();
            String good = stack.key(TEAM, Scope.AGENT);
            String read = stack.key(TEAM, Scope.READ);
            String unknown = "ll_" + "q".repeat(43);
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Log.sink(lines::add);
            try {
                viaUrl("heartbeat", bearer(good), TEAM, id, "{\"status\":\"working\"}");
                viaUrl("heartbeat", bearer(good), TEAM, "ghost-" + id, "{}");
                viaUrl("heartbeat", bearer(read), TEAM, id, "{}");
                viaUrl("heartbeat", bearer(unknown), TEAM, id, "{}");
                viaUrl("batch", bearer(good), OTHER, null, "{\"heartbeats\":[{\"agentId\":\"" + id + "\"}]}");
            } finally {
                Log.sink(null);
            }
            assertTrue(lines.size() >= 4, "the refusals and the status change were logged: " + lines);
            for (String line : lines) {
                for (String key : List.of(good, read, unknown, ApiKeys.hash(good))) {
                    assertFalse(line.contains(key), "a key in a log line: " + line);
                }
            }
            assertTrue(lines.stream().anyMatch(l -> l.contains("\"via\":\"url\"")), "URL requests are marked: " + lines);
        }
    }

    /** The cache bound. */
    @Nested
    class CacheBound {
        static long getItems() {
            return counter.operations.stream().filter("GetItem"::equals).count();
        }

        @Test
        void wrongKeys_costOneGetItemEachPerCachePeriod() {
            String id = readyAgent();
            List<String> wrong = List.of("ll_" + "a".repeat(43), "ll_" + "b".repeat(43), "ll_" + "c".repeat(43));
            counter.reset();
            for (int i = 0; i < 90; i++) {
                Answer a = viaUrl("heartbeat", bearer(wrong.get(i % 3)), TEAM, id, "{}");
                assertEquals(401, a.status());
            }
            assertEquals(3, getItems(), "one GetItem per distinct key: " + counter.operations);
            stack.clock.advance(Duration.ofSeconds(299));
            viaUrl("heartbeat", bearer(wrong.get(0)), TEAM, id, "{}");
            assertEquals(3, getItems(), "still within the period");
            stack.clock.advance(Duration.ofSeconds(1));
            for (int i = 0; i < 30; i++) {
                viaUrl("heartbeat", bearer(wrong.get(i % 3)), TEAM, id, "{}");
            }
            assertEquals(6, getItems(), "one more each in the next period");
            // The unknown keys never wrote anything, and the agent's status is untouched.
            assertEquals("ready", stack.status(id));
        }

        @Test
        void revokedKey_isRefusedThroughTheUrl_withinTheCacheBound() {
            String id = readyAgent();
            KeyStore.NewKey made = stack.keys().createKey(TEAM, Scope.AGENT, "soon revoked",
                    stack.clock.instant());
            assertEquals(200, viaUrl("heartbeat", bearer(made.key()), TEAM, id, "{}").status());
            ok(stack.send("revoke-key", stack.adminKey, Map.of("team", TEAM, "keyId", made.keyId()), null, null));
            int bound = 300; // KEY_CACHE_SECONDS, the authorizer's ReauthorizeEvery (TemplateObservabilityTest holds them equal)
            // Within the bound the cached answer still holds (documented: as the authorizer's cache does) ...
            stack.clock.advance(Duration.ofSeconds(bound - 1));
            assertEquals(200, viaUrl("heartbeat", bearer(made.key()), TEAM, id, "{}").status());
            // ... and at the bound the key is looked up again and refused.
            stack.clock.advance(Duration.ofSeconds(1));
            Answer refused = viaUrl("heartbeat", bearer(made.key()), TEAM, id, "{}");
            assertEquals(401, refused.status(), refused.body());
            assertEquals("UNAUTHENTICATED", refused.code());
            // The API's authorizer, asked afresh, refuses it too: both paths end at the same bound.
            assertEquals(401, viaApi("heartbeat", bearer(made.key()), TEAM, id, "{}").status());
            assertNotNull(made.keyId());
            assertTrue(stack.keys().list(TEAM).stream().noneMatch(k -> k.keyId().equals(made.keyId())));
        }
    }
}
