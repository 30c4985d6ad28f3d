package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HeartbeatAdvice;
import io.lifeline.agent.HeartbeatSource;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Liveness;
import io.lifeline.app.HookIngest;
import io.lifeline.auth.Scope;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.AgentDataStore;
import io.lifeline.store.AgentStore;
import io.lifeline.store.HostLeaseStore;
import io.lifeline.store.TaskStore;
import io.lifeline.support.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The hot path: one agent's heartbeat, a daemon's batch of up to 25, and agent runtimes' hook events. */
public final class HeartbeatHandler extends HttpApiHandler {
    static final Set<String> HEARTBEAT_FIELDS = Set.of("status", "source", "metadata", "stats", "checkpoint",
            "nextHeartbeatWithinSeconds", "waiting", "inTurn");
    private static final Set<String> BATCH_ENTRY_FIELDS = union(HEARTBEAT_FIELDS, Set.of("agentId"));
    /** In a batch that names its host: each entry may say how long ago the daemon last heard the agent locally. */
    private static final Set<String> HOSTED_ENTRY_FIELDS = union(BATCH_ENTRY_FIELDS, Set.of("localBeatAgeMs"));
    private static final Set<String> STATS_FIELDS = Set.of("messagesProcessed", "toolCallsExecuted",
            "errorsEncountered", "uptime", "restartsLastHour");

    private final AgentStore agents;
    private final AgentDataStore data;
    private final HostLeaseStore leases;
    private final Config config;
    private final Clock clock;
    private final HookIngest hooks;
    /** The header that names the agent of a hook when its path does not. */
    static final String AGENT_HEADER = "X-Lifeline-Agent";

    public HeartbeatHandler() {
        this(Wiring.fromEnvironment());
    }

    public HeartbeatHandler(Wiring wiring) {
        this.agents = new AgentStore(wiring.dynamo(), wiring.config().tables());
        this.data = new AgentDataStore(wiring.dynamo(), wiring.config().tables());
        this.leases = new HostLeaseStore(wiring.dynamo(), wiring.config().tables());
        this.config = wiring.config();
        this.clock = wiring.clock();
        countHeartbeats(clock, config.metricsSummaryInterval());
        // The Function URL (template.yaml, HeartbeatUrl): no authorizer runs, so the handler checks keys itself.
        answerFunctionUrls(new KeyCache(new io.lifeline.store.KeyStore(wiring.dynamo(), config.tables())::find, clock,
                config.keyCacheTtl()));
        route("POST /v1/teams/{team}/agents/{agentId}/heartbeat", Scope.AGENT, this::heartbeat);
        route("POST /v1/teams/{team}/heartbeats", Scope.AGENT, this::batch);
        this.hooks = new HookIngest(agents, data, new TaskStore(wiring.dynamo(), config.tables()), config.allowances(),
                config.hookCoalesceWindow());
        route("POST /v1/teams/{team}/agents/{agentId}/hooks/{runtime}", Scope.AGENT, this::hook);
        route("POST /v1/teams/{team}/hooks/{runtime}", Scope.AGENT, this::hook);
    }

    /**
     * A runtime's own hook event, as the runtime sends it: the agent is named in the path, or (Claude Code's URL
     * cannot hold variables; its headers can) in {@value #AGENT_HEADER}. Answered {@code 200 {}} whatever the event
     * means, so a runtime never reads the answer as a decision (Claude Code reads a JSON object as one; an empty one
     * decides nothing).
     */
    private Reply hook(ApiRequest request) {
        String team = request.id("team");
        HookRuntime runtime = HookRuntime.fromWire(request.pathParameter("runtime")).orElseThrow(() ->
                LifelineException.badInput("INVALID_RUNTIME", "The runtime must be one of claude-code, codex, gemini, "
                        + "opencode; was '" + printable(String.valueOf(request.pathParameter("runtime")), 40) + "'"));
        String agentId = request.pathParameter("agentId") != null ? request.id("agentId")
                : Limits.requireId("Header '" + AGENT_HEADER + "'", request.header(AGENT_HEADER));
        HookEvent event;
        try {
            event = HookReader.read(runtime, request.bytes(Limits.MAX_HOOK_BODY_BYTES));
        } catch (HookReader.HookBodyException e) {
            throw LifelineException.badInput("INVALID_JSON", e.getMessage());
        }
        HookIngest.Outcome outcome = hooks.apply(team, agentId, event, clock.instant());
        if (outcome != HookIngest.Outcome.IGNORED && outcome != HookIngest.Outcome.ALREADY_GONE) {
            request.accepted();
        }
        return Reply.ok(Json.object());
    }

