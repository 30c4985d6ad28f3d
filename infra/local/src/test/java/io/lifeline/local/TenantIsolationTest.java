package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2CustomAuthorizerEvent;
import com.amazonaws.services.lambda.runtime.events.SimpleIAMPolicyResponse;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.KeyStore;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Tenant isolation, for every route of template.yaml (found through the API Gateway fixtures, one per route, and
 * openapi.yaml's scope per route): no key, a malformed key, a revoked key, another team's key and a key of too
 * narrow a scope are each refused, with the documented answer, and write nothing. Another team's key gets the
 * same bytes whether or not the target exists. Keys never appear in a log line or a later answer, and are
 * stored only as their hash (looked up by it, so no secret is ever compared). The authorizer's answer, which
 * the gateway caches by the Authorization header, depends on the key alone, so the cache cannot carry one
 * team's context into another's request.
 */
@Tag("contract")
class TenantIsolationTest {
    static TestStack stack;
    static final String OTHER = "initech";
    static String otherAdmin;
    static String readKey;
    static String agentKey;
    static String revoked;
    static String keyId;
    /** Fixture name by route key, for every non-public route. */
    static final Map<String, String> FIXTURES = new TreeMap<>();
    static final Map<String, Scope> SCOPES = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        otherAdmin = stack.key(OTHER, Scope.ADMIN);
        readKey = stack.key(TestStack.TEAM, Scope.READ);
        agentKey = stack.key(TestStack.TEAM, Scope.AGENT);
        KeyStore.NewKey doomed = stack.keys().createKey(TestStack.TEAM, Scope.ADMIN, "revoked", stack.clock.instant());
        stack.keys().revoke(TestStack.TEAM, doomed.keyId());
        revoked = doomed.key();
        keyId = stack.keys().createKey(TestStack.TEAM, Scope.READ, "target", stack.clock.instant()).keyId();
        stack.ready("exists");
        stack.createTask("exists");
        Path dir = Path.of(TenantIsolationTest.class.getResource("/apigw").toURI());
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString().replace(".json", "");
                FIXTURES.put(EventLoader.loadApiGatewayHttpEvent("apigw/" + name + ".json").getRouteKey(), name);
            }
        }
        JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(OpenApiTest.SPEC.toFile());
        for (String route : stack.gateway.apiRouteKeys()) {
            String method = route.substring(0, route.indexOf(' ')).toLowerCase();
            String path = route.substring(route.indexOf(' ') + 1);
            String scope = spec.path("paths").path(path).path(method).path("security").path(0).path("apiKey").path(0)
                    .asText();
            SCOPES.put(route, Scope.fromWire(scope).orElseThrow(() -> new AssertionError("no scope for " + route)));
        }
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** The path ids of a route, aimed at things that exist in team acme (or not, with {@code ghost}). */
    static Map<String, String> ids(String team, boolean ghost) {
        String prefix = ghost ? "ghost-" : "";
        return Map.of("team", team, "agentId", ghost ? "ghost-agent" : "exists", "taskId", prefix + "exists",
                "hostId", "host-1", "commandId", "0123456789abcdef", "keyId", ghost ? "000000000000" : keyId);
    }

    static LocalGateway.Response send(String route, String key, Map<String, String> ids) {
        String fixture = FIXTURES.get(route);
        assertNotNull(fixture, "a fixture for " + route);
        String body = route.startsWith("GET") || route.startsWith("DELETE") ? null : "{}";
        return stack.raw(fixture, key, ids, null, body);
    }

    private static void refused(String route, LocalGateway.Response r, int status, String code) {
        assertEquals(status, r.status(), route + ": " + r.body());
        try {
            JsonNode body = Json.parse(r.body());
            assertEquals(code, body.path("code").asText(), route + ": " + r.body());
            assertFalse(body.path("success").asBoolean(true), route);
        } catch (Exception e) {
            throw new AssertionError(route + ": not JSON: " + r.body(), e);
        }
    }

    /** Runs {@code check} for every route, with the table compared before and after, and stdout captured. */
    private static String everyRoute(Consumer<String> check) {
        StoreSnapshot before = StoreSnapshot.of(stack);
        StringBuffer captured = new StringBuffer();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        Log.sink(line -> captured.append(line).append('\n'));
        try {
            assertTrue(FIXTURES.keySet().containsAll(stack.gateway.apiRouteKeys()), "a fixture for every route");
            stack.gateway.apiRouteKeys().forEach(check);
        } finally {
            Log.sink(null);
            System.setOut(out);
        }
        before.assertUnchanged("refused requests");
        return captured + printed.toString(StandardCharsets.UTF_8);
    }

    @Test
    void everyRoute_refusesNoKeyMalformedKeysAndARevokedKey_andNeverLogsThem() {
        List<String> malformed = List.of("", "not-a-key", "ll_", "ll_" + "x".repeat(300), "Bearer ll_nested",
                "ll_\u00e9\u00ff", ApiKeys.hash(stack.adminKey));
        String logs = everyRoute(route -> {
            LocalGateway.Response none = send(route, null, ids(TestStack.TEAM, false));
            assertEquals(401, none.status(), route);
            assertEquals("{\"message\":\"Unauthorized\"}", none.body(), route);
            for (String key : malformed) {
                refused(route, send(route, key, ids(TestStack.TEAM, false)), 401, "UNAUTHENTICATED");
            }
            refused(route, send(route, revoked, ids(TestStack.TEAM, false)), 401, "UNAUTHENTICATED");
        });
        assertTrue(logs.contains("\"msg\":\"request\""), "the requests were logged");
        for (String key : List.of(revoked, "ll_" + "x".repeat(300), stack.adminKey, ApiKeys.hash(stack.adminKey))) {
            assertFalse(logs.contains(key), "a key in the logs");
        }
    }

    @Test
    void everyRoute_withAnotherTeamsKey_is403_andTheSameBytesWhetherOrNotTheTargetExists() {
        String logs = everyRoute(route -> {
            LocalGateway.Response real = send(route, otherAdmin, ids(TestStack.TEAM, false));
            LocalGateway.Response ghost = send(route, otherAdmin, ids(TestStack.TEAM, true));
            // An operator route (POST /v1/teams, POST .../admin-keys) needs an operator key: any team's admin key
            // is too narrow, whichever team it names.
            refused(route, real, 403, SCOPES.get(route) == Scope.OPERATOR ? "INSUFFICIENT_SCOPE" : "FORBIDDEN");
            assertEquals(ghost.status(), real.status(), route);
            assertEquals(ghost.body(), real.body(), route + ": the answer must not tell whether the target exists");
        });
        assertFalse(logs.contains(otherAdmin));
    }

    @Test
    void everyRoute_withAKeyOfTooNarrowAScope_is403InsufficientScope() {
        int checked[] = {0};
        everyRoute(route -> {
            Scope needed = SCOPES.get(route);
            for (Map.Entry<Scope, String> k : Map.of(Scope.READ, readKey, Scope.AGENT, agentKey).entrySet()) {
                if (k.getKey().ordinal() < needed.ordinal()) {
                    refused(route, send(route, k.getValue(), ids(TestStack.TEAM, false)), 403, "INSUFFICIENT_SCOPE");
                    checked[0]++;
                }
            }
        });
        assertTrue(checked[0] >= stack.gateway.apiRouteKeys().size() / 2, "most routes need more than read");
    }

    @Test
    void anotherTeamsAgent_asSeenFromOnesOwnTeam_isExactlyAnUnknownAgent() {
        // The other team's own key, on its own team's paths, naming an agent that exists only in acme.
        for (String route : stack.gateway.apiRouteKeys()) {
            if (!route.contains("{agentId}")) {
                continue;
            }
            Map<String, String> acmesAgent = new HashMap<>(ids(OTHER, false));
            Map<String, String> nobody = new HashMap<>(ids(OTHER, true));
            LocalGateway.Response a = send(route, otherAdmin, acmesAgent);
            LocalGateway.Response b = send(route, otherAdmin, nobody);
            assertEquals(b.status(), a.status(), route);
            assertEquals(b.body().replace("ghost-agent", "exists"), a.body(), route);
        }
    }

    @Test
    void keys_areStoredOnlyAsHashes_listedWithoutSecrets_andLookedUpByHash() {
        TestStack.Reply made = stack.team("create-key", "{\"scope\":\"agent\",\"label\":\"shown once\"}");
        assertEquals(201, made.status());
        String secret = made.text("key");
        String hash = ApiKeys.hash(secret);
        TestStack.Reply list = stack.send("list-keys", stack.adminKey, Map.of("team", TestStack.TEAM), null, null);
        assertEquals(200, list.status());
        String listed = list.body().toString();
        for (String s : List.of(secret, hash, stack.adminKey, ApiKeys.hash(stack.adminKey))) {
            assertFalse(listed.contains(s), "the list shows no key nor its hash");
        }
        assertTrue(listed.contains(made.text("keyId")));
        String table = stack.allItems().toString();
        assertFalse(table.contains(secret), "the plain key is stored nowhere");
        assertFalse(table.contains(stack.adminKey));
        // The key's item is found by its hash (a GetItem by key), so no stored secret is compared with the one sent.
        assertTrue(stack.allItems().stream().anyMatch(i -> i.get("pk").s().contains(hash)));
    }

    @Test
    void authorizer_answersByTheKeyAlone_soItsCacheCannotCarryATeamAcrossRequests() throws Exception {
        SamTemplate template = TestStack.template();
        JsonNode raw = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
        JsonNode identity = raw.at("/Resources/HttpApi/Properties/Auth/Authorizers/ApiKeyAuthorizer/Identity");
        assertEquals(List.of("Authorization"), Json.MAPPER.convertValue(identity.get("Headers"), List.class),
                "the cache is keyed by the whole Authorization header, nothing else");
        assertTrue(template.authorizerCacheSeconds() > 0 && template.authorizerCacheSeconds() <= 300);

        RequestHandler<APIGatewayV2CustomAuthorizerEvent, SimpleIAMPolicyResponse> authorizer =
                stack.host.handler(template.authorizerFunction());
        List<Object> contexts = new ArrayList<>();
        for (String team : List.of(TestStack.TEAM, OTHER, "nobody")) {
            for (String route : List.of("GET /v1/teams/{team}/agents", "POST /v1/teams/{team}/keys")) {
                APIGatewayV2CustomAuthorizerEvent e = APIGatewayV2CustomAuthorizerEvent.builder().withVersion("2.0")
                        .withType("REQUEST").withRouteKey(route)
                        .withRawPath(route.substring(route.indexOf(' ') + 1).replace("{team}", team))
                        .withHeaders(Map.of("authorization", "Bearer " + agentKey))
                        .withPathParameters(Map.of("team", team)).build();
                contexts.add(authorizer.handleRequest(e, new LocalContext("AuthorizerFunction",
                        UUID.randomUUID().toString())).getContext());
            }
        }
        assertEquals(1, contexts.stream().distinct().count(), "same key, same context, whatever the path");
        assertEquals(TestStack.TEAM, ((Map<?, ?>) contexts.get(0)).get("team"));

        // Through the gateway: a key cached after a request to its own team is still refused on another team.
        assertEquals(200, send("GET /v1/teams/{team}/agents", agentKey, ids(TestStack.TEAM, false)).status());
        refused("cached", send("GET /v1/teams/{team}/agents", agentKey, ids(OTHER, false)), 403, "FORBIDDEN");
        // And a revoked key that was cached stops once the cache expires (ReauthorizeEvery).
        KeyStore.NewKey soon = stack.keys().createKey(TestStack.TEAM, Scope.READ, "cached", stack.clock.instant());
        assertEquals(200, send("GET /v1/teams/{team}/agents", soon.key(), ids(TestStack.TEAM, false)).status());
        stack.keys().revoke(TestStack.TEAM, soon.keyId());
        stack.clock.advance(Duration.ofSeconds(template.authorizerCacheSeconds() + 1));
        refused("revoked", send("GET /v1/teams/{team}/agents", soon.key(), ids(TestStack.TEAM, false)), 401,
                "UNAUTHENTICATED");
    }
}
