package io.lifeline.hooks;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Reads a runtime's hook body as the runtime sends it (Claude Code, Codex and Gemini CLI hooks; Codex's
 * {@code notify}; opencode's events as Lifeline's plugin forwards them), keeping only the names and ids in
 * {@link HookEvent}. It streams: every other value (a prompt, a tool's input or output, a whole model request) is
 * skipped token by token and never becomes a string, so a body of megabytes costs no more memory than a small one,
 * and its content cannot reach anything this class returns.
 */
public final class HookReader {
    /** The deepest nesting a hook body may have (as the API's bodies): a deeper one is refused, not walked. */
    public static final int MAX_DEPTH = 64;
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build()).build();

    /** A body that is not a JSON object. */
    public static final class HookBodyException extends IllegalArgumentException {
        HookBodyException(String message) {
            super(message);
        }
    }

    private HookReader() {
    }

    public static HookEvent read(HookRuntime runtime, byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            return read(runtime, p);
        } catch (JsonProcessingException e) {
            throw new HookBodyException("The hook body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static HookEvent read(HookRuntime runtime, InputStream body) throws IOException {
        try (JsonParser p = JSON.createParser(body)) {
            return read(runtime, p);
        } catch (JsonProcessingException e) {
            throw new HookBodyException("The hook body is not valid JSON: " + e.getOriginalMessage());
        }
    }

    /** What one object level holds of interest; nested opencode {@code properties} fill the same fields. */
    private static final class Fields {
        String hookEventName;
        String type;
        String sessionId;
        String threadId;
        String toolName;
        String notificationType;
        String statusType;
        String reason;
        /**
         * Claude Code's last assistant message: kept only for a {@code StopFailure} of a {@code rate_limit}, where it
         * is the API's error (the text a usage limit's reset is read from).
         */
        String lastMessage;
        /** A subagent event's {@code agent_id} and {@code agent_type}, as sent (checked once the event is known). */
        String subagentId;
        String subagentType;
        /** A subagent field that was not a string. */
        boolean subagentNotText;
        final StringBuilder error = new StringBuilder();

        void error(String text) {
            if (text == null || text.isBlank() || error.length() >= HookEvent.MAX_ERROR_TEXT) {
                return;
            }
            if (error.length() > 0) {
                error.append(": ");
            }
            error.append(text, 0, Math.min(text.length(), HookEvent.MAX_ERROR_TEXT - error.length()));
        }
    }

    private static HookEvent read(HookRuntime runtime, JsonParser p) throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new HookBodyException("The hook body must be a JSON object");
        }
        Fields f = new Fields();
        topLevel(p, f);
        if (p.nextToken() != null) {
            throw new HookBodyException("The hook body must hold one JSON object");
        }
        String event = f.hookEventName != null ? f.hookEventName : f.type;
        if ("StopFailure".equals(event) && f.error.indexOf("rate_limit") >= 0) {
            // A turn ended by a rate limit: its last message is the API's error, whose reset UsageLimit reads.
            f.error(f.lastMessage);
        }
        String session = f.sessionId != null ? f.sessionId : f.threadId;
        String detail = f.notificationType != null ? f.notificationType
                : f.statusType != null ? f.statusType : f.reason;
        String eventName = name(event);
        HookEvent plain = new HookEvent(runtime, eventName, name(session), name(f.toolName), name(detail),
                f.error.length() == 0 ? null : f.error.toString());
        if (!plain.subagentEvent()) {
            return plain; // another event's agent_id (a hook fired inside a subagent) is not kept
        }
        return new HookEvent(runtime, eventName, plain.sessionId(), plain.toolName(), plain.detail(),
                plain.errorText(), subagentText("agent_id", f.subagentId, f, true),
                subagentText("agent_type", f.subagentType, f, false));
    }

    /**
     * A subagent event's id or type: a string of 1 to {@link HookEvent#MAX_NAME} printable characters (the id
     * required); anything else refuses the body, so nothing is written for it.
     */
    private static String subagentText(String field, String text, Fields f, boolean required) {
        if (f.subagentNotText) {
            throw new HookBodyException("A subagent event's 'agent_id' and 'agent_type' must be strings");
        }
        if (text == null) {
            if (required) {
                throw new HookBodyException("A subagent event needs its '" + field + "'");
            }
            return null;
        }
        if (text.isBlank() || text.length() > HookEvent.MAX_NAME
                || text.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new HookBodyException("A subagent event's '" + field + "' must be 1 to " + HookEvent.MAX_NAME
                    + " printable characters");
        }
        return text;
    }

    /** A string member's text, bounded to one more than a name (a longer one is refused); else flagged. */
    private static String subagentField(JsonParser p, JsonToken value, Fields f) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.VALUE_STRING) {
            f.subagentNotText = true;
            p.skipChildren();
            return null;
        }
        String text = p.getText();
        return text.length() <= HookEvent.MAX_NAME ? text : text.substring(0, HookEvent.MAX_NAME + 1);
    }

    /** What is done with one member of an object: its name and its value's first token. */
    @FunctionalInterface
    private interface Member {
        void read(String field, JsonToken value) throws IOException;
    }

    /** Each member of the object the parser is in, to its end. */
    private static void members(JsonParser p, Member member) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            member.read(field, p.nextToken());
        }
    }

    private static void topLevel(JsonParser p, Fields f) throws IOException {
        members(p, (field, value) -> {
            switch (field) {
                case "hook_event_name" -> f.hookEventName = text(p, value);
                case "type" -> f.type = text(p, value);
                case "session_id" -> f.sessionId = text(p, value);
                case "thread-id" -> f.threadId = text(p, value);
                case "tool_name" -> f.toolName = text(p, value);
                case "notification_type" -> f.notificationType = text(p, value);
                case "reason" -> f.reason = text(p, value);
                case "error", "error_details" -> error(p, value, f);
                case "last_assistant_message" -> f.lastMessage = bounded(p, value);
                case "agent_id" -> f.subagentId = subagentField(p, value, f);
                case "agent_type" -> f.subagentType = subagentField(p, value, f);
                case "properties" -> properties(p, value, f);
                default -> p.skipChildren();
            }
        });
    }

    /** opencode's event properties: the session, its status, a tool's name, an error's name and message. */
    private static void properties(JsonParser p, JsonToken value, Fields f) throws IOException {
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        members(p, (field, v) -> {
            switch (field) {
                case "sessionID" -> f.sessionId = text(p, v);
                case "tool" -> f.toolName = text(p, v);
                case "status" -> f.statusType = child(p, v, "type");
                case "info" -> {
                    String id = child(p, v, "id");
                    f.sessionId = f.sessionId == null ? id : f.sessionId;
                }
                case "error" -> error(p, v, f);
                default -> p.skipChildren();
            }
        });
    }

    /** An error as text or as an object with a name and a message (itself perhaps under {@code data}). */
    private static void error(JsonParser p, JsonToken value, Fields f) throws IOException {
        if (value == JsonToken.VALUE_STRING) {
            f.error(p.getText());
            return;
        }
        if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            return;
        }
        members(p, (field, v) -> {
            switch (field) {
                case "name", "message", "type", "code" -> f.error(text(p, v));
                case "data", "error" -> error(p, v, f);
                default -> p.skipChildren();
            }
        });
    }

    /** A string's first {@link HookEvent#MAX_ERROR_TEXT} characters, or null (anything else is skipped). */
    private static String bounded(JsonParser p, JsonToken value) throws IOException {
        if (value != JsonToken.VALUE_STRING) {
            p.skipChildren();
            return null;
        }
        String text = p.getText();
        return text.length() <= HookEvent.MAX_ERROR_TEXT ? text : text.substring(0, HookEvent.MAX_ERROR_TEXT);
    }

    /** The string member {@code name} of an object value (skipping the rest of it), or null. */
    private static String child(JsonParser p, JsonToken value, String name) throws IOException {
        if (value != JsonToken.START_OBJECT) {
            return text(p, value);
        }
        String[] found = {null};
        members(p, (field, v) -> {
            if (field.equals(name)) {
                found[0] = text(p, v);
            } else {
                p.skipChildren();
            }
        });
        return found[0];
    }

    /** A scalar's text; a structure where text was expected is skipped and read as absent. */
    private static String text(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_STRING || value == JsonToken.VALUE_NUMBER_INT) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }

    /** A name or id cut to {@link HookEvent#MAX_NAME}, control characters removed; blank is absent. */
    private static String name(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length() && out.length() < HookEvent.MAX_NAME; i++) {
            char c = text.charAt(i);
            if (c >= 0x20 && c != 0x7f) {
                out.append(c);
            }
        }
        String s = out.toString().strip();
        return s.isEmpty() ? null : s;
    }
}