    private Reply heartbeat(ApiRequest request) {
        Fields f = Fields.of(request.optionalBody(), "the heartbeat", HEARTBEAT_FIELDS);
        Heartbeat hb = parse(request.id("team"), request.id("agentId"), f);
        Liveness.Activity activity = activity(f, Liveness.Activity.PLAIN);
        hb = hb.with(activity, config.allowances().of(activity));
        ObjectNode body = beat(request, hb, clock.instant());
        request.accepted();
        return Reply.ok(body);
    }

    private Reply batch(ApiRequest request) {
        String team = request.id("team");
        JsonNode body = request.body();
        String hostId = Fields.of(body, "the batch", Set.of("heartbeats", "hostId")).id("hostId");
        JsonNode entries = body.get("heartbeats");
        if (entries == null || !entries.isArray() || entries.isEmpty()) {
            throw LifelineException.badInput("INVALID_FIELD", "'heartbeats' must be a non-empty array");
        }
        if (entries.size() > Limits.MAX_BATCH_HEARTBEATS) {
            throw LifelineException.badInput("TOO_MANY_HEARTBEATS", "A batch holds at most "
                    + Limits.MAX_BATCH_HEARTBEATS + " heartbeats; this one has " + entries.size());
        }
        // Validate every entry before writing any, so a bad batch writes nothing.
        List<Heartbeat> beats = new ArrayList<>();
        List<Long> ages = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            Fields entry = Fields.of(entries.get(i), "heartbeats[" + i + "]",
                    hostId == null ? BATCH_ENTRY_FIELDS : HOSTED_ENTRY_FIELDS);
            String agentId = entry.requiredId("agentId");
            if (!seen.add(agentId)) {
                throw LifelineException.badInput("DUPLICATE_AGENT", "Agent '" + agentId
                        + "' appears twice in the batch");
            }
            Heartbeat hb = parse(team, agentId, entry);
            // In a host's batch an entry without 'waiting' leaves the agent's wait as it is (the daemon sends it when
            // it changes), and no allowance applies: the daemon beats for a waiting agent while its process lives.
            // A batch without a host is many direct beats.
            Liveness.Activity activity = activity(entry, hostId == null ? Liveness.Activity.PLAIN : null);
            beats.add(hb.with(activity, hostId == null && activity != null ? config.allowances().of(activity) : null));
            ages.add(hostId == null ? null : entry.integer("localBeatAgeMs", 0,
                    Limits.MAX_STALE_AFTER_SECONDS * 1000L));
        }
        Instant now = clock.instant();
        if (hostId != null) {
            ArrayNode results = Json.MAPPER.createArrayNode();
            new HostedBatch(agents, data, leases, config).beat(team, hostId, beats, ages, now).forEach(r -> {
                if (r.path("success").asBoolean()) {
                    request.accepted();
                } else {
                    request.refusedEntry(r.path("code").asText());
                }
                results.add(r);
            });
            return Reply.ok(Json.object().set("results", results));
        }
        ArrayNode results = Json.MAPPER.createArrayNode();
        for (Heartbeat hb : beats) {
            ObjectNode result;
            try {
                result = beat(request, hb, now);
                request.accepted();
            } catch (LifelineException e) {
                result = errorBody(e);
                request.refusedEntry(e.code());
            }
            results.add(Json.object().put("agentId", hb.agentId()).setAll(result));
        }
        return Reply.ok(Json.object().set("results", results));
    }

    /**
     * The heartbeat protocol's answer: success, heartbeatTs, nextDeadline (always a time:
     * {@link HeartbeatAdvice#NO_DEADLINE} when no further beat is expected), agentStatus; and the interval to beat at,
     * which the SDK follows.
     */
    private ObjectNode beat(ApiRequest request, Heartbeat hb, Instant now) {
        Agent after = agents.heartbeat(hb, now);
        io.lifeline.agent.Transition t = after.lastTransition();
        if (t != null && hb.reported() != null
                && (t.trigger() == io.lifeline.agent.Trigger.REPORT_READY
                        || t.trigger() == io.lifeline.agent.Trigger.REPORT_WORKING)
                && t.at() != null && !t.at().isBefore(now)) {
            request.changed(hb.agentId(), t.from().wire(), t.to().wire()); // this beat's own report moved it
        }
        data.save(hb.team(), hb.agentId(), hb.metadataJson(), hb.checkpointJson(), now);
        return answer(after, hb, config);
    }

    /** The heartbeat protocol's answer for an agent as written. */
    static ObjectNode answer(Agent after, Heartbeat hb, Config config) {
        ObjectNode body = Json.object().put("success", true);
        Json.putTime(body, "heartbeatTs", after.heartbeatAt());
        Json.putTime(body, "nextDeadline", HeartbeatAdvice.answeredDeadline(after));
        body.put("agentStatus", after.status().wire());
        return body.put("heartbeatIntervalSeconds", HeartbeatAdvice.intervalSeconds(config.heartbeatInterval(),
                config.defaultStaleAfter(), after, hb.nextWithin()));
    }

    static Heartbeat parse(String team, String agentId, Fields f) {
        String statusText = f.string("status", 32);
        AgentStatus status = null;
        if (statusText != null) {
            status = AgentStatus.fromReported(statusText).orElseThrow(() -> LifelineException.badInput(
                    "INVALID_STATUS", "'status' must be one of ready, working, idle, active; was '" + statusText + "'"));
        }
        String sourceText = f.string("source", 32);
        HeartbeatSource source = HeartbeatSource.TOOL;
        if (sourceText != null) {
            source = HeartbeatSource.fromWire(sourceText).orElseThrow(() -> LifelineException.badInput(
                    "INVALID_FIELD", "'source' must be one of tool, sdk_session_idle, sdk_session_updated, "
                            + "sdk_tool_execute; was '" + sourceText + "'"));
        }
        if (status != null && source.implied() != null && status != source.implied()) {
            throw LifelineException.badInput("CONFLICTING_STATUS", "'status' " + status.wire() + " contradicts '"
                    + source.wire() + "', which means " + source.implied().wire());
        }
        AgentStatus reported = status != null ? status : source.implied();
        Long within = f.integer("nextHeartbeatWithinSeconds", Limits.MIN_STALE_AFTER_SECONDS,
                Limits.MAX_STALE_AFTER_SECONDS);
        return new Heartbeat(team, agentId, reported, statusText != null ? "status " + statusText : source.wire(),
                within == null ? null : Duration.ofSeconds(within), stats(f.nested("stats", STATS_FIELDS)),
                f.objectJson("metadata", Limits.MAX_METADATA_BYTES, "METADATA_TOO_LARGE"),
                f.objectJson("checkpoint", Limits.MAX_CHECKPOINT_BYTES, "CHECKPOINT_TOO_LARGE"));
    }

    /**
     * What a beat says of waiting or a turn in progress: {@code waiting} ({@code input}, {@code person}, or
     * {@code none} to say it waits for nothing) or {@code inTurn: true}; {@code absent} when it says neither.
     */
    static Liveness.Activity activity(Fields f, Liveness.Activity absent) {
        String waiting = f.string("waiting", 16);
        Boolean inTurn = f.bool("inTurn");
        if (waiting != null && Boolean.TRUE.equals(inTurn)) {
            throw LifelineException.badInput("CONFLICTING_STATUS", "An agent that is 'waiting' is not 'inTurn'");
        }
        if (waiting != null) {
            if (waiting.equals("none")) {
                return Liveness.Activity.PLAIN;
            }
            return Liveness.Activity.of(Liveness.Waiting.fromWire(waiting).orElseThrow(() -> LifelineException.badInput(
                    "INVALID_FIELD", "'waiting' must be one of input, person, none; was '" + waiting + "'")));
        }
        if (inTurn != null) {
            return inTurn ? Liveness.Activity.IN_TURN : Liveness.Activity.PLAIN;
        }
        return absent;
    }

    private static AgentStats stats(Fields s) {
        if (s == null) {
            return AgentStats.NONE;
        }
        long max = Long.MAX_VALUE / 2;
        return new AgentStats(s.integer("messagesProcessed", 0, max), s.integer("toolCallsExecuted", 0, max),
                s.integer("errorsEncountered", 0, max), s.integer("uptime", 0, max),
                s.integer("restartsLastHour", 0, Limits.MAX_RESTARTS_LAST_HOUR));
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new HashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }
}
