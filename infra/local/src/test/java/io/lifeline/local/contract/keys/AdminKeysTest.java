package io.lifeline.local.contract.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A team cannot lose its last admin key: revoking it is refused (409 LAST_ADMIN_KEY), also when two admins
 * revoke the last two at once, also for a team made before the team item counted its admin keys; and an
 * operator can mint a new admin key for an existing team, which shows in the team's key list and as an
 * {@code AdminKeyMinted} event.
 */
@Timeout(120)
@Tag("contract")
class AdminKeysTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** The last admin key. */
    @Nested
    class LastAdminKey {
        @Test
        void revoke_theTeamsOnlyAdminKey_answers409LastAdminKey_andWritesNothing() {
            String team = TestStack.newId("solo");
            String admin = stack.key(team, Scope.ADMIN);
            TestStack.Reply r = stack.writesNothing(() -> revoke(admin, team, idOf(admin)));
            assertEquals(409, r.status(), r.body().toString());
            assertEquals("LAST_ADMIN_KEY", r.code());
            assertEquals(200, stack.send("list-keys", admin, Map.of("team", team), null, null).status(),
                    "the key still works");
        }

        @Test
        void revoke_oneOfTwoAdminKeys_succeeds_andThenTheOtherIsTheLast() {
            String team = TestStack.newId("pair");
            String first = stack.key(team, Scope.ADMIN);
            String second = stack.key(team, Scope.ADMIN);
            assertEquals(2, counter(team));
            assertEquals(200, revoke(second, team, idOf(first)).status());
            assertEquals(1, counter(team));
            assertEquals("LAST_ADMIN_KEY", revoke(second, team, idOf(second)).code());
            // Keys of other scopes neither count nor are held back.
            String reader = stack.key(team, Scope.READ);
            assertEquals(1, counter(team));
            assertEquals(200, revoke(second, team, idOf(reader)).status());
            assertEquals(1, counter(team));
        }

        @Test
        void revoke_theSameAdminKeyTwiceAtOnce_countsItOnce() throws Exception {
            String team = TestStack.newId("twice");
            String keep = stack.key(team, Scope.ADMIN);
            String other = stack.key(team, Scope.ADMIN);
            String gone = stack.key(team, Scope.ADMIN);
            List<Integer> statuses = concurrently(() -> revoke(keep, team, idOf(gone)).status(),
                    () -> revoke(other, team, idOf(gone)).status());
            assertEquals(1, statuses.stream().filter(s -> s == 200).count(), statuses.toString());
            assertEquals(2, counter(team));
            assertEquals(2, adminKeysListed(keep, team));
        }

        @Test
        void revoke_theLastTwoAdminKeysAtOnce_neverLeavesTheTeamWithoutOne() throws Exception {
            for (int round = 0; round < 8; round++) {
                String team = TestStack.newId("race");
                String a = stack.key(team, Scope.ADMIN);
                String b = stack.key(team, Scope.ADMIN);
                List<Integer> statuses = concurrently(() -> revoke(a, team, idOf(b)).status(),
                        () -> revoke(b, team, idOf(a)).status());
                assertEquals(1, statuses.stream().filter(s -> s == 200).count(), "round " + round + ": " + statuses);
                // The loser is refused 409 (the last admin key), 503 (a conflict), or 401 when the winner's revoke of its
                // own key landed before its request was authorized.
                assertTrue(statuses.stream().allMatch(s -> s == 200 || s == 409 || s == 503 || s == 401),
                        statuses.toString());
                assertEquals(1, counter(team), "round " + round);
                assertEquals(1, stack.keys().list(team).stream().filter(k -> k.scope() == Scope.ADMIN).count());
            }
        }
    }

    /** A team made before the counter. */
    @Nested
    class TeamMadeBeforeTheCounter {
        @Test
        void revoke_onATeamWithoutTheCounter_countsItsAdminKeysFirst_andStillKeepsTheLast() {
            String team = TestStack.newId("legacy");
            String a = stack.key(team, Scope.ADMIN);
            String b = stack.key(team, Scope.ADMIN);
            String c = stack.key(team, Scope.ADMIN);
            dropCounter(team);
            assertEquals(200, revoke(a, team, idOf(c)).status());
            assertEquals(2, counter(team), "counted 3, one revoked");
            assertEquals(200, revoke(a, team, idOf(b)).status());
            assertEquals(1, counter(team));
            assertEquals("LAST_ADMIN_KEY", revoke(a, team, idOf(a)).code());
        }

        @Test
        void revoke_onATeamWithoutTheCounter_theLastTwoAtOnce_onlyOneSucceeds() throws Exception {
            for (int round = 0; round < 6; round++) {
                String team = TestStack.newId("legacy-race");
                String a = stack.key(team, Scope.ADMIN);
                String b = stack.key(team, Scope.ADMIN);
                dropCounter(team);
                List<Integer> statuses = concurrently(() -> revoke(a, team, idOf(b)).status(),
                        () -> revoke(b, team, idOf(a)).status());
                assertEquals(1, statuses.stream().filter(s -> s == 200).count(), "round " + round + ": " + statuses);
                assertEquals(1, counter(team));
                assertEquals(1, stack.keys().list(team).stream().filter(k -> k.scope() == Scope.ADMIN).count());
            }
        }

        @Test
        void createAdminKey_onATeamWithoutTheCounter_countsTheKeysThereAndItself() {
            String team = TestStack.newId("legacy-create");
            String a = stack.key(team, Scope.ADMIN);
            stack.key(team, Scope.ADMIN);
            stack.key(team, Scope.AGENT);
            dropCounter(team);
            TestStack.Reply made = stack.send("create-key", a, Map.of("team", team), null, "{\"scope\":\"admin\"}");
            assertEquals(201, made.status(), made.body().toString());
            assertEquals(3, counter(team));
        }
    }

    /** The operator's way back. */
    @Nested
    class OperatorsWayBack {
        @Test
        void mintAdminKey_withOperatorKey_answers201WithAWorkingKey_listedAsMinted_andOneEvent() {
            String team = TestStack.newId("lost");
            String admin = stack.key(team, Scope.ADMIN);
            stack.pump.drain();
            TestStack.Reply r = mint(stack.operatorKey, team, "{\"label\":\"recovered by ops\"}");
            assertEquals(201, r.status(), r.body().toString());
            assertEquals("admin", r.text("scope"));
            String minted = r.text("key");
            assertEquals(ApiKeys.idOf(ApiKeys.hash(minted)), r.text("keyId"));
            assertEquals(2, counter(team));

            TestStack.Reply list = stack.send("list-keys", minted, Map.of("team", team), null, null);
            assertEquals(200, list.status(), "the minted key is the team's admin");
            String operatorId = idOf(stack.operatorKey);
            int mintedSeen = 0;
            for (JsonNode k : list.body().get("keys")) {
                if (k.get("keyId").asText().equals(r.text("keyId"))) {
                    assertEquals(operatorId, k.get("mintedBy").asText());
                    assertEquals("recovered by ops", k.get("label").asText());
                    mintedSeen++;
                } else {
                    assertNull(k.get("mintedBy"), k.toString());
                }
            }
            assertEquals(1, mintedSeen);
            // With two admin keys, the old one can now go; the minted one is then the last.
            assertEquals(200, revoke(minted, team, idOf(admin)).status());
            assertEquals("LAST_ADMIN_KEY", revoke(minted, team, r.text("keyId")).code());

            assertTrue(stack.pump.drain() > 0);
            stack.pump.drain();
            TestStack.Reply events = stack.send("events", minted, Map.of("team", team), null, null);
            assertEquals(200, events.status(), events.body().toString());
            List<JsonNode> mintedEvents = new ArrayList<>();
            events.body().get("events").forEach(e -> {
                if ("AdminKeyMinted".equals(e.path("type").asText())) {
                    mintedEvents.add(e);
                }
            });
            assertEquals(1, mintedEvents.size(), events.body().toString());
            assertTrue(mintedEvents.get(0).toString().contains(operatorId), mintedEvents.get(0).toString());
            assertTrue(mintedEvents.get(0).toString().contains(r.text("keyId")), mintedEvents.get(0).toString());
            assertFalse(events.body().toString().contains(minted), "never the secret");
        }

        @Test
        void mintAdminKey_forAnUnknownTeam_answers404TeamNotFound_andWritesNothing() {
            TestStack.Reply r = stack.writesNothing(() -> mint(stack.operatorKey, "no-such-team", "{}"));
            assertEquals(404, r.status(), r.body().toString());
            assertEquals("TEAM_NOT_FOUND", r.code());
        }

        @ParameterizedTest
        @ValueSource(strings = {"read", "agent", "admin"})
        void mintAdminKey_withATeamsKey_answers403InsufficientScope_andWritesNothing(String scope) {
            String key = stack.key(TestStack.TEAM, Scope.fromWire(scope).orElseThrow());
            TestStack.Reply r = stack.writesNothing(() -> mint(key, TestStack.TEAM, "{}"));
            assertEquals(403, r.status());
            assertEquals("INSUFFICIENT_SCOPE", r.code());
        }

        @ParameterizedTest
        @ValueSource(strings = {"{\"scope\":\"admin\"}", "{\"label\":5}", "[]", "{label"})
        void mintAdminKey_withABadBody_answers400_andWritesNothing(String body) {
            TestStack.Reply r = stack.writesNothing(() -> mint(stack.operatorKey, TestStack.TEAM, body));
            assertEquals(400, r.status(), r.body().toString());
            assertFalse(r.body().get("success").asBoolean());
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static TestStack.Reply revoke(String key, String team, String keyId) {
        return stack.send("revoke-key", key, Map.of("team", team, "keyId", keyId), null, null);
    }

    private static TestStack.Reply mint(String key, String team, String body) {
        return stack.send("mint-admin-key", key, Map.of("team", team), null, body);
    }

    private static String idOf(String key) {
        return ApiKeys.idOf(ApiKeys.hash(key));
    }

    private static long counter(String team) {
        AttributeValue v = stack.item("TEAM#" + team, "TEAM").get("adminKeys");
        return v == null ? -1 : Long.parseLong(v.n());
    }

    private static long adminKeysListed(String key, String team) {
        TestStack.Reply r = stack.send("list-keys", key, Map.of("team", team), null, null);
        long n = 0;
        for (JsonNode k : r.body().get("keys")) {
            n += "admin".equals(k.get("scope").asText()) ? 1 : 0;
        }
        return n;
    }

    /** Test setup only: the team item as it was before it counted its admin keys. */
    private static void dropCounter(String team) {
        stack.dynamo.updateItem(u -> u.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS("TEAM#" + team), "sk", AttributeValue.fromS("TEAM")))
                .updateExpression("REMOVE adminKeys"));
        assertEquals(-1, counter(team));
    }

    /** Runs both at the same moment (a barrier) and answers their results in order. */
    private static List<Integer> concurrently(Callable<Integer> one,
                                              Callable<Integer> two) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Integer> a = pool.submit(() -> {
                barrier.await();
                return one.call();
            });
            Future<Integer> b = pool.submit(() -> {
                barrier.await();
                return two.call();
            });
            return List.of(a.get(), b.get());
        } finally {
            pool.shutdownNow();
        }
    }
}
