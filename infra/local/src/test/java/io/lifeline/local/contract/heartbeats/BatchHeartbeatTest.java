package io.lifeline.local.contract.heartbeats;

import static io.lifeline.local.stack.TestStack.agentPartition;
import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.contract.heartbeats.HeartbeatContractTest.assertError;
import static io.lifeline.local.contract.heartbeats.HeartbeatContractTest.iterable;
import static io.lifeline.local.contract.heartbeats.HeartbeatContractTest.json;
import static io.lifeline.local.contract.heartbeats.HeartbeatContractTest.objectOfBytes;
import static io.lifeline.local.contract.heartbeats.HeartbeatContractTest.padded;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.StoreSnapshot;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * POST /v1/teams/{team}/heartbeats, a daemon's batch: one result per entry, in order, each with its agentId;
 * per-agent refusals are per-entry results, while a malformed batch is refused whole and writes nothing.
 */
@Tag("contract")
class BatchHeartbeatTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void batch_mixingOkUnknownAndNotAliveAgents_answersOnePerEntryInOrder() {
        String ok = newId("ok");
        String working = newId("work");
        String unknown = newId("nobody");
        String dead = newId("dead");
        String offline = newId("off");
        stack.ready(ok);
        stack.ready(working);
        stack.ready(dead);
        stack.forceStatus(dead, "dead");
        stack.register(offline);
        Map<String, AttributeValue> deadBefore = stack.agentItem(dead);
        Map<String, AttributeValue> offlineBefore = stack.agentItem(offline);
        stack.clock.advance(Duration.ofSeconds(9));
        Instant now = stack.clock.instant();

        TestStack.Reply r = batch("{\"heartbeats\":["
                + "{\"agentId\":\"" + ok + "\"},"
                + "{\"agentId\":\"" + unknown + "\",\"status\":\"working\"},"
                + "{\"agentId\":\"" + dead + "\",\"metadata\":{\"a\":1}},"
                + "{\"agentId\":\"" + working + "\",\"status\":\"active\",\"nextHeartbeatWithinSeconds\":120},"
                + "{\"agentId\":\"" + offline + "\"}]}");

        assertEquals(200, r.status(), r.body()::toString);
        assertEquals(List.of("results"), iterable(r.body().fieldNames()));
        List<JsonNode> results = results(r);
        assertEquals(5, results.size());

        JsonNode first = results.get(0);
        assertEquals(List.of("agentId", "success", "heartbeatTs", "nextDeadline", "agentStatus",
                "heartbeatIntervalSeconds"), iterable(first.fieldNames()));
        assertEquals(ok, first.get("agentId").asText());
        assertTrue(first.get("success").asBoolean());
        assertEquals(now.toString(), first.get("heartbeatTs").asText());
        assertEquals(now.plusSeconds(60).toString(), first.get("nextDeadline").asText());
        assertEquals("ready", first.get("agentStatus").asText());
        assertEquals(30, first.get("heartbeatIntervalSeconds").asInt(), "half of 60 s, the deployment's 30 s");

        JsonNode second = results.get(1);
        assertEquals(List.of("agentId", "success", "error", "code"), iterable(second.fieldNames()));
        assertEquals(unknown, second.get("agentId").asText());
        assertFalse(second.get("success").asBoolean());
        assertEquals("AGENT_NOT_FOUND", second.get("code").asText());
        assertEquals("Agent '" + unknown + "' not found", second.get("error").asText());

        JsonNode third = results.get(2);
        assertEquals(dead, third.get("agentId").asText());
        assertFalse(third.get("success").asBoolean());
        assertEquals("REJOIN_REQUIRED", third.get("code").asText());
        assertTrue(third.get("rejoinRequired").asBoolean());
        assertEquals("dead", third.get("agentStatus").asText());
        assertEquals("The agent is dead (its beats stopped and it was marked dead), so its beats are refused: it "
                + "must join again before it beats", third.get("error").asText());

        JsonNode fourth = results.get(3);
        assertEquals(working, fourth.get("agentId").asText());
        assertTrue(fourth.get("success").asBoolean());
        assertEquals("working", fourth.get("agentStatus").asText());
        assertEquals(now.plusSeconds(120).toString(), fourth.get("nextDeadline").asText());
        assertEquals(30, fourth.get("heartbeatIntervalSeconds").asInt());

        JsonNode fifth = results.get(4);
        assertEquals(offline, fifth.get("agentId").asText());
        assertEquals("REJOIN_REQUIRED", fifth.get("code").asText());
        assertEquals("offline", fifth.get("agentStatus").asText());
        assertEquals("The agent is offline (it left or has not joined), so its beats are refused: it must join "
                + "again before it beats", fifth.get("error").asText());

