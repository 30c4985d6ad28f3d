package io.lifeline.local.contract.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.auth.Scope;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@code POST /v1/teams}: only an operator key creates a team (with its first admin key, shown once); the
 * operator key opens no team route; a second create is 409 and writes nothing; bad ids are 400.
 */
@Tag("contract")
class OperatorTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static TestStack.Reply create(String key, String body) {
        return stack.send("create-team", key, Map.of(), null, body);
    }

    @Test
    void create_withOperatorKey_answers201WithAnAdminKeyThatWorks_andAppliesTheSettings() {
        TestStack.Reply r = create(stack.operatorKey,
                "{\"team\":\"new-team\",\"leaderAgentId\":\"lead\",\"selfPreservationMinAlive\":3}");
        assertEquals(201, r.status(), r.body().toString());
        assertEquals("new-team", r.text("team"));
        assertEquals("admin", r.body().path("adminKey").path("scope").asText());
        String admin = r.body().path("adminKey").path("key").asText();
        assertTrue(admin.startsWith("ll_"), admin);

        TestStack.Reply reg = stack.send("register", admin, Map.of("team", "new-team"), null,
                "{\"agentId\":\"a1\",\"name\":\"A\",\"role\":\"worker\"}");
        assertEquals(201, reg.status(), reg.body().toString());
        TestStack.Reply settings = stack.send("get-settings", admin, Map.of("team", "new-team"), null, null);
        assertEquals("lead", settings.text("leaderAgentId"));
        assertEquals(3, settings.body().get("selfPreservationMinAlive").asInt());
        // The admin key is stored as a hash only; the answer was the one place it showed.
        assertFalse(stack.allItems().toString().contains(admin));
    }

    @Test
    void secondCreate_answers409TeamExists_andWritesNothing() {
        assertEquals(201, create(stack.operatorKey, "{\"team\":\"twice\"}").status());
        TestStack.Reply again = stack.writesNothing(() -> create(stack.operatorKey,
                "{\"team\":\"twice\",\"leaderAgentId\":\"other\"}"));
        assertEquals(409, again.status());
        assertEquals("TEAM_EXISTS", again.code());
        // And the existing team acme cannot be taken over either.
        assertEquals("TEAM_EXISTS", stack.writesNothing(() -> create(stack.operatorKey,
                "{\"team\":\"" + TestStack.TEAM + "\"}")).code());
    }

    @ParameterizedTest
    @ValueSource(strings = {"read", "agent", "admin"})
    void create_withATeamsKey_answers403InsufficientScope_andWritesNothing(String scope) {
        String key = stack.key(TestStack.TEAM, Scope.fromWire(scope).orElseThrow());
        TestStack.Reply r = stack.writesNothing(() -> create(key, "{\"team\":\"by-" + scope + "\"}"));
        assertEquals(403, r.status());
        assertEquals("INSUFFICIENT_SCOPE", r.code());
    }

    @Test
    void create_withNoKeyOrAnUnknownKey_answers401_andWritesNothing() {
        Set<Map<String, AttributeValue>> before = new HashSet<>(stack.allItems());
        LocalGateway.Response none = stack.raw("create-team", null, Map.of(), null, "{\"team\":\"nokey\"}");
        assertEquals(401, none.status());
        assertEquals("{\"message\":\"Unauthorized\"}", none.body());
        TestStack.Reply unknown = create("ll_neverIssued", "{\"team\":\"nokey\"}");
        assertEquals(401, unknown.status());
        assertEquals("UNAUTHENTICATED", unknown.code());
        assertEquals(before, new HashSet<>(stack.allItems()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"team\":\"has space\"}", "{\"team\":\"\"}", "{\"team\":\"a/b\"}",
            "{\"team\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", "{\"team\":7}"})
    void create_withABadTeamId_answers400_andWritesNothing(String body) {
        TestStack.Reply r = stack.writesNothing(() -> create(stack.operatorKey, body));
        assertEquals(400, r.status(), r.body().toString());
        assertFalse(r.body().get("success").asBoolean());
    }

    @Test
    void create_withBadFields_answersTheirCode_andWritesNothing() {
        assertEquals("MISSING_FIELD", stack.writesNothing(() -> create(stack.operatorKey, "{}")).code());
        assertEquals("UNKNOWN_FIELD", stack.writesNothing(() -> create(stack.operatorKey,
                "{\"team\":\"x1\",\"color\":\"red\"}")).code());
        assertEquals("INVALID_FIELD", stack.writesNothing(() -> create(stack.operatorKey,
                "{\"team\":\"x1\",\"selfPreservationThreshold\":2}")).code());
        assertEquals("INVALID_ID", stack.writesNothing(() -> create(stack.operatorKey,
                "{\"team\":\"x1\",\"leaderAgentId\":\"no way\"}")).code());
        assertEquals("INVALID_JSON", stack.writesNothing(() -> create(stack.operatorKey, "{team")).code());
    }

    @Test
    void operatorKey_opensNoTeamRoute_andWritesNothing() {
        stack.ready("exists");
        stack.team("create-task", "{\"taskId\":\"exists\",\"title\":\"T\"}");
        for (AuthTest.Call c : AuthTest.everyRoute("exists", "exists")) {
            TestStack.Reply r = stack.writesNothing(() -> stack.send(c.route(), stack.operatorKey,
                    c.path(TestStack.TEAM), c.query(), c.body()));
            assertEquals(403, r.status(), c.route() + ": " + r.body());
            assertEquals("INSUFFICIENT_SCOPE", r.code(), c.route());
        }
    }

    @Test
    void adminKey_cannotMintAnOperatorKey() {
        TestStack.Reply r = stack.writesNothing(() -> stack.team("create-key", "{\"scope\":\"operator\"}"));
        assertEquals(400, r.status());
        assertEquals("INVALID_FIELD", r.code());
    }

    @Test
    void neitherTheOperatorKeyNorTheNewAdminKey_isLogged() throws Exception {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Log.sink(lines::add);
        String admin;
        try {
            admin = create(stack.operatorKey, "{\"team\":\"logged\"}").body().path("adminKey").path("key").asText();
            create(stack.operatorKey, "{\"team\":\"logged\"}");
            create(stack.key(TestStack.TEAM, Scope.ADMIN), "{\"team\":\"logged-2\"}");
        } finally {
            Log.sink(null);
        }
        List<String> routes = new ArrayList<>();
        for (String line : List.copyOf(lines)) {
            assertFalse(line.contains(stack.operatorKey), line);
            assertFalse(line.contains(admin), line);
            assertFalse(line.contains("ll_"), line);
            var n = Json.parse(line);
            if ("request".equals(n.path("msg").asText())) {
                routes.add(n.path("route").asText() + " " + n.path("status").asInt());
            }
        }
        assertEquals(List.of("POST /v1/teams 201", "POST /v1/teams 409", "POST /v1/teams 403"), routes);
    }
}
