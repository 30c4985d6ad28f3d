package io.lifeline.local.contract.heartbeats;

import static io.lifeline.local.stack.TestStack.agentPartition;
import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.StoreSnapshot;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * POST /v1/teams/{team}/agents/{agentId}/heartbeat through the gateway (authorizer included) against DynamoDB
 * Local: the heartbeat protocol's answer and error table, status reports and SDK sources moving the agent between ready
 * and working, input validation and limits at their edges. Every refused request is checked to write nothing.
 */
@Tag("contract")
class HeartbeatContractTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** The heartbeat protocol's answer. */
    @Nested
    class Answer {
        @Test
        void heartbeat_whenReady_answersSeedContractExactly() {
            stack.ready("hb-1");
            stack.clock.advance(Duration.ofSeconds(5));
            TestStack.Reply r = stack.heartbeat("hb-1", "{}");
            assertEquals(200, r.status());
            // The heartbeat protocol's four fields, then the interval to beat at (which the SDK follows).
            assertEquals(List.of("success", "heartbeatTs", "nextDeadline", "agentStatus", "heartbeatIntervalSeconds"),
                    iterable(r.body().fieldNames()));
            assertTrue(r.body().get("success").asBoolean());
            assertEquals(stack.clock.instant().toString(), r.text("heartbeatTs"));
            assertEquals(stack.clock.instant().plusSeconds(60).toString(), r.text("nextDeadline"));
            assertEquals("ready", r.text("agentStatus"));
            assertEquals(30, r.body().get("heartbeatIntervalSeconds").asInt());
            assertEquals("application/json", r.headers().get("content-type"));
        }

        @Test
        void heartbeat_whenAccepted_storesTimeDeadlineResetsMissesAndCountsBeat() {
            String id = newId("live");
            stack.ready(id);
            // As if a sweep had counted two misses already.
            stack.dynamo.updateItem(u -> u.tableName(stack.tables.live()).key(agentKey(id))
                    .updateExpression("SET misses = :m").expressionAttributeValues(Map.of(":m", AttributeValue.fromN("2"))));
            long beatsBefore = Long.parseLong(stack.agentItem(id).get("beats").n());
            stack.clock.advance(Duration.ofSeconds(17));
            Instant now = stack.clock.instant();

            TestStack.Reply r = stack.heartbeat(id, "{}");

            assertEquals(200, r.status());
            TestStack.Reply agent = get(id);
            assertEquals(now.toString(), agent.text("heartbeatTs"));
            assertEquals(now.plusSeconds(60).toString(), agent.text("deadline"));
            assertEquals(0, agent.body().get("consecutiveMisses").asInt());
            assertEquals("ready", agent.text("status"));
            assertEquals(beatsBefore + 1, Long.parseLong(stack.agentItem(id).get("beats").n()));
        }

        @Test
        void heartbeat_withoutBody_isAcceptedLikeAnEmptyObject() {
            String id = newId("nobody");
            stack.ready(id);
            stack.clock.advance(Duration.ofSeconds(3));
            TestStack.Reply r = stack.heartbeat(id, null);
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(stack.clock.instant().toString(), r.text("heartbeatTs"));
            assertEquals("ready", r.text("agentStatus"));
        }

        @Test
        void heartbeat_withAgentScopedKey_isAccepted() {
            String id = newId("agentkey");
            stack.ready(id);
            String agentKey = stack.key(TestStack.TEAM, Scope.AGENT);
            TestStack.Reply r = stack.send("heartbeat", agentKey, Map.of("team", TestStack.TEAM, "agentId", id), null,
                    "{}");
            assertEquals(200, r.status(), r.body()::toString);
        }
    }

    /** Status reports and SDK sources. */
    @Nested
    class StatusReportsAndSources {
        @ParameterizedTest(name = "{0} + status {1} -> {2}")
        @CsvSource({
                "ready,   working, working, report_working",
                "ready,   active,  working, report_working",
                "working, ready,   ready,   report_ready",
                "working, idle,    ready,   report_ready",
                "ready,   ready,   ready,   ''",
                "ready,   idle,    ready,   ''",
                "working, working, working, ''",
                "working, active,  working, ''",
        })
        void heartbeat_withStatus_movesAgentAndRecordsTransition(String from, String reported, String to,
                                                                 String trigger) {
            String id = newId("st");
            agentIn(id, from);
            int transitionsBefore = recordedTransitions(id).size();
            stack.clock.advance(Duration.ofSeconds(10));

            TestStack.Reply r = stack.heartbeat(id, "{\"status\":\"" + reported + "\"}");

            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(to, r.text("agentStatus"));
            assertEquals(to, get(id).text("status"));
            assertEquals(to, stack.agentItem(id).get("status").s());
            assertTransition(id, transitionsBefore, from, to, trigger, "reported by heartbeat (status " + reported + ")");
        }

        @ParameterizedTest(name = "{0} + source {1} -> {2}")
        @CsvSource({
                "ready,   sdk_session_updated, working, report_working",
                "ready,   sdk_tool_execute,    working, report_working",
                "working, sdk_session_idle,    ready,   report_ready",
                "ready,   sdk_session_idle,    ready,   ''",
                "working, sdk_session_updated, working, ''",
                "working, sdk_tool_execute,    working, ''",
                "ready,   tool,                ready,   ''",
                "working, tool,                working, ''",
        })
        void heartbeat_withSource_movesAgentAsTheSourceImplies(String from, String source, String to, String trigger) {
            String id = newId("src");
            agentIn(id, from);
            int transitionsBefore = recordedTransitions(id).size();
            stack.clock.advance(Duration.ofSeconds(10));

            TestStack.Reply r = stack.heartbeat(id, "{\"source\":\"" + source + "\"}");

            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(to, r.text("agentStatus"));
            assertEquals(to, get(id).text("status"));
            assertEquals(stack.clock.instant().toString(), get(id).text("heartbeatTs"));
            assertTransition(id, transitionsBefore, from, to, trigger, "reported by heartbeat (" + source + ")");
        }

        @ParameterizedTest(name = "status {0} with source {1} -> {2}")
        @CsvSource({
                "ready,   sdk_session_idle, ready",
                "idle,    sdk_session_idle, ready",
                "working, sdk_tool_execute, working",
                "active,  sdk_session_updated, working",
                "working, tool,             working",
                "idle,    tool,             ready",
        })
        void heartbeat_withStatusAgreeingWithSource_isAccepted(String status, String source, String to) {
            String id = newId("agree");
            agentIn(id, "ready");
            TestStack.Reply r = stack.heartbeat(id, "{\"status\":\"" + status + "\",\"source\":\"" + source + "\"}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(to, r.text("agentStatus"));
            assertEquals(to, get(id).text("status"));
        }

        @ParameterizedTest(name = "status {0} with source {1}")
        @CsvSource({
                "working, sdk_session_idle",
                "active,  sdk_session_idle",
                "ready,   sdk_tool_execute",
                "idle,    sdk_session_updated",
                "ready,   sdk_session_updated",
                "idle,    sdk_tool_execute",
        })
        void heartbeat_withStatusContradictingSource_answers400ConflictingStatus(String status, String source) {
            String id = newId("conflict");
            agentIn(id, "working");
            TestStack.Reply r = refused(400, "CONFLICTING_STATUS", id,
                    "{\"status\":\"" + status + "\",\"source\":\"" + source + "\"}");
            assertTrue(r.text("error").contains(source), r.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"busy", "dead", "offline", "restarting", "READY", "Working", "inactive", "terminated"})
        void heartbeat_withUnknownStatus_answers400InvalidStatus(String status) {
            String id = newId("badstatus");
            agentIn(id, "ready");
            TestStack.Reply r = refused(400, "INVALID_STATUS", id, "{\"status\":\"" + status + "\"}");
            assertTrue(r.text("error").contains(status), r.text("error"));
        }

        @Test
        void heartbeat_withUnknownSource_answers400InvalidField() {
            String id = newId("badsource");
            agentIn(id, "ready");
            refused(400, "INVALID_FIELD", id, "{\"source\":\"session.idle\"}");
        }
    }

    /** Shape of the body. */
    @Nested
    class BodyShape {
        @ParameterizedTest
        @ValueSource(strings = {
                "{\"heartbeatTs\":\"2026-03-01T12:00:00Z\"}",
                "{\"agentId\":\"someone-else\"}",
                "{\"teamName\":\"acme\"}",
                "{\"status\":\"ready\",\"extra\":1}",
                "{\"stats\":{\"messagesProcessed\":1,\"tokens\":5}}",
        })
        void heartbeat_withUnknownField_answers400UnknownField(String body) {
            String id = newId("unknown");
            agentIn(id, "ready");
            refused(400, "UNKNOWN_FIELD", id, body);
        }

        @ParameterizedTest
        @CsvSource(delimiter = '|', value = {
                "{\"status\":5}|INVALID_FIELD",
                "{\"status\":true}|INVALID_FIELD",
                "{\"status\":[\"ready\"]}|INVALID_FIELD",
                "{\"status\":\"\"}|INVALID_FIELD",
                "{\"status\":\"   \"}|INVALID_FIELD",
                "{\"source\":1}|INVALID_FIELD",
                "{\"metadata\":\"x\"}|INVALID_FIELD",
                "{\"metadata\":[1,2]}|INVALID_FIELD",
                "{\"metadata\":42}|INVALID_FIELD",
                "{\"checkpoint\":\"x\"}|INVALID_FIELD",
                "{\"checkpoint\":[]}|INVALID_FIELD",
                "{\"stats\":\"x\"}|INVALID_BODY",
                "{\"stats\":[1]}|INVALID_BODY",
                "{\"stats\":{\"messagesProcessed\":\"3\"}}|INVALID_FIELD",
                "{\"stats\":{\"toolCallsExecuted\":1.5}}|INVALID_FIELD",
                "{\"stats\":{\"errorsEncountered\":-1}}|INVALID_FIELD",
                "{\"stats\":{\"uptime\":true}}|INVALID_FIELD",
                "{\"stats\":{\"restartsLastHour\":3601}}|INVALID_FIELD",
                "{\"stats\":{\"restartsLastHour\":-1}}|INVALID_FIELD",
                "{\"stats\":{\"messagesProcessed\":100000000000000000000000}}|INVALID_FIELD",
                "{\"nextHeartbeatWithinSeconds\":\"30\"}|INVALID_FIELD",
                "{\"nextHeartbeatWithinSeconds\":30.5}|INVALID_FIELD",
                "{\"nextHeartbeatWithinSeconds\":true}|INVALID_FIELD",
                "[]|INVALID_BODY",
                "[{\"status\":\"ready\"}]|INVALID_BODY",
                "\"ready\"|INVALID_BODY",
                "42|INVALID_BODY",
                "null|INVALID_BODY",
        })
        void heartbeat_withWrongType_answers400(String body, String code) {
            String id = newId("type");
            agentIn(id, "ready");
            refused(400, code, id, body);
        }

        @ParameterizedTest
        @ValueSource(strings = {
                "{",
                "{\"status\":}",
                "{\"status\":\"ready\"",
                "{'status':'ready'}",
                "{\"status\":\"ready\"} {}",
                "{\"status\":\"ready\",\"status\":\"working\"}",
                "not json",
        })
        void heartbeat_withMalformedJson_answers400InvalidJson(String body) {
            String id = newId("json");
            agentIn(id, "ready");
            refused(400, "INVALID_JSON", id, body);
        }
    }

    /** The interval to beat at, and nextDeadline after an at: slot. */
    @Nested
    class IntervalAndNextDeadline {
        @Test
        void heartbeat_ofAgentWithOwnStaleAfter10_answersInterval5() {
            String id = newId("int");
            ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"I\",\"role\":\"worker\","
                    + "\"staleAfterSeconds\":10}"));
            ok(stack.agent("join", id, null));
            assertEquals(5, ok(stack.heartbeat(id, "{}")).body().get("heartbeatIntervalSeconds").asInt());
        }

        @Test
        void heartbeat_withNextHeartbeatWithin6_answersInterval3_forThatDeadline() {
            String id = newId("int");
            agentIn(id, "ready");
            TestStack.Reply r = ok(stack.heartbeat(id, "{\"nextHeartbeatWithinSeconds\":6}"));
            assertEquals(3, r.body().get("heartbeatIntervalSeconds").asInt());
            assertEquals(30, ok(stack.heartbeat(id, "{}")).body().get("heartbeatIntervalSeconds").asInt());
        }

        /** A heartbeat at, after or well after the one slot of an at: schedule: no deadline is stored, "never" answered. */
        @ParameterizedTest(name = "{0} s after the slot")
        @ValueSource(ints = {0, 1, 59, 3600})
        void heartbeat_ofAtAgentAtOrAfterItsSlot_answersNeverAsNextDeadline_singleAndBatch(int afterSlot) {
            String id = newId("once");
            Instant slot = stack.clock.instant().plusSeconds(120);
            ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"Once\",\"role\":\"worker\","
                    + "\"schedule\":\"at:" + slot + "\"}"));
            assertEquals(slot.plusSeconds(60).toString(), ok(stack.agent("join", id, null)).text("deadline"));
            stack.clock.set(slot.plusSeconds(afterSlot));
            TestStack.Reply single = ok(stack.heartbeat(id, "{}"));
            assertEquals("9999-12-31T23:59:59Z", single.text("nextDeadline"), single.body()::toString);
            assertEquals(stack.clock.instant().toString(), single.text("heartbeatTs"));
            assertNull(stack.agentItem(id).get("deadline"), "the sweep applies no deadline");
            JsonNode entry = ok(stack.team("batch-heartbeats", "{\"heartbeats\":[{\"agentId\":\"" + id + "\"}]}"))
                    .body().get("results").get(0);
            assertTrue(entry.get("success").asBoolean(), entry::toString);
            assertEquals("9999-12-31T23:59:59Z", entry.get("nextDeadline").asText());
            assertEquals(30, entry.get("heartbeatIntervalSeconds").asInt());
        }

        @Test
        void heartbeat_withDuplicateKey_answers400InPlainWordsAndWritesNothing() {
            String id = newId("dup");
            agentIn(id, "ready");
            TestStack.Reply r = refused(400, "INVALID_JSON", id, "{\"status\":\"ready\",\"status\":\"working\"}");
            assertEquals("The body is not valid JSON: duplicate field \"status\" (each field may appear only once)",
                    r.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"{} {}", "{\"status\":", "{\"a\":NaN}", "{\"stats\":{\"uptime\":1e99999}}"})
        void heartbeat_withMalformedJson_namesNoParserSetting(String body) {
            String id = newId("jargon");
            agentIn(id, "ready");
            TestStack.Reply r = stack.heartbeat(id, body);
            assertEquals(400, r.status(), r.body()::toString);
            for (String jargon : List.of("`", "Feature", "Constraints", "Source", "JsonNode", "ObjectNode")) {
                assertFalse(r.text("error").contains(jargon), r.text("error"));
            }
        }
    }

    /** Agents that are not alive, and unknown agents. */
    @Nested
    class NotAliveOrUnknown {
        static Stream<Arguments> notAlive() {
            return Stream.of(
                    Arguments.of("offline", "The agent is offline (it left or has not joined), so its beats are "
                            + "refused: it must join again before it beats"),
                    Arguments.of("dead", "The agent is dead (its beats stopped and it was marked dead), so its beats "
                            + "are refused: it must join again before it beats"),
                    Arguments.of("restarting", "The agent is restarting (its host was asked to restart it), so its "
                            + "beats are refused: it must join again before it beats"),
                    Arguments.of("dead_failed_revive", "The agent is dead_failed_revive (it was not brought back and "
                            + "needs a person), so its beats are refused: it must join again before it beats"));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("notAlive")
        void heartbeat_whenAgentNotAlive_answers409RejoinRequired(String status, String message) {
            String id = newId("gone");
            stack.ready(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = refused(409, "REJOIN_REQUIRED", id, "{}");
            assertEquals(message, r.text("error"));
            assertTrue(r.body().get("rejoinRequired").asBoolean());
            assertEquals(status, r.text("agentStatus"));
            assertEquals(List.of("success", "error", "code", "agentStatus", "rejoinRequired"),
                    iterable(r.body().fieldNames()));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("notAlive")
        void heartbeat_whenAgentNotAliveAndReportingStatusWithData_writesNothing(String status, String message) {
            String id = newId("gonedata");
            stack.ready(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = refused(409, "REJOIN_REQUIRED", id, "{\"status\":\"active\",\"metadata\":{\"task\":\"t\"},"
                    + "\"checkpoint\":{\"step\":3},\"stats\":{\"messagesProcessed\":9},\"nextHeartbeatWithinSeconds\":30}");
            assertEquals(message, r.text("error"));
            assertEquals(status, r.text("agentStatus"));
            assertTrue(stack.item(agentPartition(id), "DATA").isEmpty(), "no side item for a refused heartbeat");
        }

        @Test
        void heartbeat_withRestartsLastHour_showsItOnTheAgent_untilTheHostReportsAnother() {
            String id = newId("restarts");
            stack.ready(id);
            assertEquals(200, stack.heartbeat(id, "{\"stats\":{\"restartsLastHour\":4}}").status());
            assertEquals(4, stack.agentView(id).get("stats").get("restartsLastHour").asInt());
            assertEquals(200, stack.heartbeat(id, "{}").status());
            assertEquals(4, stack.agentView(id).get("stats").get("restartsLastHour").asInt(), "a beat without it keeps it");
            assertEquals(200, stack.heartbeat(id, "{\"stats\":{\"restartsLastHour\":0}}").status());
            assertEquals(0, stack.agentView(id).get("stats").get("restartsLastHour").asInt());
        }

        @Test
        void heartbeat_whenRegisteredButNeverJoined_answersTerminatedRejoinRequired() {
            String id = newId("neverjoined");
            stack.register(id);
            TestStack.Reply r = refused(409, "REJOIN_REQUIRED", id, "{}");
            assertEquals("The agent is offline (it left or has not joined), so its beats are refused: it must join "
                    + "again before it beats", r.text("error"));
            assertEquals("offline", r.text("agentStatus"));
            assertTrue(r.body().get("rejoinRequired").asBoolean());
        }

        @Test
        void heartbeat_afterRejoinFromDead_isAcceptedAgain() {
            String id = newId("heal");
            stack.ready(id);
            stack.forceStatus(id, "dead");
            assertEquals(409, stack.heartbeat(id, "{}").status());
            assertEquals(200, stack.agent("join", id, null).status());
            stack.clock.advance(Duration.ofSeconds(1));
            TestStack.Reply r = stack.heartbeat(id, "{}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals("ready", r.text("agentStatus"));
            assertEquals(stack.clock.instant().toString(), r.text("heartbeatTs"));
        }

        @Test
        void heartbeat_whenAgentUnknown_answers404AgentNotFound() {
            TestStack.Reply r = refused(404, "AGENT_NOT_FOUND", "x", "{}");
            assertEquals("Agent 'x' not found", r.text("error"));
            assertEquals(List.of("success", "error", "code"), iterable(r.body().fieldNames()));
        }

        @Test
        void heartbeat_whenAgentUnknownWithStatusAndData_writesNothing() {
            String id = newId("ghost");
            TestStack.Reply r = refused(404, "AGENT_NOT_FOUND", id, "{\"status\":\"working\",\"metadata\":{\"a\":1},"
                    + "\"checkpoint\":{\"b\":2},\"stats\":{\"messagesProcessed\":1}}");
            assertEquals("Agent '" + id + "' not found", r.text("error"));
            assertTrue(stack.agentItem(id).isEmpty());
            assertTrue(stack.item(agentPartition(id), "DATA").isEmpty());
        }

        @Test
        void heartbeat_withInvalidAgentIdInPath_answers400InvalidId() {
            refused(400, "INVALID_ID", "a".repeat(65), "{}");
        }
    }

    /** Keys. */
    @Nested
    class Keys {
        @Test
        void heartbeat_withoutKey_isRefusedByGatewayAndWritesNothing() {
            String id = newId("nokey");
            agentIn(id, "ready");
            StoreSnapshot before = StoreSnapshot.of(stack);
            TestStack.Reply r = stack.send("heartbeat", null, Map.of("team", TestStack.TEAM, "agentId", id), null, "{}");
            assertEquals(401, r.status());
            before.assertUnchanged("the refused request");
        }

        @Test
        void heartbeat_withUnknownKey_answers401Unauthenticated() {
            String id = newId("badkey");
            agentIn(id, "ready");
            StoreSnapshot before = StoreSnapshot.of(stack);
            TestStack.Reply r = stack.send("heartbeat", "ll_not_a_key", Map.of("team", TestStack.TEAM, "agentId", id),
                    null, "{}");
            assertError(r, 401, "UNAUTHENTICATED");
            before.assertUnchanged("the refused request");
        }

        @Test
        void heartbeat_withOtherTeamsKey_answers403Forbidden() {
            String id = newId("otherteam");
            agentIn(id, "ready");
            String otherKey = stack.key("other-team", Scope.ADMIN);
            StoreSnapshot before = StoreSnapshot.of(stack);
            TestStack.Reply r = stack.send("heartbeat", otherKey, Map.of("team", TestStack.TEAM, "agentId", id), null,
                    "{\"status\":\"working\"}");
            assertError(r, 403, "FORBIDDEN");
            before.assertUnchanged("the refused request");
        }

        @Test
        void heartbeat_withReadScopedKey_answers403InsufficientScope() {
            String id = newId("readkey");
            agentIn(id, "ready");
            String readKey = stack.key(TestStack.TEAM, Scope.READ);
            StoreSnapshot before = StoreSnapshot.of(stack);
            TestStack.Reply r = stack.send("heartbeat", readKey, Map.of("team", TestStack.TEAM, "agentId", id), null,
                    "{}");
            assertError(r, 403, "INSUFFICIENT_SCOPE");
            before.assertUnchanged("the refused request");
        }
    }

    /** Deadline. */
    @Nested
    class Deadline {
        @ParameterizedTest
        @ValueSource(ints = {1, 300, Limits.MAX_STALE_AFTER_SECONDS})
        void heartbeat_withNextHeartbeatWithinSeconds_setsDeadlineNowPlusN(int seconds) {
            String id = newId("within");
            agentIn(id, "ready");
            stack.clock.advance(Duration.ofSeconds(7));
            Instant now = stack.clock.instant();

            TestStack.Reply r = stack.heartbeat(id, "{\"nextHeartbeatWithinSeconds\":" + seconds + "}");

            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(now.toString(), r.text("heartbeatTs"));
            assertEquals(now.plusSeconds(seconds).toString(), r.text("nextDeadline"));
            assertEquals(now.plusSeconds(seconds).toString(), get(id).text("deadline"));
        }

        @Test
        void heartbeat_afterOneWithNextHeartbeatWithin_returnsToStaleAfterDeadline() {
            String id = newId("within-back");
            agentIn(id, "ready");
            assertEquals(200, stack.heartbeat(id, "{\"nextHeartbeatWithinSeconds\":3600}").status());
            stack.clock.advance(Duration.ofSeconds(30));
            TestStack.Reply r = stack.heartbeat(id, "{}");
            assertEquals(stack.clock.instant().plusSeconds(60).toString(), r.text("nextDeadline"));
            assertEquals(stack.clock.instant().plusSeconds(60).toString(), get(id).text("deadline"));
        }

        @ParameterizedTest
        @ValueSource(longs = {0, -1, Limits.MAX_STALE_AFTER_SECONDS + 1L, Long.MAX_VALUE})
        void heartbeat_withNextHeartbeatWithinOutOfBounds_answers400(long seconds) {
            String id = newId("within-bad");
            agentIn(id, "ready");
            refused(400, "INVALID_FIELD", id, "{\"nextHeartbeatWithinSeconds\":" + seconds + "}");
        }
    }

    /** Stats, metadata, checkpoint. */
    @Nested
    class StatsMetadataCheckpoint {
        @Test
        void heartbeat_withStats_storesThemVisibleInGetAgent() {
            String id = newId("stats");
            agentIn(id, "ready");
            TestStack.Reply r = stack.heartbeat(id, "{\"stats\":{\"messagesProcessed\":12,\"toolCallsExecuted\":34,"
                    + "\"errorsEncountered\":5,\"uptime\":678}}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(json("{\"messagesProcessed\":12,\"toolCallsExecuted\":34,\"errorsEncountered\":5,"
                    + "\"uptime\":678}"), get(id).body().get("stats"));
        }

        @Test
        void heartbeat_withSomeStats_keepsTheOthers() {
            String id = newId("stats-part");
            agentIn(id, "ready");
            stack.heartbeat(id, "{\"stats\":{\"messagesProcessed\":1,\"toolCallsExecuted\":2,\"errorsEncountered\":3}}");
            TestStack.Reply r = stack.heartbeat(id, "{\"stats\":{\"messagesProcessed\":10}}");
            assertEquals(200, r.status());
            assertEquals(json("{\"messagesProcessed\":10,\"toolCallsExecuted\":2,\"errorsEncountered\":3}"),
                    get(id).body().get("stats"));
        }

        @Test
        void heartbeat_withLargestStats_storesThem() {
            String id = newId("stats-max");
            agentIn(id, "ready");
            long max = Long.MAX_VALUE / 2;
            TestStack.Reply r = stack.heartbeat(id, "{\"stats\":{\"messagesProcessed\":" + max + ",\"toolCallsExecuted\":0}}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(max, get(id).body().get("stats").get("messagesProcessed").asLong());
            assertEquals(0, get(id).body().get("stats").get("toolCallsExecuted").asLong());
            refused(400, "INVALID_FIELD", id, "{\"stats\":{\"messagesProcessed\":" + (max + 1) + "}}");
        }

        @Test
        void heartbeat_withMetadata_storesItVisibleInGetAgent() {
            String id = newId("meta");
            agentIn(id, "ready");
            stack.clock.advance(Duration.ofSeconds(4));
            Instant at = stack.clock.instant();
            String metadata = "{\"currentTask\":\"t-9\",\"progress\":0.5,\"nested\":{\"a\":[1,2,3]},\"ok\":true}";

            TestStack.Reply r = stack.heartbeat(id, "{\"metadata\":" + metadata + "}");

            assertEquals(200, r.status(), r.body()::toString);
            TestStack.Reply agent = get(id);
            assertEquals(json(metadata), agent.body().get("metadata"));
            assertEquals(at.toString(), agent.text("metadataAt"));
            // A later heartbeat without metadata leaves it as it was.
            stack.clock.advance(Duration.ofSeconds(4));
            stack.heartbeat(id, "{}");
            assertEquals(json(metadata), get(id).body().get("metadata"));
            assertEquals(at.toString(), get(id).text("metadataAt"));
        }

        @Test
        void heartbeat_withCheckpoint_storesIt() {
            String id = newId("ckpt");
            agentIn(id, "ready");
            stack.clock.advance(Duration.ofSeconds(2));
            TestStack.Reply r = stack.heartbeat(id, "{\"checkpoint\":{ \"step\" : 7, \"files\" : [\"a.txt\"] }}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(stack.clock.instant().toString(), get(id).text("checkpointAt"));
            assertEquals("{\"step\":7,\"files\":[\"a.txt\"]}",
                    stack.item(agentPartition(id), "DATA").get("checkpoint").s());
            assertNull(get(id).body().get("metadata"));
        }
    }

    /** Limits at their edges. */
    @Nested
    class AtTheLimits {
        @Test
        void heartbeat_withBodyOfExactlyMaxBytes_isAccepted() {
            String id = newId("body-max");
            agentIn(id, "ready");
            String body = padded("{\"status\":\"ready\"}", Limits.MAX_BODY_BYTES);
            assertEquals(Limits.MAX_BODY_BYTES, utf8(body));
            TestStack.Reply r = stack.heartbeat(id, body);
            assertEquals(200, r.status(), r.body()::toString);
        }

        @Test
        void heartbeat_withBodyOneByteOverMax_answers413PayloadTooLarge() {
            String id = newId("body-over");
            agentIn(id, "ready");
            String body = padded("{\"status\":\"ready\"}", Limits.MAX_BODY_BYTES + 1);
            assertEquals(Limits.MAX_BODY_BYTES + 1, utf8(body));
            refused(413, "PAYLOAD_TOO_LARGE", id, body);
        }

        @Test
        void heartbeat_withBodyUnderMaxCharsButOverMaxBytes_answers413PayloadTooLarge() {
            String id = newId("body-utf8");
            agentIn(id, "ready");
            // 'é' is two bytes in UTF-8: fewer characters than the limit, more bytes.
            String body = "{\"metadata\":{\"k\":\"" + "é".repeat(Limits.MAX_BODY_BYTES / 2) + "\"}}";
            assertTrue(body.length() < Limits.MAX_BODY_BYTES + 100 && utf8(body) > Limits.MAX_BODY_BYTES);
            refused(413, "PAYLOAD_TOO_LARGE", id, body);
        }

        @Test
        void heartbeat_withBase64BodyOfExactlyMaxDecodedBytes_isAccepted() {
            String id = newId("b64-max");
            agentIn(id, "ready");
            String body = padded("{\"status\":\"active\"}", Limits.MAX_BODY_BYTES);
            TestStack.Reply r = heartbeatBase64(id, Base64.getEncoder().encodeToString(body.getBytes(StandardCharsets.UTF_8)));
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals("working", r.text("agentStatus"));
        }

        @Test
        void heartbeat_withBase64BodyOneByteOverMaxDecoded_answers413PayloadTooLarge() {
            String id = newId("b64-over");
            agentIn(id, "ready");
            String body = padded("{\"status\":\"active\"}", Limits.MAX_BODY_BYTES + 1);
            StoreSnapshot before = StoreSnapshot.of(stack);
            TestStack.Reply r = heartbeatBase64(id, Base64.getEncoder().encodeToString(body.getBytes(StandardCharsets.UTF_8)));
            assertError(r, 413, "PAYLOAD_TOO_LARGE");
            before.assertUnchanged("a refused heartbeat");
        }

        @Test
        void heartbeat_withBodyMarkedBase64ButNotBase64_answers400InvalidBody() {
            String id = newId("b64-bad");
            agentIn(id, "ready");
            StoreSnapshot before = StoreSnapshot.of(stack);
            assertError(heartbeatBase64(id, "{\"status\":\"ready\"}"), 400, "INVALID_BODY");
            before.assertUnchanged("a refused heartbeat");
        }

        @Test
        void heartbeat_withMetadataOfExactlyMaxBytes_isAccepted() {
            String id = newId("meta-max");
            agentIn(id, "ready");
            String compact = objectOfBytes(Limits.MAX_METADATA_BYTES, "x");
            // Sent with spaces; the limit applies to the compact serialisation.
            TestStack.Reply r = stack.heartbeat(id, "{ \"metadata\" : " + compact.replace(":", " : ") + " }");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(compact, stack.item(agentPartition(id), "DATA").get("metadata").s());
            assertEquals(json(compact), get(id).body().get("metadata"));
        }

        @Test
        void heartbeat_withMetadataOneByteOverMax_answers413MetadataTooLarge() {
            String id = newId("meta-over");
            agentIn(id, "ready");
            refused(413, "METADATA_TOO_LARGE", id, "{\"metadata\":" + objectOfBytes(Limits.MAX_METADATA_BYTES + 1, "x") + "}");
        }

        @Test
        void heartbeat_withMultibyteMetadataAtAndOverMaxBytes_countsBytesNotChars() {
            String id = newId("meta-utf8");
            agentIn(id, "ready");
            String atLimit = objectOfBytes(Limits.MAX_METADATA_BYTES, "é");
            assertEquals(200, stack.heartbeat(id, "{\"metadata\":" + atLimit + "}").status());
            assertEquals(json(atLimit), get(id).body().get("metadata"));
            String over = objectOfBytes(Limits.MAX_METADATA_BYTES + 2, "é");
            assertTrue(over.length() < Limits.MAX_METADATA_BYTES);
            refused(413, "METADATA_TOO_LARGE", id, "{\"metadata\":" + over + "}");
        }

        @Test
        void heartbeat_withCheckpointOfExactlyMaxBytes_isAccepted() {
            String id = newId("ckpt-max");
            agentIn(id, "ready");
            String compact = objectOfBytes(Limits.MAX_CHECKPOINT_BYTES, "y");
            TestStack.Reply r = stack.heartbeat(id, "{\"checkpoint\":\n" + compact.replace(",", " ,") + "\n}");
            assertEquals(200, r.status(), r.body()::toString);
            assertEquals(compact, stack.item(agentPartition(id), "DATA").get("checkpoint").s());
        }

        @Test
        void heartbeat_withCheckpointOneByteOverMax_answers413CheckpointTooLarge() {
            String id = newId("ckpt-over");
            agentIn(id, "ready");
            refused(413, "CHECKPOINT_TOO_LARGE", id,
                    "{\"checkpoint\":" + objectOfBytes(Limits.MAX_CHECKPOINT_BYTES + 1, "y") + "}");
        }

        @Test
        void heartbeat_withMetadataAndCheckpointBothAtMax_isAccepted() {
            String id = newId("both-max");
            agentIn(id, "ready");
            String metadata = objectOfBytes(Limits.MAX_METADATA_BYTES, "m");
            String checkpoint = objectOfBytes(Limits.MAX_CHECKPOINT_BYTES, "c");
            TestStack.Reply r = stack.heartbeat(id, "{\"metadata\":" + metadata + ",\"checkpoint\":" + checkpoint + "}");
            assertEquals(200, r.status(), r.body()::toString);
            Map<String, AttributeValue> data = stack.item(agentPartition(id), "DATA");
            assertEquals(metadata, data.get("metadata").s());
            assertEquals(checkpoint, data.get("checkpoint").s());
        }

        @Test
        void heartbeat_withValidMetadataButCheckpointOverMax_writesNeitherAndNoLiveness() {
            String id = newId("half-over");
            agentIn(id, "ready");
            refused(413, "CHECKPOINT_TOO_LARGE", id, "{\"metadata\":{\"a\":1},\"checkpoint\":"
                    + objectOfBytes(Limits.MAX_CHECKPOINT_BYTES + 1, "c") + "}");
            assertTrue(stack.item(agentPartition(id), "DATA").isEmpty());
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /** The heartbeat fixture with a body API Gateway base64-encoded ({@code isBase64Encoded: true}). */
    private static TestStack.Reply heartbeatBase64(String agentId, String encodedBody) {
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent("apigw/heartbeat.json");
        String path = "/v1/teams/" + TestStack.TEAM + "/agents/" + agentId + "/heartbeat";
        event.setPathParameters(Map.of("team", TestStack.TEAM, "agentId", agentId));
        event.setRawPath(path);
        event.getRequestContext().getHttp().setPath(path);
        event.getRequestContext().setRequestId(UUID.randomUUID().toString());
        event.getRequestContext().setAuthorizer(null);
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        headers.put("authorization", "Bearer " + stack.adminKey);
        headers.put("content-type", "application/octet-stream");
        event.setHeaders(headers);
        event.setBody(encodedBody);
        event.setIsBase64Encoded(true);
        LocalGateway.Response r = stack.gateway.invoke(event);
        return new TestStack.Reply(r.status(), r.headers(), json(r.body()));
    }

    /** Sends a heartbeat expected to be refused and checks the error shape and that nothing was written. */
    private static TestStack.Reply refused(int status, String code, String agentId, String body) {
        StoreSnapshot before = StoreSnapshot.of(stack);
        TestStack.Reply r = stack.heartbeat(agentId, body);
        assertError(r, status, code);
        before.assertUnchanged("a refused heartbeat");
        return r;
    }

    static void assertError(TestStack.Reply r, int status, String code) {
        assertEquals(status, r.status(), r.body()::toString);
        assertEquals(code, r.code(), r.body()::toString);
        assertFalse(r.body().get("success").asBoolean());
        assertNotNull(r.text("error"));
        assertFalse(r.text("error").isBlank());
        assertFalse(r.body().toString().contains("Exception"), r.body()::toString);
    }

    /** An agent (registered, joined) in {@code status} ready or working, reached through real transitions. */
    private static void agentIn(String id, String status) {
        assertEquals(200, stack.ready(id).status());
        if (status.equals("working")) {
            TestStack.Reply r = stack.heartbeat(id, "{\"status\":\"working\"}");
            assertEquals("working", r.text("agentStatus"), r.body()::toString);
        }
    }

    /** Transitions as GET .../transitions answers them, after the outbox has caught up. */
    private static List<JsonNode> recordedTransitions(String id) {
        stack.pump.drain();
        TestStack.Reply r = stack.agent("transitions", id, null);
        assertEquals(200, r.status(), r.body()::toString);
        List<JsonNode> out = new ArrayList<>();
        r.body().get("transitions").forEach(out::add);
        return out;
    }

    private static void assertTransition(String id, int before, String from, String to, String trigger,
                                         String reason) {
        List<JsonNode> after = recordedTransitions(id);
        if (trigger.isEmpty()) {
            assertEquals(before, after.size(), "no transition expected: " + after);
            return;
        }
        assertEquals(before + 1, after.size(), after::toString);
        JsonNode newest = after.get(0);
        assertEquals(from, newest.get("from").asText());
        assertEquals(to, newest.get("to").asText());
        assertEquals(trigger, newest.get("trigger").asText());
        assertEquals(reason, newest.get("reason").asText());
        assertEquals(stack.clock.instant().toString(), newest.get("at").asText());
        // Recorded by the outbox as its own item, not only stamped on the agent.
        long seq = newest.get("seq").asLong();
        Map<String, AttributeValue> record = stack.item(agentPartition(id), String.format("T#%012d", seq));
        assertFalse(record.isEmpty(), "transition record " + seq + " missing");
        assertEquals(to, record.get("to").s());
        assertEquals(trigger, record.get("trigger").s());
    }

    private static TestStack.Reply get(String id) {
        TestStack.Reply r = stack.agent("get-agent", id, null);
        assertEquals(200, r.status(), r.body()::toString);
        return r;
    }

    private static Map<String, AttributeValue> agentKey(String id) {
        return Map.of("pk", AttributeValue.fromS(TestStack.agentPartition(id)), "sk", AttributeValue.fromS("AGENT"));
    }

    /**
     * {@code {"k":"<fill...>"}} whose compact JSON is exactly {@code bytes} UTF-8 bytes ({@code fill} 1 or 2 bytes).
     */
    static String objectOfBytes(int bytes, String fill) {
        int room = bytes - utf8("{\"k\":\"\"}");
        int each = utf8(fill);
        String s = fill.repeat(room / each) + "x".repeat(room % each);
        String json = "{\"k\":\"" + s + "\"}";
        assertEquals(bytes, utf8(json));
        return json;
    }

    /** {@code json} (an object) with spaces before its closing brace, to exactly {@code bytes} bytes. */
    static String padded(String json, int bytes) {
        return json.substring(0, json.length() - 1) + " ".repeat(bytes - utf8(json)) + "}";
    }

    static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    static JsonNode json(String text) {
        try {
            return Json.parse(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    static List<String> iterable(Iterator<String> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
