package io.lifeline.client.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.hooks.HookSignal;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The daemon's local channel: a loopback HTTP listener where an agent proves it is not hung,
 * {@code POST /v1/beat/<agentId>} (204; 404 for an agent this daemon does not run), and where a coding-agent
 * runtime's hooks post, {@code POST /hooks/<runtime>} with the header {@code X-Lifeline-Agent} (which may be left
 * out when the daemon runs one agent), the runtime's raw hook body: answered {@code 200 {}} at once, the body read
 * for the few names a signal needs (core's {@code HookReader} and {@code HookMapping}) and then dropped. The daemon knows its agents' processes
 * are alive; a local beat or a hook says the agent inside is still working through its loop. The daemon reports
 * each agent's time since its last sign ({@code localBeatAgeMs}) in its batch, and folds what the hooks said
 * (working or ready, waiting for input or a person, in a turn) into its next batch entry: no cloud write per hook.
 * Children find it in {@value #ENV}; the CLI's {@code lifeline beat}, the SDK's {@link io.lifeline.client.LocalBeat}
 * and the hook forwarders use it. Nothing of a hook's body reaches a log line.
 */
public final class LocalBeats implements AutoCloseable {
    /** The environment variable that names the channel's URL for the daemon's children. */
    public static final String ENV = "LIFELINE_DAEMON";
    /** The header naming the agent a hook is for. */
    public static final String AGENT_HEADER = "X-Lifeline-Agent";
    /** The largest hook body taken (Lambda's request limit, as the server's hook routes). */
    public static final int MAX_HOOK_BODY = 6 * 1024 * 1024;
    private static final String PREFIX = "/v1/beat/";
    private static final String HOOKS = "/hooks/";
    /** Codex's {@code notify} event for a turn's end. */
    private static final String NOTIFY_TURN_END = "agent-turn-complete";

    private final HttpServer server;
    private final ExecutorService executor;
    private final Set<String> agents;
    private final Clock clock;
    private final Map<String, Instant> last = new ConcurrentHashMap<>();
    private final Map<String, HookState> hooks = new ConcurrentHashMap<>();
    private volatile Consumer<Hook> listener;
    private volatile boolean fromProcesses;

    /**
     * One hook as the daemon keeps it: the agent, the runtime, the signal and the session it named, no content; for
     * Codex, the path of the session's rollout file it named (read only for a usage limit: {@link CodexLimit}).
     */
    public record Hook(String agentId, AgentRuntime runtime, HookSignal signal, String event, String session,
            String errorCategory, Instant at, Instant limitUntil, String subagentId, String subagentType,
            Path rollout) {
    }

    /**
     * What an agent's hooks said last: {@code status} working or ready (null before any), {@code source} the
     * heartbeat source it stands for, {@code waiting} "input" or "person" (or null), {@code inTurn} a tool call or
     * model turn under way, {@code session} the runtime's session id, {@code ended} the session ended.
     */
    public record HookState(String status, String source, String waiting, boolean inTurn, String session,
            boolean ended, Instant at) {
        static final HookState NONE = new HookState(null, null, null, false, null, false, null);

        HookState with(Hook h) {
            String s = h.session() != null ? h.session() : session;
            return switch (h.signal()) {
                case SESSION_STARTED -> new HookState("ready", "sdk_session_idle", "input", false, s, false, h.at());
                case ACTIVE -> new HookState("working", "sdk_session_updated", null, true, s, false, h.at());
                case TOOL -> new HookState("working", "sdk_tool_execute", null, true, s, false, h.at());
                case TURN_ENDED -> new HookState("ready", "sdk_session_idle", "input", false, s, false, h.at());
                case WAITING_FOR_PERSON -> new HookState(status, source, "person", false, s, false, h.at());
                case SESSION_ENDED -> new HookState(status, source, null, false, s, true, h.at());
                case TOOL_FAILED -> new HookState("working", "sdk_session_updated", null, true, s, false, h.at());
                case FAILED -> new HookState("ready", "sdk_session_idle", "input", false, s, false, h.at());
                // RUNTIME_EXITED: the daemon sees its own process end; a watcher's report is not its business.
                case COMPACTED, IGNORED, RUNTIME_EXITED -> new HookState(status, source, waiting, inTurn, s, ended,
                        h.at());
            };
        }
    }

    private LocalBeats(HttpServer server, ExecutorService executor, Collection<String> agents, Clock clock) {
        this.server = server;
        this.executor = executor;
        this.agents = Set.copyOf(agents);
        this.clock = clock;
    }

    /** Listens on 127.0.0.1 at a free port, for {@code agents}; beats are timed on {@code clock}. */
    public static LocalBeats start(Collection<String> agents, Clock clock) throws IOException {
        return start(agents, clock, 0);
    }

    /**
     * Listens on 127.0.0.1 at {@code port} (0: a free one), for {@code agents}. A fixed port lets a hook name the
     * daemon in a literal URL (Claude Code's HTTP hooks cannot read a variable in theirs).
     */
    public static LocalBeats start(Collection<String> agents, Clock clock, int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lifeline-local-beats");
            t.setDaemon(true);
            return t;
        });
        LocalBeats beats = new LocalBeats(server, executor, agents, clock);
        server.createContext("/", beats::handle);
        server.setExecutor(executor);
        server.start();
        return beats;
    }

    /** {@code http://127.0.0.1:<port>}: what the children get in {@value #ENV}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Told of each hook, after its answer was sent (on the listener's thread: keep it short). */
    public LocalBeats onHook(Consumer<Hook> l) {
        this.listener = l;
        return this;
    }

    /**
     * True when the agents were not asked to beat locally (no {@code --local-beats}): only the agents whose
     * hooks post here are then judged by their signs, the others by their processes alone.
     */
    public LocalBeats beatsFromProcesses(boolean b) {
        this.fromProcesses = b;
        return this;
    }

    /** Whether {@code agentId}'s local signs (beats, hooks) are the ones its batch entry reports. */
    public boolean judgedBySigns(String agentId) {
        return !fromProcesses || last.containsKey(agentId);
    }

    /** The agent's last local beat or hook, if it sent one. */
    public Optional<Instant> last(String agentId) {
        return Optional.ofNullable(last.get(agentId));
    }

    /** What the agent's hooks said last ({@link HookState#NONE}'s nulls before any). */
    public HookState hookState(String agentId) {
        return hooks.getOrDefault(agentId, HookState.NONE);
    }

    /** The runtime session the agent's hooks last named, or null. */
    public String session(String agentId) {
        return hookState(agentId).session();
    }

    /** Starts the agent off on a session known before any hook named it (recorded by a previous daemon). */
    public void seedSession(String agentId, String session) {
        hooks.putIfAbsent(agentId, new HookState(null, null, null, false, session, false, null));
    }

    /**
     * Whether the agent's current process has sent a hook (since its start, when {@link #reset} was called at its
     * start).
     */
    public boolean heardSinceStart(String agentId) {
        return hookState(agentId).at() != null;
    }

    /** Forgets the agent's session (a resume of it failed). */
    public void forgetSession(String agentId) {
        hooks.computeIfPresent(agentId, (k, s) -> new HookState(s.status(), s.source(), s.waiting(), s.inTurn(), null,
                s.ended(), s.at()));
    }

    /** Forgets what the agent's hooks said (its process was started afresh); its session id is kept. */
    public void reset(String agentId) {
        hooks.computeIfPresent(agentId, (k, s) -> new HookState(null, null, null, false, s.session(), false, null));
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange; InputStream in = exchange.getRequestBody()) {
            String path = exchange.getRequestURI().getPath();
            if (path.startsWith(HOOKS)) {
                hook(exchange, in, path.substring(HOOKS.length()));
                return;
            }
            in.readNBytes(4096); // a body, if any, is not read further
            if (!path.startsWith(PREFIX)) {
                reply(exchange, 404, "{\"success\":false,\"error\":\"Not found; POST /v1/beat/<agentId> or POST "
                        + "/hooks/<runtime>\",\"code\":\"NOT_FOUND\"}");
                return;
            }
            if (!"POST".equals(exchange.getRequestMethod())) {
                reply(exchange, 405, "{\"success\":false,\"error\":\"Use POST\",\"code\":\"METHOD_NOT_ALLOWED\"}");
                return;
            }
            String agentId = path.substring(PREFIX.length());
            if (!agents.contains(agentId)) {
                reply(exchange, 404, "{\"success\":false,\"error\":\"This daemon does not run that agent\","
                        + "\"code\":\"AGENT_NOT_FOUND\"}");
                return;
            }
            last.put(agentId, clock.instant());
            exchange.sendResponseHeaders(204, -1);
        }
    }

    /** {@code POST /hooks/<runtime>}: 200 {} for any body read; 4xx only for no such agent or runtime. */
    private void hook(HttpExchange exchange, InputStream in, String runtimeName) throws IOException {
        if (!"POST".equals(exchange.getRequestMethod())) {
            reply(exchange, 405, "{\"success\":false,\"error\":\"Use POST\",\"code\":\"METHOD_NOT_ALLOWED\"}");
            return;
        }
        AgentRuntime runtime = AgentRuntime.fromWire(runtimeName).orElse(null);
        if (runtime == null) {
            reply(exchange, 404, "{\"success\":false,\"error\":\"Unknown runtime; one of claude-code, codex, gemini, "
                    + "opencode\",\"code\":\"UNKNOWN_RUNTIME\"}");
            return;
        }
        String agentId = exchange.getRequestHeaders().getFirst(AGENT_HEADER);
        if (agentId == null || agentId.isBlank()) {
            if (agents.size() != 1) {
                reply(exchange, 400, "{\"success\":false,\"error\":\"This daemon runs several agents: name one in "
                        + "the X-Lifeline-Agent header\",\"code\":\"AGENT_REQUIRED\"}");
                return;
            }
            agentId = agents.iterator().next();
        }
        if (!agents.contains(agentId.strip())) {
            reply(exchange, 404, "{\"success\":false,\"error\":\"This daemon does not run that agent\","
                    + "\"code\":\"AGENT_NOT_FOUND\"}");
            return;
        }
        agentId = agentId.strip();
        byte[] body = in.readNBytes(MAX_HOOK_BODY + 1);
        if (body.length > MAX_HOOK_BODY) {
            reply(exchange, 413, "{\"success\":false,\"error\":\"A hook body holds at most 6 MB\","
                    + "\"code\":\"PAYLOAD_TOO_LARGE\"}");
            return;
        }
        HookSignals.Read read;
        try {
            read = HookSignals.read(runtime, body, clock.instant());
        } catch (RuntimeException e) {
            reply(exchange, 400, "{\"success\":false,\"error\":\"The hook body is not JSON\","
                    + "\"code\":\"INVALID_HOOK_BODY\"}");
            return;
        }
        if (otherThreadsTurnEnd(runtime, read, hooks.get(agentId))) {
            reply(exchange, 200, "{}");
            return;
        }
        Instant now = clock.instant();
        Hook h = new Hook(agentId, runtime, read.signal(), read.event(), AgentRuntime.validSession(read.session())
                ? read.session() : null, read.errorCategory(), now, read.limitUntil(), read.subagentId(),
                read.subagentType(), read.rollout());
        last.put(agentId, now);
        hooks.compute(agentId, (k, s) -> (s == null ? HookState.NONE : s).with(h));
        reply(exchange, 200, "{}");
        Consumer<Hook> l = listener;
        if (l != null) {
            l.accept(h);
        }
    }

    /**
     * A Codex {@code notify} turn end that names another thread than the session the agent's hooks named: Codex's TUI
     * runs side threads (one asks the model apart, with no tools, as its turn starts) whose turn ends reach
     * {@code notify} too, with their own {@code thread-id}. It says nothing of the agent's own turn, which may still be
     * streaming or waiting at an approval prompt, and its thread is no session to resume: ignored.
     */
    static boolean otherThreadsTurnEnd(AgentRuntime runtime, HookSignals.Read read, HookState known) {
        return runtime == AgentRuntime.CODEX && read.signal() == HookSignal.TURN_ENDED
                && NOTIFY_TURN_END.equals(read.event()) && known != null && known.session() != null
                && read.session() != null && !known.session().equals(read.session());
    }

    private static void reply(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
