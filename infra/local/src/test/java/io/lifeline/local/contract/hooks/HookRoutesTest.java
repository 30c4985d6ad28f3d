package io.lifeline.local.contract.hooks;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.testing.LogCapture;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runtimes' hook events through the template's HTTP API routes into the heartbeat function, on the engine and
 * the test clock, with the template's defaults (stale after 60 s, grace 2; working allowance 900 s, waiting 8 h,
 * an awaiting-input alert after 300 s; hooks coalesce for 60 s): a Claude Code session's events walk the agent
 * join, working, ready, offline with their sources; waiting is not death; a tool call runs under the working
 * allowance and a crash in it is found after it; a long wait for a person raises one AgentAwaitingInput and one
 * AgentInputResumed; repeated events coalesce; every answer is {@code {}}; nothing of the content is stored,
 * logged or published.
 */
@Timeout(120)
@Tag("contract")
class HookRoutesTest {
    private static final Instant T0 = TestStack.START;
    private static final String TEAM = TestStack.TEAM;
    private static final TestStack.Opened STACKS = new TestStack.Opened();
    private static final String SECRET = "hunter2-0f8e7d6c";

    @RegisterExtension
    final LogCapture log = new LogCapture();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    private static String claude(String event, String extra) {
        return "{\"session_id\":\"sess-1\",\"transcript_path\":\"/home/dev/.claude/projects/-w/" + SECRET
                + ".jsonl\",\"cwd\":\"/w\",\"hook_event_name\":\"" + event + "\"" + extra + "}";
    }

