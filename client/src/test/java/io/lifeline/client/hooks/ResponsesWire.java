package io.lifeline.client.hooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@link FakeModel}'s OpenAI Responses wire (SSE), the one Codex CLI speaks: one call of its shell tool
 * ({@code exec_command}, or {@code shell}), a {@code write_stdin} poll while that command still runs past its yield,
 * then the final text; the turn-ending stream held, silent or slow as the model is set.
 */
final class ResponsesWire {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What Codex's {@code exec_command} answers for a command that outlived its yield time. */
    private static final Pattern RUNNING = Pattern.compile("Process running with session ID (\\d+)");

    private final FakeModel model;

    ResponsesWire(FakeModel model) {
        this.model = model;
    }

    /**
     * A Responses 429's body as the ChatGPT backend's {@code usage_limit_reached} answer has it: the seconds to the
     * reset, and its time ({@code resets_at}, epoch seconds) when {@code resetsAt} is not null.
     */
    static void usageLimit(ObjectNode body, String message, long seconds, Instant resetsAt) {
        ObjectNode error = body.putObject("error").put("type", "usage_limit_reached")
                .put("code", "rate_limit_exceeded").put("message", message).put("resets_in_seconds", seconds);
        if (resetsAt != null) {
            error.put("resets_at", resetsAt.getEpochSecond());
        }
    }

    /** Answers one {@code POST .../responses}; says what was answered ("tool", "poll", "text", "side", "silent"). */
    String answer(HttpExchange ex, JsonNode req) throws IOException {
        String tool = FakeModel.toolNamed(req.path("tools"), n -> n.path("name").asText(), "exec_command", "shell");
        boolean done = false;
        for (JsonNode item : req.path("input")) {
            done |= "function_call_output".equals(item.path("type").asText());
        }
        Long running = tool == null ? null : runningExec(req);
        boolean call = tool != null && !done;
        boolean turnEnding = tool != null && done && running == null;
        if (turnEnding) {
            model.hold(req.path("input").size());
        }
        ObjectNode item;
        if (running != null) {
            item = poll(running);
        } else if (call) {
            ObjectNode args = "shell".equals(tool)
                    ? (ObjectNode) JSON.createObjectNode().set("command", JSON.createArrayNode().add("sh").add("-c")
                    .add(model.command()))
                    : JSON.createObjectNode().put("cmd", model.command());
            if (model.escalated && "exec_command".equals(tool)) {
                args.put("sandbox_permissions", "require_escalated").put("justification", "Run the command?");
            }
            item = JSON.createObjectNode().put("type", "function_call").put("id", "fc_fake1")
                    .put("call_id", "call_fake1").put("name", tool).put("arguments", args.toString())
                    .put("status", "completed");
        } else {
            item = JSON.createObjectNode().put("type", "message").put("id", "msg_fake1").put("role", "assistant")
                    .put("status", "completed");
            item.putArray("content").addObject().put("type", "output_text")
                    .put("text", tool == null ? "Fake" : model.finalText()).putArray("annotations");
        }
        ObjectNode response = JSON.createObjectNode().put("id", "resp_fake").put("object", "response")
                .put("created_at", 0).put("model", req.path("model").asText("fake-model"));
        FakeModel.Sse sse = new FakeModel.Sse(ex);
        ObjectNode created = response.deepCopy().put("status", "in_progress");
        created.putArray("output");
        sse.event("response.created", JSON.createObjectNode().put("type", "response.created").set("response", created));
        ObjectNode progress = JSON.createObjectNode().put("type", "response.in_progress").set("response", created);
        if (turnEnding && !model.slowOrSilentResponse(req.path("input").size(),
                () -> sse.event("response.in_progress", progress))) {
            return "silent";
        }
        ObjectNode added = JSON.createObjectNode().put("type", "response.output_item.added").put("output_index", 0);
        added.set("item", item);
        sse.event("response.output_item.added", added);
        ObjectNode doneItem = JSON.createObjectNode().put("type", "response.output_item.done").put("output_index", 0);
        doneItem.set("item", item);
        sse.event("response.output_item.done", doneItem);
        ObjectNode completed = response.deepCopy().put("status", "completed");
        completed.putArray("output").add(item);
        completed.putObject("usage").put("input_tokens", 10).put("output_tokens", 5).put("total_tokens", 15)
                .<ObjectNode>set("input_tokens_details", JSON.createObjectNode().put("cached_tokens", 0))
                .set("output_tokens_details", JSON.createObjectNode().put("reasoning_tokens", 0));
        sse.event("response.completed", JSON.createObjectNode().put("type", "response.completed")
                .set("response", completed));
        sse.close();
        return running != null ? "poll" : call ? "tool" : tool == null ? "side" : "text";
    }

    /**
     * The session of a command still running when the last tool result came, or null: Codex's {@code exec_command}
     * yields after {@code yield_time_ms} (10 s by default, 30 s at most) with "Process running with session ID N",
     * and a model waits for the rest by polling it with {@code write_stdin} (empty {@code chars}).
     */
    private static Long runningExec(JsonNode req) {
        if (FakeModel.toolNamed(req.path("tools"), n -> n.path("name").asText(), "write_stdin") == null) {
            return null;
        }
        String last = null;
        for (JsonNode item : req.path("input")) {
            if ("function_call_output".equals(item.path("type").asText())) {
                last = item.path("output").isTextual() ? item.path("output").asText() : item.path("output").toString();
            }
        }
        Matcher m = last == null ? null : RUNNING.matcher(last);
        return m != null && m.find() ? Long.valueOf(m.group(1)) : null;
    }

    /** A {@code write_stdin} poll of exec session {@code session}: no input, waiting up to 300 s for its output. */
    private static ObjectNode poll(long session) {
        ObjectNode args = JSON.createObjectNode().put("session_id", session).put("chars", "")
                .put("yield_time_ms", 300_000);
        return JSON.createObjectNode().put("type", "function_call").put("id", "fc_fake_poll" + session)
                .put("call_id", "call_fake_poll" + session).put("name", "write_stdin")
                .put("arguments", args.toString()).put("status", "completed");
    }

    /** One keep-alive event of a slow stream. */
    @FunctionalInterface
    interface KeepAlive {
        void send() throws IOException;
    }
}
