package io.lifeline.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link HookReader} over the bodies the runtimes send (shapes as Claude Code 2.1, Codex 0.171, Gemini CLI 0.61 and
 * Lifeline's opencode plugin post them): it keeps names and ids, and nothing of the content.
 */
@Tag("unit")
class HookReaderTest {
    private static final String SECRET = "s3cr3t-7f1c";

    private static HookEvent read(HookRuntime r, String json) {
        return HookReader.read(r, json.getBytes(StandardCharsets.UTF_8));
    }

    /** Every text the reader kept, for the "no content" checks. */
    private static String kept(HookEvent e) {
        return String.join("|", String.valueOf(e.event()), String.valueOf(e.sessionId()), String.valueOf(e.toolName()),
                String.valueOf(e.detail()));
    }

    @Test
    void read_claudePreToolUse_keepsEventSessionAndTool_notTheInput() {
        HookEvent e = read(HookRuntime.CLAUDE_CODE, "{\"session_id\":\"e0f98477-1\",\"transcript_path\":\"/home/u/"
                + SECRET + ".jsonl\",\"cwd\":\"/work\",\"prompt_id\":\"83e5\",\"permission_mode\":\"bypassPermissions\","
                + "\"effort\":{\"level\":\"high\"},\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
                + "\"tool_input\":{\"command\":\"echo " + SECRET + "\",\"description\":\"say hi\"},\"tool_use_id\":\"t1\"}");
        assertEquals("PreToolUse", e.event());
        assertEquals("e0f98477-1", e.sessionId());
        assertEquals("Bash", e.toolName());
        assertNull(e.errorText());
        assertFalse(kept(e).contains(SECRET));
        assertEquals(HookSignal.TOOL, e.signal());
    }

    @Test
    void read_claudeNotification_refinesByType() {
        HookEvent e = read(HookRuntime.CLAUDE_CODE, "{\"session_id\":\"s\",\"hook_event_name\":\"Notification\","
                + "\"message\":\"Claude needs your permission\",\"notification_type\":\"permission_prompt\"}");
        assertEquals("permission_prompt", e.detail());
        assertEquals(HookSignal.WAITING_FOR_PERSON, e.signal());
        assertEquals(HookSignal.TURN_ENDED, read(HookRuntime.CLAUDE_CODE,
                "{\"hook_event_name\":\"Notification\",\"notification_type\":\"idle_prompt\"}").signal());
        assertEquals(HookSignal.IGNORED, read(HookRuntime.CLAUDE_CODE,
                "{\"hook_event_name\":\"Notification\",\"notification_type\":\"auth_success\"}").signal());
    }

    @Test
    void read_claudeStopFailure_keepsTheErrorForClassificationOnly() {
        HookEvent e = read(HookRuntime.CLAUDE_CODE, "{\"session_id\":\"s\",\"hook_event_name\":\"StopFailure\","
                + "\"error\":\"invalid_request\",\"error_details\":\"prompt is too long: 210000 tokens > 200000\","
                + "\"last_assistant_message\":\"" + SECRET + "\"}");
        assertEquals(HookSignal.FAILED, e.signal());
        assertEquals("invalid_request: prompt is too long: 210000 tokens > 200000", e.errorText());
        assertFalse(kept(e).contains(SECRET));
    }

    @Test
    void read_codexNotify_kebabCaseShape() {
        HookEvent e = read(HookRuntime.CODEX, "{\"type\":\"agent-turn-complete\",\"thread-id\":\"01a2\",\"turn-id\":"
                + "\"01a2-63dd\",\"cwd\":\"/w\",\"client\":\"codex_exec\",\"input-messages\":[\"run " + SECRET + "\"],"
                + "\"last-assistant-message\":\"Done " + SECRET + "\"}");
        assertEquals("agent-turn-complete", e.event());
        assertEquals("01a2", e.sessionId());
        assertEquals(HookSignal.TURN_ENDED, e.signal());
        assertFalse(kept(e).contains(SECRET));
    }

    @Test
    void read_geminiBeforeModel_skipsTheWholeRequest() {
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            big.append("{\"role\":\"user\",\"parts\":[{\"text\":\"").append(SECRET).append("\"}]},");
        }
        String body = "{\"session_id\":\"g1\",\"hook_event_name\":\"BeforeModel\",\"timestamp\":\"2026-11-27T07:40:35Z\","
                + "\"llm_request\":{\"contents\":[" + big + "{}]}}";
        assertTrue(body.length() > 6_000_000, "a body of several megabytes");
        HookEvent e = read(HookRuntime.GEMINI, body);
        assertEquals("BeforeModel", e.event());
        assertEquals("g1", e.sessionId());
        assertEquals(HookSignal.ACTIVE, e.signal());
        assertFalse(kept(e).contains(SECRET));
    }

    @Test
    void read_opencodeEvents_fromProperties() {
        HookEvent idle = read(HookRuntime.OPENCODE, "{\"type\":\"session.idle\",\"properties\":{\"sessionID\":\"ses_1\"}}");
        assertEquals("ses_1", idle.sessionId());
        assertEquals(HookSignal.TURN_ENDED, idle.signal());
        HookEvent busy = read(HookRuntime.OPENCODE, "{\"type\":\"session.status\",\"properties\":{\"sessionID\":"
                + "\"ses_1\",\"status\":{\"type\":\"busy\"}}}");
        assertEquals(HookSignal.ACTIVE, busy.signal());
        HookEvent created = read(HookRuntime.OPENCODE, "{\"type\":\"session.created\",\"properties\":{\"info\":{"
                + "\"id\":\"ses_2\",\"title\":\"" + SECRET + "\"}}}");
        assertEquals("ses_2", created.sessionId());
        assertFalse(kept(created).contains(SECRET));
        HookEvent error = read(HookRuntime.OPENCODE, "{\"type\":\"session.error\",\"properties\":{\"sessionID\":\"s\","
                + "\"error\":{\"name\":\"APIError\",\"data\":{\"message\":\"overloaded\",\"responseBody\":\"" + SECRET
                + "\"}}}}");
        assertEquals(HookSignal.FAILED, error.signal());
        assertEquals("APIError: overloaded", error.errorText());
        HookEvent tool = read(HookRuntime.OPENCODE, "{\"type\":\"tool.execute.before\",\"properties\":{\"sessionID\":"
                + "\"s\",\"tool\":\"bash\",\"args\":{\"command\":\"" + SECRET + "\"}}}");
        assertEquals("bash", tool.toolName());
        assertEquals(HookSignal.TOOL, tool.signal());
    }

    @Test
    void read_unknownEvent_isIgnored_notRefused() {
        assertEquals(HookSignal.IGNORED, read(HookRuntime.CLAUDE_CODE, "{\"hook_event_name\":\"FileChanged\"}").signal());
        assertEquals(HookSignal.IGNORED, read(HookRuntime.GEMINI, "{\"session_id\":\"x\"}").signal());
    }

    @Test
    void read_namesAreCutAndStrippedOfControlCharacters() {
        HookEvent e = read(HookRuntime.CLAUDE_CODE, "{\"hook_event_name\":\"Stop\",\"session_id\":\"a\\u0000b\\nc"
                + "x".repeat(500) + "\"}");
        assertEquals(HookEvent.MAX_NAME, e.sessionId().length());
        assertTrue(e.sessionId().startsWith("abcx"));
    }

    @Test
    void read_notAnObject_orNotJson_isRefused() {
        assertThrows(HookReader.HookBodyException.class, () -> read(HookRuntime.CODEX, "[1,2]"));
        assertThrows(HookReader.HookBodyException.class, () -> read(HookRuntime.CODEX, "{\"type\":"));
        assertThrows(HookReader.HookBodyException.class, () -> read(HookRuntime.CODEX, "{} {}"));
        assertThrows(HookReader.HookBodyException.class, () -> read(HookRuntime.CODEX, ""));
        String deep = "{\"x\":" + "[".repeat(HookReader.MAX_DEPTH) + "]".repeat(HookReader.MAX_DEPTH) + "}";
        assertThrows(HookReader.HookBodyException.class, () -> read(HookRuntime.CODEX, deep));
        String deepEnough = "{\"x\":" + "[".repeat(HookReader.MAX_DEPTH - 1) + "]".repeat(HookReader.MAX_DEPTH - 1) + "}";
        assertEquals(HookSignal.IGNORED, read(HookRuntime.CODEX, deepEnough).signal());
    }

    @Test
    void mapping_everyRuntimeHasItsTurnEnd_sessionEnd_andPersonWait() {
        for (HookRuntime r : HookRuntime.values()) {
            var signals = HookMapping.rows(r).stream().map(HookMapping.Row::signal).toList();
            assertTrue(signals.contains(HookSignal.SESSION_STARTED), r.wire());
            assertTrue(signals.contains(HookSignal.TURN_ENDED), r.wire());
            assertTrue(signals.contains(HookSignal.WAITING_FOR_PERSON), r.wire());
            assertTrue(signals.contains(HookSignal.SESSION_ENDED), r.wire());
            assertTrue(signals.contains(HookSignal.TOOL), r.wire());
        }
        assertEquals(HookRuntime.CLAUDE_CODE, HookRuntime.fromWire("claude-code").orElseThrow());
        assertTrue(HookRuntime.fromWire("cursor").isEmpty());
    }

    @Test
    void read_subagentEvents_keepIdAndTypeOnly_andOnlyForThem() {
        HookEvent start = read(HookRuntime.CLAUDE_CODE, "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\","
                + "\"agent_id\":\"a5d1\",\"agent_type\":\"Explore\",\"prompt\":\"" + SECRET + "\"}");
        assertEquals("a5d1", start.subagentId());
        assertEquals("Explore", start.subagentType());
        HookEvent stop = read(HookRuntime.CODEX, "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStop\","
                + "\"agent_id\":\"a5d1\",\"agent_transcript_path\":\"/tmp/" + SECRET + ".jsonl\","
                + "\"last_assistant_message\":\"" + SECRET + "\"}");
        assertEquals("a5d1", stop.subagentId());
        assertNull(stop.subagentType());
        assertNull(stop.errorText());
        assertFalse(stop.toString().contains(SECRET), stop.toString());
        HookEvent inside = read(HookRuntime.CLAUDE_CODE, "{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
                + "\"agent_id\":\"a5d1\",\"agent_type\":\"Explore\",\"tool_name\":\"Bash\"}");
        assertNull(inside.subagentId(), "a hook fired inside a subagent keeps no subagent");
    }

    @Test
    void read_subagentEvents_refuseABadIdOrType() {
        String head = "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\",";
        assertThrows(HookReader.HookBodyException.class,
                () -> read(HookRuntime.CLAUDE_CODE, head + "\"agent_id\":\"" + "x".repeat(129) + "\"}"));
        assertEquals("x".repeat(128),
                read(HookRuntime.CLAUDE_CODE, head + "\"agent_id\":\"" + "x".repeat(128) + "\"}").subagentId());
        assertThrows(HookReader.HookBodyException.class,
                () -> read(HookRuntime.CLAUDE_CODE, head + "\"agent_id\":7}"));
        assertThrows(HookReader.HookBodyException.class,
                () -> read(HookRuntime.CLAUDE_CODE, head + "\"agent_id\":\"a\",\"agent_type\":[\"x\"]}"));
        assertThrows(HookReader.HookBodyException.class,
                () -> read(HookRuntime.CLAUDE_CODE, head + "\"agent_id\":\" \"}"));
        assertThrows(HookReader.HookBodyException.class,
                () -> read(HookRuntime.CLAUDE_CODE, head + "\"agent_type\":\"Explore\"}"));
    }
}
