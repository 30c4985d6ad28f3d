package io.lifeline.client.hooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A model server on 127.0.0.1 (a free port) speaking just enough of four wire formats for a coding-agent runtime
 * to finish one real turn: Anthropic Messages (SSE; and {@code HEAD /}), OpenAI Responses (SSE), OpenAI Chat
 * Completions (SSE) and Gemini {@code generateContent} / {@code streamGenerateContent?alt=sse}. While the
 * conversation holds no tool result it answers one call of the runtime's shell tool running {@code command}; then
 * {@code finalText}. A request offering no shell tool (titles, routing, next-speaker checks) gets a short text. With
 * {@link #subagents} the Anthropic tool call is one of Claude Code's subagent tool instead, and the subagent's own
 * request is told apart by a marker in its prompt.
 */
public final class FakeModel implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Claude Code's subagent tool, as 2.1.197 offers it ({@code AgentInput} in its sdk-tools.d.ts). */
    static final String SUBAGENT_TOOL = "Agent";
    /**
     * Gemini's side calls expect JSON text: its routers read model_choice or complexity_reasoning and
     * complexity_score, the next-speaker check next_speaker.
     */
    private static final String SIDE_TEXT = "{\"reasoning\":\"fake\",\"model_choice\":\"flash\",\"complexity_reasoning\":"
            + "\"fake\",\"complexity_score\":1,\"next_speaker\":\"user\"}";

    private final HttpServer server;
    private final ExecutorService executor;
    private final String command;
    private final String finalText;
    private final ResponsesWire responsesWire = new ResponsesWire(this);
    private final List<String> requests = new CopyOnWriteArrayList<>();
    /** While set, an Anthropic answer after a tool result waits for it: the turn stays open (see {@link #holdTurns}). */
    private volatile CountDownLatch hold;
    private final List<Integer> held = new CopyOnWriteArrayList<>();
    /** How many of the next turn-ending Anthropic streams go silent after their first event ({@link #silentStreams}). */
    private final AtomicInteger silentLeft = new AtomicInteger();
    /** Released by {@link #close}: a silent stream's socket stays open, sending nothing, until then (or 300 s). */
    private final CountDownLatch closing = new CountDownLatch(1);
    /** The conversation size of each stream that went silent, in order. */
    private final List<Integer> silenced = new CopyOnWriteArrayList<>();
    /** When a silent stream sent its last byte (its first event), or null. */
    private volatile Instant lastByteBeforeSilence;
    /** A slow turn-ending stream's gap between events and how long it goes on (null: a stream at once). */
    private volatile Duration slowGap;
    private volatile Duration slowFor;
    /** Whether Codex's {@code exec_command} call asks to run outside its sandbox ({@link #escalated}). */
    volatile boolean escalated;
    /** The conversation size of each turn-ending Anthropic stream answered in full, in order. */
    private final List<Integer> answered = new CopyOnWriteArrayList<>();
    /** Until when every model request is answered 429 ({@link #rateLimitedUntil}), or null. */
    private volatile Instant limitResets;
    /** Whether a Responses 429's error also carries {@code resets_at} ({@link #usageLimitedUntil}). */
    private volatile boolean resetsAt;
    /** When each request answered 429 came. */
    private final List<Instant> limited = new CopyOnWriteArrayList<>();
    /** While set ({@link #subagents}): the tool call starts a subagent whose prompt opens with this marker. */
    private volatile String subagentMarker;

    private FakeModel(String command, String finalText) throws IOException {
        this.command = command;
        this.finalText = finalText;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 32);
        executor = Executors.newFixedThreadPool(16, r -> {
            Thread t = new Thread(r, "fake-model");
            t.setDaemon(true);
            return t;
        });
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    public static FakeModel start(String command, String finalText) throws IOException {
        return new FakeModel(command, finalText);
    }

    /** {@code http://127.0.0.1:PORT}. */
    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** The command its shell tool call runs. */
    String command() {
        return command;
    }

    /** The text that ends the turn. */
    String finalText() {
        return finalText;
    }

    /**
     * "METHOD path" of every request, in order as answered, and what was answered ("tool", "text", "side", "silent",
     * or a subagent's "subagent" or "subagent silent"; a silent stream is listed once it ends).
     */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    /** How many answers were a shell tool call. */
    public long toolCalls() {
        return requests.stream().filter(r -> r.endsWith(" -> tool")).count();
    }

    /**
     * From now on, each Anthropic Messages or OpenAI Responses request after the tool's result (the one that would
     * end the turn) waits, answering nothing, until {@link #releaseTurns} or 120 s: the runtime stays mid-turn, in its model call.
     */
    public void holdTurns() {
        hold = new CountDownLatch(1);
    }

    /**
     * The next {@code n} Anthropic streams that would end the turn (the answer after the tool's result) send their
     * headers and {@code message_start}, then nothing more on the open socket until {@link #close} (or 300 s): a model
     * stream silent mid-turn, as a wedged provider connection is. Later ones are answered in full. An OpenAI Responses
     * stream that would end the turn does the same after its {@code response.created}.
     */
    public void silentStreams(int n) {
        silentLeft.set(n);
    }

    /**
     * From now on the Anthropic tool call is Claude Code's subagent tool ({@value #SUBAGENT_TOOL}, a
     * {@code general-purpose} agent) whose prompt opens with {@code marker}, and a request whose first message
     * carries {@code marker} is that subagent's own (Claude Code 2.1.197 sends the prompt as the subagent's first user
     * message, with the header {@code x-claude-code-agent-id}): it is answered a short text, or, while
     * {@link #silentStreams} has some left, goes silent after its first event in place of the turn-ending stream.
     */
    public void subagents(String marker) {
        subagentMarker = marker;
    }

    /**
     * From now on an OpenAI Responses {@code exec_command} call asks to run outside the sandbox
     * ({@code sandbox_permissions: "require_escalated"} with a justification): under Codex's {@code -a on-request} it
     * waits at an approval prompt for a person.
     */
    public void escalated() {
        escalated = true;
    }

    /** The conversation size of each silent stream so far. */
    public List<Integer> silenced() {
        return List.copyOf(silenced);
    }

    /** When the first silent stream sent its last byte, or null. */
    public Instant lastByteBeforeSilence() {
        return lastByteBeforeSilence;
    }

    /**
     * Every Anthropic stream that ends the turn sends a {@code ping} event every {@code gap} for {@code total} after
     * its {@code message_start}, then its answer: a slow but legitimate stream (silences shorter than {@code gap}). An
     * OpenAI Responses stream sends {@code response.in_progress} instead of the ping.
     */
    public void slowStreams(Duration gap, Duration total) {
        slowGap = gap;
        slowFor = total;
    }

    /**
     * Until {@code reset}, every Anthropic Messages and OpenAI Responses request is answered {@code 429} as a provider's
     * usage limit is: {@code retry-after} (whole seconds to the reset), Anthropic's
     * {@code anthropic-ratelimit-{requests,tokens}-reset} (RFC 3339), OpenAI's {@code x-ratelimit-reset-{requests,tokens}}
     * (a duration such as {@code 8s}), and an error body whose message says "Please try again in Ns." (OpenAI's
     * wording). After it, requests are answered as usual.
     */
    public void rateLimitedUntil(Instant reset) {
        limitResets = reset;
    }

    /**
     * As {@link #rateLimitedUntil}, with the OpenAI Responses error also carrying {@code resets_at} (the reset in epoch
     * seconds) beside {@code resets_in_seconds}, as the ChatGPT backend's {@code usage_limit_reached} answer does:
     * Codex CLI words its "Try again at 5:49 PM." from {@code resets_at} only (without it: "Try again later.").
     */
    public void usageLimitedUntil(Instant reset) {
        resetsAt = true;
        limitResets = reset;
    }

    /** When each 429 was answered. */
    public List<Instant> limited() {
        return List.copyOf(limited);
    }

    /** The conversation size of each turn-ending Anthropic (or Responses) stream answered in full. */
    public List<Integer> answered() {
        return List.copyOf(answered);
    }

    /** Lets every held request, and every later one, be answered. */
    public void releaseTurns() {
        CountDownLatch h = hold;
        hold = null;
        if (h != null) {
            h.countDown();
        }
    }

    /** The held requests so far: how many messages each conversation had (a resumed one carries the earlier turn). */
    public List<Integer> held() {
        return List.copyOf(held);
    }

    @Override
    public void close() {
        releaseTurns();
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            String query = ex.getRequestURI().getRawQuery();
            byte[] body = ex.getRequestBody().readAllBytes();
            if (!"POST".equals(ex.getRequestMethod())) {
                requests.add(ex.getRequestMethod() + " " + path);
                ex.sendResponseHeaders(path.equals("/") ? 200 : 404, -1);
                return;
            }
            JsonNode req = body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
            String answer;
            if (path.endsWith("/messages/count_tokens")) {
                answer = "count";
                json(ex, JSON.createObjectNode().put("input_tokens", 10));
            } else if ((path.endsWith("/messages") || path.endsWith("/responses")) && limitedNow(ex, path)) {
                answer = "429";
            } else if (path.endsWith("/messages")) {
                answer = anthropic(ex, req);
            } else if (path.endsWith("/responses")) {
                answer = responsesWire.answer(ex, req);
            } else if (path.endsWith("/chat/completions")) {
                answer = chat(ex, req);
            } else if (path.contains(":generateContent") || path.contains(":streamGenerateContent")) {
                answer = gemini(ex, req, path.contains(":stream") && query != null && query.contains("alt=sse"),
                        path.contains(":stream"));
            } else {
                answer = "404";
                ex.sendResponseHeaders(404, -1);
            }
            requests.add("POST " + path + " -> " + answer);
        } catch (RuntimeException e) {
            requests.add("error " + e);
            throw e;
        }
    }

    /** While {@link #rateLimitedUntil} holds: answers 429 with the reset in headers and message, and says so. */
    private boolean limitedNow(HttpExchange ex, String path) throws IOException {
        Instant reset = limitResets;
        Instant now = Instant.now();
        if (reset == null || !now.isBefore(reset)) {
            return false;
        }
        limited.add(now);
        long seconds = Math.max(1, (Duration.between(now, reset).toMillis() + 999) / 1000);
        var h = ex.getResponseHeaders();
        h.set("Content-Type", "application/json");
        h.set("retry-after", Long.toString(seconds));
        for (String kind : List.of("requests", "tokens")) {
            h.set("anthropic-ratelimit-" + kind + "-reset", reset.toString());
            h.set("x-ratelimit-reset-" + kind, seconds + "s");
        }
        String message = "Rate limit reached: this organization's usage limit is used up. Please try again in "
                + seconds + "s.";
        ObjectNode body = JSON.createObjectNode();
        if (path.endsWith("/messages")) {
            body.put("type", "error").putObject("error").put("type", "rate_limit_error").put("message", message);
        } else {
            ResponsesWire.usageLimit(body, message, seconds, resetsAt ? reset : null);
        }
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.sendResponseHeaders(429, bytes.length);
        ex.getResponseBody().write(bytes);
        return true;
    }

    // ---- Anthropic Messages ----

    private String anthropic(HttpExchange ex, JsonNode req) throws IOException {
        String marker = subagentMarker;
        boolean sub = marker != null && opening(req).contains(marker);
        String tool = sub ? null : toolNamed(req.path("tools"), n -> n.path("name").asText(),
                marker == null ? "Bash" : SUBAGENT_TOOL);
        boolean done = false;
        for (JsonNode m : req.path("messages")) {
            for (JsonNode part : m.path("content")) {
                done |= "tool_result".equals(part.path("type").asText());
            }
        }
        String model = req.path("model").asText("fake");
        ObjectNode message = JSON.createObjectNode().put("id", "msg_fake").put("type", "message")
                .put("role", "assistant").put("model", model);
        message.putArray("content");
        message.putNull("stop_reason").putNull("stop_sequence");
        message.putObject("usage").put("input_tokens", 10).put("output_tokens", 1);
        boolean call = tool != null && !done;
        if (tool != null && done) {
            hold(req.path("messages").size());
        }
        ObjectNode block;
        ObjectNode delta;
        ObjectNode input = marker == null
                ? JSON.createObjectNode().put("command", command).put("description", "Run the command")
                : JSON.createObjectNode().put("description", "Check the project").put("prompt", marker
                        + " Check the project.").put("subagent_type", "general-purpose");
        if (call) {
            block = JSON.createObjectNode().put("type", "tool_use").put("id", "toolu_fake1").put("name", tool);
            block.putObject("input");
            delta = JSON.createObjectNode().put("type", "input_json_delta").put("partial_json", input.toString());
        } else {
            block = JSON.createObjectNode().put("type", "text").put("text", "");
            delta = JSON.createObjectNode().put("type", "text_delta").put("text", sub ? "Checked."
                    : tool == null ? "Fake" : finalText);
        }
        if (!req.path("stream").asBoolean(false)) {
            ArrayNode content = message.putArray("content");
            if (call) {
                ObjectNode use = content.addObject().put("type", "tool_use").put("id", "toolu_fake1").put("name", tool);
                use.set("input", input);
            } else {
                content.addObject().put("type", "text").put("text", delta.path("text").asText());
            }
            message.put("stop_reason", call ? "tool_use" : "end_turn");
            json(ex, message);
            return call ? "tool" : sub ? "subagent" : tool == null ? "side" : "text";
        }
        Sse sse = new Sse(ex);
        sse.event("message_start", JSON.createObjectNode().put("type", "message_start").set("message", message));
        boolean turnEnding = tool != null && done;
        if ((turnEnding || sub) && !streamSlowlyOrGoSilent(sse, req.path("messages").size(), turnEnding,
                marker == null ? turnEnding : sub)) {
            return sub ? "subagent silent" : "silent";
        }
        ObjectNode start = JSON.createObjectNode().put("type", "content_block_start").put("index", 0);
        start.set("content_block", block);
        sse.event("content_block_start", start);
        ObjectNode d = JSON.createObjectNode().put("type", "content_block_delta").put("index", 0);
        d.set("delta", delta);
        sse.event("content_block_delta", d);
        sse.event("content_block_stop", JSON.createObjectNode().put("type", "content_block_stop").put("index", 0));
        ObjectNode md = JSON.createObjectNode().put("type", "message_delta");
        md.putObject("delta").put("stop_reason", call ? "tool_use" : "end_turn").putNull("stop_sequence");
        md.putObject("usage").put("output_tokens", 5);
        sse.event("message_delta", md);
        sse.event("message_stop", JSON.createObjectNode().put("type", "message_stop"));
        sse.close();
        return call ? "tool" : sub ? "subagent" : tool == null ? "side" : "text";
    }

    /** The text of the request's first message (a subagent's prompt is there), "" without one. */
    private static String opening(JsonNode req) {
        JsonNode content = req.path("messages").path(0).path("content");
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode part : content) {
            text.append(part.path("text").asText()).append('\n');
        }
        return text.toString();
    }

    /**
     * After a turn-ending (or a subagent's) stream's first event: false when it goes silent ({@link #silentStreams}
     * and {@code silenceable}: nothing more is sent); else, under {@link #slowStreams}, pings every gap for the whole
     * time, then true (the answer follows, counted in {@link #answered} when {@code turnEnding}).
     */
    private boolean streamSlowlyOrGoSilent(Sse sse, int size, boolean turnEnding, boolean silenceable)
            throws IOException {
        try {
            if (silenceable && silentLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                silenced.add(size);
                if (lastByteBeforeSilence == null) {
                    lastByteBeforeSilence = Instant.now();
                }
                closing.await(300, TimeUnit.SECONDS);
                return false;
            }
            Duration gap = slowGap;
            if (gap != null) {
                long end = System.nanoTime() + slowFor.toNanos();
                while (System.nanoTime() < end) {
                    Thread.sleep(gap.toMillis());
                    sse.event("ping", JSON.createObjectNode().put("type", "ping"));
                }
            }
            if (turnEnding) {
                answered.add(size);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted mid-stream", e);
        }
    }

    /** While {@link #holdTurns} is on: records the conversation's size and waits for {@link #releaseTurns}. */
    void hold(int size) throws IOException {
        CountDownLatch h = hold;
        if (h == null) {
            return;
        }
        held.add(size);
        try {
            h.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while holding the turn", e);
        }
    }

    // ---- OpenAI Responses: ResponsesWire; the state its silent and slow streams share ----

    /**
     * After a turn-ending Responses stream's {@code response.created}: false when it goes silent
     * ({@link #silentStreams}: nothing more is sent); else, under {@link #slowStreams}, a {@code response.in_progress}
     * event (the Responses wire's own, which Codex reads as a stream event: it resets its stream idle timer, as a
     * comment line would not) every gap for the whole time, then true (the answer follows).
     */
    boolean slowOrSilentResponse(int size, ResponsesWire.KeepAlive keepAlive) throws IOException {
        try {
            if (silentLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                silenced.add(size);
                if (lastByteBeforeSilence == null) {
                    lastByteBeforeSilence = Instant.now();
                }
                closing.await(300, TimeUnit.SECONDS);
                return false;
            }
            Duration gap = slowGap;
            if (gap != null) {
                long end = System.nanoTime() + slowFor.toNanos();
                while (System.nanoTime() < end) {
                    Thread.sleep(gap.toMillis());
                    keepAlive.send();
                }
            }
            answered.add(size);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted mid-stream", e);
        }
    }

    // ---- OpenAI Chat Completions ----

    private String chat(HttpExchange ex, JsonNode req) throws IOException {
        String tool = toolNamed(req.path("tools"), n -> n.path("function").path("name").asText(), "bash");
        boolean done = false;
        for (JsonNode m : req.path("messages")) {
            done |= "tool".equals(m.path("role").asText());
        }
        boolean call = tool != null && !done;
        Sse sse = new Sse(ex);
        ObjectNode delta = JSON.createObjectNode().put("role", "assistant");
        if (call) {
            ObjectNode args = JSON.createObjectNode().put("command", command).put("description", "Run the command");
            delta.putArray("tool_calls").addObject().put("index", 0).put("id", "call_fake1").put("type", "function")
                    .putObject("function").put("name", tool).put("arguments", args.toString());
        } else {
            delta.put("content", tool == null ? "Fake" : finalText);
        }
        sse.data(chunk(req, delta, null));
        ObjectNode last = chunk(req, JSON.createObjectNode(), call ? "tool_calls" : "stop");
        last.putObject("usage").put("prompt_tokens", 10).put("completion_tokens", 5).put("total_tokens", 15);
        sse.data(last);
        sse.raw("data: [DONE]\n\n");
        sse.close();
        return call ? "tool" : tool == null ? "side" : "text";
    }

    private static ObjectNode chunk(JsonNode req, ObjectNode delta, String finish) {
        ObjectNode c = JSON.createObjectNode().put("id", "chatcmpl-fake").put("object", "chat.completion.chunk")
                .put("created", 0).put("model", req.path("model").asText("fake-model"));
        ObjectNode choice = c.putArray("choices").addObject().put("index", 0);
        choice.set("delta", delta);
        if (finish == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finish);
        }
        return c;
    }

    // ---- Gemini ----

    private String gemini(HttpExchange ex, JsonNode req, boolean sse, boolean stream) throws IOException {
        String tool = null;
        for (JsonNode t : req.path("tools")) {
            String found = toolNamed(t.path("functionDeclarations"), n -> n.path("name").asText(), "run_shell_command");
            tool = tool == null ? found : tool;
        }
        boolean done = false;
        for (JsonNode c : req.path("contents")) {
            for (JsonNode part : c.path("parts")) {
                done |= part.has("functionResponse");
            }
        }
        boolean call = tool != null && !done;
        ObjectNode answer = JSON.createObjectNode();
        ObjectNode candidate = answer.putArray("candidates").addObject();
        ObjectNode part = candidate.putObject("content").put("role", "model").putArray("parts").addObject();
        if (call) {
            part.putObject("functionCall").put("name", tool).putObject("args").put("command", command);
        } else {
            part.put("text", tool == null ? SIDE_TEXT : finalText);
        }
        candidate.put("finishReason", "STOP").put("index", 0);
        answer.putObject("usageMetadata").put("promptTokenCount", 10).put("candidatesTokenCount", 5)
                .put("totalTokenCount", 15);
        answer.put("modelVersion", "fake");
        if (sse) {
            Sse s = new Sse(ex);
            s.data(answer);
            s.close();
        } else if (stream) {
            json(ex, JSON.createArrayNode().add(answer));
        } else {
            json(ex, answer);
        }
        return call ? "tool" : tool == null ? "side" : "text";
    }

    // ---- helpers ----

    static String toolNamed(JsonNode tools, Function<JsonNode, String> name,
            String... wanted) {
        for (String w : wanted) {
            for (JsonNode t : tools) {
                if (w.equals(name.apply(t))) {
                    return w;
                }
            }
        }
        return null;
    }

    private static void json(HttpExchange ex, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, bytes.length);
        ex.getResponseBody().write(bytes);
    }

    /** A text/event-stream answer, written as it goes. */
    static final class Sse {
        private final OutputStream out;

        Sse(HttpExchange ex) throws IOException {
            ex.getResponseHeaders().set("Content-Type", "text/event-stream");
            ex.getResponseHeaders().set("Cache-Control", "no-cache");
            ex.sendResponseHeaders(200, 0);
            out = ex.getResponseBody();
        }

        void event(String name, JsonNode data) throws IOException {
            raw("event: " + name + "\ndata: " + JSON.writeValueAsString(data) + "\n\n");
        }

        void data(JsonNode data) throws IOException {
            raw("data: " + JSON.writeValueAsString(data) + "\n\n");
        }

        void raw(String s) throws IOException {
            out.write(s.getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        void close() throws IOException {
            out.close();
        }
    }
}
