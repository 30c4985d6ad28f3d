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
import io.lifeline.agent.Subagents;
import io.lifeline.app.Heartbeats;
import io.lifeline.app.HookIngest;
import io.lifeline.app.RunningSubagents;
import io.lifeline.app.Parking;
import io.lifeline.auth.Scope;
import io.lifeline.config.Config;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import io.lifeline.support.Summary;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/** The hot path: one agent's heartbeat, a daemon's batch of up to 25, and agent runtimes' hook events. */
public final class HeartbeatHandler extends HttpApiHandler {
    static final Set<String> HEARTBEAT_FIELDS = Set.of("status", "source", "metadata", "stats", "checkpoint",
            "nextHeartbeatWithinSeconds", "waiting", "inTurn", "progress", "progressAgeMs", "toolInFlight",
            "stallReason", "parked");
    /** A stall's reason as a client may word it: a short phrase, never free text (it reaches events). */
    private static final Pattern STALL_REASON = Pattern.compile("[A-Za-z0-9 ._,:()-]{1,32}");
    private static final Set<String> BATCH_ENTRY_FIELDS = union(HEARTBEAT_FIELDS, Set.of("agentId"));
    /** In a batch that names its host: each entry may say how long ago the daemon last heard the agent locally. */
    private static final Set<String> HOSTED_ENTRY_FIELDS = union(BATCH_ENTRY_FIELDS, Set.of("localBeatAgeMs",
            "stalled", "subagents"));
    private static final Set<String> STATS_FIELDS = Set.of("messagesProcessed", "toolCallsExecuted",
            "errorsEncountered", "uptime", "restartsLastHour");

    private final Heartbeats heartbeats;
    private final Config config;
    private final Clock clock;
    private final HookIngest hooks;
    private final Parking parking;
    /** A host's report of an agent's running subagents, written when its daemon sends a changed set. */
    private final RunningSubagents running;
    /** The Function URL's key cache (its look-ups are counted in the summary). */
    private final KeyCache keyCache;
    /** Routine beats are counted here, not logged one by one. */
    private final Summary summary;
    /** The header that names the agent of a hook when its path does not. */
    static final String AGENT_HEADER = "X-Lifeline-Agent";

    /** A reply with its request's account of beats ({@link Heartbeats.Tally}), for the summary and metrics. */
    private static final class Counted extends Reply {
        private final Heartbeats.Tally tally;

        Counted(JsonNode body, Heartbeats.Tally tally) {
            super(200, body);
            this.tally = tally;
        }
    }

    public HeartbeatHandler() {
        this(Wiring.fromEnvironment());
    }

    public HeartbeatHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public HeartbeatHandler(UseCases app) {
        // The Function URL (template.yaml, HeartbeatUrl): no authorizer runs, so the handler checks keys itself.
        this(app, new KeyCache(app.keys()::find, app.wiring().clock(), app.wiring().config().keyCacheTtl()));
    }

    private HeartbeatHandler(UseCases app, KeyCache keyCache) {
        super(keyCache);
        this.keyCache = keyCache;
        this.heartbeats = app.heartbeats();
        this.hooks = app.hooks();
        this.parking = app.parking();
        this.running = app.subagents();
        this.config = app.wiring().config();
        this.clock = app.wiring().clock();
        // Accepted beats go into a summary written once per interval; refusals, errors and status changes still
        // write their own line (with EMF).
        this.summary = new Summary(Metrics.HEARTBEAT_FUNCTION, clock, config.metricsSummaryInterval());
        route("POST /v1/teams/{team}/agents/{agentId}/heartbeat", Scope.AGENT, this::heartbeat);
        route("POST /v1/teams/{team}/heartbeats", Scope.AGENT, this::batch);
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
        Heartbeats.Tally tally = new Heartbeats.Tally();
        HookIngest.Outcome outcome = hooks.apply(team, agentId, event, clock.instant(), request.sourceIp(), tally);
        if (outcome != HookIngest.Outcome.IGNORED && outcome != HookIngest.Outcome.ALREADY_GONE) {
            tally.accepted();
        }
        return new Counted(Json.object(), tally);
    }