        // The accepted entries were written; the refused ones were not.
        assertEquals(now.toString(), get(ok).text("heartbeatTs"));
        assertEquals("working", get(working).text("status"));
        assertEquals(now.toString(), get(working).text("heartbeatTs"));
        assertTrue(stack.agentItem(unknown).isEmpty());
        assertEquals(deadBefore, stack.agentItem(dead));
        assertTrue(stack.item(agentPartition(dead), "DATA").isEmpty());
        assertEquals(offlineBefore, stack.agentItem(offline));
    }

    @Test
    void batch_withMaxEntries_acceptsAllInOrder() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < Limits.MAX_BATCH_HEARTBEATS; i++) {
            String id = newId("max");
            stack.ready(id);
            ids.add(id);
        }
        stack.clock.advance(Duration.ofSeconds(11));
        Instant now = stack.clock.instant();

        TestStack.Reply r = batch(batchOf(ids, "\"stats\":{\"messagesProcessed\":3}"));

        assertEquals(200, r.status(), r.body()::toString);
        List<JsonNode> results = results(r);
        assertEquals(ids.size(), results.size());
        for (int i = 0; i < ids.size(); i++) {
            assertEquals(ids.get(i), results.get(i).get("agentId").asText());
            assertTrue(results.get(i).get("success").asBoolean(), results.get(i)::toString);
            assertEquals(now.toString(), results.get(i).get("heartbeatTs").asText());
            assertEquals(now.toString(), get(ids.get(i)).text("heartbeatTs"));
            assertEquals(3, get(ids.get(i)).body().get("stats").get("messagesProcessed").asLong());
        }
    }

    @Test
    void batch_withOneMoreThanMaxEntries_answers400TooManyHeartbeats() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < Limits.MAX_BATCH_HEARTBEATS + 1; i++) {
            String id = newId("over");
            stack.ready(id);
            ids.add(id);
        }
        TestStack.Reply r = refused(400, "TOO_MANY_HEARTBEATS", batchOf(ids, null));
        assertTrue(r.text("error").contains(Integer.toString(Limits.MAX_BATCH_HEARTBEATS + 1)), r.text("error"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"heartbeats\":[]}|INVALID_FIELD",
            "{}|INVALID_FIELD",
            "{\"heartbeats\":null}|INVALID_FIELD",
            "{\"heartbeats\":{}}|INVALID_FIELD",
            "{\"heartbeats\":\"hb-1\"}|INVALID_FIELD",
            "{\"heartbeats\":[\"hb-1\"]}|INVALID_BODY",
            "{\"heartbeats\":[{}]}|MISSING_FIELD",
            "{\"heartbeats\":[{\"agentId\":\"bad id\"}]}|INVALID_ID",
            "{\"heartbeats\":[{\"agentId\":7}]}|INVALID_FIELD",
            "{\"heartbeats\":[{\"agentId\":\"a\"}],\"team\":\"acme\"}|UNKNOWN_FIELD",
            "[{\"agentId\":\"a\"}]|INVALID_BODY",
            "{\"heartbeats\":[|INVALID_JSON",
    })
    void batch_withMissingOrMalformedArray_answers400(String body, String code) {
        refused(400, code, body);
    }

    @Test
    void batch_withoutBody_answers400InvalidJson() {
        refused(400, "INVALID_JSON", null);
    }

    @Test
    void batch_withDuplicateAgentId_answers400DuplicateAgentAndWritesNothing() {
        String a = newId("dup");
        String b = newId("dup");
        stack.ready(a);
        stack.ready(b);
        TestStack.Reply r = refused(400, "DUPLICATE_AGENT", "{\"heartbeats\":[{\"agentId\":\"" + a + "\"},"
                + "{\"agentId\":\"" + b + "\"},{\"agentId\":\"" + a + "\",\"status\":\"working\"}]}");
        assertTrue(r.text("error").contains(a), r.text("error"));
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "\"status\":\"busy\"|INVALID_STATUS",
            "\"status\":\"working\",\"source\":\"sdk_session_idle\"|CONFLICTING_STATUS",
            "\"heartbeatTs\":\"2026-01-01T00:00:00Z\"|UNKNOWN_FIELD",
            "\"nextHeartbeatWithinSeconds\":0|INVALID_FIELD",
            "\"stats\":{\"messagesProcessed\":-4}|INVALID_FIELD",
            "\"metadata\":\"text\"|INVALID_FIELD",
    })
    void batch_withOneInvalidEntry_answers400AndWritesNothingForValidEntries(String badFields, String code) {
        String a = newId("valid");
        String b = newId("invalid");
        String c = newId("valid");
        stack.ready(a);
        stack.ready(b);
        stack.ready(c);
        stack.clock.advance(Duration.ofSeconds(5));
        TestStack.Reply r = refused(400, code, "{\"heartbeats\":["
                + "{\"agentId\":\"" + a + "\",\"status\":\"working\",\"metadata\":{\"m\":1}},"
                + "{\"agentId\":\"" + b + "\"," + badFields + "},"
                + "{\"agentId\":\"" + c + "\",\"checkpoint\":{\"c\":1}}]}");
        assertTrue(r.text("error").contains("heartbeats[1]") || !code.equals("UNKNOWN_FIELD"), r.text("error"));
        assertTrue(stack.item(agentPartition(a), "DATA").isEmpty());
        assertTrue(stack.item(agentPartition(c), "DATA").isEmpty());
        assertEquals("ready", get(a).text("status"));
    }

    @Test
    void batch_withOneEntryMetadataOverMax_answers413AndWritesNothing() {
        String a = newId("big");
        String b = newId("big");
        stack.ready(a);
        stack.ready(b);
        refused(413, "METADATA_TOO_LARGE", "{\"heartbeats\":[{\"agentId\":\"" + a + "\"},{\"agentId\":\"" + b
                + "\",\"metadata\":" + objectOfBytes(Limits.MAX_METADATA_BYTES + 1, "x") + "}]}");
    }

    @Test
    void batch_withBodyOverMaxBytes_answers413PayloadTooLarge() {
        String a = newId("bigbody");
        stack.ready(a);
        String body = padded("{\"heartbeats\":[{\"agentId\":\"" + a + "\"}]}", Limits.MAX_BODY_BYTES + 1);
        refused(413, "PAYLOAD_TOO_LARGE", body);
        TestStack.Reply r = batch(padded("{\"heartbeats\":[{\"agentId\":\"" + a + "\"}]}", Limits.MAX_BODY_BYTES));
        assertEquals(200, r.status(), r.body()::toString);
        assertTrue(results(r).get(0).get("success").asBoolean());
    }

    @Test
    void batch_withStatusSourceAndMetadata_movesAgentsAndStoresData() {
        String toWork = newId("towork");
        String toReady = newId("toready");
        stack.ready(toWork);
        stack.ready(toReady);
        assertEquals(200, stack.heartbeat(toReady, "{\"status\":\"working\"}").status());

        TestStack.Reply r = batch("{\"heartbeats\":["
                + "{\"agentId\":\"" + toWork + "\",\"source\":\"sdk_tool_execute\",\"metadata\":{\"tool\":\"grep\"}},"
                + "{\"agentId\":\"" + toReady + "\",\"status\":\"idle\",\"checkpoint\":{\"step\":2}}]}");

        assertEquals(200, r.status(), r.body()::toString);
        assertEquals("working", results(r).get(0).get("agentStatus").asText());
        assertEquals("ready", results(r).get(1).get("agentStatus").asText());
        assertEquals("working", get(toWork).text("status"));
        assertEquals(json("{\"tool\":\"grep\"}"), get(toWork).body().get("metadata"));
        assertEquals("ready", get(toReady).text("status"));
        assertEquals("{\"step\":2}", stack.item(agentPartition(toReady), "DATA").get("checkpoint").s());
        stack.pump.drain();
        JsonNode newest = stack.agent("transitions", toWork, null).body().get("transitions").get(0);
        assertEquals("report_working", newest.get("trigger").asText());
        assertEquals("reported by heartbeat (sdk_tool_execute)", newest.get("reason").asText());
    }

    @Test
    void batch_withOtherTeamsKey_answers403AndWritesNothing() {
        String a = newId("team");
        stack.ready(a);
        String otherKey = stack.key("other-team", Scope.ADMIN);
        StoreSnapshot before = StoreSnapshot.of(stack);
        TestStack.Reply r = stack.send("batch-heartbeats", otherKey, Map.of("team", TestStack.TEAM), null,
                "{\"heartbeats\":[{\"agentId\":\"" + a + "\"}]}");
        assertError(r, 403, "FORBIDDEN");
        before.assertUnchanged("the refused request");
    }

    @Test
    void batch_withReadScopedKey_answers403InsufficientScope() {
        String a = newId("read");
        stack.ready(a);
        String readKey = stack.key(TestStack.TEAM, Scope.READ);
        StoreSnapshot before = StoreSnapshot.of(stack);
        TestStack.Reply r = stack.send("batch-heartbeats", readKey, Map.of("team", TestStack.TEAM), null,
                "{\"heartbeats\":[{\"agentId\":\"" + a + "\"}]}");
        assertError(r, 403, "INSUFFICIENT_SCOPE");
        before.assertUnchanged("the refused request");
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static TestStack.Reply batch(String body) {
        return stack.team("batch-heartbeats", body);
    }

    private static TestStack.Reply refused(int status, String code, String body) {
        StoreSnapshot before = StoreSnapshot.of(stack);
        TestStack.Reply r = batch(body);
        assertError(r, status, code);
        before.assertUnchanged("a refused batch");
        return r;
    }

    private static String batchOf(List<String> ids, String extraFields) {
        StringBuilder sb = new StringBuilder("{\"heartbeats\":[");
        for (int i = 0; i < ids.size(); i++) {
            sb.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(ids.get(i)).append('"');
            if (extraFields != null) {
                sb.append(',').append(extraFields);
            }
            sb.append('}');
        }
        return sb.append("]}").toString();
    }

    private static List<JsonNode> results(TestStack.Reply r) {
        List<JsonNode> out = new ArrayList<>();
        r.body().get("results").forEach(out::add);
        return out;
    }

    private static TestStack.Reply get(String id) {
        TestStack.Reply r = stack.agent("get-agent", id, null);
        assertEquals(200, r.status(), r.body()::toString);
        return r;
    }

}
