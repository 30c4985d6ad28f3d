package io.lifeline.local.contract.hooks;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.contract.heartbeats.HeartbeatCostTest;
import io.lifeline.local.http.LocalGateway;
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
 * prices (bench, {@code HookSession.HOOKS}); this test holds its write count. The same hour again with its events
 * landing, one after the other, on {@link #ENVIRONMENTS} execution environments (each its own handler instances,
 * as Lambda spreads an agent's requests): the item's writes stay within the same bound, the coalescing being the
 * item's, and the refused attempts within one per environment and window.
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
    /** Execution environments of the hook function in the second test. */
    static final int ENVIRONMENTS = 8;

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
        System.out.println("a busy hour on one environment: " + events + " hook events, " + writes + " writes");
        long reads = counter.operations.stream().filter(op -> op.equals("GetItem")).count();
        assertEquals(writes + reads, counter.operations.size(), "conditional UpdateItems, and the key's look-ups");
        assertTrue(reads <= TURNS * TURN_SECONDS / 300 + 1, reads + " reads: the authorizer's, once per key and 300 s");
        assertEquals("ready", stack.status("busy"));
        assertTrue(Duration.ofSeconds(TURN_SECONDS).compareTo(Duration.ofMinutes(15)) < 0);
    }

    @Test
    void theSameHour_onEightEnvironments_writesTheItemNoMoreOften_andRefusesAtMostOncePerEnvironmentAndWindow()
            throws Exception {
        ok(stack.register("spread"));
        List<LocalGateway> environments = new ArrayList<>();
        for (int e = 0; e < ENVIRONMENTS; e++) {
            environments.add(new LocalGateway(TestStack.template(), stack.freshHost(), stack.clock));
        }
        Instant t0 = stack.clock.instant();
        Map<String, String> path = Map.of("team", TestStack.TEAM, "agentId", "spread", "runtime", "claude-code");
        ok(stack.sendVia(environments.get(0), "hook", stack.adminKey, path,
                "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}"));
        long seqBefore = Long.parseLong(stack.agentItem("spread").get("tseq").n());
        counter.reset();
        counter.measureCapacity = true;
        int events = 0;
        try {
            for (int t = 0; t < TURNS; t++) {
                for (Event e : TURN) {
                    stack.clock.set(t0.plusSeconds(60 + (long) t * TURN_SECONDS + e.at()));
                    // Each event on the next environment: none sees two events of a window in a row.
                    ok(stack.sendVia(environments.get(events % ENVIRONMENTS), "hook", stack.adminKey, path,
                            "{\"session_id\":\"s\",\"hook_event_name\":\"" + e.name()
                                    + "\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"make test\"}}"));
                    events++;
                }
            }
        } finally {
            counter.measureCapacity = false;
        }
        long attempts = counter.operations.stream().filter(op -> op.equals("UpdateItem")).count();
        long written = counter.capacities.size(); // an UpdateItem that answered: the refused ones throw
        long refused = attempts - written;
        long changes = Long.parseLong(stack.agentItem("spread").get("tseq").n()) - seqBefore;
        assertEquals(2L * TURNS, changes, "ready -> working and back, once a turn");
        assertTrue(written <= (long) MAX_WRITES_PER_TURN * TURNS, written + " item writes for " + TURNS + " turns");
        // A turn works for 210 s: at most four 60 s windows, in each of which an environment is refused at most once.
        long windows = 4L * TURNS;
        assertTrue(refused <= windows * ENVIRONMENTS, refused + " refused attempts");
        assertTrue(refused > 0, "the environments did meet the item's condition");
        // Each refused attempt is still billed a write unit (DynamoDB charges a failed condition): the condition
        // bounds the item's writes, not the bill, when an agent's events land on a new environment each time.
        System.out.println("a busy hour on " + ENVIRONMENTS + " environments: " + events + " hook events, "
                + attempts + " conditional UpdateItems: " + written + " item writes, " + refused
                + " refused as repeats or stale guesses");
        assertEquals("ready", stack.status("spread"));
    }
}
