package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.agent.AgentStatus;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A runtime's hook beats through {@link Heartbeats}: a status change its beat makes is noted on the request's
 * account ({@link Heartbeats.Tally#changes}, the request line's {@code changes}) as a heartbeat's is; a beat that
 * changes nothing notes nothing; a session's end leaves through the lifecycle, its task handed back.
 */
@Tag("store")
class HookIngestTest {
    @AutoClose
    final AppFixture f = new AppFixture();

    private static HookEvent claude(String event) {
        return HookReader.read(HookRuntime.CLAUDE_CODE, ("{\"hook_event_name\": \"" + event
                + "\", \"session_id\": \"s-1\", \"tool_name\": \"Bash\"}").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void hook_thatMovesTheAgent_notesTheChangeOnTheRequestLine() {
        String team = AppFixture.team("hook");
        f.ready(team, "a");
        Heartbeats.Tally tally = new Heartbeats.Tally();

        HookIngest.Outcome outcome = f.hooks.apply(team, "a", claude("PreToolUse"), f.tick(), null, tally);

        assertEquals(HookIngest.Outcome.WRITTEN, outcome);
        assertEquals(AgentStatus.WORKING, f.agents.require(team, "a").status());
        assertEquals(List.of("a: ready -> working"), tally.changes());
    }

    @Test
    void hook_inTheStatusTheAgentIsIn_notesNoChange() {
        String team = AppFixture.team("same");
        f.ready(team, "b");
        f.hooks.apply(team, "b", claude("PreToolUse"), f.tick(), null, new Heartbeats.Tally());
        Heartbeats.Tally tally = new Heartbeats.Tally();

        f.hooks.apply(team, "b", claude("PreToolUse"), f.tick(), null, tally);

        assertEquals(List.of(), tally.changes());
    }

    @Test
    void sessionEnd_leavesAndHandsTheTaskBack() {
        String team = AppFixture.team("end");
        f.ready(team, "c");
        f.tasks.create(team, "t-1", "Fix the build", null, f.tick());
        f.tasks.claim(team, "t-1", "c", f.tick());

        HookIngest.Outcome outcome = f.hooks.apply(team, "c", claude("SessionEnd"), f.tick(), null,
                new Heartbeats.Tally());

        assertEquals(HookIngest.Outcome.LEFT, outcome);
        assertEquals(AgentStatus.OFFLINE, f.agents.require(team, "c").status());
        assertEquals("pending", f.tasks.list(team, null).get(0).status().wire());
    }
}
