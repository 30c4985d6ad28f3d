package io.lifeline.local.contract.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A team's API keys: create (the secret is shown once), list (never the secret or its hash), revoke (the key
 * stops working once the gateway's 300 s authorizer cache has expired), admin only; and no item of the table
 * ever holds a key in plain text.
 */
@Tag("contract")
class KeysContractTest {
    static TestStack stack;
    static final Map<String, String> TEAM = Map.of("team", TestStack.TEAM);
    /** Every secret this class has seen, to look for in the table. */
    static final List<String> secrets = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        secrets.add(stack.adminKey);
        stack.ready("probe");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Create. */
    @Nested
    class Create {
        @ParameterizedTest
        @ValueSource(strings = {"read", "agent", "admin"})
        void create_eachScope_answers201WithTheKeyOnceAndItWorks(String scope) {
            TestStack.Reply r = create("{\"scope\":\"" + scope + "\",\"label\":\"ci " + scope + "\"}");
            assertEquals(201, r.status(), r.body().toString());
            String key = r.text("key");
            assertTrue(key.startsWith("ll_"), key);
            assertTrue(key.length() > 40, "256 random bits: " + key);
            assertTrue(r.text("keyId").matches("[0-9a-f]{12}"), r.text("keyId"));
            assertEquals(ApiKeys.idOf(ApiKeys.hash(key)), r.text("keyId"));
            assertEquals(scope, r.text("scope"));
            assertTrue(r.body().hasNonNull("note"));

            assertEquals(200, stack.send("get-agent", key, Map.of("team", TestStack.TEAM, "agentId", "probe"),
                    null, null).status(), "any key reads");
            int join = stack.send("heartbeat", key, Map.of("team", TestStack.TEAM, "agentId", "probe"), null, "{}")
                    .status();
            assertEquals(scope.equals("read") ? 403 : 200, join);
            int listKeys = stack.send("list-keys", key, TEAM, null, null).status();
            assertEquals(scope.equals("admin") ? 200 : 403, listKeys);
        }

        @Test
        void create_twice_givesDifferentKeys() {
            TestStack.Reply a = create("{\"scope\":\"agent\"}");
            TestStack.Reply b = create("{\"scope\":\"agent\"}");
            assertNotEquals(a.text("key"), b.text("key"));
            assertNotEquals(a.text("keyId"), b.text("keyId"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"{}", "{\"scope\":\"root\"}", "{\"scope\":\"ADMIN\"}", "{\"scope\":5}",
                "{\"scope\":\"read\",\"team\":\"other\"}", "{\"scope\":\"read\",\"label\":\"" + LONG_LABEL + "\"}",
                "{\"scope\":\"read\",\"label\":7}", "[]", ""})
        void create_withBadInput_answers400AndWritesNothing(String body) {
            TestStack.Reply r = stack.writesNothing(() -> stack.team("create-key", body.isEmpty() ? null : body));
            assertEquals(400, r.status(), r.body().toString());
            assertTrue(List.of("MISSING_FIELD", "INVALID_FIELD", "UNKNOWN_FIELD", "INVALID_BODY", "INVALID_JSON")
                    .contains(r.code()), r.code());
            assertNull(r.body().get("key"));
        }

        static final String LONG_LABEL = "lllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll"; // 65
    }

    /** List. */
    @Nested
    class Listing {
        @Test
        void list_showsEveryKeyOfTheTeamButNeverItsSecretOrHash() {
            TestStack.Reply made = create("{\"scope\":\"read\",\"label\":\"dashboard\"}");
            TestStack.Reply unlabelled = create("{\"scope\":\"agent\"}");
            TestStack.Reply r = stack.team("list-keys", null);
            assertEquals(200, r.status());
            JsonNode keys = r.body().get("keys");
            JsonNode dashboard = find(keys, made.text("keyId"));
            assertEquals("read", dashboard.get("scope").asText());
            assertEquals("dashboard", dashboard.get("label").asText());
            assertEquals(stack.clock.instant().toString(), dashboard.get("createdAt").asText());
            assertNull(find(keys, unlabelled.text("keyId")).get("label"));
            List<String> labels = new ArrayList<>();
            keys.forEach(k -> labels.add(k.path("label").asText()));
            assertTrue(labels.contains("first admin key"), keys.toString());

            for (JsonNode k : keys) {
                List<String> fields = new ArrayList<>();
                k.fieldNames().forEachRemaining(fields::add);
                assertTrue(List.of("keyId", "scope", "label", "createdAt").containsAll(fields), fields.toString());
            }
            String text = r.body().toString();
            for (String secret : secrets) {
                assertFalse(text.contains(secret), "the list shows a secret");
                assertFalse(text.contains(ApiKeys.hash(secret)), "the list shows a key's hash");
            }
        }

