package io.lifeline.client.daemon;

import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.hooks.HookSignal;
import io.lifeline.hooks.UsageLimit;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

/**
 * A runtime's hook body read for what the daemon needs, through core's {@link HookReader} (names and ids only,
 * every other value skipped unread) and {@code HookMapping}'s table; for a failure, only the category of its error
 * text is kept (the text itself goes no further than this class).
 */
final class HookSignals {
    /**
     * A hook as read: its signal, the session it named (or null), for a failure to report its category, and for a
     * failure that reports a provider's usage limit, when the limit resets ({@code limitUntil}, else null); for a
     * Codex hook, the session's rollout file it names ({@code rollout}, else null: {@link CodexLimit}).
     */
    record Read(HookSignal signal, String event, String session, String errorCategory, Instant limitUntil,
                String subagentId, String subagentType, Path rollout) {
    }

    /** The errors route's categories, as its classifier names them (context limit, transient, anything else). */
    static final String CONTEXT_LIMIT = "context limit";
    static final String TRANSIENT = "transient";
    static final String UNKNOWN = "unknown";

    private HookSignals() {
    }

    /**
     * The signal of {@code body}. A failed turn ({@link HookSignal#FAILED}) is always reported, with its category;
     * a failed tool call ({@link HookSignal#TOOL_FAILED}) only when its error is a context limit or a transient API
     * error (a failing test is the agent's work, not a fault). Throws {@link HookReader.HookBodyException} for a
     * body that is not JSON.
     */
    static Read read(AgentRuntime runtime, byte[] body, Instant now) {
        HookEvent e = HookReader.read(hookRuntime(runtime), body);
        HookSignal s = e.signal();
        String category = null;
        if (s == HookSignal.FAILED) {
            category = category(e.errorText());
        } else if (s == HookSignal.TOOL_FAILED) {
            String c = category(e.errorText());
            category = UNKNOWN.equals(c) ? null : c;
        }
        Instant limitUntil = null;
        if (s == HookSignal.FAILED && UsageLimit.reported(e.errorText())) {
            // Parked until the reset the error names, else the default (docs/liveness.md, "Parked at a usage limit").
            limitUntil = UsageLimit.reset(e.errorText(), now).orElse(now.plus(UsageLimit.DEFAULT_RESET));
        }
        Path rollout = runtime == AgentRuntime.CODEX ? CodexLimit.rollout(body, e.sessionId()) : null;
        if (rollout != null && s == HookSignal.SESSION_ENDED) {
            // Codex fires no failure hook at a usage limit: its session's last turn says so (docs/runtimes/codex.md).
            limitUntil = CodexLimit.limitUntil(rollout, now, ZoneId.systemDefault()).orElse(null);
        }
        return new Read(s, e.event(), e.sessionId(), category, limitUntil, e.subagentId(), e.subagentType(), rollout);
    }

    static HookRuntime hookRuntime(AgentRuntime runtime) {
        return HookRuntime.fromWire(runtime.wire()).orElseThrow();
    }

    /** The errors route's own markers, so a category here is the one the route would give the text. */
    private static final List<String> CONTEXT_MARKERS = List.of("context", "token limit");
    private static final List<String> TRANSIENT_MARKERS = List.of("rate limit", "rate_limit", "timeout", "timed out",
            "overloaded", "429", "503", "529");

    /** The error's category, from its text; the text goes no further. */
    static String category(String error) {
        if (error == null) {
            return UNKNOWN;
        }
        String m = error.toLowerCase(Locale.ROOT);
        if (CONTEXT_MARKERS.stream().anyMatch(m::contains)) {
            return CONTEXT_LIMIT;
        }
        if (TRANSIENT_MARKERS.stream().anyMatch(m::contains)) {
            return TRANSIENT;
        }
        return UNKNOWN;
    }

    /**
     * The errors route's message for a failure of this category, as the hook routes record it: the runtime, the
     * event and the category, in words the route's classifier files under the same category ("context" for a context
     * limit, "rate limit" for a transient error); nothing of the runtime's error text.
     */
    static String errorMessage(AgentRuntime runtime, String event, String category) {
        String what = switch (category) {
            case CONTEXT_LIMIT -> "context limit";
            case TRANSIENT -> "transient (rate limit, timeout or overload)";
            default -> "unknown";
        };
        String name = event == null ? "failure" : event.replaceAll("[^A-Za-z0-9._-]", "");
        return runtime.wire() + " " + name + ": " + what + " (reported by the runtime's hook; its text is not kept)";
    }
}
