package io.lifeline.local.contract.hooks;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.contract.heartbeats.HeartbeatCostTest;
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
import org.junit.jupiter.api.Timeout;

/**
 * A parent's running subagents through Claude Code's hooks (no daemon): {@code SubagentStart} and
 * {@code SubagentStop} bodies as the runtime sends them, through the template's hook route, and GET agent's view.
 * Counted on the engine: one conditional UpdateItem of the side-data item per change of the set and no read (two for
 * the agent's first start, which makes the map), none for a plain event, one refused for a repeated start or an
 * unknown stop, which change nothing; the hooks' messages and transcript paths reach no table.
 */
@Timeout(60)
@Tag("contract")
class SubagentHooksTest {
    static final HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(counter).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static TestStack.Reply hook(String agentId, String body) {
        return stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", agentId, "runtime",
                "claude-code"), null, body);
    }

    private static String start(String id, String type) {
        return "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\",\"agent_id\":\"" + id
                + "\",\"agent_type\":\"" + type + "\"}";
    }

    private static String stop(String id) {
        return "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStop\",\"agent_id\":\"" + id
                + "\",\"agent_type\":\"Explore\",\"agent_transcript_path\":\"/home/me/.claude/secret-transcript.jsonl\","
                + "\"last_assistant_message\":\"the secret answer\"}";
    }

    /** UpdateItems of the agent's side-data item since the counter's reset (written or refused by their condition). */
    private static long sideWrites() {
        return counter.updatedSortKeys.stream().filter("DATA"::equals).count();
    }

    private static List<String> ids(JsonNode view) {
        List<String> ids = new ArrayList<>();
        view.path("subagents").forEach(s -> ids.add(s.get("id").asText()));
        return ids;
    }

    @Test
    void theViewShowsRunningSubagentsWithSince_oneWritePerChangeAndNoRead_andADeathClearsThem() {
        ok(stack.register("parent"));
        ok(hook("parent", "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}"));
        counter.reset();

        Instant t1 = stack.clock.instant();
        ok(hook("parent", start("a1", "Explore")));
        stack.clock.advance(Duration.ofSeconds(5));
        ok(hook("parent", start("a2", "general-purpose")));
        assertEquals(3, sideWrites(), "one write per start, and the first one's refusal (no map yet)");
        assertEquals(0, counter.operations.stream().filter("GetItem"::equals).count(), "no read");

        JsonNode view = stack.agentView("parent");
        assertEquals(List.of("a1", "a2"), ids(view));
        assertEquals("Explore", view.get("subagents").get(0).get("type").asText());
        assertEquals(t1.toString(), view.get("subagents").get(0).get("since").asText());
        assertEquals(t1.plusSeconds(5).toString(), view.get("subagents").get(1).get("since").asText());
        assertEquals(0, view.get("subagentsMore").asInt());

        counter.reset();
        String before = stack.item(TestStack.agentPartition("parent"), "DATA").toString();
        ok(hook("parent", start("a1", "Explore"))); // a repeat: nothing changes
        ok(hook("parent", "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}"));
        ok(hook("parent", stop("unknown")));
        assertEquals(2, sideWrites(), "one refused write each for a repeated start and an unknown stop, none for a "
                + "plain event");
        assertEquals(before, stack.item(TestStack.agentPartition("parent"), "DATA").toString(), "nothing changed");

        counter.reset();
        ok(hook("parent", stop("a1")));
        assertEquals(1, sideWrites(), "one write for the stop");
        assertEquals(List.of("a2"), ids(stack.agentView("parent")));
        String stored = stack.item(TestStack.agentPartition("parent"), "DATA").toString();
        assertFalse(stored.contains("secret"), stored);

        counter.reset();
        ok(hook("parent", "{\"session_id\":\"s\",\"hook_event_name\":\"LifelineRuntimeExited\"}"));
        assertEquals("dead", stack.status("parent"));
        assertEquals(1, sideWrites(), "the death's one clearing write");
        assertTrue(stack.agentView("parent").path("subagents").isMissingNode());
        ok(hook("parent", "{\"session_id\":\"s2\",\"hook_event_name\":\"SessionStart\"}"));
        assertTrue(stack.agentView("parent").path("subagents").isMissingNode(), "a new life starts with none");
    }

    @Test
    void pastEightTheRestAreCounted_andADeathTheSweepJudgesHidesThem() {
        ok(stack.register("many"));
        ok(hook("many", "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}"));
        for (int i = 0; i < 10; i++) {
            ok(hook("many", start("m" + i, "Explore")));
        }
        JsonNode view = stack.agentView("many");
        assertEquals(8, view.get("subagents").size());
        assertEquals(2, view.get("subagentsMore").asInt());
        ok(hook("many", stop("m9")));
        assertEquals(1, stack.agentView("many").get("subagentsMore").asInt());

        ok(stack.agent("fail", "many", "{\"reason\":\"oom\"}"));
        assertTrue(stack.agentView("many").path("subagents").isMissingNode(), "a dead agent runs none");
    }

    @Test
    void badSubagentInput_is400_andWritesNothing() {
        ok(stack.register("bad"));
        ok(hook("bad", "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}"));
        counter.reset();
        TestStack.Reply tooLong = hook("bad", start("x".repeat(129), "Explore"));
        assertEquals(400, tooLong.status(), tooLong.toString());
        TestStack.Reply wrongType = hook("bad", "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\","
                + "\"agent_id\":{\"nested\":1}}");
        assertEquals(400, wrongType.status(), wrongType.toString());
        TestStack.Reply missing = hook("bad", "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStop\"}");
        assertEquals(400, missing.status(), missing.toString());
        assertEquals(0, counter.operations.stream().filter("UpdateItem"::equals).count(), "nothing written");
        assertTrue(tooLong.body().has("error") || tooLong.body().has("code"), tooLong.toString());
    }
}