    private Reply heartbeat(ApiRequest request) {
        Fields f = Fields.of(request.optionalBody(), "the heartbeat", HEARTBEAT_FIELDS);
        Heartbeat hb = parse(request.id("team"), request.id("agentId"), f);
        Liveness.Activity activity = activity(f, Liveness.Activity.PLAIN);
        hb = hb.with(activity, null).from(request.sourceIp()); // its allowance is the use case's (Liveness.carried)
        Heartbeats.Tally tally = new Heartbeats.Tally();
        Instant now = clock.instant();
        ParkRequests.Request park = ParkRequests.of(f, now);
        Agent after = heartbeats.beat(hb, now, tally);
        ParkRequests.apply(parking, hb.team(), hb.agentId(), park, now);
        return new Counted(answer(after, hb, config), tally);
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
        List<Boolean> stalls = new ArrayList<>();
        List<ParkRequests.Request> parks = new ArrayList<>();
        List<Subagents> subagents = new ArrayList<>();
        Instant now = clock.instant();
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
            // it changes), and no allowance applies (Heartbeats.hosted). A batch without a host is many direct beats.
            beats.add(hb.with(activity(entry, hostId == null ? Liveness.Activity.PLAIN : null), null)
                    .from(hostId == null ? request.sourceIp() : null));
            ages.add(hostId == null ? null : entry.integer("localBeatAgeMs", 0,
                    Limits.MAX_STALE_AFTER_SECONDS * 1000L));
            stalls.add(hostId == null ? null : stalled(entry, hb));
            parks.add(ParkRequests.of(entry, now));
            subagents.add(hostId == null ? null : SubagentRequests.of(entries.get(i), "heartbeats[" + i + "]"));
        }
        Heartbeats.Tally tally = new Heartbeats.Tally();
        List<Heartbeats.Beat> done = hostId != null ? heartbeats.hosted(team, hostId, beats, ages, stalls, now, tally)
                : heartbeats.batch(beats, now, tally);
        for (int i = 0; i < done.size(); i++) {
            if (!(done.get(i) instanceof Heartbeats.Refused)) {
                ParkRequests.apply(parking, team, done.get(i).agentId(), parks.get(i), now);
                if (subagents.get(i) != null) {
                    running.replace(team, done.get(i).agentId(), subagents.get(i));
                }
            }
        }
        ArrayNode results = Json.MAPPER.createArrayNode();
        for (Heartbeats.Beat b : done) {
            results.add(Json.object().put("agentId", b.agentId()).setAll(answer(b)));
        }
        return new Counted(Json.object().set("results", results), tally);
    }

    /** A batch entry's answer: the protocol's answer for a beat written or answered by the lease, or its error. */
    private ObjectNode answer(Heartbeats.Beat b) {
        if (b instanceof Heartbeats.Written w) {
            return answer(w.after(), w.heartbeat(), config);
        }
        if (b instanceof Heartbeats.Answered a) {
            return leaseAnswer(a);
        }
        if (b instanceof Heartbeats.Refused r) {
            return errorBody(r.error());
        }
        throw new IllegalStateException("a beat is written, answered or refused");
    }

    /**
     * The heartbeat protocol's answer: success, heartbeatTs, nextDeadline (always a time:
     * {@link HeartbeatAdvice#NO_DEADLINE} when no further beat is expected), agentStatus; and the interval to beat at,
     * which the SDK follows.
     */
    static ObjectNode answer(Agent after, Heartbeat hb, Config config) {
        ObjectNode body = Json.object().put("success", true);
        Json.putTime(body, "heartbeatTs", after.heartbeatAt());
        Json.putTime(body, "nextDeadline", HeartbeatAdvice.answeredDeadline(after));
        body.put("agentStatus", after.status().wire());
        return body.put("heartbeatIntervalSeconds", HeartbeatAdvice.intervalSeconds(config.heartbeatInterval(),
                config.defaultStaleAfter(), after, hb.nextWithin()));
    }

    /** The heartbeat protocol's answer from the lease: the sign of life is the local beat, the deadline the lease's. */
    private ObjectNode leaseAnswer(Heartbeats.Answered a) {
        ObjectNode body = Json.object().put("success", true);
        Json.putTime(body, "heartbeatTs", a.beatAt());
        Json.putTime(body, "nextDeadline", a.deadline());
        body.put("agentStatus", a.cached().status().wire());
        return body.put("heartbeatIntervalSeconds", HeartbeatAdvice.interval(config.heartbeatInterval(),
                config.defaultStaleAfter(), a.cached().staleAfter(), null).toSeconds());
    }

    /**
     * The heartbeat function writes no line for a routine beat (accepted, no status change): its count goes into the
     * function's summary, written once per interval; a refusal, an error or a status change writes its line, a
     * refusal with its metric (HeartbeatsRejected by code), and a batch's entries refused on their own one line per
     * code.
     */
    @Override
    protected void logRequest(Answered a) {
        Instant now = clock.instant();
        Heartbeats.Tally tally = a.reply() instanceof Counted c ? c.tally : new Heartbeats.Tally();
        // A property, not a metric: AWS/Lambda's Invocations counts the requests for free, and no alarm watches
        // it ($0.30 a month; docs/design/deploy-and-cost/decisions.md, "An idle deployment under $1 a month").
        summary.note(Metrics.HEARTBEATS, tally.acceptedCount());
        summary.note(Metrics.KEY_LOOKUPS, keyCache.drainLookups());
        Map<String, Integer> refused = tally.refusedEntries();
        if (a.code() == null && a.failure() == null && tally.changes().isEmpty() && refused.isEmpty()) {
            summary.flushIfDue();
            return;
        }
        ObjectNode line = requestLine(a, tally.changes());
        if (a.code() != null) {
            // A 500 is our fault, not the caller's: also a Faults count (the canary's rollback alarm by default).
            Metrics.on(line, Metrics.HEARTBEAT_FUNCTION, now)
                    .put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, 1, Map.of(Metrics.CODE, a.code()))
                    .fault("INTERNAL_ERROR".equals(a.code()) ? 1 : 0).emit();
        } else {
            Log.emit(line);
        }
        // Entries of a batch refused on their own: a document holds one value per dimension, so one line per
        // code. Only batches with refused entries pay for it.
        new TreeMap<>(refused).forEach((entryCode, n) -> {
            ObjectNode extra = Log.line("INFO", "heartbeats rejected");
            Json.putIfPresent(extra, "team", a.request().pathParameter("team"));
            Json.putIfPresent(extra, "requestId", a.request().requestId());
            Json.putIfPresent(extra, "route", a.request().routeKey());
            extra.put("outcome", "refused").put("durationMs", a.durationMs());
            Metrics.on(extra, Metrics.HEARTBEAT_FUNCTION, now)
                    .put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, n, Map.of(Metrics.CODE, entryCode))
                    .fault("INTERNAL_ERROR".equals(entryCode) ? n : 0).emit();
        });
        summary.flushIfDue();
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
                f.objectJson("checkpoint", Limits.MAX_CHECKPOINT_BYTES, "CHECKPOINT_TOO_LARGE"))
                .withProgress(progress(f));
    }

    /**
     * What a beat says of progress (docs/liveness.md, "Progress and stalls"): {@code progressAgeMs}, the age of the
     * agent's last progress (a side thread's beat carries it, so it cannot hide a wedged work loop), or
     * {@code progress: true} (progress now); with either, {@code toolInFlight} (a tool call runs: not a stall) and
     * {@code stallReason} (what a silence would mean, such as {@code model stream silent}); null when it says none.
     */
    static Heartbeat.Reported progress(Fields f) {
        Boolean now = f.bool("progress");
        Long age = f.integer("progressAgeMs", 0, Limits.MAX_STALE_AFTER_SECONDS * 1000L);
        Boolean tool = f.bool("toolInFlight");
        String reason = stallReason(f);
        if (Boolean.TRUE.equals(now) && age != null && age > 0) {
            throw LifelineException.badInput("CONFLICTING_STATUS",
                    "'progress': true means progress now; 'progressAgeMs' says it was " + age + " ms ago");
        }
        if (age == null && !Boolean.TRUE.equals(now)) {
            if (tool != null || reason != null) {
                throw LifelineException.badInput("MISSING_FIELD",
                        "'toolInFlight' and 'stallReason' go with 'progress': true or 'progressAgeMs'");
            }
            return null;
        }
        return new Heartbeat.Reported(Duration.ofMillis(age == null ? 0 : age), Boolean.TRUE.equals(tool), reason);
    }

    /**
     * A host daemon's stall judgement in its batch entry (docs/daemon.md, "Progress and stalls"), sent when it changed:
     * {@code stalled: true} with the progress age it judged from ({@code progressAgeMs}), or {@code false}; null when
     * absent.
     */
    private static Boolean stalled(Fields entry, Heartbeat hb) {
        Boolean stalled = entry.bool("stalled");
        if (Boolean.TRUE.equals(stalled) && (hb.progress() == null || hb.progress().toolInFlight())) {
            throw LifelineException.badInput("MISSING_FIELD",
                    "'stalled': true goes with 'progressAgeMs', the age of the progress it was judged from, and no "
                            + "tool call in flight");
        }
        return stalled;
    }

    /** {@code stallReason}, a short phrase (it reaches events), or null when absent. */
    static String stallReason(Fields f) {
        String reason = f.string("stallReason", 32);
        if (reason != null && !STALL_REASON.matcher(reason).matches()) {
            throw LifelineException.badInput("INVALID_FIELD", "'stallReason' must be a short phrase of letters, "
                    + "digits, spaces and . _ , : ( ) -");
        }
        return reason;
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