        @Test
        void list_showsOnlyTheCallersTeam() {
            String otherAdmin = stack.key("other-keys-team", Scope.ADMIN);
            secrets.add(otherAdmin);
            TestStack.Reply mine = stack.team("list-keys", null);
            TestStack.Reply theirs = stack.send("list-keys", otherAdmin, Map.of("team", "other-keys-team"), null, null);
            assertEquals(1, theirs.body().get("keys").size());
            String theirId = theirs.body().get("keys").get(0).get("keyId").asText();
            assertNull(find(mine.body().get("keys"), theirId));
        }
    }

    /** Revoke. */
    @Nested
    class Revoke {
        @Test
        void revoke_whenKeyWasInUse_stopsItOnceTheAuthorizerCacheExpires() {
            TestStack.Reply made = create("{\"scope\":\"agent\",\"label\":\"to revoke\"}");
            String key = made.text("key");
            Map<String, String> probe = Map.of("team", TestStack.TEAM, "agentId", "probe");
            assertEquals(200, stack.send("get-agent", key, probe, null, null).status());

            TestStack.Reply r = stack.send("revoke-key", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "keyId", made.text("keyId")), null, null);
            assertEquals(200, r.status(), r.body().toString());
            assertTrue(r.body().get("success").asBoolean());
            assertEquals(made.text("keyId"), r.text("revoked"));
            assertNull(find(stack.team("list-keys", null).body().get("keys"), made.text("keyId")));
            assertTrue(stack.item("KEY#" + ApiKeys.hash(key), "KEY").isEmpty(), "the lookup item is gone");

            // The gateway caches the authorizer's answer by Authorization header for ReauthorizeEvery (300 s).
            stack.clock.advance(Duration.ofSeconds(299));
            assertEquals(200, stack.send("get-agent", key, probe, null, null).status(),
                    "still the cached answer within 300 s (the documented cost of the cache)");
            stack.clock.advance(Duration.ofSeconds(2));
            TestStack.Reply after = stack.send("get-agent", key, probe, null, null);
            assertEquals(401, after.status());
            assertEquals("UNAUTHENTICATED", after.code());
        }

        @Test
        void revoke_whenKeyNeverUsed_stopsItAtOnce() {
            TestStack.Reply made = create("{\"scope\":\"read\"}");
            assertEquals(200, stack.send("revoke-key", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "keyId", made.text("keyId")), null, null).status());
            TestStack.Reply r = stack.send("list-agents", made.text("key"), TEAM, null, null);
            assertEquals(401, r.status());
            assertEquals("UNAUTHENTICATED", r.code());
        }

        @Test
        void revoke_twice_answers404KeyNotFound() {
            TestStack.Reply made = create("{\"scope\":\"read\"}");
            Map<String, String> path = Map.of("team", TestStack.TEAM, "keyId", made.text("keyId"));
            assertEquals(200, stack.send("revoke-key", stack.adminKey, path, null, null).status());
            TestStack.Reply again = stack.writesNothing(() -> stack.send("revoke-key", stack.adminKey, path, null, null));
            assertEquals(404, again.status());
            assertEquals("KEY_NOT_FOUND", again.code());
        }

