package io.lifeline.hooks;

/**
 * What Lifeline reads of one hook body: names and ids only, each cut to a bound. {@code event}: the hook's event
 * name ({@code hook_event_name}, Codex notify's or opencode's {@code type}); {@code detail}: the one field that
 * refines it (Claude's {@code notification_type}, opencode's session status, a session end's {@code reason});
 * {@code errorText}: the error a failure event carries (for a Claude Code {@code StopFailure} of a {@code rate_limit},
 * also the API error its last message holds), for classification in memory only: it is never stored,
 * logged or published, because a failed tool's error can hold its output. {@code subagentId}, {@code subagentType}:
 * a {@code SubagentStart}'s or {@code SubagentStop}'s {@code agent_id} and {@code agent_type} (null for every other
 * event), checked by the reader: a string of at most {@link #MAX_NAME} characters, the id required.
 */
public record HookEvent(HookRuntime runtime, String event, String sessionId, String toolName, String detail,
                        String errorText, String subagentId, String subagentType) {

    /** The subagent events whose {@code agent_id} and {@code agent_type} are read. */
    public static final String SUBAGENT_START = "SubagentStart";
    public static final String SUBAGENT_STOP = "SubagentStop";

    /** An event without a subagent. */
    public HookEvent(HookRuntime runtime, String event, String sessionId, String toolName, String detail,
                     String errorText) {
        this(runtime, event, sessionId, toolName, detail, errorText, null, null);
    }

    /** True for a subagent's start or stop. */
    public boolean subagentEvent() {
        return SUBAGENT_START.equals(event) || SUBAGENT_STOP.equals(event);
    }

    /** The most of a name or id kept. */
    public static final int MAX_NAME = 128;
    /** The most of an error's text kept for classification. */
    public static final int MAX_ERROR_TEXT = 2_000;

    /** The signal this event gives, per the runtime's mapping. */
    public HookSignal signal() {
        return HookMapping.signal(this);
    }
}
