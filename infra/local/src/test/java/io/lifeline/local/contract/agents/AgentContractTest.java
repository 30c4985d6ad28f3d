package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
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

/**
 * The agent routes other than the heartbeat (register, read, list, join, leave, cleanup, transitions, errors,
 * recovery), through the gateway and the authorizer, against the engine. Each test uses its own agent
 * ids; the list tests use teams of their own so that they can expect exact answers.
 */
@Tag("contract")
public class AgentContractTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Register. */
    @Nested
    class Register {
        @Test
        void register_withFullBody_answers201WithTheAgent() {
            TestStack.Reply r = stack.team("register", """
                    {"agentId":"reg-1","name":"Planner One","role":"planner","hostId":"host-9",
                     "staleAfterSeconds":90,"graceMisses":3}""");
            assertEquals(201, r.status(), r.body().toString());
            assertEquals("reg-1", r.text("agentId"));
            assertEquals(TestStack.TEAM, r.text("teamName"));
            assertEquals("Planner One", r.text("name"));
            assertEquals("planner", r.text("role"));
            assertEquals("host-9", r.text("hostId"));
            assertEquals("offline", r.text("status"));
            assertFalse(r.body().get("alive").asBoolean());
            assertEquals(0, r.body().get("consecutiveMisses").asInt());
            assertEquals(90, r.body().get("staleAfterSeconds").asInt());
            assertEquals(3, r.body().get("graceMisses").asInt());
            assertEquals(stack.clock.instant().toString(), r.text("registeredAt"));
            assertNull(r.text("heartbeatTs"), "no heartbeat before the first join");
            assertNull(r.text("deadline"), "no deadline before the first join");
            assertEquals("offline", stack.agentItem("reg-1").get("status").s());
        }

        @Test
        void register_withScheduleAndNoTimeZone_answersUtc_andTheScheduleRunsInUtc() {
            TestStack.Reply r = ok(stack.team("register",
                    "{\"agentId\":\"reg-utc\",\"name\":\"U\",\"role\":\"worker\",\"schedule\":\"daily:13:00\"}"));
            assertEquals("UTC", r.text("timeZone"), "README: the default is UTC");
            assertEquals("UTC", stack.agentView("reg-utc").get("timeZone").asText());
            TestStack.Reply joined = ok(stack.agent("join", "reg-utc", null));
            Instant now = stack.clock.instant();
            Instant today13 = now.truncatedTo(ChronoUnit.DAYS).plusSeconds(13 * 3600);
            Instant slot = today13.isAfter(now.plusSeconds(60)) ? today13 : today13.plusSeconds(86_400);
            assertEquals(slot.plusSeconds(60).toString(), joined.text("deadline"));
        }

        @Test
        void register_withScheduleAndTimeZone_keepsTheZoneAsGiven() {
            TestStack.Reply r = ok(stack.team("register", "{\"agentId\":\"reg-berlin\",\"name\":\"B\",\"role\":\"worker\","
                    + "\"schedule\":\"hourly\",\"timeZone\":\"Europe/Berlin\"}"));
            assertEquals("Europe/Berlin", r.text("timeZone"));
        }

        @Test
        void register_withoutTiming_usesTheDefaults() {
            TestStack.Reply r = stack.team("register", """
                    {"agentId":"reg-defaults","name":"D","role":"worker"}""");
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(60, r.body().get("staleAfterSeconds").asInt());
            assertEquals(2, r.body().get("graceMisses").asInt());
            assertNull(r.text("hostId"));
        }

        @Test
        void register_whenAgentExists_answers409AgentExistsAndKeepsTheFirst() {
            assertEquals(201, stack.register("reg-dup").status());
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", """
                    {"agentId":"reg-dup","name":"Impostor","role":"other"}"""));
            assertEquals(409, r.status());
            assertEquals("AGENT_EXISTS", r.code());
            assertFalse(r.body().get("success").asBoolean());
            assertEquals("Agent reg-dup", stack.agentItem("reg-dup").get("name").s());
        }

        @ParameterizedTest
        @ValueSource(strings = {"agentId", "name", "role"})
        void register_withoutRequiredField_answers400MissingField(String field) {
            ObjectNode body = registration("reg-missing-" + field, "N", "r");
            body.remove(field);
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", Json.write(body)));
            assertEquals(400, r.status());
            assertEquals("MISSING_FIELD", r.code());
            assertTrue(r.text("error").contains(field), r.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {
                "a12345678901234567890123456789012345678901234567890123456789012345", // 65 characters
                "team/agent", "two words", "", " ", "agent#1", "agént"})
        void register_withIdOutsidePattern_answers400InvalidId(String agentId) {
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register",
                    Json.write(registration(agentId, "N", "r"))));
            assertEquals(400, r.status(), r.body().toString());
            assertEquals("INVALID_ID", r.code(), r.text("error"));
        }

        @Test
        void register_withIdOfSixtyFourAllowedCharacters_answers201() {
            String id = "A-z_0.9" + "x".repeat(57);
            assertEquals(64, id.length());
            TestStack.Reply r = stack.team("register", Json.write(registration(id, "N", "r")));
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(id, r.text("agentId"));
        }

        @Test
        void register_withNameOverLimit_answers400InvalidField() {
            String name = "n".repeat(Limits.MAX_NAME_BYTES + 1);
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register",
                    Json.write(registration("reg-long-name", name, "r"))));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
        }

        @Test
        void register_withNameAtLimit_answers201() {
            String name = "n".repeat(Limits.MAX_NAME_BYTES);
            TestStack.Reply r = stack.team("register", Json.write(registration("reg-limit-name", name, "r")));
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(name, r.text("name"));
        }

        @Test
        void register_withNameOverLimitInUtf8Bytes_answers400_atLimitAnswers201() {
            // The limit is in UTF-8 bytes: 21 three-byte characters fit in 64 bytes, 22 do not.
            String fits = "名".repeat(Limits.MAX_NAME_BYTES / 3);
            assertEquals(201, stack.team("register", Json.write(registration("reg-utf8-ok", fits, "r"))).status());
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register",
                    Json.write(registration("reg-utf8-long", fits + "名", "r"))));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
            assertTrue(r.text("error").contains("bytes"), r.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {
                "{\"agentId\":5,\"name\":\"N\",\"role\":\"r\"}",
                "{\"agentId\":\"reg-types\",\"name\":true,\"role\":\"r\"}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":[\"r\"]}",
                "{\"agentId\":\"reg-types\",\"name\":{\"first\":\"N\"},\"role\":\"r\"}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":\"r\",\"hostId\":7}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":\"r\",\"staleAfterSeconds\":\"60\"}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":\"r\",\"staleAfterSeconds\":1.5}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":\"r\",\"graceMisses\":\"2\"}",
                "{\"agentId\":\"reg-types\",\"name\":\"N\",\"role\":\"r\",\"graceMisses\":true}",
                "{\"agentId\":\"reg-types\",\"name\":\"   \",\"role\":\"r\"}"})
        void register_withWrongTypes_answers400InvalidField(String body) {
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", body));
            assertEquals(400, r.status(), r.body().toString());
            assertEquals("INVALID_FIELD", r.code(), r.text("error"));
        }

        @Test
        void register_withUnknownField_answers400UnknownField() {
            ObjectNode body = registration("reg-unknown", "N", "r").put("colour", "blue");
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", Json.write(body)));
            assertEquals(400, r.status());
            assertEquals("UNKNOWN_FIELD", r.code());
            assertTrue(r.text("error").contains("colour"), r.text("error"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "{", "[]", "\"agent\"", "{\"agentId\":\"a\"} trailing",
                "{\"agentId\":\"a\",\"agentId\":\"b\",\"name\":\"N\",\"role\":\"r\"}"})
        void register_withoutAJsonObject_answers400(String body) {
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", body.isEmpty() ? null : body));
            assertEquals(400, r.status(), r.body().toString());
            assertTrue(List.of("INVALID_JSON", "INVALID_BODY").contains(r.code()), r.code());
        }

        @ParameterizedTest
        @ValueSource(longs = {0, -1, Limits.MAX_STALE_AFTER_SECONDS + 1L})
        void register_withStaleAfterOutOfBounds_answers400InvalidField(long seconds) {
            ObjectNode body = registration("reg-stale-bad", "N", "r").put("staleAfterSeconds", seconds);
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", Json.write(body)));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
        }

        @ParameterizedTest
        @ValueSource(longs = {Limits.MIN_STALE_AFTER_SECONDS, Limits.MAX_STALE_AFTER_SECONDS})
        void register_withStaleAfterAtBounds_answers201(long seconds) {
            TestStack.Reply r = stack.team("register", Json.write(
                    registration("reg-stale-" + seconds, "N", "r").put("staleAfterSeconds", seconds)));
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(seconds, r.body().get("staleAfterSeconds").asLong());
        }

        @ParameterizedTest
        @ValueSource(longs = {0, -3, Limits.MAX_GRACE_MISSES + 1L})
        void register_withGraceMissesOutOfBounds_answers400InvalidField(long misses) {
            ObjectNode body = registration("reg-grace-bad", "N", "r").put("graceMisses", misses);
            TestStack.Reply r = stack.writesNothing(() -> stack.team("register", Json.write(body)));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
        }

        @ParameterizedTest
        @ValueSource(longs = {1, Limits.MAX_GRACE_MISSES})
        void register_withGraceMissesAtBounds_answers201(long misses) {
            TestStack.Reply r = stack.team("register", Json.write(
                    registration("reg-grace-" + misses, "N", "r").put("graceMisses", misses)));
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(misses, r.body().get("graceMisses").asLong());
        }

        @ParameterizedTest
        @ValueSource(strings = {"agent", "read"})
        void register_withKeyBelowAdmin_answers403InsufficientScope(String scope) {
            String key = stack.key(TestStack.TEAM, Scope.fromWire(scope).orElseThrow());
            TestStack.Reply r = stack.writesNothing(() -> stack.send("register", key, Map.of("team", TestStack.TEAM),
                    null, Json.write(registration("reg-by-" + scope, "N", "r"))));
            assertEquals(403, r.status());
            assertEquals("INSUFFICIENT_SCOPE", r.code());
        }
    }

    /** Get. */
    @Nested
    class Get {
        @Test
        void get_whenJoined_showsTheAgentFieldsOfTheDesign() {
            stack.ready("get-1");
            Instant joinedAt = stack.clock.instant();
            stack.clock.advance(Duration.ofSeconds(7));
            TestStack.Reply r = stack.agent("get-agent", "get-1", null);
            assertEquals(200, r.status());
            for (String field : List.of("agentId", "teamName", "name", "role", "hostId", "status", "heartbeatTs",
                    "deadline", "consecutiveMisses")) {
                assertTrue(r.body().hasNonNull(field), field + " missing from " + r.body());
            }
            assertEquals("get-1", r.text("agentId"));
            assertEquals(TestStack.TEAM, r.text("teamName"));
            assertEquals("Agent get-1", r.text("name"));
            assertEquals("worker", r.text("role"));
            assertEquals("host-1", r.text("hostId"));
            assertEquals("ready", r.text("status"));
            assertTrue(r.body().get("alive").asBoolean());
            assertEquals(joinedAt.toString(), r.text("heartbeatTs"));
            assertEquals(joinedAt.plusSeconds(60).toString(), r.text("deadline"));
            assertEquals(0, r.body().get("consecutiveMisses").asInt());
            assertEquals(0, r.body().get("errorsReported").asInt());
            assertEquals(0, r.body().get("sessionRotations").asInt());
            assertNull(r.body().get("lastError"));
        }

        @Test
        void get_withACheckpoint_summarisesIt_sizeKeysAndWhetherRecoveryWouldOfferIt() {
            stack.ready("get-cp");
            assertNull(stack.agent("get-agent", "get-cp", null).body().get("checkpointSummary"), "none saved yet");
            StringBuilder checkpoint = new StringBuilder("{\"step\":3,\"plan\":\"write the docs\"");
            for (int i = 0; i < 25; i++) {
                checkpoint.append(",\"k").append(i).append("\":").append(i);
            }
            checkpoint.append('}');
            Instant savedAt = stack.clock.instant();
            assertEquals(200, stack.heartbeat("get-cp", "{\"checkpoint\":" + checkpoint + "}").status());

            JsonNode summary = stack.agent("get-agent", "get-cp", null).body().get("checkpointSummary");
            assertEquals(savedAt.toString(), summary.get("savedAt").asText());
            assertEquals("object", summary.get("type").asText());
            assertEquals(27, summary.get("keyCount").asInt());
            assertEquals(20, summary.get("keys").size(), "only the first 20 keys are listed");
            assertEquals("step", summary.get("keys").get(0).asText());
            assertTrue(summary.get("sizeBytes").asInt() > 100, summary::toString);
            assertFalse(summary.get("offeredOnRecovery").asBoolean());
            assertEquals("Session still active", summary.get("reason").asText());
            assertFalse(summary.has("step"), "the contents are not shown");

            assertEquals(200, stack.agent("fail", "get-cp", "{\"reason\":\"crashed\"}").status());
            summary = stack.agent("get-agent", "get-cp", null).body().get("checkpointSummary");
            assertTrue(summary.get("offeredOnRecovery").asBoolean(), "a dead agent's fresh checkpoint is offered back");
            assertNull(summary.get("reason"));
        }

        @Test
        void get_whenUnknown_answers404AgentNotFound() {
            TestStack.Reply r = stack.agent("get-agent", "nobody-here", null);
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
            assertFalse(r.body().get("success").asBoolean());
            assertTrue(r.text("error").contains("nobody-here"));
        }

        @Test
        void get_withInvalidIdInPath_answers400InvalidId() {
            TestStack.Reply r = stack.agent("get-agent", "bad id!", null);
            assertEquals(400, r.status());
            assertEquals("INVALID_ID", r.code());
        }
    }

    /** List. */
    @Nested
    class Listing {
        @Test
        void list_withoutStatus_listsEveryAgentOfTheTeamOnly() {
            ListTeam t = new ListTeam("listers-all");
            TestStack.Reply r = t.list(null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals(3, r.body().get("count").asInt());
            assertEquals(List.of("l-a", "l-b", "l-c"), ids(r.body().get("agents")));
            assertEquals(List.of("offline", "ready", "working"), values(r.body().get("agents"), "status"));
            for (JsonNode a : r.body().get("agents")) {
                assertEquals("listers-all", a.get("teamName").asText());
                assertTrue(a.has("consecutiveMisses"));
            }
            assertFalse(ids(stack.team("list-agents", null).body().get("agents")).contains("l-a"),
                    "another team's list does not show these agents");
        }

        @Test
        void list_withStatus_listsOnlyAgentsInThatStatusAndAcceptsAliases() {
            ListTeam t = new ListTeam("listers-status");
            Map<String, List<String>> expected = Map.of(
                    "offline", List.of("l-a"), "ready", List.of("l-b"), "working", List.of("l-c"),
                    "idle", List.of("l-b"), "active", List.of("l-c"), "dead", List.of(),
                    "restarting", List.of(), "dead_failed_revive", List.of());
            expected.forEach((status, ids) -> {
                TestStack.Reply r = t.list(status);
                assertEquals(200, r.status(), status + ": " + r.body());
                assertEquals(ids, ids(r.body().get("agents")), status);
                assertEquals(ids.size(), r.body().get("count").asInt(), status);
            });
        }

        @ParameterizedTest
        @ValueSource(strings = {"sleeping", "READY", "", "inactive"})
        void list_withUnknownStatus_answers400InvalidStatus(String status) {
            TestStack.Reply r = stack.send("list-agents", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("status", status), null);
            assertEquals(400, r.status());
            assertEquals("INVALID_STATUS", r.code());
        }

        /** A team of three agents: l-a offline, l-b ready, l-c working. */
        private static final class ListTeam {
            final String team;
            final String key;

            ListTeam(String team) {
                this.team = team;
                this.key = stack.key(team, Scope.ADMIN);
                for (String id : List.of("l-c", "l-a", "l-b")) {
                    assertEquals(201, stack.send("register", key, Map.of("team", team), null,
                            Json.write(registration(id, "N", "r"))).status());
                }
                assertEquals(200, stack.send("join", key, Map.of("team", team, "agentId", "l-b"), null, null).status());
                assertEquals(200, stack.send("join", key, Map.of("team", team, "agentId", "l-c"), null, null).status());
                assertEquals("working", stack.send("heartbeat", key, Map.of("team", team, "agentId", "l-c"), null,
                        "{\"status\":\"working\"}").text("agentStatus"));
                stack.pump.drain(); // the outbox moves each roster entry to its status: how the list by status finds it
            }

            TestStack.Reply list(String status) {
                return stack.send("list-agents", key, Map.of("team", team), status == null ? null
                        : Map.of("status", status), null);
            }
        }
    }

    /** Join. */
    @Nested
    class Join {
        @Test
        void join_whenOffline_becomesReadyWithHeartbeatAndDeadline() {
            stack.register("join-1");
            stack.clock.advance(Duration.ofSeconds(3));
            Instant now = stack.clock.instant();
            TestStack.Reply r = stack.agent("join", "join-1", null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("ready", r.text("status"));
            assertEquals(now.toString(), r.text("heartbeatTs"));
            assertEquals(now.plusSeconds(60).toString(), r.text("deadline"));
            assertEquals(30, r.body().get("heartbeatIntervalSeconds").asInt());
            var item = stack.agentItem("join-1");
            assertEquals("ready", item.get("status").s());
            assertEquals(Long.toString(now.toEpochMilli()), item.get("hbAt").n());
            assertEquals(Long.toString(now.plusSeconds(60).toEpochMilli()), item.get("deadline").n());
        }

        @Test
        void join_withOwnStaleAfter_setsDeadlineFromIt() {
            stack.team("register", Json.write(registration("join-stale", "N", "r").put("staleAfterSeconds", 300)));
            TestStack.Reply r = stack.agent("join", "join-stale", null);
            assertEquals(stack.clock.instant().plusSeconds(300).toString(), r.text("deadline"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"dead", "restarting", "dead_failed_revive"})
        void join_whenNotAliveAfterFailure_becomesReady(String status) {
            String id = "join-from-" + status.replace('_', '-');
            stack.register(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = stack.agent("join", id, null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("ready", r.text("status"));
            assertEquals(status, r.body().get("lastTransition").get("from").asText());
            assertEquals("join", r.body().get("lastTransition").get("trigger").asText());
        }

        @ParameterizedTest
        @ValueSource(strings = {"ready", "working"})
        void join_whenAlive_answers409InvalidTransitionWithAgentStatus(String status) {
            String id = "join-twice-" + status;
            stack.ready(id);
            if (status.equals("working")) {
                assertEquals("working", stack.heartbeat(id, "{\"status\":\"working\"}").text("agentStatus"));
            }
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("join", id, null));
            assertEquals(409, r.status());
            assertEquals("INVALID_TRANSITION", r.code());
            assertEquals(status, r.text("agentStatus"));
            assertFalse(r.body().get("rejoinRequired").asBoolean());
        }

        @Test
        void join_withOwnStaleAfter10_recommendsAnIntervalOfAtMost5() {
            stack.team("register", Json.write(registration("join-stale-10", "N", "r").put("staleAfterSeconds", 10)));
            TestStack.Reply r = ok(stack.agent("join", "join-stale-10", null));
            assertEquals(5, r.body().get("heartbeatIntervalSeconds").asInt(), r.body().toString());
        }

        @Test
        void join_withOwnStaleAfterLongerThanTwiceTheInterval_recommendsTheDeploymentInterval() {
            stack.team("register", Json.write(registration("join-stale-600", "N", "r").put("staleAfterSeconds", 600)));
            assertEquals(30, ok(stack.agent("join", "join-stale-600", null)).body().get("heartbeatIntervalSeconds")
                    .asInt());
        }

        @Test
        void join_onADeploymentWithStaleAfter4_recommendsAnIntervalOfAtMost2() throws Exception {
            // README's demo line, --param StaleAfterSeconds=4, with the template's HeartbeatIntervalSeconds (30).
            try (TestStack s = TestStack.builder().parameter("StaleAfterSeconds", "4").build()) {
                ok(s.register("join-demo"));
                TestStack.Reply r = ok(s.agent("join", "join-demo", null));
                assertEquals(4, r.body().get("staleAfterSeconds").asInt());
                assertEquals(2, r.body().get("heartbeatIntervalSeconds").asInt(), r.body().toString());
                // An agent that follows the advice stays alive through every sweep: a beat every 2 s, a sweep each second.
                for (int second = 1; second <= 20; second++) {
                    s.clock.advance(Duration.ofSeconds(1));
                    if (second % 2 == 0) {
                        assertEquals(2, ok(s.heartbeat("join-demo", "{}")).body().get("heartbeatIntervalSeconds").asInt());
                    }
                    assertEquals(List.of(), s.sweep(), "second " + second);
                }
                assertEquals("ready", s.status("join-demo"));
                assertEquals(null, s.agentItem("join-demo").get("misses"), "no misses (a beat removes the count)");
            }
        }

        @Test
        void join_withEmptyObjectBody_becomesReady() {
            stack.register("join-empty-body");
            assertEquals("ready", ok(stack.agent("join", "join-empty-body", "{}")).text("status"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"{\"reason\":\"back\"}", "{\"staleAfterSeconds\":5}", "[]", "\"hello\""})
        void join_withABodyThatIsNotEmpty_answers400AndWritesNothing(String body) {
            stack.register("join-body");
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("join", "join-body", body));
            assertEquals(400, r.status(), r.body().toString());
            assertEquals(body.startsWith("{") ? "UNKNOWN_FIELD" : "INVALID_BODY", r.code());
            assertEquals("offline", stack.status("join-body"));
        }

        @Test
        void join_whenUnknown_answers404AndWritesNothing() {
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("join", "join-ghost", null));
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
        }
    }

    /** Leave. */
    @Nested
    class Leave {
        @Test
        void leave_whenReady_becomesOfflineWithTheGivenReason() {
            stack.ready("leave-1");
            TestStack.Reply r = stack.agent("leave", "leave-1", "{\"reason\":\"maintenance window\"}");
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("offline", r.text("status"));
            assertFalse(r.body().get("alive").asBoolean());
            assertEquals(0, r.body().get("tasksHandedBack").size());
            assertEquals("maintenance window", r.body().get("lastTransition").get("reason").asText());
            assertEquals("offline", stack.agentItem("leave-1").get("status").s());
        }

        @Test
        void leave_whenWorking_becomesOffline() {
            stack.ready("leave-2");
            stack.heartbeat("leave-2", "{\"status\":\"active\"}");
            TestStack.Reply r = stack.agent("leave", "leave-2", null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("offline", r.text("status"));
            assertEquals("working", r.body().get("lastTransition").get("from").asText());
            assertEquals("leave", r.body().get("lastTransition").get("trigger").asText());
        }

        @ParameterizedTest
        @ValueSource(strings = {"offline", "dead", "restarting", "dead_failed_revive"})
        void leave_whenNotAlive_answers409InvalidTransition(String status) {
            String id = "leave-not-alive-" + status.replace('_', '-');
            stack.register(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("leave", id, null));
            assertEquals(409, r.status());
            assertEquals("INVALID_TRANSITION", r.code());
            assertEquals(status, r.text("agentStatus"));
        }

        @Test
        void leave_withUnknownField_answers400AndWritesNothing() {
            stack.ready("leave-bad");
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("leave", "leave-bad", "{\"why\":\"x\"}"));
            assertEquals(400, r.status());
            assertEquals("UNKNOWN_FIELD", r.code());
            assertEquals("ready", stack.agentItem("leave-bad").get("status").s());
        }

        @Test
        void leave_whenUnknown_answers404AndWritesNothing() {
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("leave", "leave-ghost", null));
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
        }
    }

    /** Cleanup. */
    @Nested
    class Cleanup {
        @ParameterizedTest
        @ValueSource(strings = {"dead", "dead_failed_revive"})
        void cleanup_whenDeadOrFailedRevive_becomesOffline(String status) {
            String id = "clean-" + status.replace('_', '-');
            stack.register(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = stack.agent("cleanup", id, null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("offline", r.text("status"));
            assertEquals(status, r.body().get("lastTransition").get("from").asText());
            assertEquals("cleanup", r.body().get("lastTransition").get("trigger").asText());
            assertEquals("offline", stack.agentItem(id).get("status").s());
        }

        @ParameterizedTest
        @ValueSource(strings = {"offline", "ready", "working", "restarting"})
        void cleanup_whenNotDead_answers409InvalidTransition(String status) {
            String id = "clean-refused-" + status;
            stack.register(id);
            stack.forceStatus(id, status);
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("cleanup", id, null));
            assertEquals(409, r.status());
            assertEquals("INVALID_TRANSITION", r.code());
            assertEquals(status, r.text("agentStatus"));
        }

        @Test
        void cleanup_withAgentKey_answers403InsufficientScopeAndWritesNothing() {
            stack.register("clean-scope");
            stack.forceStatus("clean-scope", "dead");
            String agentKey = stack.key(TestStack.TEAM, Scope.AGENT);
            TestStack.Reply r = stack.writesNothing(() -> stack.send("cleanup", agentKey,
                    Map.of("team", TestStack.TEAM, "agentId", "clean-scope"), null, null));
            assertEquals(403, r.status());
            assertEquals("INSUFFICIENT_SCOPE", r.code());
            assertEquals("dead", stack.agentItem("clean-scope").get("status").s());
        }
    }

    /** Transitions. */
    @Nested
    class Transitions {
        @Test
        void transitions_afterJoinWorkLeave_listsThemNewestFirst() {
            stack.register("tr-1");
            Instant joined = stack.clock.instant();
            stack.agent("join", "tr-1", null);
            stack.clock.advance(Duration.ofSeconds(10));
            Instant working = stack.clock.instant();
            stack.heartbeat("tr-1", "{\"status\":\"working\"}");
            stack.clock.advance(Duration.ofSeconds(10));
            Instant left = stack.clock.instant();
            stack.agent("leave", "tr-1", "{\"reason\":\"done for today\"}");
            stack.pump.drain();

            TestStack.Reply r = stack.agent("transitions", "tr-1", null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("tr-1", r.text("agentId"));
            JsonNode list = r.body().get("transitions");
            assertEquals(3, list.size(), list.toString());
            assertTransition(list.get(0), 3, "working", "offline", "leave", "done for today", left);
            assertTransition(list.get(1), 2, "ready", "working", "report_working", null, working);
            assertTransition(list.get(2), 1, "offline", "ready", "join", "agent joined", joined);
            assertTrue(list.get(1).get("reason").asText().contains("working"), list.get(1).toString());
        }

        @Test
        void transitions_withLimit_answersTheNewestOnes() {
            stack.ready("tr-limit");
            stack.agent("leave", "tr-limit", null);
            stack.agent("join", "tr-limit", null);
            stack.pump.drain();
            TestStack.Reply r = stack.send("transitions", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "agentId", "tr-limit"), Map.of("limit", "2"), null);
            assertEquals(200, r.status());
            assertEquals(List.of(3L, 2L), seqs(r.body().get("transitions")));
            r = stack.send("transitions", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "tr-limit"),
                    Map.of("limit", "1"), null);
            assertEquals(List.of(3L), seqs(r.body().get("transitions")));
        }

        @Test
        void transitions_beforeTheOutboxRan_showsTheNewestStampedChange() {
            stack.ready("tr-stamp");
            stack.pump.drain();
            stack.agent("leave", "tr-stamp", null);
            TestStack.Reply r = stack.agent("transitions", "tr-stamp", null);
            assertEquals(List.of(2L, 1L), seqs(r.body().get("transitions")));
            assertEquals("offline", r.body().get("transitions").get(0).get("to").asText());
            stack.pump.drain();
            assertEquals(r.body(), stack.agent("transitions", "tr-stamp", null).body(),
                    "the merged stamp and the recorded transition read the same");
        }

        @Test
        void transitions_whenNeverChanged_isEmpty() {
            stack.register("tr-none");
            TestStack.Reply r = stack.agent("transitions", "tr-none", null);
            assertEquals(200, r.status());
            assertEquals(0, r.body().get("transitions").size());
        }

        @ParameterizedTest
        @ValueSource(strings = {"0", "-1", "101", "ten", "2.5", ""})
        void transitions_withBadLimit_answers400InvalidQuery(String limit) {
            stack.register("tr-bad-limit-" + limit.hashCode());
            TestStack.Reply r = stack.send("transitions", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "agentId", "tr-bad-limit-" + limit.hashCode()),
                    Map.of("limit", limit), null);
            assertEquals(400, r.status());
            assertEquals("INVALID_QUERY", r.code());
        }

        @Test
        void transitions_whenUnknownAgent_answers404() {
            TestStack.Reply r = stack.agent("transitions", "tr-ghost", null);
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
        }
    }

    /** Errors. */
    @Nested
    class Errors {
        @Test
        void errors_withContextLimit_answersRotateSessionAndCountsRotations() {
            stack.ready("err-ctx");
            TestStack.Reply r = stack.agent("errors", "err-ctx",
                    "{\"message\":\"prompt is too long: context window of 200000 tokens exceeded\"}");
            assertEquals(200, r.status(), r.body().toString());
            assertTrue(r.body().get("success").asBoolean());
            assertEquals("context_limit", r.text("category"));
            assertEquals("rotate_session", r.text("action"));
            assertNull(r.body().get("retryDelaysSeconds"));
            stack.clock.advance(Duration.ofSeconds(1));
            Instant second = stack.clock.instant();
            assertEquals("context_limit", stack.agent("errors", "err-ctx",
                    "{\"message\":\"Token limit reached\"}").text("category"));

            TestStack.Reply agent = stack.agent("get-agent", "err-ctx", null);
            assertEquals(2, agent.body().get("sessionRotations").asInt());
            assertEquals(2, agent.body().get("errorsReported").asInt());
            JsonNode last = agent.body().get("lastError");
            assertEquals("Token limit reached", last.get("message").asText());
            assertEquals("context_limit", last.get("category").asText());
            assertEquals(second.toString(), last.get("at").asText());
        }

        @ParameterizedTest
        @ValueSource(strings = {"429 Too Many Requests: rate limit exceeded", "upstream request timed out",
                "API overloaded (529)", "503 Service Unavailable"})
        void errors_withTransientError_answersRetryWithBackoff248(String message) {
            String id = "err-tr-" + Math.abs(message.hashCode());
            stack.ready(id);
            TestStack.Reply r = stack.agent("errors", id, Json.write(Json.object().put("message", message)));
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("transient", r.text("category"));
            assertEquals("retry_with_backoff", r.text("action"));
            assertEquals(List.of(2, 4, 8), ints(r.body().get("retryDelaysSeconds")));
            TestStack.Reply agent = stack.agent("get-agent", id, null);
            assertEquals(0, agent.body().get("sessionRotations").asInt(), "only a context limit rotates the session");
            assertEquals("transient", agent.body().get("lastError").get("category").asText());
            assertEquals(message, agent.body().get("lastError").get("message").asText());
        }

        @Test
        void errors_withAnyOtherError_answersRecordAndShowsItAsLastError() {
            stack.ready("err-other");
            TestStack.Reply r = stack.agent("errors", "err-other", "{\"message\":\"process exited with signal 11\"}");
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("unknown", r.text("category"));
            assertEquals("record", r.text("action"));
            assertNull(r.body().get("retryDelaysSeconds"));
            TestStack.Reply agent = stack.agent("get-agent", "err-other", null);
            assertEquals("process exited with signal 11", agent.body().get("lastError").get("message").asText());
            assertEquals("unknown", agent.body().get("lastError").get("category").asText());
            assertEquals(1, agent.body().get("errorsReported").asInt());
            assertEquals(0, agent.body().get("sessionRotations").asInt());
            assertEquals("ready", agent.text("status"), "reporting an error does not change the status");
        }

        @Test
        void errors_whenUnknownAgent_answers404AndWritesNothing() {
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("errors", "err-ghost",
                    "{\"message\":\"context window exceeded\"}"));
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
        }

        @Test
        void errors_withMessageOverLimit_answers400AndAtLimitIsAccepted() {
            stack.ready("err-long");
            String tooLong = "x".repeat(Limits.MAX_ERROR_MESSAGE_CHARS + 1);
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("errors", "err-long",
                    Json.write(Json.object().put("message", tooLong))));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
            String atLimit = "x".repeat(Limits.MAX_ERROR_MESSAGE_CHARS);
            assertEquals(200, stack.agent("errors", "err-long",
                    Json.write(Json.object().put("message", atLimit))).status());
        }

        @ParameterizedTest
        @ValueSource(strings = {"{}", "{\"message\":\"\"}", "{\"message\":42}", "{\"message\":\"x\",\"level\":1}"})
        void errors_withBadBody_answers400AndWritesNothing(String body) {
            stack.register("err-bad-" + Math.abs(body.hashCode()));
            TestStack.Reply r = stack.writesNothing(() -> stack.agent("errors", "err-bad-" + Math.abs(body.hashCode()),
                    body));
            assertEquals(400, r.status());
            assertTrue(List.of("MISSING_FIELD", "INVALID_FIELD", "UNKNOWN_FIELD").contains(r.code()), r.code());
        }
    }

    /** Recovery. */
    @Nested
    class RecoveryRoutes {
        @Test
        void recovery_withoutCheckpoint_answersNoSavedState() {
            stack.ready("rec-none");
            TestStack.Reply r = stack.agent("recovery", "rec-none", null);
            assertEquals(200, r.status(), r.body().toString());
            assertFalse(r.body().get("available").asBoolean());
            assertEquals("No saved state", r.text("reason"));
            assertNull(r.body().get("checkpoint"));
            assertEquals("ready", r.text("agentStatus"));
        }

        @Test
        void recovery_afterCheckpointWhileAliveAndRecent_answersSessionStillActive() {
            stack.ready("rec-active");
            Instant saved = stack.clock.instant();
            assertEquals(200, stack.heartbeat("rec-active", "{\"checkpoint\":{\"cwd\":\"/w\",\"step\":3}}").status());
            stack.clock.advance(Duration.ofSeconds(59));
            TestStack.Reply r = stack.agent("recovery", "rec-active", null);
            assertFalse(r.body().get("available").asBoolean());
            assertEquals("Session still active", r.text("reason"));
            assertNull(r.body().get("checkpoint"));
            assertEquals(saved.toString(), r.text("savedAt"));
            assertEquals(saved.toString(), r.text("heartbeatTs"));
        }

        @Test
        void recovery_afterStaleAfterPassed_offersTheCheckpointAndSavedAt() {
            stack.ready("rec-crashed");
            Instant saved = stack.clock.instant();
            stack.heartbeat("rec-crashed", "{\"checkpoint\":{\"cwd\":\"/w\",\"pending\":[\"t1\",\"t2\"]}}");
            stack.clock.advance(Duration.ofSeconds(61));
            TestStack.Reply r = stack.agent("recovery", "rec-crashed", null);
            assertEquals(200, r.status());
            assertTrue(r.body().get("available").asBoolean(), r.body().toString());
            assertNull(r.text("reason"));
            assertEquals("/w", r.body().get("checkpoint").get("cwd").asText());
            assertEquals("t2", r.body().get("checkpoint").get("pending").get(1).asText());
            assertEquals(saved.toString(), r.text("savedAt"));
            assertEquals(saved.toString(), stack.agent("get-agent", "rec-crashed", null).text("checkpointAt"));
        }

        @Test
        void recovery_whenAgentLeftAfterCheckpoint_offersTheCheckpointAtOnce() {
            stack.ready("rec-left");
            stack.heartbeat("rec-left", "{\"checkpoint\":{\"n\":1}}");
            stack.agent("leave", "rec-left", null);
            TestStack.Reply r = stack.agent("recovery", "rec-left", null);
            assertTrue(r.body().get("available").asBoolean(), r.body().toString());
            assertEquals("offline", r.text("agentStatus"));
        }

        @Test
        void recovery_afterMaxAgePassed_answersStateTooOld() {
            stack.ready("rec-old");
            stack.heartbeat("rec-old", "{\"checkpoint\":{\"n\":1}}");
            Instant saved = stack.clock.instant();
            stack.clock.advance(Duration.ofSeconds(31));
            TestStack.Reply r = stack.send("recovery", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "agentId", "rec-old"), Map.of("maxAgeSeconds", "30"), null);
            assertEquals(200, r.status());
            assertFalse(r.body().get("available").asBoolean());
            assertEquals("State too old", r.text("reason"));
            assertNull(r.body().get("checkpoint"));
            assertEquals(saved.toString(), r.text("savedAt"));

            stack.clock.advance(Duration.ofSeconds(30));
            assertTrue(stack.agent("recovery", "rec-old", null).body().get("available").asBoolean(),
                    "61 s after the last beat and within the default maximum age of a day");
            stack.clock.advance(Duration.ofHours(24));
            TestStack.Reply old = stack.agent("recovery", "rec-old", null);
            assertFalse(old.body().get("available").asBoolean());
            assertEquals("State too old", old.text("reason"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"0", "-60", "soon", "1.5", ""})
        void recovery_withBadMaxAge_answers400InvalidQuery(String maxAge) {
            stack.register("rec-bad-" + Math.abs(maxAge.hashCode()));
            TestStack.Reply r = stack.send("recovery", stack.adminKey,
                    Map.of("team", TestStack.TEAM, "agentId", "rec-bad-" + Math.abs(maxAge.hashCode())),
                    Map.of("maxAgeSeconds", maxAge), null);
            assertEquals(400, r.status());
            assertEquals("INVALID_QUERY", r.code());
        }

        @Test
        void recovery_whenUnknownAgent_answers404() {
            TestStack.Reply r = stack.agent("recovery", "rec-ghost", null);
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    static ObjectNode registration(String agentId, String name, String role) {
        return Json.object().put("agentId", agentId).put("name", name).put("role", role);
    }

    private static void assertTransition(JsonNode t, long seq, String from, String to, String trigger,
                                         String reason, Instant at) {
        assertEquals(seq, t.get("seq").asLong(), t.toString());
        assertEquals(from, t.get("from").asText(), t.toString());
        assertEquals(to, t.get("to").asText(), t.toString());
        assertEquals(trigger, t.get("trigger").asText(), t.toString());
        if (reason != null) {
            assertEquals(reason, t.get("reason").asText(), t.toString());
        }
        assertEquals(at.toString(), t.get("at").asText(), t.toString());
    }

    static List<String> ids(JsonNode agents) {
        return values(agents, "agentId");
    }

    public static List<String> values(JsonNode array, String field) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.get(field).asText()));
        return out;
    }

    private static List<Long> seqs(JsonNode transitions) {
        List<Long> out = new ArrayList<>();
        transitions.forEach(n -> out.add(n.get("seq").asLong()));
        return out;
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }
}
