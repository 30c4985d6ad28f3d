package io.lifeline.local.contract.tasks;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A task is fenced to the life (join) of the agent that claimed it. A death or a leave ends
 * the hold in the write that ends the life, so the old life's complete is refused ({@code TASK_LOST}) and
 * writes nothing whether or not the outbox has handed the task back yet; the task ends pending, and the new
 * life can claim it again. Each test works on agents and tasks of its own; the sweep's case has a stack of its
 * own, so the sweep judges only its agent.
 */
@Tag("contract")
class TaskFencingTest {
    /** The random loop's operations, weighted: 0 claim, 2 fail, 3 leave, 4 join, 5 beat, 6 complete, 7 pump. */
    private static final int[] OPS = {0, 0, 0, 2, 3, 4, 4, 5, 6, 6, 6, 7};
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"fail", "leave"})
    void complete_fromALifeThatEnded_answers409TaskLostAndTheTaskEndsPending(String end) {
        String agent = TestStack.newId("fence-" + end);
        String task = TestStack.newId("task-" + end);
        ok(stack.ready(agent));
        ok(createTask(stack, task));
        ok(claim(stack, task, agent));
        ok(stack.agent(end, agent, "{\"reason\":\"life ends\"}"));

        raceAfterTheEnd(stack, agent, task);
    }

    @Test
    void complete_fromALifeTheSweepEnded_answers409TaskLostAndTheTaskEndsPending() throws Exception {
        try (TestStack own = TestStack.start()) {
            String agent = TestStack.newId("fence-sweep");
            String task = TestStack.newId("task-sweep");
            ok(own.ready(agent));
            ok(createTask(own, task));
            ok(claim(own, task, agent));
            own.clock.advance(Duration.ofSeconds(75));
            assertEquals(List.of(), own.sweep(), "the first miss is only counted");
            own.clock.advance(Duration.ofSeconds(15));
            assertEquals(List.of(TestStack.TEAM + "/" + agent), own.sweep());
            assertEquals("heartbeat_expired", own.agentView(agent).get("lastTransition").get("trigger").asText());

            raceAfterTheEnd(own, agent, task);
        }
    }

    /**
     * The probe's sequence after the life ended: join, heartbeat {@code working}, complete, all before the
     * outbox runs; then once more after it ran. Both completes are refused alike; then the new life claims.
     */
    private static void raceAfterTheEnd(TestStack s, String agent, String task) {
        assertNull(s.agentItem(agent).get("hold"), "the write that ended the life ended its hold");
        ok(s.agent("join", agent, null));
        assertEquals("working", ok(s.heartbeat(agent, "{\"status\":\"working\"}")).text("agentStatus"));

        TestStack.Reply early = s.writesNothing(() -> complete(s, task, agent));
        assertEquals(409, early.status(), early.body().toString());
        assertEquals("TASK_LOST", early.code());

        s.pump.drain();
        Map<String, AttributeValue> handedBack = taskItem(s, task);
        assertEquals("pending", handedBack.get("status").s(), "the task goes back to pending, always");
        assertNull(handedBack.get("assignee"));
        assertEquals(agent, handedBack.get("reassignedFrom").s());

        TestStack.Reply late = s.writesNothing(() -> complete(s, task, agent));
        assertEquals(409, late.status(), late.body().toString());
        assertEquals("TASK_LOST", late.code(), "the answer does not depend on whether the hand-back ran");

        assertEquals("ready", ok(s.heartbeat(agent, "{\"status\":\"ready\"}")).text("agentStatus"));
        ok(claim(s, task, agent));
        TestStack.Reply done = complete(s, task, agent);
        assertEquals(200, done.status(), done.body().toString());
        s.pump.drain();
        assertEquals("done", taskItem(s, task).get("status").s());
        assertEquals("ready", s.status(agent));
    }

    /**
     * Random interleavings of claim, fail, leave, join, heartbeat status changes, complete and outbox pumps
     * over a few agents and tasks. The test keeps each agent's life (its count of accepted joins) and the life
     * that made each accepted claim; every accepted complete must come from the agent and life of the task's
     * last accepted claim, and once the outbox drains no task is left in progress behind an ended life.
     */
    @Test
    @Timeout(240)
    void complete_inRandomInterleavings_isAcceptedOnlyFromTheClaimingLife() {
        long seed = Long.getLong("fence.seed", System.nanoTime());
        System.out.println("TaskFencingTest random interleavings: seed " + seed + " (rerun with -Dfence.seed=" + seed
                + ")");
        Random random = new Random(seed);
        String prefix = TestStack.newId("rnd");
        List<String> agents = List.of(prefix + "-a", prefix + "-b", prefix + "-c");
        List<String> tasks = new ArrayList<>(List.of(prefix + "-t1", prefix + "-t2", prefix + "-t3", prefix + "-t4"));
        Map<String, Integer> life = new HashMap<>();
        Map<String, String> claimedBy = new HashMap<>();
        int completes = 0;
        int lost = 0;
        for (String a : agents) {
            ok(stack.ready(a));
            life.put(a, 1);
        }
        tasks.forEach(t -> ok(createTask(stack, t)));
        List<String> steps = new ArrayList<>();
        for (int step = 0; step < 250; step++) {
            String a = agents.get(random.nextInt(agents.size()));
            String t = tasks.get(random.nextInt(tasks.size()));
            int op = OPS[random.nextInt(OPS.length)];
            if (op == 6 && random.nextInt(10) < 7) {
                // Mostly complete a task this agent claimed (in this life or an earlier one): the interesting case.
                String mine = claimedBy.entrySet().stream().filter(e -> e.getValue().startsWith(a + "#"))
                        .map(Map.Entry::getKey).findFirst().orElse(null);
                t = mine == null ? t : mine;
            }
            String target = t;
            TestStack.Reply r = switch (op) {
                case 0 -> claim(stack, target, a);
                case 2 -> stack.agent("fail", a, null);
                case 3 -> stack.agent("leave", a, null);
                case 4 -> stack.agent("join", a, null);
                case 5 -> stack.heartbeat(a, random.nextBoolean() ? "{\"status\":\"working\"}" : "{\"status\":\"ready\"}");
                case 6 -> complete(stack, target, a);
                default -> null;
            };
            if (r == null) {
                stack.pump.drain();
                steps.add("pump");
                continue;
            }
            String what = List.of("claim", "-", "fail", "leave", "join", "beat", "complete").get(op);
            steps.add(what + " " + a + (op == 0 || op == 6 ? " " + t : "") + " -> " + r.status()
                    + (r.code() == null ? "" : " " + r.code()));
            String trail = "seed " + seed + ", steps: " + String.join("; ", steps.subList(Math.max(0, steps.size() - 30),
                    steps.size()));
            assertTrue(r.status() == 200 || r.status() == 409, trail + " answered " + r.body());
            if (r.status() != 200) {
                lost += "TASK_LOST".equals(r.code()) ? 1 : 0;
                continue;
            }
            switch (op) {
                case 0 -> claimedBy.put(t, a + "#" + life.get(a));
                case 4 -> life.merge(a, 1, Integer::sum);
                case 6 -> {
                    assertEquals(a + "#" + life.get(a), claimedBy.get(t),
                            "a complete was accepted from a life that did not claim the task; " + trail);
                    claimedBy.remove(t);
                    completes++;
                    String fresh = prefix + "-t" + (tasks.size() + 1); // keep the pool of claimable tasks from running dry
                    ok(createTask(stack, fresh));
                    tasks.add(fresh);
                }
                default -> { }
            }
        }
        stack.pump.drain();
        for (String t : tasks) {
            Map<String, AttributeValue> item = taskItem(stack, t);
            if ("in_progress".equals(item.get("status").s())) {
                Map<String, AttributeValue> holder = stack.agentItem(item.get("assignee").s());
                assertEquals(t, holder.get("hold") == null ? null : holder.get("taskId").s(),
                        "after the outbox drained, an in-progress task is held by a live claim; seed " + seed);
            }
        }
        System.out.println("TaskFencingTest random interleavings: " + completes + " completes accepted, " + lost
                + " refused TASK_LOST");
        assertTrue(completes > 0, "the loop exercised accepted completes; seed " + seed);
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static TestStack.Reply createTask(TestStack s, String taskId) {
        return s.team("create-task", "{\"taskId\":\"" + taskId + "\",\"title\":\"Task " + taskId + "\"}");
    }

    private static TestStack.Reply claim(TestStack s, String taskId, String agentId) {
        return s.task("claim", taskId, "{\"agentId\":\"" + agentId + "\"}");
    }

    private static TestStack.Reply complete(TestStack s, String taskId, String agentId) {
        return s.task("complete", taskId, Json.write(Json.object().put("agentId", agentId)));
    }

    private static Map<String, AttributeValue> taskItem(TestStack s, String taskId) {
        return s.item("TEAM#" + TestStack.TEAM, "TASK#" + taskId);
    }
}
