package io.lifeline.local.contract.tasks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.contract.agents.AgentContractTest;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The task routes: create, list, claim and complete (each of which moves the task and the agent in one
 * transaction), and the hand-back of a task when its agent leaves, through the gateway against DynamoDB
 * Local. Each test uses its own agents and tasks; the list test uses a team of its own.
 */
@Tag("contract")
class TaskContractTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Create. */
    @Nested
    class Create {
        @Test
        void create_withTitleAndDescription_answers201WithPendingTask() {
            TestStack.Reply r = stack.team("create-task",
                    "{\"taskId\":\"create-1\",\"title\":\"Index the repo\",\"description\":\"all of it\"}");
            assertEquals(201, r.status(), r.body().toString());
            assertEquals("create-1", r.text("taskId"));
            assertEquals("Index the repo", r.text("title"));
            assertEquals("all of it", r.text("description"));
            assertEquals("pending", r.text("status"));
            assertNull(r.text("assignee"));
            assertEquals(stack.clock.instant().toString(), r.text("createdAt"));
            assertEquals("pending", task("create-1").get("status").s());
        }

        @Test
        void create_withAgentKey_answers201() {
            String agentKey = stack.key(TestStack.TEAM, Scope.AGENT);
            TestStack.Reply r = stack.send("create-task", agentKey, Map.of("team", TestStack.TEAM), null,
                    "{\"taskId\":\"create-by-agent\",\"title\":\"T\"}");
            assertEquals(201, r.status(), r.body().toString());
        }

        @Test
        void create_withReadKey_answers403InsufficientScopeAndWritesNothing() {
            String readKey = stack.key(TestStack.TEAM, Scope.READ);
            TestStack.Reply r = stack.writesNothing(() -> stack.send("create-task", readKey,
                    Map.of("team", TestStack.TEAM), null, "{\"taskId\":\"create-by-reader\",\"title\":\"T\"}"));
            assertEquals(403, r.status());
            assertEquals("INSUFFICIENT_SCOPE", r.code());
        }

        @Test
        void create_whenTaskExists_answers409TaskExistsAndKeepsTheFirst() {
            assertEquals(201, createTask("create-dup").status());
            TestStack.Reply r = stack.writesNothing(() -> stack.team("create-task",
                    "{\"taskId\":\"create-dup\",\"title\":\"Other\"}"));
            assertEquals(409, r.status());
            assertEquals("TASK_EXISTS", r.code());
            assertEquals("Task create-dup", task("create-dup").get("title").s());
        }

        @Test
        void create_whileTheTaskIsInProgress_answers409AndLeavesItAssigned() {
            stack.ready("create-owner");
            createTask("create-busy");
            claim("create-busy", "create-owner");
            TestStack.Reply r = stack.writesNothing(() -> createTask("create-busy"));
            assertEquals(409, r.status());
            assertEquals("TASK_EXISTS", r.code());
            assertEquals("create-owner", task("create-busy").get("assignee").s());
        }

        @ParameterizedTest
        @ValueSource(strings = {
                "{\"title\":\"T\"}",
                "{\"taskId\":\"create-bad\"}",
                "{\"taskId\":\"create bad\",\"title\":\"T\"}",
                "{\"taskId\":\"\",\"title\":\"T\"}",
                "{\"taskId\":7,\"title\":\"T\"}",
                "{\"taskId\":\"create-bad\",\"title\":[\"T\"]}",
                "{\"taskId\":\"create-bad\",\"title\":\"\"}",
                "{\"taskId\":\"create-bad\",\"title\":\"T\",\"priority\":1}",
                "{\"taskId\":\"create-bad\",\"title\":\"T\",\"status\":\"done\"}",
                "[]",
                "not json"})
        void create_withBadInput_answers400AndWritesNothing(String body) {
            TestStack.Reply r = stack.writesNothing(() -> stack.team("create-task", body));
            assertEquals(400, r.status(), r.body().toString());
            assertTrue(List.of("MISSING_FIELD", "INVALID_FIELD", "INVALID_ID", "UNKNOWN_FIELD", "INVALID_JSON",
                    "INVALID_BODY").contains(r.code()), r.code());
        }

        @Test
        void create_withTitleOverLimit_answers400AndAtLimitIsAccepted() {
            String tooLong = "t".repeat(Limits.MAX_TASK_TITLE_CHARS + 1);
            TestStack.Reply r = stack.writesNothing(() -> stack.team("create-task",
                    Json.write(Json.object().put("taskId", "create-long").put("title", tooLong))));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
            String atLimit = "t".repeat(Limits.MAX_TASK_TITLE_CHARS);
            r = stack.team("create-task", Json.write(Json.object().put("taskId", "create-long").put("title", atLimit)));
            assertEquals(201, r.status(), r.body().toString());
            assertEquals(atLimit, r.text("title"));
        }
    }

    /** List. */
    @Nested
    class Listing {
        @Test
        void list_withAndWithoutStatus_answersTheMatchingTasks() {
            String team = "tasks-list";
            String key = stack.key(team, Scope.ADMIN);
            Map<String, String> path = Map.of("team", team);
            for (String id : List.of("t-3", "t-1", "t-2")) {
                assertEquals(201, stack.send("create-task", key, path, null,
                        "{\"taskId\":\"" + id + "\",\"title\":\"T\"}").status());
            }
            assertEquals(201, stack.send("register", key, path, null,
                    "{\"agentId\":\"lister\",\"name\":\"L\",\"role\":\"r\"}").status());
            assertEquals(200, stack.send("join", key, Map.of("team", team, "agentId", "lister"), null, null).status());
            assertEquals(200, stack.send("claim", key, Map.of("team", team, "taskId", "t-3"), null,
                    "{\"agentId\":\"lister\"}").status());
            assertEquals(200, stack.send("complete", key, Map.of("team", team, "taskId", "t-3"), null,
                    "{\"agentId\":\"lister\"}").status());
            assertEquals(200, stack.send("claim", key, Map.of("team", team, "taskId", "t-2"), null,
                    "{\"agentId\":\"lister\"}").status());

            TestStack.Reply all = stack.send("list-tasks", key, path, null, null);
            assertEquals(200, all.status());
            assertEquals(3, all.body().get("count").asInt());
            assertEquals(List.of("t-1", "t-2", "t-3"), AgentContractTest.values(all.body().get("tasks"), "taskId"));
            assertEquals(List.of("pending", "in_progress", "done"),
                    AgentContractTest.values(all.body().get("tasks"), "status"));
            assertEquals("lister", all.body().get("tasks").get(1).get("assignee").asText());
            Map.of("pending", List.of("t-1"), "in_progress", List.of("t-2"), "done", List.of("t-3")).forEach(
                    (status, ids) -> {
                        TestStack.Reply r = stack.send("list-tasks", key, path, Map.of("status", status), null);
                        assertEquals(200, r.status(), status);
                        assertEquals(ids, AgentContractTest.values(r.body().get("tasks"), "taskId"), status);
                        assertEquals(ids.size(), r.body().get("count").asInt());
                    });
            assertFalse(AgentContractTest.values(stack.team("list-tasks", null).body().get("tasks"), "taskId")
                    .contains("t-1"), "another team's list does not show these tasks");
        }

        @ParameterizedTest
        @ValueSource(strings = {"open", "PENDING", "", "in-progress"})
        void list_withUnknownStatus_answers400InvalidStatus(String status) {
            TestStack.Reply r = stack.send("list-tasks", stack.adminKey, Map.of("team", TestStack.TEAM),
                    Map.of("status", status), null);
            assertEquals(400, r.status());
            assertEquals("INVALID_STATUS", r.code());
        }
    }

    /** Claim. */
    @Nested
    class Claim {
        @Test
        void claim_whenAgentReadyAndTaskPending_movesBothTogether() {
            stack.ready("claim-agent");
            createTask("claim-1");
            stack.clock.advance(Duration.ofSeconds(4));
            Instant now = stack.clock.instant();
            TestStack.Reply r = claim("claim-1", "claim-agent");
            assertEquals(200, r.status(), r.body().toString());
            assertTrue(r.body().get("success").asBoolean());
            assertEquals("working", r.text("agentStatus"));
            JsonNode t = r.body().get("task");
            assertEquals("claim-1", t.get("taskId").asText());
            assertEquals("in_progress", t.get("status").asText());
            assertEquals("claim-agent", t.get("assignee").asText());
            assertEquals(now.toString(), t.get("claimedAt").asText());

            Map<String, AttributeValue> agent = stack.agentItem("claim-agent");
            assertEquals("working", agent.get("status").s());
            assertEquals("claim-1", agent.get("taskId").s());
            assertNotEquals(Long.toString(now.toEpochMilli()), agent.get("hbAt").n(),
                    "a claim leaves liveness to heartbeats (it cannot read a schedule's deadline)");
            Map<String, AttributeValue> task = task("claim-1");
            assertEquals("in_progress", task.get("status").s());
            assertEquals("claim-agent", task.get("assignee").s());
            assertEquals(Long.toString(now.toEpochMilli()), task.get("claimedAt").n());

            TestStack.Reply view = stack.agent("get-agent", "claim-agent", null);
            assertEquals("claim-1", view.text("currentTaskId"));
            assertEquals("claim_task", view.body().get("lastTransition").get("trigger").asText());
        }

        @ParameterizedTest
        @ValueSource(strings = {"offline", "dead", "restarting", "dead_failed_revive"})
        void claim_whenAgentNotAlive_answers409InvalidTransitionAndTaskStaysPending(String status) {
            String agentId = "claim-" + status.replace('_', '-');
            String taskId = "claim-for-" + status.replace('_', '-');
            stack.register(agentId);
            stack.forceStatus(agentId, status);
            createTask(taskId);
            TestStack.Reply r = stack.writesNothing(() -> claim(taskId, agentId));
            assertEquals(409, r.status(), r.body().toString());
            assertEquals("INVALID_TRANSITION", r.code());
            assertEquals(status, r.text("agentStatus"));
            assertEquals("pending", task(taskId).get("status").s());
            assertNull(task(taskId).get("assignee"));
        }

        @Test
        void claim_whenAgentAlreadyWorking_answers409InvalidTransitionAndWritesNothing() {
            stack.ready("claim-busy");
            createTask("claim-busy-1");
            createTask("claim-busy-2");
            assertEquals(200, claim("claim-busy-1", "claim-busy").status());
            TestStack.Reply r = stack.writesNothing(() -> claim("claim-busy-2", "claim-busy"));
            assertEquals(409, r.status());
            assertEquals("INVALID_TRANSITION", r.code());
            assertEquals("working", r.text("agentStatus"));
            assertEquals("pending", task("claim-busy-2").get("status").s());
            assertEquals("claim-busy-1", stack.agentItem("claim-busy").get("taskId").s());
        }

        @Test
        void claim_whenTaskInProgress_answers409TaskNotAvailableAndClaimantStaysReady() {
            stack.ready("claim-first");
            stack.ready("claim-second");
            createTask("claim-taken");
            assertEquals(200, claim("claim-taken", "claim-first").status());
            TestStack.Reply r = stack.writesNothing(() -> claim("claim-taken", "claim-second"));
            assertEquals(409, r.status());
            assertEquals("TASK_NOT_AVAILABLE", r.code());
            assertTrue(r.text("error").contains("claim-first"), r.text("error"));
            Map<String, AttributeValue> second = stack.agentItem("claim-second");
            assertEquals("ready", second.get("status").s());
            assertNull(second.get("taskId"));
            assertEquals("claim-first", task("claim-taken").get("assignee").s());
        }

        @Test
        void claim_whenTaskDone_answers409TaskNotAvailable() {
            stack.ready("claim-done-agent");
            createTask("claim-done");
            claim("claim-done", "claim-done-agent");
            assertEquals(200, complete("claim-done", "claim-done-agent", null).status());
            TestStack.Reply r = stack.writesNothing(() -> claim("claim-done", "claim-done-agent"));
            assertEquals(409, r.status());
            assertEquals("TASK_NOT_AVAILABLE", r.code());
            assertEquals("done", task("claim-done").get("status").s());
        }

        @Test
        void claim_whenTaskUnknown_answers404TaskNotFoundAndAgentStaysReady() {
            stack.ready("claim-nothing");
            TestStack.Reply r = stack.writesNothing(() -> claim("claim-no-such-task", "claim-nothing"));
            assertEquals(404, r.status());
            assertEquals("TASK_NOT_FOUND", r.code());
            assertEquals("ready", stack.agentItem("claim-nothing").get("status").s());
        }

        @Test
        void claim_whenAgentUnknown_answers404AgentNotFoundAndTaskStaysPending() {
            createTask("claim-orphan");
            TestStack.Reply r = stack.writesNothing(() -> claim("claim-orphan", "claim-no-such-agent"));
            assertEquals(404, r.status());
            assertEquals("AGENT_NOT_FOUND", r.code());
            assertEquals("pending", task("claim-orphan").get("status").s());
        }

        @ParameterizedTest
        @ValueSource(strings = {"{}", "{\"agentId\":\"a b\"}", "{\"agentId\":1}", "{\"agentId\":\"a\",\"x\":1}", ""})
        void claim_withBadBody_answers400AndWritesNothing(String body) {
            createTask("claim-bad-body-" + Math.abs(body.hashCode()));
            TestStack.Reply r = stack.writesNothing(() -> stack.task("claim", "claim-bad-body-" + Math.abs(body.hashCode()),
                    body.isEmpty() ? null : body));
            assertEquals(400, r.status(), r.body().toString());
        }

        @Test
        void claim_withReadKey_answers403AndWritesNothing() {
            stack.ready("claim-reader");
            createTask("claim-read");
            String readKey = stack.key(TestStack.TEAM, Scope.READ);
            TestStack.Reply r = stack.writesNothing(() -> stack.send("claim", readKey,
                    Map.of("team", TestStack.TEAM, "taskId", "claim-read"), null, "{\"agentId\":\"claim-reader\"}"));
            assertEquals(403, r.status());
            assertEquals("INSUFFICIENT_SCOPE", r.code());
        }
    }

    /** Complete. */
    @Nested
    class Complete {
        @Test
        void complete_byAssignee_marksTaskDoneAndAgentReady() {
            stack.ready("done-agent");
            createTask("done-1");
            claim("done-1", "done-agent");
            stack.clock.advance(Duration.ofSeconds(20));
            Instant now = stack.clock.instant();
            TestStack.Reply r = complete("done-1", "done-agent", "42 files indexed");
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("ready", r.text("agentStatus"));
            assertEquals("done", r.body().get("task").get("status").asText());
            assertEquals(now.toString(), r.body().get("task").get("completedAt").asText());
            assertEquals("42 files indexed", r.body().get("task").get("result").asText());

            Map<String, AttributeValue> agent = stack.agentItem("done-agent");
            assertEquals("ready", agent.get("status").s());
            assertNull(agent.get("taskId"));
            Map<String, AttributeValue> task = task("done-1");
            assertEquals("done", task.get("status").s());
            assertEquals("done-agent", task.get("assignee").s(), "the assignee is kept once done");
            assertEquals("42 files indexed", task.get("result").s());
            assertNull(task.get("gsi1pk"), "a done task is no longer found by assignee");
            TestStack.Reply view = stack.agent("get-agent", "done-agent", null);
            assertNull(view.text("currentTaskId"));
            assertEquals("task_complete", view.body().get("lastTransition").get("trigger").asText());
        }

        @Test
        void complete_byAnotherReadyAgent_answers409AndChangesNothing() {
            stack.ready("done-owner");
            stack.ready("done-intruder");
            createTask("done-2");
            claim("done-2", "done-owner");
            TestStack.Reply r = stack.writesNothing(() -> complete("done-2", "done-intruder", null));
            assertEquals(409, r.status());
            assertEquals("TASK_NOT_AVAILABLE", r.code());
            assertEquals("in_progress", task("done-2").get("status").s());
            assertEquals("done-owner", task("done-2").get("assignee").s());
            assertEquals("working", stack.agentItem("done-owner").get("status").s());
            assertEquals("ready", stack.agentItem("done-intruder").get("status").s());
        }

        @Test
        void complete_byAnotherWorkingAgent_answers409AndChangesNothing() {
            stack.ready("done-owner-3");
            stack.ready("done-other-3");
            createTask("done-3a");
            createTask("done-3b");
            claim("done-3a", "done-owner-3");
            claim("done-3b", "done-other-3");
            TestStack.Reply r = stack.writesNothing(() -> complete("done-3a", "done-other-3", null));
            assertEquals(409, r.status());
            assertEquals("TASK_NOT_AVAILABLE", r.code());
            assertEquals("done-3b", stack.agentItem("done-other-3").get("taskId").s());
        }

        @Test
        void complete_whenPendingOrAlreadyDone_answers409AndWritesNothing() {
            stack.ready("done-twice");
            createTask("done-4");
            TestStack.Reply pending = stack.writesNothing(() -> complete("done-4", "done-twice", null));
            assertEquals(409, pending.status());
            assertEquals("TASK_NOT_AVAILABLE", pending.code());
            claim("done-4", "done-twice");
            assertEquals(200, complete("done-4", "done-twice", null).status());
            TestStack.Reply again = stack.writesNothing(() -> complete("done-4", "done-twice", null));
            assertEquals(409, again.status());
            assertEquals("TASK_NOT_AVAILABLE", again.code());
        }

        @Test
        void complete_whenTaskUnknown_answers404TaskNotFound() {
            stack.ready("done-ghost-agent");
            TestStack.Reply r = stack.writesNothing(() -> complete("done-no-such-task", "done-ghost-agent", null));
            assertEquals(404, r.status());
            assertEquals("TASK_NOT_FOUND", r.code());
        }

        @Test
        void complete_withResultOverLimit_answers400AndWritesNothing() {
            stack.ready("done-long");
            createTask("done-5");
            claim("done-5", "done-long");
            TestStack.Reply r = stack.writesNothing(() -> stack.task("complete", "done-5", Json.write(Json.object()
                    .put("agentId", "done-long").put("result", "r".repeat(2049)))));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
            assertEquals("in_progress", task("done-5").get("status").s());
        }
    }

    /** Leave hands the task back. */
    @Nested
    class HandBack {
        @Test
        void leave_whileWorking_handsTheTaskBackAndClearsTheAgentsTask() {
            stack.ready("leaver");
            createTask("handback-1");
            claim("handback-1", "leaver");
            TestStack.Reply r = stack.agent("leave", "leaver", null);
            assertEquals(200, r.status(), r.body().toString());
            assertEquals("offline", r.text("status"));
            assertEquals(List.of("handback-1"), AgentContractTest.values(wrap(r.body().get("tasksHandedBack")), "v"));
            assertNull(r.text("currentTaskId"));

            Map<String, AttributeValue> task = task("handback-1");
            assertEquals("pending", task.get("status").s());
            assertNull(task.get("assignee"));
            assertNull(task.get("claimedAt"));
            assertNull(task.get("gsi1pk"));
            Map<String, AttributeValue> agent = stack.agentItem("leaver");
            assertEquals("offline", agent.get("status").s());
            assertNull(agent.get("taskId"));
            assertNull(stack.agent("get-agent", "leaver", null).text("currentTaskId"));

            stack.ready("taker");
            assertEquals(200, claim("handback-1", "taker").status(), "the handed-back task can be claimed again");
        }
    }

    /** Concurrency. */
    @Nested
    class Concurrency {
        @Test
        void claim_whenTwoReadyAgentsRace_exactlyOneWinsEveryTime() throws Exception {
            stack.ready("racer-a");
            stack.ready("racer-b");
            int rounds = 30;
            int winsOfA = 0;
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                for (int i = 0; i < rounds; i++) {
                    String taskId = "race-" + i;
                    createTask(taskId);
                    CyclicBarrier start = new CyclicBarrier(2);
                    Future<TestStack.Reply> a = pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return claim(taskId, "racer-a");
                    });
                    Future<TestStack.Reply> b = pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return claim(taskId, "racer-b");
                    });
                    TestStack.Reply ra = a.get(30, TimeUnit.SECONDS);
                    TestStack.Reply rb = b.get(30, TimeUnit.SECONDS);
                    String round = "round " + i + ": a=" + ra.status() + " " + ra.body() + ", b=" + rb.status() + " "
                            + rb.body();
                    assertEquals(List.of(200, 409), sorted(ra.status(), rb.status()), round);
                    TestStack.Reply lost = ra.status() == 409 ? ra : rb;
                    assertEquals("TASK_NOT_AVAILABLE", lost.code(), round);
                    String winner = ra.status() == 200 ? "racer-a" : "racer-b";
                    String loser = winner.equals("racer-a") ? "racer-b" : "racer-a";
                    winsOfA += winner.equals("racer-a") ? 1 : 0;

                    assertEquals(winner, task(taskId).get("assignee").s(), round);
                    assertEquals("working", stack.agentItem(winner).get("status").s(), round);
                    assertEquals(taskId, stack.agentItem(winner).get("taskId").s(), round);
                    assertEquals("ready", stack.agentItem(loser).get("status").s(), round);
                    assertNull(stack.agentItem(loser).get("taskId"), round);
                    assertEquals(200, complete(taskId, winner, null).status(), round);
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.println("claim race: racer-a won " + winsOfA + " of " + rounds);
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static TestStack.Reply createTask(String taskId) {
        return stack.team("create-task", "{\"taskId\":\"" + taskId + "\",\"title\":\"Task " + taskId + "\"}");
    }

    private static TestStack.Reply claim(String taskId, String agentId) {
        return stack.task("claim", taskId, "{\"agentId\":\"" + agentId + "\"}");
    }

    private static TestStack.Reply complete(String taskId, String agentId, String result) {
        var body = Json.object().put("agentId", agentId);
        if (result != null) {
            body.put("result", result);
        }
        return stack.task("complete", taskId, Json.write(body));
    }

    private static Map<String, AttributeValue> task(String taskId) {
        return stack.item("TEAM#" + TestStack.TEAM, "TASK#" + taskId);
    }

    private static List<Integer> sorted(int a, int b) {
        List<Integer> out = new ArrayList<>(List.of(a, b));
        out.sort(null);
        return out;
    }

    /** ["x", "y"] as [{"v":"x"}, {"v":"y"}], to reuse the list helpers. */
    private static JsonNode wrap(JsonNode strings) {
        var arr = Json.MAPPER.createArrayNode();
        strings.forEach(s -> arr.add(Json.object().put("v", s.asText())));
        return arr;
    }
}
