package io.lifeline.hooks;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one mapping from each runtime's hook events to what they mean for liveness, as data: {@link #rows} is what
 * docs show and tests hold, {@link #signal} applies it. An event a runtime adds later and this table does not name
 * is {@link HookSignal#IGNORED}: answered, never an error, never a write.
 */
public final class HookMapping {
    /**
     * The event the watcher left by a direct-mode session-start hook sends when the runtime's process is gone: not
     * a runtime's own event; in the tables of the runtimes whose session start leaves a watcher.
     */
    public static final String RUNTIME_EXITED = "LifelineRuntimeExited";

    /** One row of the table: an event (with the detail that refines it, or null) and its signal. */
    public record Row(String event, String detail, HookSignal signal, String note) {
    }

    private static final Map<HookRuntime, List<Row>> ROWS = new EnumMap<>(HookRuntime.class);

    static {
        ROWS.put(HookRuntime.CLAUDE_CODE, List.of(
                row("SessionStart", HookSignal.SESSION_STARTED, "a command hook: HTTP hooks are skipped for it"),
                row("UserPromptSubmit", HookSignal.ACTIVE, "a turn begins"),
                row("UserPromptExpansion", HookSignal.ACTIVE, null),
                row("PreToolUse", HookSignal.TOOL, "the tool runs until PostToolUse"),
                row("PostToolUse", HookSignal.ACTIVE, "the model takes the result"),
                row("PostToolBatch", HookSignal.ACTIVE, null),
                row("PostToolUseFailure", HookSignal.TOOL_FAILED, "errors route if a context limit or API error"),
                row("SubagentStart", HookSignal.ACTIVE, null),
                row("SubagentStop", HookSignal.ACTIVE, null),
                row("TaskCreated", HookSignal.ACTIVE, null),
                row("TaskCompleted", HookSignal.ACTIVE, null),
                row("PermissionRequest", HookSignal.WAITING_FOR_PERSON, "the permission dialog is shown"),
                row("PermissionDenied", HookSignal.ACTIVE, null),
                row("Elicitation", HookSignal.WAITING_FOR_PERSON, "an MCP server asks the person"),
                row("ElicitationResult", HookSignal.ACTIVE, null),
                new Row("Notification", "permission_prompt", HookSignal.WAITING_FOR_PERSON, null),
                new Row("Notification", "elicitation_dialog", HookSignal.WAITING_FOR_PERSON, null),
                new Row("Notification", "idle_prompt", HookSignal.TURN_ENDED, "still waiting for a prompt"),
                row("Stop", HookSignal.TURN_ENDED, "the turn is over"),
                row("StopFailure", HookSignal.FAILED, "the turn ended on an API error"),
                row("PreCompact", HookSignal.COMPACTED, null),
                row("PostCompact", HookSignal.COMPACTED, null),
                row("SessionEnd", HookSignal.SESSION_ENDED, null),
                row(RUNTIME_EXITED, HookSignal.RUNTIME_EXITED, "Lifeline's watcher: the process is gone")));
        ROWS.put(HookRuntime.CODEX, List.of(
                row("SessionStart", HookSignal.SESSION_STARTED, null),
                row("UserPromptSubmit", HookSignal.ACTIVE, "a turn begins"),
                row("PreModelRequest", HookSignal.ACTIVE, null),
                row("PreToolUse", HookSignal.TOOL, "the tool runs until PostToolUse"),
                row("PostToolUse", HookSignal.ACTIVE, null),
                row("SubagentStart", HookSignal.ACTIVE, null),
                row("SubagentStop", HookSignal.ACTIVE, null),
                row("PermissionRequest", HookSignal.WAITING_FOR_PERSON, "approval needed"),
                row("Stop", HookSignal.TURN_ENDED, "the turn is over"),
                row("agent-turn-complete", HookSignal.TURN_ENDED, "notify (JSON as the last argument)"),
                row("PreCompact", HookSignal.COMPACTED, null),
                row("PostCompact", HookSignal.COMPACTED, null),
                row("SessionEnd", HookSignal.SESSION_ENDED, null),
                row(RUNTIME_EXITED, HookSignal.RUNTIME_EXITED, "Lifeline's watcher: the process is gone")));
        ROWS.put(HookRuntime.GEMINI, List.of(
                row("SessionStart", HookSignal.SESSION_STARTED, null),
                row("BeforeAgent", HookSignal.ACTIVE, "a turn begins"),
                row("BeforeModel", HookSignal.ACTIVE, "not installed: its body is the whole request"),
                row("AfterModel", HookSignal.ACTIVE, "not installed: its body is the whole response"),
                row("BeforeToolSelection", HookSignal.ACTIVE, "not installed"),
                row("BeforeTool", HookSignal.TOOL, "the tool runs until AfterTool"),
                row("AfterTool", HookSignal.ACTIVE, null),
                row("Notification", HookSignal.WAITING_FOR_PERSON, "a tool permission prompt"),
                row("AfterAgent", HookSignal.TURN_ENDED, "the turn is over"),
                row("PreCompress", HookSignal.COMPACTED, null),
                row("SessionEnd", HookSignal.SESSION_ENDED, null),
                row(RUNTIME_EXITED, HookSignal.RUNTIME_EXITED, "Lifeline's watcher: the process is gone")));
        ROWS.put(HookRuntime.OPENCODE, List.of(
                row("session.created", HookSignal.SESSION_STARTED, null),
                new Row("session.status", "busy", HookSignal.ACTIVE, null),
                new Row("session.status", "retry", HookSignal.ACTIVE, null),
                new Row("session.status", "idle", HookSignal.TURN_ENDED, null),
                row("session.idle", HookSignal.TURN_ENDED, "the turn is over"),
                row("message.updated", HookSignal.ACTIVE, null),
                row("tool.execute.before", HookSignal.TOOL, "the tool runs until tool.execute.after"),
                row("tool.execute.after", HookSignal.ACTIVE, null),
                row("permission.updated", HookSignal.WAITING_FOR_PERSON, null),
                row("permission.asked", HookSignal.WAITING_FOR_PERSON, null),
                row("permission.replied", HookSignal.ACTIVE, null),
                row("session.error", HookSignal.FAILED, null),
                row("session.compacted", HookSignal.COMPACTED, null),
                row("session.deleted", HookSignal.SESSION_ENDED, null)));
    }

    private HookMapping() {
    }

    private static Row row(String event, HookSignal signal, String note) {
        return new Row(event, null, signal, note);
    }

    /** The runtime's table, in the order docs show it. */
    public static List<Row> rows(HookRuntime runtime) {
        return Collections.unmodifiableList(ROWS.get(runtime));
    }

    /** The event names the runtime's table names (what an installer may subscribe to). */
    public static List<String> events(HookRuntime runtime) {
        Map<String, Boolean> names = new LinkedHashMap<>();
        ROWS.get(runtime).forEach(r -> names.put(r.event(), Boolean.TRUE));
        return List.copyOf(names.keySet());
    }

    /**
     * The signal of {@code e}: the row whose event and detail match; else the row of its event with no detail;
     * else {@link HookSignal#IGNORED}. A refined event (Claude's Notification) with an unknown detail is ignored.
     */
    public static HookSignal signal(HookEvent e) {
        if (e == null || e.event() == null) {
            return HookSignal.IGNORED;
        }
        HookSignal plain = null;
        for (Row r : ROWS.get(e.runtime())) {
            if (!r.event().equals(e.event())) {
                continue;
            }
            if (r.detail() == null) {
                plain = r.signal();
            } else if (r.detail().equals(e.detail())) {
                return r.signal();
            }
        }
        return plain == null ? HookSignal.IGNORED : plain;
    }
}
