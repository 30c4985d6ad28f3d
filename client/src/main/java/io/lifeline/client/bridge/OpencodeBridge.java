package io.lifeline.client.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.Sleeper;
import io.lifeline.client.model.ErrorClassification;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code lifeline bridge opencode}: an opencode server's event stream as Lifeline heartbeats (the heartbeat protocol's
 * passive heartbeats, the error-handling protocol's error handling).
 *
 * <ul>
 *   <li>Sessions map to agents by the map the user gives, else by the error-handling protocol's title convention
 *       {@code teams::<team>::agent::<agentId>[::...]}. Events of sessions that map to no agent write nothing.</li>
 *   <li>{@code session.status} busy (and retry) is a beat with source {@code sdk_session_updated} (working);
 *       idle and {@code session.idle} are {@code sdk_session_idle} (ready); a finished tool call is
 *       {@code sdk_tool_execute}; {@code session.updated} and message activity are beats in the session's current
 *       state; {@code server.heartbeat} keeps idle sessions' agents alive (an idle session on a live server is a
 *       waiting agent, not a dead one; a busy one must show activity).</li>
 *   <li>Coalescing: at most one beat per agent per {@code interval}, except that a change of status is sent at
 *       once; a beat held back is sent by {@link #flushDue()} when the interval has passed, and a beat that could
 *       not be delivered stays pending, so no status change is lost.</li>
 *   <li>{@code session.error} and retry statuses go to the errors route (once per distinct message per session);
 *       a {@code context_limit} answer rotates the session through opencode's API: a new session with the same
 *       title, a continuation prompt carrying the tail of the old session's messages, the map moved to the new
 *       session (the old one retired), and a heartbeat whose metadata names the new session. Lifeline's errors
 *       route has already recorded the rotation (its count and SessionRotationRequested).</li>
 *   <li>{@link #run()} reconnects with backoff (0.5 s doubling to 10 s) when the stream drops, and maps sessions
 *       afresh from {@code GET /session} on each connection.</li>
 * </ul>
 * Time is read from the injected clock once per decision; {@link #handle} and {@link #flushDue} are synchronized.
 */
public final class OpencodeBridge implements AutoCloseable {
    /**
     * The error-handling protocol's session title: {@code teams::<team>::agent::<agentId>}, optionally followed by
     * {@code ::...}.
     */
    static final Pattern TITLE = Pattern.compile("^teams::([^:]+)::agent::([^:]+)(::.*)?$");
    /**
     * How much of the old session's text a continuation prompt carries (the error-handling protocol: the last 2,000
     * characters).
     */
    static final int CONTINUATION_CHARS = 2000;

    static final String IDLE = "sdk_session_idle";
    static final String UPDATED = "sdk_session_updated";
    static final String TOOL = "sdk_tool_execute";

    /** An agent in a team. */
    public record AgentRef(String team, String agentId) {
    }

    /** What the bridge has done, for the console and tests. */
    public record Stats(long beats, long coalesced, long errorsReported, long rotations, long connections,
            long ignoredEvents, long failedBeats) {
    }

    private final OpencodeApi opencode;
    private final Function<String, LifelineClient> clients;
    private final Map<String, AgentRef> given;
    private final Duration interval;
    private final Clock clock;
    private final Sleeper sleeper;
    private final Consumer<String> log;

    private final Map<String, AgentRef> sessions = new HashMap<>();
    private final Map<String, String> titles = new HashMap<>();
    private final Set<String> busy = new HashSet<>();
    private final Set<String> retired = new HashSet<>();
    private final Map<String, String> lastError = new HashMap<>();
    private final Map<AgentRef, AgentBeat> beats = new LinkedHashMap<>();
    /** Agents whose refusal was logged: a mapped session of an unregistered agent is logged once, not per beat. */
    private final Set<AgentRef> refusalLogged = new HashSet<>();

    private long beatsSent;
    private long coalesced;
    private long errorsReported;
    private long rotations;
    private long connections;
    private long ignoredEvents;
    private long failedBeats;
    private volatile boolean closed;

    /** What was last sent for an agent, and the beat held back since. */
    private static final class AgentBeat {
        String sentStatus;
        Instant sentAt;
        String pendingSource;
        Map<String, Object> pendingMetadata;
    }

    /**
     * @param given    session id to agent, from the user (wins over titles)
     * @param interval at most one beat per agent per interval (status changes excepted)
     */
    public OpencodeBridge(OpencodeApi opencode, Function<String, LifelineClient> clients, Map<String, AgentRef> given,
            Duration interval, Clock clock, Sleeper sleeper, Consumer<String> log) {
        this.opencode = Objects.requireNonNull(opencode);
        this.clients = Objects.requireNonNull(clients);
        this.given = Map.copyOf(given);
        this.interval = Objects.requireNonNull(interval);
        this.clock = Objects.requireNonNull(clock);
        this.sleeper = Objects.requireNonNull(sleeper);
        this.log = Objects.requireNonNull(log);
        sessions.putAll(given);
    }

    /** The agent a title names by the error-handling protocol's convention, if it does. */
    static Optional<AgentRef> fromTitle(String title) {
        if (title == null) {
            return Optional.empty();
        }
        Matcher m = TITLE.matcher(title);
        return m.matches() ? Optional.of(new AgentRef(m.group(1), m.group(2))) : Optional.empty();
    }

    public synchronized Stats stats() {
        return new Stats(beatsSent, coalesced, errorsReported, rotations, connections, ignoredEvents, failedBeats);
    }

    /** The agent a session maps to now, if any. */
    public synchronized Optional<AgentRef> agentOf(String sessionId) {
        return Optional.ofNullable(sessions.get(sessionId));
    }

    /** The session an agent's events come from now (the newest, after rotations), if any. */
    public synchronized Optional<String> sessionOf(AgentRef agent) {
        return sessions.entrySet().stream().filter(e -> e.getValue().equals(agent)).map(Map.Entry::getKey)
                .filter(s -> !retired.contains(s)).findFirst();
    }

    // ---- the stream ----

    /** Reads the event stream until {@link #close()}, reconnecting with backoff when it drops. */
    public void run() {
        long backoffMillis = 500;
        while (!closed) {
            long before = connectionsSeen();
            try {
                syncSessions();
                opencode.events(this::handle);
                if (!closed) {
                    log.accept("opencode event stream ended; reconnecting");
                }
            } catch (IOException e) {
                if (!closed) {
                    log.accept("opencode event stream at " + opencode.base() + ": " + (e.getMessage() == null
                            ? e.getClass().getSimpleName() : e.getMessage()) + "; reconnecting");
                }
            }
            if (closed) {
                return;
            }
            if (connectionsSeen() > before) {
                backoffMillis = 500;
            }
            try {
                sleeper.sleep(Duration.ofMillis(backoffMillis));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            backoffMillis = Math.min(backoffMillis * 2, 10_000);
        }
    }

    private synchronized long connectionsSeen() {
        return connections;
    }

    /** Maps the server's sessions by title and learns which are busy (each new connection). */
    synchronized void syncSessions() throws IOException {
        for (JsonNode s : opencode.sessions()) {
            learn(s.path("id").asText(null), s.path("title").asText(null));
        }
        JsonNode statuses = opencode.statuses();
        busy.clear();
        statuses.fields().forEachRemaining(e -> {
            String type = e.getValue().path("type").asText();
            if (type.equals("busy") || type.equals("retry")) {
                busy.add(e.getKey());
            }
        });
    }

    private void learn(String sessionId, String title) {
        if (sessionId == null || retired.contains(sessionId)) {
            return;
        }
        if (title != null) {
            titles.put(sessionId, title);
        }
        if (!given.containsKey(sessionId)) {
            fromTitle(title).ifPresent(agent -> sessions.put(sessionId, agent));
        }
    }

    /** One event from opencode's stream. */
    public synchronized void handle(JsonNode event) {
        String type = event.path("type").asText();
        JsonNode p = event.path("properties");
        switch (type) {
            case "server.connected" -> {
                connections++;
                log.accept("connected to " + opencode.base() + "/event (connection " + connections + ")");
            }
            case "server.heartbeat" -> keepIdleAgentsAlive();
            case "session.created", "session.updated" -> {
                JsonNode info = p.path("info");
                String id = info.path("id").asText(p.path("sessionID").asText(null));
                learn(id, info.path("title").asText(null));
                signal(id, busy.contains(id) ? UPDATED : IDLE, null);
            }
            case "session.deleted" -> {
                String id = p.path("info").path("id").asText(p.path("sessionID").asText(null));
                if (id != null && !given.containsKey(id)) {
                    sessions.remove(id);
                }
            }
            case "session.status" -> sessionStatus(p);
            case "session.idle" -> {
                String id = p.path("sessionID").asText(null);
                busy.remove(id);
                signal(id, IDLE, null);
            }
            case "message.part.updated" -> partUpdated(p);
            case "message.updated" -> {
                String id = p.path("sessionID").asText(p.path("info").path("sessionID").asText(null));
                if (busy.contains(id)) {
                    signal(id, UPDATED, null);
                } else {
                    ignoredEvents++;
                }
            }
            case "session.error" -> {
                String id = p.path("sessionID").asText(null);
                JsonNode error = p.path("error");
                String name = error.path("name").asText("");
                if (name.equals("MessageAbortedError")) {
                    ignoredEvents++; // someone pressed stop: not a fault of the agent
                } else {
                    reportError(id, error.path("data").path("message").asText(name.isEmpty() ? "session error" : name));
                }
            }
            default -> ignoredEvents++;
        }
    }

    /** A session became busy, idle, or is retrying after an error (which is reported). */
    private void sessionStatus(JsonNode p) {
        String id = p.path("sessionID").asText(null);
        JsonNode status = p.path("status");
        switch (status.path("type").asText()) {
            case "busy" -> {
                busy.add(id);
                signal(id, UPDATED, null);
            }
            case "idle" -> {
                busy.remove(id);
                lastError.remove(id);
                signal(id, IDLE, null);
            }
            case "retry" -> {
                busy.add(id);
                signal(id, UPDATED, null);
                reportError(id, status.path("message").asText("retrying"));
            }
            default -> ignoredEvents++;
        }
    }

    /** A message part changed: a finished tool call, or progress of a busy session. */
    private void partUpdated(JsonNode p) {
        String id = p.path("sessionID").asText(p.path("part").path("sessionID").asText(null));
        JsonNode part = p.path("part");
        String state = part.path("state").path("status").asText();
        if (part.path("type").asText().equals("tool") && (state.equals("completed") || state.equals("error"))) {
            signal(id, TOOL, null);
        } else if (busy.contains(id)) {
            signal(id, UPDATED, null);
        } else {
            ignoredEvents++;
        }
    }

    private void keepIdleAgentsAlive() {
        for (Map.Entry<String, AgentRef> e : new HashMap<>(sessions).entrySet()) {
            if (!retired.contains(e.getKey()) && !busy.contains(e.getKey())) {
                signal(e.getKey(), IDLE, null);
            }
        }
    }

    // ---- beats ----

    private static String implied(String source) {
        return source.equals(IDLE) ? "ready" : "working";
    }

    private void signal(String sessionId, String source, Map<String, Object> metadata) {
        AgentRef agent = sessionId == null || retired.contains(sessionId) ? null : sessions.get(sessionId);
        if (agent == null) {
            ignoredEvents++;
            return;
        }
        AgentBeat b = beats.computeIfAbsent(agent, a -> new AgentBeat());
        Instant now = clock.instant();
        boolean changes = !implied(source).equals(b.sentStatus);
        boolean due = b.sentAt == null || !now.isBefore(b.sentAt.plus(interval));
        if (changes || due || metadata != null) {
            send(agent, b, source, metadata != null ? metadata : b.pendingMetadata, now);
        } else {
            b.pendingSource = source;
            coalesced++;
        }
    }

    /** Sends the beats held back whose interval has passed (and retries undelivered ones); call it on a timer. */
    public synchronized void flushDue() {
        Instant now = clock.instant();
        for (Map.Entry<AgentRef, AgentBeat> e : beats.entrySet()) {
            AgentBeat b = e.getValue();
            if (b.pendingSource == null) {
                continue;
            }
            boolean changes = !implied(b.pendingSource).equals(b.sentStatus);
            if (changes || b.sentAt == null || !now.isBefore(b.sentAt.plus(interval))) {
                send(e.getKey(), b, b.pendingSource, b.pendingMetadata, now);
            }
        }
    }

    private void send(AgentRef agent, AgentBeat b, String source, Map<String, Object> metadata, Instant now) {
        Heartbeat hb = new Heartbeat(null, source, metadata, null, null, null);
        LifelineClient client = clients.apply(agent.team());
        try {
            HeartbeatResult r;
            try {
                r = client.heartbeat(agent.agentId(), hb);
            } catch (LifelineApiException e) {
                if (!e.rejoinRequired()) {
                    throw e;
                }
                // The session is alive, so the agent is: join again and deliver the beat.
                client.join(agent.agentId());
                r = client.heartbeat(agent.agentId(), hb);
            }
            b.sentStatus = r.agentStatus();
            b.sentAt = now;
            b.pendingSource = null;
            b.pendingMetadata = null;
            beatsSent++;
            refusalLogged.remove(agent);
        } catch (LifelineApiException e) {
            failedBeats++;
            if (e.isTransient() || e.status() >= 500) {
                keepPending(b, source, metadata);
            } else {
                b.pendingSource = null; // refused for good (unknown agent, wrong team): retrying cannot help
                b.pendingMetadata = null;
            }
            if (refusalLogged.add(agent)) {
                log.accept("heartbeat for " + agent.team() + "/" + agent.agentId() + " refused: " + e.getMessage());
            }
        } catch (LifelineException e) {
            failedBeats++;
            keepPending(b, source, metadata);
            log.accept("heartbeat for " + agent.team() + "/" + agent.agentId() + " not delivered: " + e.getMessage());
        }
    }

    private static void keepPending(AgentBeat b, String source, Map<String, Object> metadata) {
        b.pendingSource = source;
        b.pendingMetadata = metadata;
    }

    // ---- errors and rotation ----

    private void reportError(String sessionId, String message) {
        AgentRef agent = sessionId == null || retired.contains(sessionId) ? null : sessions.get(sessionId);
        if (agent == null) {
            ignoredEvents++;
            return;
        }
        if (message.equals(lastError.get(sessionId))) {
            return; // the same error again (retry attempts): reported once
        }
        lastError.put(sessionId, message);
        ErrorClassification c;
        try {
            c = clients.apply(agent.team()).reportError(agent.agentId(), message);
            errorsReported++;
        } catch (LifelineException e) {
            lastError.remove(sessionId);
            log.accept("error report for " + agent.agentId() + " not delivered: " + e.getMessage());
            return;
        }
        log.accept(agent.agentId() + ": " + c.category() + " (" + c.action() + "): " + message);
        if ("context_limit".equals(c.category())) {
            rotate(sessionId, agent);
        }
    }

    /** The error-handling protocol: a fresh session for the agent, told where the old one stopped. */
    private void rotate(String oldSession, AgentRef agent) {
        String title = titles.getOrDefault(oldSession, "teams::" + agent.team() + "::agent::" + agent.agentId());
        try {
            String tail = tail(opencode.messages(oldSession));
            String newSession = opencode.createSession(title);
            retired.add(oldSession);
            sessions.remove(oldSession);
            busy.remove(oldSession);
            sessions.put(newSession, agent);
            titles.put(newSession, title);
            String prompt = tail.isEmpty()
                    ? "You are continuing from a previous session that hit the context limit. Please check your team "
                            + "inbox and task queue for context, then continue your work."
                    : "You are continuing from a previous session that hit the context limit. Here is the end of that "
                            + "session:\n\n---\n" + tail + "\n---\n\nPlease continue your work from where you left off.";
            opencode.promptAsync(newSession, prompt);
            rotations++;
            Map<String, Object> metadata = new LinkedHashMap<>();
            metadata.put("opencodeSessionId", newSession);
            metadata.put("rotatedFrom", oldSession);
            signal(newSession, IDLE, metadata);
            log.accept(agent.agentId() + ": rotated session " + oldSession + " -> " + newSession);
        } catch (IOException e) {
            log.accept(agent.agentId() + ": cannot rotate session " + oldSession + ": " + e.getMessage());
        }
    }

    /** The last {@link #CONTINUATION_CHARS} characters of a session's text parts, oldest first. */
    static String tail(JsonNode messages) {
        StringBuilder text = new StringBuilder();
        for (JsonNode m : messages) {
            String role = m.path("info").path("role").asText("");
            for (JsonNode part : m.path("parts")) {
                if (part.path("type").asText().equals("text") && !part.path("text").asText().isBlank()) {
                    text.append(role.isEmpty() ? "" : role + ": ").append(part.path("text").asText().strip())
                            .append('\n');
                }
            }
        }
        String all = text.toString().strip();
        return all.length() <= CONTINUATION_CHARS ? all : all.substring(all.length() - CONTINUATION_CHARS);
    }

    /** Stops {@link #run()}: the stream being read is closed and no reconnect follows. */
    @Override
    public void close() {
        closed = true;
        opencode.abort();
    }

    /** Sessions the bridge maps now (session id to agent), for the console. */
    public synchronized Map<String, AgentRef> mapped() {
        Map<String, AgentRef> m = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, AgentRef>> it = sessions.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, AgentRef> e = it.next();
            if (!retired.contains(e.getKey())) {
                m.put(e.getKey(), e.getValue());
            }
        }
        return m;
    }
}
