package io.lifeline.client;

import static io.lifeline.client.ApiTransport.MAPPER;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.model.AgentChanges;
import io.lifeline.client.model.AgentList;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.ApiKey;
import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.BatchResult;
import io.lifeline.client.model.ErrorClassification;
import io.lifeline.client.model.EventList;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.HostCommand;
import io.lifeline.client.model.HostCommands;
import io.lifeline.client.model.Inbox;
import io.lifeline.client.model.KeyList;
import io.lifeline.client.model.NewTask;
import io.lifeline.client.model.NewTeam;
import io.lifeline.client.model.Pause;
import io.lifeline.client.model.RecoveryAnswer;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.Revivals;
import io.lifeline.client.model.ReviveStarted;
import io.lifeline.client.model.TaskChange;
import io.lifeline.client.model.TaskList;
import io.lifeline.client.model.TaskView;
import io.lifeline.client.model.TeamSettings;
import io.lifeline.client.model.TransitionView;
import io.lifeline.client.model.Transitions;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The Lifeline API over {@code java.net.http}: one method per route, typed requests and answers, and a
 * {@link LifelineApiException} carrying the server's status and code when it refuses. Connect errors, 429, 503, and
 * the answers of a function that did not answer (502, 504, the gateway's own 500: {@link
 * LifelineApiException#isTransient}) are retried under the {@link RetryPolicy} (2 s, 4 s, 8 s with jitter, honouring
 * Retry-After; about ten minutes for a function that did not answer, the time a SnapStart version takes to be ready
 * again); a 502 or 504 is not retried for the requests that create a team or a key. Other 4xx and Lifeline's 500
 * INTERNAL_ERROR never are; with {@link Builder#readsFailFast} a read that finds nobody at the URL is not either.
 * Thread-safe; build one and share it.
 */
public final class LifelineClient {
    /** The largest batch the server takes ({@code POST .../heartbeats}). */
    public static final int MAX_BATCH = 25;
    /** The largest page a list answers: {@link #agents(String)}, {@link #tasks} and {@link #keys} read this size. */
    public static final int LARGEST_PAGE = 1000;

    private final URI baseUrl;
    /** Where heartbeats go: the deployment's heartbeat URL (a Function URL) when one is configured, else the API. */
    private final URI heartbeatUrl;
    private final String team;
    private final ApiTransport transport;

    private LifelineClient(Builder b) {
        String url = Objects.requireNonNull(b.url, "url").toString();
        this.baseUrl = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        String beats = b.heartbeatUrl == null || b.heartbeatUrl.toString().isBlank() ? null : b.heartbeatUrl.toString();
        this.heartbeatUrl = beats == null ? baseUrl
                : URI.create(beats.endsWith("/") ? beats.substring(0, beats.length() - 1) : beats);
        this.team = Objects.requireNonNull(b.team, "team");
        this.transport = new ApiTransport(baseUrl, b.apiKey, b.connectTimeout, b.requestTimeout, b.retry, b.sleeper,
                b.onRetry, b.readsFailFast);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The mapper the SDK uses (ISO-8601 instants, nulls left out, unknown fields ignored). */
    public static ObjectMapper mapper() {
        return ApiTransport.MAPPER;
    }

    public String team() {
        return team;
    }

    public URI url() {
        return baseUrl;
    }

    /** Where heartbeats (single and batch) go: the heartbeat URL when configured, else {@link #url()}. */
    public URI heartbeatUrl() {
        return heartbeatUrl;
    }

    // ---- agents ----

    public AgentView register(RegisterAgent agent) {
        return call("POST", teamPath("agents"), agent, AgentView.class);
    }

    /** Every agent of the team: {@link #agents(String)} without a filter. */
    public AgentList agents() {
        return agents(null);
    }

    /**
     * Every agent of the team, {@code status} filtering (aliases accepted; null for all): each page of
     * {@link #agentPages} read in turn, joined into one list. On a large team this reads the whole team (a page of
     * {@value #LARGEST_PAGE} a request); iterate {@link #agentPages} to stop early or to hold one page at a time.
     */
    public AgentList agents(String status) {
        List<AgentView> all = new ArrayList<>();
        for (AgentList page : agentPages(status, LARGEST_PAGE)) {
            all.addAll(page.agents());
        }
        return new AgentList(all.size(), all, null);
    }

    /**
     * One page of the team's agents: at most {@code limit} (null: the server's default, 100; at most 1,000) from
     * {@code cursor} (null: the first page; else a page's {@code nextCursor}, with the same {@code status}), in id
     * order, or with {@code status}, only agents in it, newest in it first.
     */
    public AgentList agentsPage(String status, Integer limit, String cursor) {
        return call("GET", teamPath("agents") + query("status", status, "limit", limit, "cursor", cursor), null,
                AgentList.class);
    }

    /**
     * The team's agents a page at a time ({@link #agentsPage}, {@code limit} a page): each page is asked when the
     * iteration reaches it, following the one before's cursor, so a caller that stops early reads no more.
     */
    public Iterable<AgentList> agentPages(String status, Integer limit) {
        return () -> new Iterator<>() {
            private AgentList ahead;
            private String cursor;
            private boolean last;

            @Override
            public boolean hasNext() {
                if (ahead == null && !last) {
                    ahead = agentsPage(status, limit, cursor);
                    cursor = ahead.nextCursor();
                    last = cursor == null;
                }
                return ahead != null;
            }

            @Override
            public AgentList next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("no page after the last");
                }
                AgentList page = ahead;
                ahead = null;
                return page;
            }
        };
    }

    /**
     * The team's agents whose status changed after {@code since}, newest change first, at most {@code limit} (null:
     * 100): what a live view asks every few seconds instead of the whole team; ask next from the answer's
     * {@code nextChangedSince}.
     */
    public AgentChanges agentsChangedSince(Instant since, Integer limit) {
        return call("GET", teamPath("agents") + query("changedSince", since, "limit", limit), null,
                AgentChanges.class);
    }

    public AgentView agent(String agentId) {
        return call("GET", agentPath(agentId, ""), null, AgentView.class);
    }

    /** To {@code ready}; the answer carries {@code heartbeatIntervalSeconds}. */
    public AgentView join(String agentId) {
        return call("POST", agentPath(agentId, "/join"), null, AgentView.class);
    }

    /**
     * One heartbeat. An agent that is not alive gets a {@link LifelineApiException} with
     * {@code rejoinRequired()}: join, then carry on ({@link io.lifeline.client.manager.HeartbeatManager} does).
     */
    public HeartbeatResult heartbeat(String agentId, Heartbeat heartbeat) {
        HeartbeatResult r = call(heartbeatUrl, "POST", agentPath(agentId, "/heartbeat"),
                heartbeat == null ? Heartbeat.empty() : heartbeat, HeartbeatResult.class);
        return new HeartbeatResult(agentId, r.success(), r.heartbeatTs(), r.nextDeadline(), r.agentStatus(),
                r.code(), r.error(), r.rejoinRequired(), r.heartbeatIntervalSeconds());
    }

    /** At most {@link #MAX_BATCH} entries; a refused entry is a result with {@code success=false}, not an exception. */
    public BatchResult heartbeats(List<BatchEntry> entries) {
        return call(heartbeatUrl, "POST", teamPath("heartbeats"), Map.of("heartbeats", batchBody(entries, null)),
                BatchResult.class);
    }

    /**
     * A host daemon's batch through its host lease ({@code hostId}): one write on the server
     * for all of them. {@code localBeatAgesMs}: per agent, how long ago the daemon last heard it locally (absent:
     * now). Each agent is answered as by {@link #heartbeats(List)}.
     */
    public BatchResult hostHeartbeats(String hostId, List<BatchEntry> entries, Map<String, Long> localBeatAgesMs) {
        return hostHeartbeats(hostId, entries, localBeatAgesMs, Map.of());
    }

    /**
     * As {@link #hostHeartbeats(String, List, Map)}; {@code stalled}: per agent, the host's stall judgement of it
     * when that changed since the server last took it (true: stalled, false: no longer; absent: unchanged), sent with
     * the entry's progress age. Only a change writes the agent's item.
     */
    public BatchResult hostHeartbeats(String hostId, List<BatchEntry> entries, Map<String, Long> localBeatAgesMs,
                                      Map<String, Boolean> stalled) {
        return call(heartbeatUrl, "POST", teamPath("heartbeats"),
                Map.of("hostId", hostId, "heartbeats", batchBody(entries, localBeatAgesMs, stalled)),
                BatchResult.class);
    }

    private static List<ObjectNode> batchBody(List<BatchEntry> entries, Map<String, Long> localBeatAgesMs) {
        return batchBody(entries, localBeatAgesMs, Map.of());
    }

    /**
     * A batch's entries as sent: at most {@link #MAX_BATCH}, each with its agent's local beat age and stall judgement
     * when given.
     */
    /** A host's report of an agent's running subagents: ids, types and since when only. */
    private static void subagents(ObjectNode n, BatchEntry.Subagents s) {
        ArrayNode running = n.putArray("running");
        for (BatchEntry.Running r : s.running()) {
            ObjectNode one = running.addObject().put("id", r.id());
            if (r.type() != null) {
                one.put("type", r.type());
            }
            one.put("since", r.since().toString());
        }
        n.put("more", s.more());
    }

    private static List<ObjectNode> batchBody(List<BatchEntry> entries, Map<String, Long> localBeatAgesMs,
                                              Map<String, Boolean> stalled) {
        if (entries.size() > MAX_BATCH) {
            throw new IllegalArgumentException("A batch holds at most " + MAX_BATCH + " heartbeats; got "
                    + entries.size());
        }
        List<ObjectNode> list = new ArrayList<>();
        for (BatchEntry e : entries) {
            ObjectNode n = MAPPER.createObjectNode().put("agentId", e.agentId());
            if (e.heartbeat() != null) {
                n.setAll((ObjectNode) MAPPER.valueToTree(e.heartbeat()));
            }
            if (e.waiting() != null) {
                n.put("waiting", e.waiting());
            }
            if (e.inTurn() != null) {
                n.put("inTurn", e.inTurn());
            }
            if (e.parked() != null && !e.parked().parked()) {
                n.put("parked", false);
            } else if (e.parked() != null) {
                ObjectNode p = n.putObject("parked");
                if (e.parked().until() != null) {
                    p.put("until", e.parked().until().toString());
                }
                if (e.parked().reason() != null) {
                    p.put("reason", e.parked().reason());
                }
            }
            Long age = localBeatAgesMs == null ? null : localBeatAgesMs.get(e.agentId());
            if (age != null) {
                n.put("localBeatAgeMs", Math.max(0, age));
            }
            Boolean stall = stalled == null ? null : stalled.get(e.agentId());
            if (stall != null) {
                n.put("stalled", stall);
            }
            if (e.subagents() != null && localBeatAgesMs != null) {
                subagents(n.putObject("subagents"), e.subagents());
            }
            list.add(n);
        }
        return list;
    }

    public AgentView leave(String agentId, String reason) {
        return call("POST", agentPath(agentId, "/leave"), reasonBody(reason), AgentView.class);
    }

    /** A host reports its agent crashed: {@code dead} at once. */
    public AgentView fail(String agentId, String reason) {
        return call("POST", agentPath(agentId, "/fail"), reasonBody(reason), AgentView.class);
    }

    /**
     * A host reports its agent crashed ({@code dead} at once) and restarts it itself within {@code restartIn} (its
     * crash backoff; whole seconds, rounded up): the revive flow stands down until that restart and its join are due
     * (plus a grace), so the two never race. {@code restartsLastHour}, when not null, is the host's own restarts of
     * the agent, shown with it ({@code stats.restartsLastHour}).
     */
    public AgentView fail(String agentId, String reason, Duration restartIn, Long restartsLastHour) {
        return fail(agentId, reason, restartIn, restartsLastHour, null);
    }

    /**
     * As {@link #fail(String, String, Duration, Long)}; {@code stallReason} (null: a crash) when the host stopped the
     * agent because it stalled (a short phrase, such as {@code model stream silent}): the death's trigger is then
     * {@code stalled}, and the agent's stall is raised with that reason ({@code AgentStalled}).
     */
    public AgentView fail(String agentId, String reason, Duration restartIn, Long restartsLastHour,
                          String stallReason) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (stallReason != null) {
            body.put("stalled", true);
            body.put("stallReason", stallReason);
        }
        if (reason != null) {
            body.put("reason", reason);
        }
        if (restartIn != null) {
            body.put("restartInSeconds", (restartIn.toMillis() + 999) / 1000);
        }
        if (restartsLastHour != null) {
            body.put("restartsLastHour", restartsLastHour);
        }
        return call("POST", agentPath(agentId, "/fail"), body, AgentView.class);
    }

    /**
     * A host stopped restarting its crash-looping agent: {@code dead_failed_revive} at once
     * ({@code host_gave_up}), with one alert and no revive flow. {@code reason} is at most 160 characters.
     */
    public AgentView giveUp(String agentId, String reason) {
        return giveUp(agentId, reason, null);
    }

    /** As {@link #giveUp(String, String)}, with the host's own restarts of the agent in the last hour (or null). */
    public AgentView giveUp(String agentId, String reason, Long restartsLastHour) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (reason != null) {
            body.put("reason", reason);
        }
        body.put("giveUp", true);
        if (restartsLastHour != null) {
            body.put("restartsLastHour", restartsLastHour);
        }
        return call("POST", agentPath(agentId, "/fail"), body, AgentView.class);
    }

    /**
     * Deletes an agent that left or that no revive can bring back (admin key): no sweep or list reads it again, its
     * history stays for its retention, and its id can be registered again. Answers {@code success}, {@code deleted}
     * and the {@code status} it had.
     */
    public JsonNode deleteAgent(String agentId) {
        return call("DELETE", agentPath(agentId, ""), null, JsonNode.class);
    }

    public AgentView cleanup(String agentId, String reason) {
        return call("POST", agentPath(agentId, "/cleanup"), reasonBody(reason), AgentView.class);
    }

    /** The newest page: {@code limit} or null for the server's default. */
    public Transitions transitions(String agentId, Integer limit) {
        return transitions(agentId, limit, null);
    }

    /** The page after the one whose {@code nextCursor} is {@code cursor} (null: the newest page). */
    public Transitions transitions(String agentId, Integer limit, String cursor) {
        return call("GET", agentPath(agentId, "/transitions") + query("limit", limit, "cursor", cursor), null,
                Transitions.class);
    }

    /** The agent's whole history, newest first, following {@code nextCursor} page by page. */
    public List<TransitionView> allTransitions(String agentId) {
        List<TransitionView> all = new ArrayList<>();
        String cursor = null;
        do {
            Transitions page = transitions(agentId, 100, cursor);
            all.addAll(page.transitions());
            cursor = page.nextCursor();
        } while (cursor != null);
        return all;
    }

    public ErrorClassification reportError(String agentId, String message) {
        return call("POST", agentPath(agentId, "/errors"), Map.of("message", message), ErrorClassification.class);
    }

    /** {@code maxAgeSeconds} or null for the server's default (24 h). */
    public RecoveryAnswer recovery(String agentId, Long maxAgeSeconds) {
        return call("GET", agentPath(agentId, "/recovery") + query("maxAgeSeconds", maxAgeSeconds), null,
                RecoveryAnswer.class);
    }

    public AgentView pause(String agentId, Pause pause) {
        return call("POST", agentPath(agentId, "/pause"), pause, AgentView.class);
    }

    public AgentView resume(String agentId) {
        return call("POST", agentPath(agentId, "/resume"), null, AgentView.class);
    }

    public Inbox inbox(String agentId, Integer limit) {
        return call("GET", agentPath(agentId, "/inbox") + query("limit", limit), null, Inbox.class);
    }

    public ReviveStarted revive(String agentId) {
        return call("POST", agentPath(agentId, "/revive"), null, ReviveStarted.class);
    }

    public Revivals revivals(String agentId, Integer limit) {
        return call("GET", agentPath(agentId, "/revivals") + query("limit", limit), null, Revivals.class);
    }

    // ---- tasks ----

    public TaskView createTask(NewTask task) {
        return call("POST", teamPath("tasks"), task, TaskView.class);
    }

    /** {@code status} pending|in_progress|done, or null for all. */
    /** Every task of the team, {@code status} filtering (null: all): each page read in turn, joined. */
    public TaskList tasks(String status) {
        List<TaskView> all = new ArrayList<>();
        String cursor = null;
        do {
            TaskList page = tasksPage(status, LARGEST_PAGE, cursor);
            all.addAll(page.tasks());
            cursor = page.nextCursor();
        } while (cursor != null);
        return new TaskList(all.size(), all, null);
    }

    /** One page of the team's tasks by id: at most {@code limit} (null: 100) from {@code cursor} (null: the first). */
    public TaskList tasksPage(String status, Integer limit, String cursor) {
        return call("GET", teamPath("tasks") + query("status", status, "limit", limit, "cursor", cursor), null,
                TaskList.class);
    }

    public TaskChange claimTask(String taskId, String agentId) {
        return call("POST", teamPath("tasks/" + enc(taskId) + "/claim"), Map.of("agentId", agentId),
                TaskChange.class);
    }

    /** {@code result} may be null. */
    public TaskChange completeTask(String taskId, String agentId, String result) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("agentId", agentId);
        if (result != null) {
            body.put("result", result);
        }
        return call("POST", teamPath("tasks/" + enc(taskId) + "/complete"), body, TaskChange.class);
    }

    // ---- team ----

    /**
     * Creates a team with its first admin key (shown once in the answer). Needs a client built with an operator
     * key; {@code settings} (leaderAgentId, selfPreservationThreshold, selfPreservationMinAlive) may be empty.
     */
    public NewTeam createTeam(String newTeam, Map<String, Object> settings) {
        ObjectNode body = MAPPER.createObjectNode().put("team", newTeam);
        settings.forEach((k, v) -> body.set(k, MAPPER.valueToTree(v)));
        return call(baseUrl, "POST", "/v1/teams", body, NewTeam.class, false);
    }

    /**
     * Mints a new admin key for the existing team {@code forTeam} (shown once in the answer): the way back into
     * a team that has lost its admin keys. Needs a client built with an operator key; {@code label} may be null.
     */
    public ApiKey mintAdminKey(String forTeam, String label) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (label != null) {
            body.put("label", label);
        }
        return call(baseUrl, "POST", "/v1/teams/" + enc(forTeam) + "/admin-keys", body, ApiKey.class, false);
    }

    public TeamSettings settings() {
        return call("GET", teamPath("settings"), null, TeamSettings.class);
    }

    /**
     * Changes the given settings. In {@code changes}, {@code leaderAgentId} mapped to null removes the leader;
     * keys are leaderAgentId, selfPreservationThreshold, selfPreservationMinAlive, failureDomains.
     */
    public TeamSettings updateSettings(Map<String, Object> changes) {
        ObjectNode body = MAPPER.createObjectNode();
        changes.forEach((k, v) -> body.set(k, MAPPER.valueToTree(v)));
        return call("PUT", teamPath("settings"), body, TeamSettings.class);
    }

    /** Releases the team's self-preservation hold (admin key): its silent agents are then marked dead as judged. */
    public TeamSettings releaseHold() {
        return call("POST", teamPath("hold/release"), null, TeamSettings.class);
    }

    public TeamSettings pauseTeam(Pause pause) {
        return call("POST", teamPath("pause"), pause, TeamSettings.class);
    }

    public TeamSettings resumeTeam() {
        return call("POST", teamPath("resume"), null, TeamSettings.class);
    }

    /** {@code type} (e.g. AgentStatusChanged) and {@code limit} may be null. */
    public EventList events(String type, Integer limit) {
        return events(EventQuery.all().withType(type).withLimit(limit));
    }

    /**
     * A page of the events matching {@code q}, newest first; a refused query (e.g. since after until, another
     * team's cursor) is INVALID_QUERY. The next page: {@code q.withCursor(page.nextCursor())}.
     */
    public EventList events(EventQuery q) {
        return call("GET", teamPath("events") + query("since", q.since(), "until", q.until(), "agentId", q.agentId(),
                "type", q.type(), "limit", q.limit(), "cursor", q.cursor()), null, EventList.class);
    }

    // ---- hosts ----

    public HostCommands hostCommands(String hostId) {
        return call("GET", teamPath("hosts/" + enc(hostId) + "/commands"), null, HostCommands.class);
    }

    public HostCommand ackCommand(String hostId, String commandId) {
        return call("POST", teamPath("hosts/" + enc(hostId) + "/commands/" + enc(commandId) + "/ack"), null,
                HostCommand.class);
    }

    // ---- keys ----

    /** {@code scope} read|agent|admin; the answer holds the secret, shown only this once. */
    public ApiKey createKey(String scope, String label) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("scope", scope);
        if (label != null) {
            body.put("label", label);
        }
        return call(baseUrl, "POST", teamPath("keys"), body, ApiKey.class, false);
    }

    /** Every key of the team (never a secret): each page read in turn, joined. */
    public KeyList keys() {
        List<ApiKey> all = new ArrayList<>();
        String cursor = null;
        do {
            KeyList page = keysPage(LARGEST_PAGE, cursor);
            all.addAll(page.keys());
            cursor = page.nextCursor();
        } while (cursor != null);
        return new KeyList(all, null);
    }

    /** One page of the team's keys by id: at most {@code limit} (null: 100) from {@code cursor} (null: the first). */
    public KeyList keysPage(Integer limit, String cursor) {
        return call("GET", teamPath("keys") + query("limit", limit, "cursor", cursor), null, KeyList.class);
    }

    public void revokeKey(String keyId) {
        call("DELETE", teamPath("keys/" + enc(keyId)), null, JsonNode.class);
    }

    // ---- plumbing ----

    private String teamPath(String rest) {
        return "/v1/teams/" + enc(team) + "/" + rest;
    }

    private String agentPath(String agentId, String rest) {
        return teamPath("agents/" + enc(agentId)) + rest;
    }

    private static Map<String, Object> reasonBody(String reason) {
        return reason == null ? null : Map.of("reason", reason);
    }

    private static String enc(String s) {
        return URLEncoder.encode(Objects.requireNonNull(s), StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String query(Object... pairs) {
        StringBuilder q = new StringBuilder();
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] != null) {
                q.append(q.length() == 0 ? '?' : '&').append(pairs[i]).append('=').append(enc(pairs[i + 1].toString()));
            }
        }
        return q.toString();
    }

    <T> T call(String method, String path, Object body, Class<T> type) {
        return call(baseUrl, method, path, body, type, true);
    }

    private <T> T call(URI base, String method, String path, Object body, Class<T> type) {
        return call(base, method, path, body, type, true);
    }

    /** One request through the transport; {@code repeatable} false: not sent again after a 502 or 504. */
    private <T> T call(URI base, String method, String path, Object body, Class<T> type, boolean repeatable) {
        return transport.call(base, method, path, body, type, repeatable);
    }

    /** Settings of a client; url and team are required, the key is needed by every route. */
    public static final class Builder {
        private URI url;
        private URI heartbeatUrl;
        private String team;
        private String apiKey;
        private RetryPolicy retry = RetryPolicy.defaults();
        private Sleeper sleeper = Sleeper.REAL;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration requestTimeout = Duration.ofSeconds(15);
        private Consumer<String> onRetry;
        private boolean readsFailFast;

        public Builder url(URI u) {
            this.url = u;
            return this;
        }

        public Builder url(String u) {
            return url(URI.create(u));
        }

        /**
         * The deployment's heartbeat URL (template output HeartbeatUrl; Lifeline Local prints its own): heartbeats
         * go there, everything else to {@link #url}. Null or blank: heartbeats go to the API too.
         */
        public Builder heartbeatUrl(URI u) {
            this.heartbeatUrl = u;
            return this;
        }

        public Builder heartbeatUrl(String u) {
            return heartbeatUrl(u == null || u.isBlank() ? null : URI.create(u));
        }

        public Builder team(String t) {
            this.team = t;
            return this;
        }

        public Builder apiKey(String k) {
            this.apiKey = k;
            return this;
        }

        public Builder retry(RetryPolicy p) {
            this.retry = p;
            return this;
        }

        public Builder sleeper(Sleeper s) {
            this.sleeper = s;
            return this;
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        /**
         * Told, before each wait, why a call is being retried and when, as one line for a person: "cannot reach
         * URL (why), retrying in 2 s (attempt 2 of 4; is Lifeline Local running?)". The CLI prints it at once.
         */
        public Builder onRetry(Consumer<String> listener) {
            this.onRetry = listener;
            return this;
        }

        /**
         * When on, a read ({@code GET}) whose connection fails (refused: nothing listens at the URL; or the host is
         * unknown) fails at once, naming the URL and, for a loopback URL, how to start Lifeline Local, instead of
         * retrying for the whole {@link RetryPolicy}. Writes, timeouts, 429 and 503 are retried as before. For a
         * person at a terminal (the CLI); off by default, so a program riding out a restart keeps its retries.
         */
        public Builder readsFailFast(boolean on) {
            this.readsFailFast = on;
            return this;
        }

        public LifelineClient build() {
            return new LifelineClient(this);
        }
    }
}