    private static TestStack.Reply hook(TestStack s, String runtime, String agentId, String body) {
        return s.send("hook", s.adminKey, Map.of("team", TEAM, "agentId", agentId, "runtime", runtime), null, body);
    }

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static JsonNode view(TestStack s, String agentId) {
        return ok(s.agent("get-agent", agentId, null)).body();
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().path("detail")).toList();
    }

    /** Every hook answer is exactly {} with 200: nothing a runtime could read as a decision. */
    private static void taken(TestStack.Reply r) {
        assertEquals(200, r.status(), r.body().toString());
        assertEquals("{}", r.body().toString());
    }

    @Test
    void claudeSession_walksJoinWorkingReadyOffline_withSources_andAnswersEmpty() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("c1"));
        at(s, 1);
        taken(hook(s, "claude-code", "c1", claude("SessionStart", ",\"source\":\"startup\"")));
        assertEquals("ready", s.status("c1"));
        assertEquals("input", view(s, "c1").path("waiting").path("for").asText());
        at(s, 2);
        taken(hook(s, "claude-code", "c1", claude("UserPromptSubmit", ",\"prompt\":\"say " + SECRET + "\"")));
        taken(hook(s, "claude-code", "c1", claude("PreToolUse",
                ",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo " + SECRET + "\"}")));
        taken(hook(s, "claude-code", "c1", claude("PostToolUse",
                ",\"tool_name\":\"Bash\",\"tool_response\":{\"stdout\":\"" + SECRET + "\\n\"}")));
        // A subagent (the Agent tool), with the fields Claude Code 2.1.197 sends: its last message is content.
        taken(hook(s, "claude-code", "c1", claude("SubagentStart",
                ",\"agent_id\":\"a5f0c2\",\"agent_type\":\"general-purpose\"")));
        taken(hook(s, "claude-code", "c1", claude("SubagentStop", ",\"stop_hook_active\":false,\"agent_id\":\"a5f0c2\","
                + "\"agent_transcript_path\":\"/home/dev/.claude/projects/-w/" + SECRET + ".jsonl\","
                + "\"agent_type\":\"general-purpose\",\"last_assistant_message\":\"" + SECRET + "\"")));
        assertEquals("working", s.status("c1"));
        assertTrue(view(s, "c1").path("waiting").isMissingNode(), "working: waits for nothing");
        at(s, 3);
        taken(hook(s, "claude-code", "c1", claude("Stop", ",\"last_assistant_message\":\"" + SECRET + "\"")));
        JsonNode v = view(s, "c1");
        assertEquals("ready", v.path("status").asText());
        assertEquals("input", v.path("waiting").path("for").asText());
        assertEquals(T0.plusSeconds(3).toString(), v.path("waiting").path("since").asText());
        at(s, 4);
        taken(hook(s, "claude-code", "c1", claude("SessionEnd", ",\"reason\":\"other\"")));
        assertEquals("offline", s.status("c1"));

        s.pump.drain();
        List<JsonNode> changes = s.transitions("c1", 10);
        List<String> walk = changes.stream().map(t -> t.path("from").asText() + ">" + t.path("to").asText()).toList();
        assertEquals(List.of("ready>offline", "working>ready", "ready>working", "offline>ready"), walk);
        assertTrue(changes.get(2).path("reason").asText().contains("sdk_session_updated"), changes.get(2).toString());
        assertTrue(changes.get(2).path("reason").asText().contains("claude-code UserPromptSubmit"));
        assertTrue(changes.get(1).path("reason").asText().contains("sdk_session_idle"), changes.get(1).toString());
        assertTrue(changes.get(0).path("reason").asText().contains("claude-code SessionEnd"));

        // Nothing of the turn's content in any table, log line or event.
        assertFalse(s.allItems().toString().contains(SECRET), "a table holds hook content");
        assertFalse(String.join("\n", log.lines()).contains(SECRET), "a log line holds hook content");
        assertFalse(s.bus.delivered().toString().contains(SECRET), "an event holds hook content");
    }

    /**
     * A hook beats through the heartbeat use case, so a status change its beat makes is on its request line
     * ({@code changes}), as a heartbeat's is (RequestLogTest); a hook that changes nothing writes no line.
     */
    @Test
    void hook_thatMovesTheAgent_logsItsChangeOnTheRequestLine() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("c-log"));
        at(s, 1);
        taken(hook(s, "claude-code", "c-log", claude("SessionStart", "")));
        log.lines().clear();
        at(s, 2);
        taken(hook(s, "claude-code", "c-log", claude("PreToolUse", ",\"tool_name\":\"Bash\"")));
        List<JsonNode> requests = new ArrayList<>();
        for (String line : List.copyOf(log.lines())) {
            JsonNode n = Json.parse(line);
            if ("request".equals(n.path("msg").asText())) {
                requests.add(n);
            }
        }
        assertEquals(1, requests.size(), log.lines().toString());
        assertTrue(requests.get(0).path("route").asText().endsWith("/hooks/{runtime}"), requests.get(0).toString());
        assertEquals("c-log: ready -> working", requests.get(0).path("changes").get(0).asText());
        log.lines().clear();
        at(s, 3);
        taken(hook(s, "claude-code", "c-log", claude("PreToolUse", ",\"tool_name\":\"Bash\"")));
        assertTrue(log.lines().stream().noneMatch(l -> l.contains("\"msg\":\"request\"")), log.lines().toString());
    }

    /**
     * The watcher a direct-mode session start leaves: its report of the runtime's process gone makes a live agent
     * dead at once (a reported failure, as a host's), and changes nothing after the session's end (a clean exit) or
     * a death.
     */
    @Test
    void theWatchersRuntimeExited_killsALiveAgent_andIsIgnoredAfterTheSessionsEnd() throws Exception {
        TestStack s = STACKS.open();
        String exited = "{\"hook_event_name\":\"LifelineRuntimeExited\"}";
        for (String runtime : List.of("claude-code", "codex", "gemini")) {
            String id = "w-" + runtime;
            ok(s.register(id));
            at(s, 1);
            taken(hook(s, runtime, id, claude("SessionStart", "")));
            taken(hook(s, runtime, id, claude("gemini".equals(runtime) ? "BeforeAgent" : "UserPromptSubmit", "")));
            assertEquals("working", s.status(id), runtime);
            at(s, 2);
            taken(hook(s, runtime, id, exited));
            assertEquals("dead", s.status(id), runtime);
            JsonNode death = s.transitions(id, 1).get(0);
            assertEquals("reported_failure", death.path("trigger").asText(), death.toString());
            assertTrue(death.path("reason").asText().contains("exited without ending its session"), death.toString());
            taken(hook(s, runtime, id, exited));
            assertEquals(1, s.transitions(id, 10).stream().filter(t -> "dead".equals(t.path("to").asText())).count(),
                    "a second report writes nothing");
        }
        ok(s.register("w-clean"));
        at(s, 3);
        taken(hook(s, "claude-code", "w-clean", claude("SessionStart", "")));
        taken(hook(s, "claude-code", "w-clean", claude("SessionEnd", ",\"reason\":\"other\"")));
        taken(hook(s, "claude-code", "w-clean", exited));
        assertEquals("offline", s.status("w-clean"), "a clean exit stays a clean exit");
        assertEquals("ready>offline", s.transitions("w-clean", 1).stream()
                .map(t -> t.path("from").asText() + ">" + t.path("to").asText()).findFirst().orElseThrow());
    }

    @Test
    void waitingForInput_orAPerson_isNotDeath_tenTimesStaleAfter() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("w1"));
        ok(s.register("w2"));
        at(s, 0);
        taken(hook(s, "codex", "w1", "{\"type\":\"agent-turn-complete\",\"thread-id\":\"t1\","
                + "\"last-assistant-message\":\"" + SECRET + "\"}"));
        taken(hook(s, "claude-code", "w2", claude("Notification",
                ",\"message\":\"Claude needs your permission\",\"notification_type\":\"permission_prompt\"")));
        assertEquals("person", view(s, "w2").path("waiting").path("for").asText());
        for (int sec = 15; sec <= 600; sec += 15) {
            at(s, sec);
            assertEquals(List.of(), s.sweep(), "nobody dies at " + sec + " s");
        }
        assertEquals("ready", s.status("w1"));
        assertTrue(List.of("ready", "working").contains(s.status("w2")));
        s.pump.drain();
        List<JsonNode> awaiting = onBus(s, "AgentAwaitingInput");
        assertEquals(1, awaiting.size(), "one alert for the wait, however many sweeps it lasts");
        assertEquals("w2", awaiting.get(0).path("agentId").asText());
        assertEquals(T0.toString(), awaiting.get(0).path("since").asText());
        assertEquals(List.of(), onBus(s, "AgentInputResumed"));

        // The person answers: activity resumes, and the next sweep resolves the alert once.
        at(s, 610);
        taken(hook(s, "claude-code", "w2", claude("PostToolUse", ",\"tool_name\":\"Bash\"")));
        at(s, 615);
        s.sweep();
        at(s, 630);
        s.sweep();
        s.pump.drain();
        List<JsonNode> resumed = onBus(s, "AgentInputResumed");
        assertEquals(1, resumed.size());
        assertEquals(T0.toString(), resumed.get(0).path("since").asText(), "the resume names its wait");
        assertEquals(1, onBus(s, "AgentAwaitingInput").size());
    }

    @Test
    void toolCall_runsUnderTheWorkingAllowance_andACrashInItIsFoundAfterIt() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("t1"));
        at(s, 0);
        taken(hook(s, "gemini", "t1", "{\"session_id\":\"g\",\"hook_event_name\":\"BeforeTool\","
                + "\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":\"mvn test\"}}"));
        assertEquals("working", s.status("t1"));
        // A 10-minute test run: no beat, no death.
        for (int sec = 15; sec <= 900; sec += 15) {
            at(s, sec);
            assertEquals(List.of(), s.sweep(), "alive at " + sec + " s");
        }
        // The process died in the tool call: nothing fires; dead after the allowance plus the grace's sweeps.
        List<String> dead = List.of();
        int sec = 915;
        for (; sec <= 960 && dead.isEmpty(); sec += 15) {
            at(s, sec);
            dead = s.sweep();
        }
        assertEquals(List.of(TEAM + "/t1"), dead);
        assertTrue(sec - 15 <= 930, "dead within the working allowance plus the sweep bound: " + (sec - 15) + " s");
    }

    @Test
    void repeatedEvents_coalesce_andADeadAgentWithActivityJoins() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("b1"));
        at(s, 0);
        taken(hook(s, "claude-code", "b1", claude("UserPromptSubmit", "")));
        long beats = Long.parseLong(s.agentItem("b1").get("beats").n());
        for (int i = 1; i <= 20; i++) {
            at(s, i);
            taken(hook(s, "claude-code", "b1", claude(i % 2 == 0 ? "PostToolUse" : "PostToolBatch", "")));
        }
        assertEquals(beats, Long.parseLong(s.agentItem("b1").get("beats").n()),
                "20 events in one state within the 60 s window: no write");
        at(s, 61);
        taken(hook(s, "claude-code", "b1", claude("PostToolUse", "")));
        assertEquals(beats + 1, Long.parseLong(s.agentItem("b1").get("beats").n()), "past the window: one write");

        s.forceStatus("b1", "dead");
        at(s, 32);
        taken(hook(s, "claude-code", "b1", claude("Stop", "")));
        assertEquals("ready", s.status("b1"), "a sign of life from a dead agent is proof of life: it joins");
    }

    @Test
    void theAgentInAHeader_andRefusals_writeNothing() throws Exception {
        TestStack s = STACKS.open();
        ok(s.register("h1"));
        ok(s.register("agent-1")); // the fixture's X-Lifeline-Agent header names agent-1
        String key = s.key(TEAM, Scope.AGENT);
        taken(s.send("team-hook", key, Map.of("team", TEAM, "runtime", "opencode"), null,
                "{\"type\":\"session.status\",\"properties\":{\"sessionID\":\"ses_1\",\"status\":{\"type\":\"busy\"}}}"));
        assertEquals("working", s.status("agent-1"));
        TestStack.Reply badRuntime = s.writesNothing(() -> s.send("hook", key,
                Map.of("team", TEAM, "agentId", "h1", "runtime", "cursor"), null, "{}"));
        assertEquals(400, badRuntime.status());
        assertEquals("INVALID_RUNTIME", badRuntime.code());
        TestStack.Reply notJson = s.writesNothing(() -> hook(s, "codex", "h1", "{\"type\":"));
        assertEquals(400, notJson.status());
        assertEquals("INVALID_JSON", notJson.code());
        TestStack.Reply unknown = s.writesNothing(() -> hook(s, "codex", "nobody", "{\"type\":\"agent-turn-complete\"}"));
        assertEquals(404, unknown.status());
        TestStack.Reply ignored = s.writesNothing(() -> hook(s, "claude-code", "h1", claude("FileChanged", "")));
        taken(ignored);
        assertNull(s.agentItem("h1").get("wIn"));
    }

    @Test
    void aTeamsAllowance_isItsAgents_unlessAnAgentGivesItsOwn() throws Exception {
        TestStack s = STACKS.open();
        JsonNode settings = ok(s.team("put-settings", "{\"workingAllowanceSeconds\":120}")).body();
        assertEquals(120, settings.path("workingAllowanceSeconds").asInt());
        ok(s.register("ta"));
        ok(s.team("register", "{\"agentId\":\"own\",\"name\":\"Own\",\"role\":\"worker\","
                + "\"workingAllowanceSeconds\":300}"));
        at(s, 0);
        taken(hook(s, "claude-code", "ta", claude("PreToolUse", ",\"tool_name\":\"Bash\"")));
        taken(hook(s, "claude-code", "own", claude("PreToolUse", ",\"tool_name\":\"Bash\"")));
        assertEquals(T0.plusSeconds(120).toString(), view(s, "ta").path("deadline").asText(), "the team's 120 s");
        assertEquals(T0.plusSeconds(300).toString(), view(s, "own").path("deadline").asText(), "its own 300 s");
    }
}
