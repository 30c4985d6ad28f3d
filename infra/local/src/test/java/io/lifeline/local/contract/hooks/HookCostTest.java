package io.lifeline.local.contract.hooks;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * What a hook-driven agent's events cost in writes, counted on the engine through the template's routes: one
 * hour of a busy Claude Code session (a turn every 5 minutes: the prompt, 10 tool calls of 10 s each, the batch, the
 * turn's end; 23 events) with the default coalescing window (60 s). {@link #TURN} is the shape the cost model
 * prices (bench, {@code HookSession.HOOKS}); this test holds its write count.
 */
@Timeout(120)
@Tag("contract")
class HookCostTest {
    /** Seconds into a turn, and the event. */
    record Event(int at, String name) {
    }

    /** A busy turn as the real runs order it (UserPromptSubmit, PreToolUse/PostToolUse per tool, PostToolBatch, Stop). */
    static final List<Event> TURN = turn();
    static final int TURN_SECONDS = 300;
    static final int TURNS = 12;
    /** The most writes a turn may cost: the change to working, one a minute while it works, the change to ready. */
    static final int MAX_WRITES_PER_TURN = 5;

    private static List<Event> turn() {
        List<Event> events = new ArrayList<>();
        events.add(new Event(0, "UserPromptSubmit"));
        for (int k = 0; k < 10; k++) {
            events.add(new Event(20 * k + 5, "PreToolUse"));
            events.add(new Event(20 * k + 15, "PostToolUse"));
        }
        events.add(new Event(205, "PostToolBatch"));
        events.add(new Event(210, "Stop"));
        return List.copyOf(events);
    }

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

    @Test
    void anHourOfABusySession_costsAtMostFiveWritesATurn_andTwoStatusChanges() {
        ok(stack.register("busy"));
        Instant t0 = stack.clock.instant();
        stack.clock.set(t0);
        ok(stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "busy", "runtime",
                "claude-code"), null, "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}"));
        long seqBefore = Long.parseLong(stack.agentItem("busy").get("tseq").n());
        counter.reset();
        int events = 0;
        for (int t = 0; t < TURNS; t++) {
            for (Event e : TURN) {
                stack.clock.set(t0.plusSeconds(60 + (long) t * TURN_SECONDS + e.at()));
                ok(stack.send("hook", stack.adminKey, Map.of("team", TestStack.TEAM, "agentId", "busy", "runtime",
                        "claude-code"), null, "{\"session_id\":\"s\",\"hook_event_name\":\"" + e.name()
                        + "\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make test\"}}"));
                events++;
            }
        }
        long writes = counter.operations.stream().filter(op -> op.equals("UpdateItem")).count();
        long changes = Long.parseLong(stack.agentItem("busy").get("tseq").n()) - seqBefore;
        assertEquals(TURNS * 23, events);
        assertEquals(2L * TURNS, changes, "ready -> working and back, once a turn");
        assertTrue(writes <= (long) MAX_WRITES_PER_TURN * TURNS, writes + " writes for " + TURNS + " turns");
        long reads = counter.operations.stream().filter(op -> op.equals("GetItem")).count();
        assertEquals(writes + reads, counter.operations.size(), "conditional UpdateItems, and the key's look-ups");
        assertTrue(reads <= TURNS * TURN_SECONDS / 300 + 1, reads + " reads: the authorizer's, once per key and 300 s");
        assertEquals("ready", stack.status("busy"));
        assertTrue(Duration.ofSeconds(TURN_SECONDS).compareTo(Duration.ofMinutes(15)) < 0);
    }
}
