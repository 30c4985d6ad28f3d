package io.lifeline.client.daemon;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * A runtime's hook body read for what the daemon needs, and nothing else: the event's name, its session id, a
 * notification's type, and for a failure only the category of its error text (the text itself is dropped). Every
 * other value is skipped unread (prompts, tool inputs and outputs, messages, transcript paths).
 */
final class HookSignals {
    private static final JsonFactory JSON = new JsonFactory();

    /** What a hook means for liveness. */
    enum Signal { SESSION_STARTED, ACTIVE, TOOL, TURN_ENDED, WAITING_FOR_PERSON, SESSION_ENDED, FAILED, COMPACTED,
        IGNORED }

    /** A hook as read: its signal, the session it named (or null), and for FAILED the error's category. */
    record Read(Signal signal, String session, String errorCategory) {
    }

    /** The errors route's categories, as its classifier names them (context limit, transient, anything else). */
    static final String CONTEXT_LIMIT = "context limit";
    static final String TRANSIENT = "transient";
    static final String UNKNOWN = "unknown";

    private HookSignals() {
    }

    static Read read(AgentRuntime runtime, byte[] body) throws IOException {
        String event = null;
        String session = null;
        String notification = null;
        String type = null;
        String status = null;
        String error = null;
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not an object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "hook_event_name" -> event = text(p, t);
                    case "session_id", "thread-id" -> session = session == null ? text(p, t) : session;
                    case "notification_type" -> notification = text(p, t);
                    case "type" -> type = text(p, t);
                    case "error" -> error = t == JsonToken.VALUE_STRING ? p.getText() : skip(p, t);
                    case "properties" -> {
                        if (t == JsonToken.START_OBJECT) {
                            while (p.nextToken() == JsonToken.FIELD_NAME) {
                                String inner = p.currentName();
                                JsonToken v = p.nextToken();
                                if ("sessionID".equals(inner)) {
                                    session = text(p, v);
                                } else if ("status".equals(inner) && v == JsonToken.START_OBJECT) {
                                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                                        JsonToken sv = p.nextToken();
                                        if ("type".equals(p.currentName())) {
                                            status = text(p, sv);
                                        } else {
                                            skip(p, sv);
                                        }
                                    }
                                } else if ("error".equals(inner)) {
                                    error = v == JsonToken.VALUE_STRING ? p.getText() : errorText(p, v);
                                } else {
                                    skip(p, v);
                                }
                            }
                        } else {
                            skip(p, t);
                        }
                    }
                    default -> skip(p, t);
                }
            }
        }
        Signal s = event != null ? claudeLike(event, notification) : opencodeOrNotify(type, status);
        return new Read(s, session, s == Signal.FAILED ? category(error) : null);
    }

    private static String text(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        skip(p, t);
        return null;
    }

    private static String skip(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            p.skipChildren();
        }
        return null;
    }

    /** An error object's {@code message} or {@code data.message}, for its category only. */
    private static String errorText(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.START_OBJECT) {
            return skip(p, t);
        }
        String found = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (("message".equals(name) || "name".equals(name)) && v == JsonToken.VALUE_STRING) {
                found = found == null ? p.getText() : found + " " + p.getText();
            } else if ("data".equals(name)) {
                String inner = errorText(p, v);
                if (inner != null) {
                    found = found == null ? inner : found + " " + inner;
                }
            } else {
                skip(p, v);
            }
        }
        return found;
    }

    /** Claude Code, Codex and Gemini CLI: {@code hook_event_name}. */
    private static Signal claudeLike(String event, String notification) {
        return switch (event) {
            case "SessionStart" -> Signal.SESSION_STARTED;
            case "UserPromptSubmit", "BeforeAgent", "BeforeModel", "AfterModel", "BeforeToolSelection",
                    "SubagentStart", "SubagentStop" -> Signal.ACTIVE;
            case "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "BeforeTool", "AfterTool" ->
                    Signal.TOOL;
            case "Stop", "AfterAgent" -> Signal.TURN_ENDED;
            case "PermissionRequest", "Elicitation" -> Signal.WAITING_FOR_PERSON;
            case "Notification" -> "idle_prompt".equals(notification) ? Signal.TURN_ENDED : Signal.WAITING_FOR_PERSON;
            case "SessionEnd" -> Signal.SESSION_ENDED;
            case "StopFailure" -> Signal.FAILED;
            case "PreCompact", "PostCompact", "PreCompress" -> Signal.COMPACTED;
            default -> Signal.IGNORED;
        };
    }

    /** opencode's bus events ({@code type}, {@code properties}) and Codex's notify ({@code type}). */
    private static Signal opencodeOrNotify(String type, String status) {
        if (type == null) {
            return Signal.IGNORED;
        }
        return switch (type) {
            case "agent-turn-complete", "session.idle" -> Signal.TURN_ENDED;
            case "session.created" -> Signal.SESSION_STARTED;
            case "session.status" -> "busy".equals(status) || "retry".equals(status) ? Signal.ACTIVE
                    : "idle".equals(status) ? Signal.TURN_ENDED : Signal.IGNORED;
            case "session.error" -> Signal.FAILED;
            case "session.deleted" -> Signal.SESSION_ENDED;
            case "permission.updated", "permission.asked", "question.asked" -> Signal.WAITING_FOR_PERSON;
            case "permission.replied", "question.replied" -> Signal.ACTIVE;
            case "tool.execute.before", "tool.execute.after" -> Signal.TOOL;
            case "session.compacted" -> Signal.COMPACTED;
            default -> Signal.IGNORED;
        };
    }

    private static final List<String> CONTEXT_MARKERS = List.of("context", "token limit", "too long");
    private static final List<String> TRANSIENT_MARKERS = List.of("rate limit", "rate_limit", "timeout", "timed out",
            "overloaded", "429", "500", "502", "503", "529", "server_error", "api_error", "network");

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
     * The errors route's message for a failure of this category: the category alone, in words the route's
     * classifier files under the same category ("context" for a context limit, "rate limit" for a transient
     * error), so nothing of the runtime's error text is stored.
     */
    static String errorMessage(String category) {
        return switch (category) {
            case CONTEXT_LIMIT -> "runtime hook reported a failure: context limit";
            case TRANSIENT -> "runtime hook reported a failure: transient (rate limit, timeout or overload)";
            default -> "runtime hook reported a failure: uncategorised";
        };
    }
}