        @Test
        void revoke_unknownKeyId_answers404KeyNotFoundAndWritesNothing() {
            TestStack.Reply r = stack.writesNothing(() -> stack.send("revoke-key", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "keyId", "0123456789ab"), null, null));
            assertEquals(404, r.status());
            assertEquals("KEY_NOT_FOUND", r.code());
        }

        @Test
        void revoke_withInvalidKeyId_answers400InvalidId() {
            TestStack.Reply r = stack.writesNothing(() -> stack.send("revoke-key", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "keyId", "not a key id"), null, null));
            assertEquals(400, r.status());
            assertEquals("INVALID_ID", r.code());
        }

        @Test
        void revoke_anotherTeamsKeyId_answers404AndTheirKeyKeepsWorking() {
            String otherAdmin = stack.key("other-revoke-team", Scope.ADMIN);
            secrets.add(otherAdmin);
            TestStack.Reply theirs = stack.send("create-key", otherAdmin, Map.of("team", "other-revoke-team"), null,
                    "{\"scope\":\"read\"}");
            assertEquals(201, theirs.status());
            secrets.add(theirs.text("key"));
            TestStack.Reply r = stack.writesNothing(() -> stack.send("revoke-key", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "keyId", theirs.text("keyId")), null, null));
            assertEquals(404, r.status());
            assertEquals("KEY_NOT_FOUND", r.code());
            stack.clock.advance(Duration.ofSeconds(301));
            assertEquals(200, stack.send("list-agents", theirs.text("key"), Map.of("team", "other-revoke-team"), null,
                    null).status());
        }
    }

    /** Admin only. */
    @Nested
    class AdminOnly {
        @ParameterizedTest
        @ValueSource(strings = {"read", "agent"})
        void keyRoutes_withKeyBelowAdmin_answer403InsufficientScopeAndWriteNothing(String scope) {
            String key = stack.key(TestStack.TEAM, Scope.fromWire(scope).orElseThrow());
            secrets.add(key);
            TestStack.Reply victim = create("{\"scope\":\"read\"}");
            TestStack.Reply c = stack.writesNothing(() -> stack.send("create-key", key, TEAM, null,
                    "{\"scope\":\"admin\"}"));
            assertEquals(403, c.status());
            assertEquals("INSUFFICIENT_SCOPE", c.code());
            assertNull(c.body().get("key"));
            TestStack.Reply l = stack.send("list-keys", key, TEAM, null, null);
            assertEquals(403, l.status());
            assertEquals("INSUFFICIENT_SCOPE", l.code());
            assertNull(l.body().get("keys"));
            TestStack.Reply d = stack.writesNothing(() -> stack.send("revoke-key", key,
                    Map.of("team", TestStack.TEAM, "keyId", victim.text("keyId")), null, null));
            assertEquals(403, d.status());
            assertEquals("INSUFFICIENT_SCOPE", d.code());
            assertEquals(200, stack.send("list-agents", victim.text("key"), TEAM, null, null).status());
        }
    }

    /** Storage. */
    @Nested
    class Storage {
        @Test
        void table_afterKeysWereMadeAndUsed_holdsNoKeyInPlainText() {
            for (String scope : List.of("read", "agent", "admin")) {
                String key = create("{\"scope\":\"" + scope + "\",\"label\":\"storage\"}").text("key");
                assertEquals(200, stack.send("list-agents", key, TEAM, null, null).status());
            }
            secrets.add(stack.key(TestStack.TEAM, Scope.AGENT));
            List<Map<String, AttributeValue>> items = stack.allItems();
            assertTrue(secrets.size() >= 4, "the check looks for real secrets");
            for (Map<String, AttributeValue> item : items) {
                List<String> texts = new ArrayList<>();
                item.forEach((name, value) -> collect(name, value, texts));
                for (String secret : secrets) {
                    String body = secret.substring(ApiKeys.PREFIX.length());
                    for (String text : texts) {
                        assertFalse(text.contains(body), "an item holds a key in plain text: " + item.get("pk"));
                    }
                }
            }
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static TestStack.Reply create(String body) {
        TestStack.Reply r = stack.team("create-key", body);
        if (r.text("key") != null) {
            secrets.add(r.text("key"));
        }
        return r;
    }

    private static JsonNode find(JsonNode keys, String keyId) {
        for (JsonNode k : keys) {
            if (k.get("keyId").asText().equals(keyId)) {
                return k;
            }
        }
        return null;
    }

    /** Every string in an attribute value (names included), through lists, maps and sets. */
    private static void collect(String name, AttributeValue v, List<String> out) {
        out.add(name);
        if (v.s() != null) {
            out.add(v.s());
        }
        if (v.n() != null) {
            out.add(v.n());
        }
        if (v.b() != null) {
            // Byte for byte: a binary attribute need not be UTF-8 (an agent's source address is 4 or 16 raw bytes),
            // and a key's ASCII body would still show in it.
            out.add(new String(v.b().asByteArray(), StandardCharsets.ISO_8859_1));
        }
        if (v.hasSs()) {
            out.addAll(v.ss());
        }
        if (v.hasL()) {
            v.l().forEach(e -> collect("", e, out));
        }
        if (v.hasM()) {
            v.m().forEach((k, e) -> collect(k, e, out));
        }
    }
}
