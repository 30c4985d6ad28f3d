package io.lifeline.local.contract.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.auth.Scope;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Who may call what: the gateway's own 401 without an Authorization header, the handlers' JSON 401 for an
 * unknown key, 403 for another team's key (with no way to tell whether the agent or task exists), and the
 * scope rules: {@code read} reads, {@code agent} also works, {@code admin} does everything.
 */
@Tag("contract")
class AuthTest {
    static TestStack stack;
    static final String OTHER = "umbrella";
    static String otherAdmin;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        otherAdmin = stack.key(OTHER, Scope.ADMIN);
        stack.ready("exists");
        stack.team("create-task", "{\"taskId\":\"exists\",\"title\":\"T\"}");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** One request: fixture route, path ids beyond the team, query and body. */
    record Call(String route, Map<String, String> ids, Map<String, String> query, String body) {
        static Call of(String route, String idName, String id, String body) {
            return new Call(route, idName == null ? Map.of() : Map.of(idName, id), null, body);
        }

        Map<String, String> path(String team) {
            Map<String, String> p = new HashMap<>(ids);
            p.put("team", team);
            return p;
        }
    }

    /** Every route of the API except the batch, aimed at {@code agentId}/{@code taskId}. */
    static List<Call> everyRoute(String agentId, String taskId) {
        String claimBody = "{\"agentId\":\"" + agentId + "\"}";
        return List.of(
                Call.of("register", null, null, "{\"agentId\":\"" + agentId + "\",\"name\":\"N\",\"role\":\"r\"}"),
                Call.of("list-agents", null, null, null),
                Call.of("get-agent", "agentId", agentId, null),
                Call.of("join", "agentId", agentId, null),
                Call.of("heartbeat", "agentId", agentId, "{}"),
                Call.of("leave", "agentId", agentId, null),
                Call.of("cleanup", "agentId", agentId, null),
                Call.of("transitions", "agentId", agentId, null),
                Call.of("errors", "agentId", agentId, "{\"message\":\"context window exceeded\"}"),
                Call.of("recovery", "agentId", agentId, null),
                Call.of("create-task", null, null, "{\"taskId\":\"" + taskId + "\",\"title\":\"T\"}"),
                Call.of("list-tasks", null, null, null),
                Call.of("claim", "taskId", taskId, claimBody),
                Call.of("complete", "taskId", taskId, claimBody),
                Call.of("create-key", null, null, "{\"scope\":\"admin\"}"),
                Call.of("list-keys", null, null, null),
                Call.of("revoke-key", "keyId", "0123456789ab", null));
    }

    private static TestStack.Reply send(String key, String team, Call c) {
        return stack.send(c.route(), key, c.path(team), c.query(), c.body());
    }

    /** No key, unknown key. */
    @Nested
    class NoOrUnknownKey {
        @Test
        void anyRoute_withoutAuthorizationHeader_answersGateway401AndWritesNothing() {
            Set<Map<String, AttributeValue>> before = new HashSet<>(stack.allItems());
            for (Call c : everyRoute("exists", "exists")) {
                LocalGateway.Response r = stack.raw(c.route(), null, c.path(TestStack.TEAM), c.query(), c.body());
                assertEquals(401, r.status(), c.route());
                assertEquals("{\"message\":\"Unauthorized\"}", r.body(), c.route());
            }
            assertEquals(before, new HashSet<>(stack.allItems()));
        }

        @ParameterizedTest
        @ValueSource(strings = {"ll_thisKeyWasNeverIssued0000000000000000000000", "", "not-a-key",
                "ll_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
        void anyRoute_withUnknownKey_answersJson401UnauthenticatedAndWritesNothing(String key) {
            for (Call c : everyRoute("exists", "exists")) {
                TestStack.Reply r = stack.writesNothing(() -> send(key, TestStack.TEAM, c));
                assertEquals(401, r.status(), c.route());
                assertEquals("UNAUTHENTICATED", r.code(), c.route());
                assertFalse(r.body().get("success").asBoolean());
                assertTrue(r.body().hasNonNull("error"));
            }
        }

        @Test
        void getAgent_withUnknownKey_answersTheSameWhetherOrNotTheAgentExists() {
            String key = "ll_neverIssued";
            LocalGateway.Response existing = stack.raw("get-agent", key,
                    Map.of("team", TestStack.TEAM, "agentId", "exists"), null, null);
            LocalGateway.Response missing = stack.raw("get-agent", key,
                    Map.of("team", TestStack.TEAM, "agentId", "no-such-agent"), null, null);
            assertEquals(existing, missing);
        }
    }

    /** Another team's key. */
    @Nested
    class AnotherTeamsKey {
        @Test
        void anyRoute_withAnotherTeamsKey_answers403ForbiddenAndWritesNothing() {
            for (Call c : everyRoute("exists", "exists")) {
                TestStack.Reply r = stack.writesNothing(() -> send(otherAdmin, TestStack.TEAM, c));
                assertEquals(403, r.status(), c.route() + ": " + r.body());
                assertEquals("FORBIDDEN", r.code(), c.route());
                assertFalse(r.body().get("success").asBoolean());
            }
            assertEquals("ready", stack.agentItem("exists").get("status").s());
        }

        @Test
        void anyRoute_withAnotherTeamsKey_answersByteForByteTheSameWhetherOrNotTheTargetExists() {
            List<Call> existing = everyRoute("exists", "exists");
            List<Call> missing = everyRoute("no-such-agent", "no-such-task");
            for (int i = 0; i < existing.size(); i++) {
                Call e = existing.get(i);
                Call m = missing.get(i);
                LocalGateway.Response onExisting = stack.raw(e.route(), otherAdmin, e.path(TestStack.TEAM), null, e.body());
                LocalGateway.Response onMissing = stack.raw(m.route(), otherAdmin, m.path(TestStack.TEAM), null, m.body());
                assertEquals(onExisting, onMissing, e.route());
                assertEquals(403, onExisting.status(), e.route());
                // Nor does it tell whether the team exists: the same answer, but for the team name the caller typed.
                LocalGateway.Response onNoTeam = stack.raw(m.route(), otherAdmin, m.path("no-such-team"), null, m.body());
                assertEquals(new LocalGateway.Response(onExisting.status(), onExisting.headers(),
                        onExisting.body().replace("'" + TestStack.TEAM + "'", "'no-such-team'")), onNoTeam, e.route());
            }
        }

        /**
         * A misspelt team: the answer names the key's own team and the typed one, suggests the key's team when the two
         * are a slip apart, and is the same whether the typed team exists or not (a team's key learns no other team's
         * name; nothing is read before the 403).
         */
        @ParameterizedTest
        @ValueSource(strings = {"read", "admin"})
        void misspeltTeam_saysWhichTeamTheKeyIsFor_theSameWhetherTheTypedTeamExistsOrNot(String scope) {
            String key = stack.key(OTHER, Scope.fromWire(scope).orElseThrow());
            TestStack.Reply typo = stack.send("list-agents", key, Map.of("team", "umbrela"), null, null);
            assertEquals(403, typo.status(), typo.body()::toString);
            assertEquals("FORBIDDEN", typo.code());
            assertEquals("This key is for team 'umbrella', not 'umbrela': a key opens only its own team's routes; did "
                    + "you mean 'umbrella'?", typo.text("error"));

            // "acme" exists (the stack's team) and "acmf" does not: one answer, but for the name typed.
            TestStack.Reply existing = stack.send("list-agents", key, Map.of("team", TestStack.TEAM), null, null);
            TestStack.Reply missing = stack.send("list-agents", key, Map.of("team", "acmf"), null, null);
            assertEquals(existing.status(), missing.status());
            assertEquals(existing.body().toString().replace("'acme'", "'acmf'"), missing.body().toString());
            assertEquals("This key is for team 'umbrella', not 'acme': a key opens only its own team's routes; check "
                    + "the team in the URL, or use a key of that team", existing.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"read", "agent"})
        void anyRoute_withAnotherTeamsLesserKey_answersForbiddenBeforeScope(String scope) {
            String key = stack.key(OTHER, Scope.fromWire(scope).orElseThrow());
            for (Call c : everyRoute("exists", "exists")) {
                TestStack.Reply r = stack.writesNothing(() -> send(key, TestStack.TEAM, c));
                assertEquals(403, r.status(), c.route());
                assertEquals("FORBIDDEN", r.code(), c.route());
            }
        }

        @Test
        void ownTeam_withOwnKey_isNotAffectedByTheOtherTeam() {
            TestStack.Reply r = stack.send("list-agents", otherAdmin, Map.of("team", OTHER), null, null);
            assertEquals(200, r.status());
            assertEquals(0, r.body().get("count").asInt(), "team umbrella sees none of acme's agents");
        }
    }

    /** Scopes. */
    @Nested
    class Scopes {
        @Test
        void readKey_canReadButNotWrite() {
            String key = stack.key(TestStack.TEAM, Scope.READ);
            stack.ready("read-target");
            stack.heartbeat("read-target", "{\"checkpoint\":{\"a\":1}}");
            for (String route : List.of("get-agent", "transitions", "recovery")) {
                TestStack.Reply r = stack.send(route, key, Map.of("team", TestStack.TEAM, "agentId", "read-target"),
                        null, null);
                assertEquals(200, r.status(), route + ": " + r.body());
            }
            for (String route : List.of("list-agents", "list-tasks")) {
                assertEquals(200, stack.send(route, key, Map.of("team", TestStack.TEAM), null, null).status(), route);
            }
            for (Call c : everyRoute("read-target", "exists")) {
                if (List.of("list-agents", "get-agent", "transitions", "recovery", "list-tasks").contains(c.route())) {
                    continue;
                }
                TestStack.Reply r = stack.writesNothing(() -> send(key, TestStack.TEAM, c));
                assertEquals(403, r.status(), c.route() + ": " + r.body());
                assertEquals("INSUFFICIENT_SCOPE", r.code(), c.route());
            }
            TestStack.Reply batch = stack.writesNothing(() -> stack.send("batch-heartbeats", key,
                    Map.of("team", TestStack.TEAM), null, "{\"heartbeats\":[{\"agentId\":\"read-target\"}]}"));
            assertEquals(403, batch.status());
            assertEquals("INSUFFICIENT_SCOPE", batch.code());
            assertEquals("ready", stack.agentItem("read-target").get("status").s());
        }

        @Test
        void agentKey_canWorkButNotRegisterCleanUpOrManageKeys() {
            String key = stack.key(TestStack.TEAM, Scope.AGENT);
            stack.register("agent-target");
            Map<String, String> agentPath = Map.of("team", TestStack.TEAM, "agentId", "agent-target");
            Map<String, String> team = Map.of("team", TestStack.TEAM);
            Map<String, String> taskPath = Map.of("team", TestStack.TEAM, "taskId", "agent-task");
            String claimBody = "{\"agentId\":\"agent-target\"}";
            assertEquals(200, stack.send("join", key, agentPath, null, null).status());
            assertEquals(200, stack.send("heartbeat", key, agentPath, null, "{}").status());
            assertEquals(201, stack.send("create-task", key, team, null,
                    "{\"taskId\":\"agent-task\",\"title\":\"T\"}").status());
            assertEquals(200, stack.send("claim", key, taskPath, null, claimBody).status());
            assertEquals(200, stack.send("complete", key, taskPath, null, claimBody).status());
            assertEquals(200, stack.send("errors", key, agentPath, null, "{\"message\":\"timeout\"}").status());
            assertEquals(200, stack.send("get-agent", key, agentPath, null, null).status());
            assertEquals(200, stack.send("leave", key, agentPath, null, null).status());
            assertEquals("offline", stack.agentItem("agent-target").get("status").s());

            stack.forceStatus("agent-target", "dead");
            for (Call c : everyRoute("agent-target", "agent-task")) {
                if (!List.of("register", "cleanup", "create-key", "list-keys", "revoke-key").contains(c.route())) {
                    continue;
                }
                Call target = c.route().equals("register")
                        ? Call.of("register", null, null, "{\"agentId\":\"by-agent-key\",\"name\":\"N\",\"role\":\"r\"}")
                        : c;
                TestStack.Reply r = stack.writesNothing(() -> send(key, TestStack.TEAM, target));
                assertEquals(403, r.status(), c.route() + ": " + r.body());
                assertEquals("INSUFFICIENT_SCOPE", r.code(), c.route());
            }
            assertEquals("dead", stack.agentItem("agent-target").get("status").s());
        }

        @Test
        void adminKey_canDoEverything() {
            String key = stack.key(TestStack.TEAM, Scope.ADMIN);
            Map<String, String> team = Map.of("team", TestStack.TEAM);
            Map<String, String> agentPath = Map.of("team", TestStack.TEAM, "agentId", "admin-target");
            Map<String, String> taskPath = Map.of("team", TestStack.TEAM, "taskId", "admin-task");
            String claimBody = "{\"agentId\":\"admin-target\"}";
            assertEquals(201, stack.send("register", key, team, null,
                    "{\"agentId\":\"admin-target\",\"name\":\"N\",\"role\":\"r\"}").status());
            assertEquals(200, stack.send("list-agents", key, team, null, null).status());
            assertEquals(200, stack.send("get-agent", key, agentPath, null, null).status());
            assertEquals(200, stack.send("join", key, agentPath, null, null).status());
            assertEquals(200, stack.send("heartbeat", key, agentPath, null, "{}").status());
            assertEquals(201, stack.send("create-task", key, team, null,
                    "{\"taskId\":\"admin-task\",\"title\":\"T\"}").status());
            assertEquals(200, stack.send("list-tasks", key, team, null, null).status());
            assertEquals(200, stack.send("claim", key, taskPath, null, claimBody).status());
            assertEquals(200, stack.send("complete", key, taskPath, null, claimBody).status());
            assertEquals(200, stack.send("errors", key, agentPath, null, "{\"message\":\"x\"}").status());
            assertEquals(200, stack.send("recovery", key, agentPath, null, null).status());
            assertEquals(200, stack.send("transitions", key, agentPath, null, null).status());
            assertEquals(200, stack.send("leave", key, agentPath, null, null).status());
            stack.forceStatus("admin-target", "dead");
            assertEquals(200, stack.send("cleanup", key, agentPath, null, null).status());
            TestStack.Reply created = stack.send("create-key", key, team, null, "{\"scope\":\"read\"}");
            assertEquals(201, created.status());
            assertEquals(200, stack.send("list-keys", key, team, null, null).status());
            assertEquals(200, stack.send("revoke-key", key, Map.of("team", TestStack.TEAM, "keyId",
                    created.text("keyId")), null, null).status());
            assertEquals(200, stack.send("batch-heartbeats", key, team, null,
                    "{\"heartbeats\":[{\"agentId\":\"exists\"}]}").status());
        }
    }
}
