package io.lifeline.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.ErrorClassifier;
import io.lifeline.agent.HeartbeatAdvice;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.Recovery;
import io.lifeline.app.AgentChanges;
import io.lifeline.app.AgentPages;
import io.lifeline.app.AgentQueries;
import io.lifeline.app.AgentRecords;
import io.lifeline.app.ManualRevive;
import io.lifeline.auth.Scope;
import io.lifeline.config.Config;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.schedule.InvalidScheduleException;
import io.lifeline.schedule.Schedule;
import io.lifeline.schedule.Schedules;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.support.Json;
import io.lifeline.support.Page;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Set;

/** Agents' lifecycle: register, read, join, leave, clean up, history, errors and crash recovery. */
public final class AgentsHandler extends HttpApiHandler {
    private static final Set<String> REGISTER_FIELDS = Set.of("agentId", "name", "role", "hostId",
            "staleAfterSeconds", "graceMisses", "schedule", "timeZone", "workingAllowanceSeconds",
            "waitingForInputAllowanceSeconds", "waitingForPersonAllowanceSeconds", "stallAfterSeconds", "onStall");
    private static final int DEFAULT_TRANSITIONS = 50;
    /** A schedule's zone when none is given, by the name README uses (the parser's zone for it is "Z"). */
    private static final String DEFAULT_ZONE = "UTC";

    /**
     * How far before this answer {@code nextChangedSince} starts: the status index is eventually consistent, and a
     * change is stamped with its writer's clock, so the next ask repeats the last seconds rather than miss a change.
     */
    static final Duration CHANGE_LAG = Duration.ofSeconds(5);

    private final AgentQueries queries;
    private final AgentPages pages;
    private final AgentChanges changes;
    private final AgentRecords records;
    private final ManualRevive revive;
    private final Config config;
    private final Clock clock;

    public AgentsHandler() {
        this(Wiring.fromEnvironment());
    }

    public AgentsHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public AgentsHandler(UseCases app) {
        this.queries = app.agentQueries();
        this.pages = app.agentPages();
        this.changes = app.agentChanges();
        this.records = app.agentRecords();
        this.revive = app.revive();
        this.config = app.wiring().config();
        this.clock = app.wiring().clock();
        String agent = "/v1/teams/{team}/agents/{agentId}";
        route("POST /v1/teams/{team}/agents", Scope.ADMIN, this::register);
        route("GET /v1/teams/{team}/agents", Scope.READ, this::list);
        route("GET " + agent, Scope.READ, this::get);
        route("DELETE " + agent, Scope.ADMIN, this::delete);
        route("POST " + agent + "/join", Scope.AGENT, this::join);
        route("POST " + agent + "/leave", Scope.AGENT, this::leave);
        route("POST " + agent + "/cleanup", Scope.ADMIN, this::cleanup);
        route("GET " + agent + "/transitions", Scope.READ, this::transitions);
        route("POST " + agent + "/errors", Scope.AGENT, this::error);
        route("GET " + agent + "/recovery", Scope.READ, this::recovery);
        route("POST " + agent + "/fail", Scope.AGENT, this::fail);
        route("POST " + agent + "/pause", Scope.ADMIN, this::pause);
        route("POST " + agent + "/resume", Scope.ADMIN, this::resume);
        route("GET " + agent + "/inbox", Scope.READ, this::inbox);
        route("POST " + agent + "/revive", Scope.ADMIN, this::revive);
        route("GET " + agent + "/revivals", Scope.READ, this::revivals);
    }

    /**
     * An operator asks for a revive of a dead or dead_failed_revive agent ({@link ManualRevive}): answered 202 with
     * the execution started (or the one already under way refused 409).
     */
    private Reply revive(ApiRequest request) {
        ManualRevive.Started started = revive.start(request.id("team"), request.id("agentId"));
        return new Reply(202, Json.object().put("success", true).put("executionArn", started.executionArn())
                .put("executionName", started.executionName()).put("startSeq", started.startSeq()));
    }

    private Reply revivals(ApiRequest request) {
        int limit = intQuery(request, "limit", DEFAULT_TRANSITIONS, 1, Limits.MAX_PAGE_SIZE);
        String team = request.id("team");
        String agentId = request.id("agentId");
        return Reply.ok(Json.object().put("agentId", agentId).set("revivals", Views.array(
                records.revivals(team, agentId, limit), r -> {
                    ObjectNode v = Json.object().put("startSeq", r.startSeq());
                    Json.putIfPresent(v, "executionId", r.executionId());
                    Json.putTime(v, "startedAt", r.startedAt());
                    v.put("outcome", r.outcome()).put("attempts", r.attempts());
                    v.set("steps", Views.array(r.steps(), st -> {
                        ObjectNode sv = Json.object().put("step", st.step()).put("attempt", st.attempt())
                                .put("outcome", st.outcome());
                        Json.putTime(sv, "at", st.at());
                        return sv;
                    }));
                    return v;
                })));
    }

    /**
     * A host reports its agent crashed (dead, reported_failure), or with {@code giveUp: true} that it stopped
     * restarting it after a crash loop (dead_failed_revive, host_gave_up: one alert, no revive flow). A crash report
     * with {@code restartInSeconds} says the host restarts the agent itself within that many seconds: its claim on the
     * restart, which the revive flow waits out ({@code Liveness.hostRestartClaim}, through {@link AgentChanges#fail}).
     * {@code restartsLastHour} is the host's own restarts of the agent, kept as a beat's stats are; both ride on the status change's one write.
     */
    private Reply fail(ApiRequest request) {
        Fields f = Fields.of(request.optionalBody(), "the failure report",
                Set.of("reason", "giveUp", "restartInSeconds", "restartsLastHour", "stalled", "stallReason"));
        String reason = f.string("reason", Limits.MAX_REASON_CHARS);
        Long restartIn = f.integer("restartInSeconds", 0, Limits.MAX_HOST_RESTART_SECONDS);
        Long restarts = f.integer("restartsLastHour", 0, Limits.MAX_RESTARTS_LAST_HOUR);
        boolean giveUp = Boolean.TRUE.equals(f.bool("giveUp"));
        if (giveUp && restartIn != null) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "'restartInSeconds' says the host restarts the agent; a give-up says it will not: send one");
        }
        // Stopped for a stall (its daemon judged it: docs/daemon.md): the death's trigger is stalled.
        boolean stalled = Boolean.TRUE.equals(f.bool("stalled"));
        String stallReason = HeartbeatHandler.stallReason(f);
        if (stallReason != null && !stalled || stalled && giveUp) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "'stallReason' goes with 'stalled': true, and a give-up is no stall's death");
        }
        String team = request.id("team");
        String agentId = request.id("agentId");
        Instant now = clock.instant();
        if (giveUp) {
            return Reply.ok(Views.agent(changes.giveUp(team, agentId,
                    reason == null ? null : "host gave up: " + reason, restarts, now)));
        }
        return Reply.ok(Views.agent(changes.fail(team, agentId,
                reason == null ? null : (stalled ? "" : "failure reported: ") + reason,
                restartIn == null ? null : Duration.ofSeconds(restartIn), restarts,
                stalled ? (stallReason != null ? stallReason : Liveness.NO_PROGRESS_REPORTED) : null, now)));
    }

    private Reply pause(ApiRequest request) {
        Pause p = Pause.parse(request.body(), clock.instant());
        String team = request.id("team");
        String agentId = request.id("agentId");
        Agent after = changes.pause(team, agentId, p.until(), p.reason());
        ObjectNode view = Views.agent(after);
        Json.putIfPresent(view, "pauseReason", p.reason());
        return Reply.ok(view);
    }

    private Reply resume(ApiRequest request) {
        String team = request.id("team");
        String agentId = request.id("agentId");
        Agent after = changes.resume(team, agentId);
        return Reply.ok(Views.agent(after));
    }

    private Reply inbox(ApiRequest request) {
        int limit = intQuery(request, "limit", DEFAULT_TRANSITIONS, 1, Limits.MAX_PAGE_SIZE);
        String team = request.id("team");
        String agentId = request.id("agentId");
        return Reply.ok(Json.object().put("agentId", agentId).set("messages", Views.array(
                records.inbox(team, agentId, limit), n -> {
                    ObjectNode v = Json.object().put("noticeId", n.noticeId()).put("aboutAgentId", n.aboutAgentId())
                            .put("message", n.message());
                    v.set("tasksHandedBack", Json.MAPPER.valueToTree(n.tasksHandedBack()));
                    Json.putTime(v, "at", n.at());
                    return v;
                })));
    }

    private Reply register(ApiRequest request) {
        Fields f = Fields.of(request.body(), "the registration", REGISTER_FIELDS);
        Long staleAfter = f.integer("staleAfterSeconds", Limits.MIN_STALE_AFTER_SECONDS,
                Limits.MAX_STALE_AFTER_SECONDS);
        Long grace = f.integer("graceMisses", 1, Limits.MAX_GRACE_MISSES);
        String scheduleText = f.string("schedule", Limits.MAX_SCHEDULE_CHARS);
        String zoneText = f.string("timeZone", Limits.MAX_TIME_ZONE_CHARS);
        Schedule schedule = null;
        if (scheduleText != null) {
            try {
                schedule = Schedules.parse(scheduleText, zoneText);
            } catch (InvalidScheduleException e) {
                throw LifelineException.badInput("INVALID_SCHEDULE", e.getMessage());
            }
        } else if (zoneText != null) {
            throw LifelineException.badInput("INVALID_FIELD", "'timeZone' applies to a 'schedule'; give one");
        }
        Duration working = allowance(f, "workingAllowanceSeconds");
        Duration input = allowance(f, "waitingForInputAllowanceSeconds");
        Duration person = allowance(f, "waitingForPersonAllowanceSeconds");
        Duration stallAfter = allowance(f, "stallAfterSeconds");
        Liveness.OnStall onStall = onStall(f);
        NewAgent a = new NewAgent(request.id("team"), f.requiredId("agentId"),
                f.requiredUtf8("name", Limits.MAX_NAME_BYTES), f.requiredUtf8("role", Limits.MAX_ROLE_BYTES),
                f.id("hostId"),
                staleAfter == null ? config.defaultStaleAfter() : Duration.ofSeconds(staleAfter),
                grace == null ? config.defaultGraceMisses() : grace.intValue(),
                schedule == null ? null : schedule.expression(), schedule == null ? null : zoneText == null ? DEFAULT_ZONE
                        : schedule.zone().getId(), working, input, person, stallAfter, onStall);
        return Reply.created(Views.agent(changes.register(a, clock.instant())));
    }

    /** {@code onStall}: {@code alert} or {@code restart}; null when not given (the default: docs/liveness.md). */
    static Liveness.OnStall onStall(Fields f) {
        String text = f.string("onStall", 16);
        return text == null ? null : Liveness.OnStall.fromWire(text).orElseThrow(() -> LifelineException.badInput(
                "INVALID_FIELD", "'onStall' must be one of alert, restart; was '" + text + "'"));
    }

    /** An allowance the registration gives, in seconds (as stale-after's bounds), or null for the deployment's. */
    private static Duration allowance(Fields f, String field) {
        Long seconds = f.integer(field, Limits.MIN_STALE_AFTER_SECONDS, Limits.MAX_STALE_AFTER_SECONDS);
        return seconds == null ? null : Duration.ofSeconds(seconds);
    }

    /**
     * A page of the team's agents ({@code limit}, default {@link Page#DEFAULT_LIMIT}, at most {@link Page#MAX_LIMIT};
     * {@code cursor} from the page before), optionally only those in {@code status}; or, with {@code changedSince},
     * those whose status changed after that time, with the time to ask from next ({@code nextChangedSince}).
     */
    private Reply list(ApiRequest request) {
        String team = request.id("team");
        AgentStatus status = status(request.query("status"));
        int limit = intQuery(request, "limit", Page.DEFAULT_LIMIT, 1, Page.MAX_LIMIT);
        String cursor = cursor(request);
        String changedSince = request.query("changedSince");
        if (changedSince != null) {
            if (status != null || cursor != null) {
                throw LifelineException.badInput("INVALID_QUERY",
                        "'changedSince' reads every status and has no cursor: ask it without 'status' and 'cursor'");
            }
            Instant now = clock.instant();
            AgentPages.Changed changed = pages.changedSince(team, since(changedSince), limit);
            ObjectNode body = Json.object().put("count", changed.agents().size())
                    .set("agents", Views.array(changed.agents(), Views::agent));
            body.put("truncated", changed.truncated());
            Json.putTime(body, "nextChangedSince", now.minus(CHANGE_LAG));
            return Reply.ok(body);
        }
        Page<Agent> page = pages.page(team, status, limit, cursor);
        ObjectNode body = Json.object().put("count", page.items().size())
                .set("agents", Views.array(page.items(), Views::agent));
        Json.putIfPresent(body, "nextCursor", page.cursor());
        return Reply.ok(body);
    }

    /** {@code cursor}: a page's {@code nextCursor}, or null for the first page; refused 400 when empty. */
    static String cursor(ApiRequest request) {
        String cursor = request.query("cursor");
        if (cursor != null && cursor.isEmpty()) {
            throw LifelineException.badInput("INVALID_QUERY", "'cursor' is empty: leave it out for the first page");
        }
        return cursor;
    }

    private static AgentStatus status(String text) {
        if (text == null) {
            return null;
        }
        return AgentStatus.fromWire(text).or(() -> AgentStatus.fromReported(text))
                .orElseThrow(() -> LifelineException.badInput("INVALID_STATUS",
                        "'status' must be one of offline, ready, working, dead, restarting, dead_failed_revive"));
    }

    /** {@code changedSince}: an ISO-8601 time, refused 400 otherwise. */
    private static Instant since(String raw) {
        try {
            Instant at = Instant.parse(raw);
            if (at.isBefore(TeamHandler.EARLIEST_QUERY_TIME) || !at.isBefore(TeamHandler.LATEST_QUERY_TIME)) {
                throw LifelineException.badInput("INVALID_QUERY", "'changedSince' must be between "
                        + TeamHandler.EARLIEST_QUERY_TIME + " and " + TeamHandler.LATEST_QUERY_TIME);
            }
            return at;
        } catch (DateTimeParseException e) {
            throw LifelineException.badInput("INVALID_QUERY",
                    "'changedSince' must be an ISO-8601 time such as 2026-03-01T12:00:00Z");
        }
    }

    private Reply get(ApiRequest request) {
        String team = request.id("team");
        String agentId = request.id("agentId");
        Agent agent = queries.require(team, agentId);
        ObjectNode view = Views.agent(agent);
        AgentDataStore.AgentData d = records.data(team, agentId);
        if (d.metadataJson() != null) {
            view.set("metadata", parseStored(d.metadataJson()));
        }
        Json.putTime(view, "metadataAt", d.metadataAt());
        Json.putTime(view, "checkpointAt", d.checkpointAt());
        if (d.checkpointJson() != null) {
            view.set("checkpointSummary", Views.checkpointSummary(parseStored(d.checkpointJson()),
                    d.checkpointJson(), Recovery.decide(agent, d.checkpointJson(), d.checkpointAt(),
                            config.recoveryMaxAge(), clock.instant())));
        }
        if (d.lastError() != null) {
            ObjectNode err = Json.object().put("message", d.lastError()).put("category", d.lastErrorCategory());
            Json.putTime(err, "at", d.lastErrorAt());
            view.set("lastError", err);
        }
        if (view.has("pausedUntil")) {
            Json.putIfPresent(view, "pauseReason", d.pauseReason());
        }
        view.put("errorsReported", d.errorsReported());
        view.put("sessionRotations", d.sessionRotations());
        if (agent.status().isAlive() && !d.subagents().isEmpty()) {
            // Only a live agent's subagents run: a death the sweep judged has not cleared them, and is not shown.
            ArrayNode running = view.putArray("subagents");
            d.subagents().running().forEach(e -> {
                ObjectNode one = running.addObject().put("id", e.id());
                Json.putIfPresent(one, "type", e.type());
                Json.putTime(one, "since", e.since());
            });
            view.put("subagentsMore", d.subagents().more());
        }
        return Reply.ok(view);
    }

    /**
     * The body may be absent or {@code {}}: a join carries nothing, and a field is refused rather than
     * ignored. Answers the agent and the interval to beat at: at most half its stale-after.
     */
    private Reply join(ApiRequest request) {
        Fields.of(request.optionalBody(), "the join", Set.of());
        Agent after = changes.join(request.id("team"), request.id("agentId"), clock.instant());
        return Reply.ok(Views.agent(after).put("heartbeatIntervalSeconds", HeartbeatAdvice.intervalSeconds(
                config.heartbeatInterval(), config.defaultStaleAfter(), after, null)));
    }

    /**
     * Deletes an agent that left or that no revive can bring back: nothing of it is swept again (its live item and
     * side data go; its history stays for its retention). The id can be registered again.
     */
    private Reply delete(ApiRequest request) {
        Agent deleted = changes.delete(request.id("team"), request.id("agentId"), clock.instant());
        return Reply.ok(Json.object().put("success", true).put("deleted", deleted.agentId())
                .put("status", deleted.status().wire()));
    }

    private Reply leave(ApiRequest request) {
        String reason = Fields.of(request.optionalBody(), "the leave", Set.of("reason"))
                .string("reason", Limits.MAX_REASON_CHARS);
        Instant now = clock.instant();
        AgentChanges.Left left = changes.leave(request.id("team"), request.id("agentId"), reason, now);
        ObjectNode view = Views.agent(left.agent());
        view.remove("currentTaskId");
        view.set("tasksHandedBack", Json.MAPPER.valueToTree(left.tasksHandedBack()));
        return Reply.ok(view);
    }

    private Reply cleanup(ApiRequest request) {
        String reason = Fields.of(request.optionalBody(), "the cleanup", Set.of("reason"))
                .string("reason", Limits.MAX_REASON_CHARS);
        return Reply.ok(Views.agent(changes.cleanup(request.id("team"), request.id("agentId"), reason,
                clock.instant())));
    }

    /** Newest first, a page at a time: {@code nextCursor} in the answer, given back as {@code ?cursor=}. */
    private Reply transitions(ApiRequest request) {
        int limit = intQuery(request, "limit", DEFAULT_TRANSITIONS, 1, Limits.MAX_PAGE_SIZE);
        Long beforeSeq = TransitionCursor.decode(request.query("cursor"));
        AgentRecords.Transitions found = records.transitions(request.id("team"), request.id("agentId"), limit,
                beforeSeq);
        TransitionLog.Page page = found.page();
        var answer = Json.object().put("agentId", found.agent().agentId());
        answer.set("transitions", Views.array(page.transitions(), Views::transition));
        if (page.nextBeforeSeq() != null) {
            answer.put("nextCursor", TransitionCursor.encode(page.nextBeforeSeq()));
        }
        return Reply.ok(answer);
    }

    private Reply error(ApiRequest request) {
        String message = Fields.of(request.body(), "the error report", Set.of("message"))
                .requiredString("message", Limits.MAX_ERROR_MESSAGE_CHARS);
        ErrorClassifier.Classification c = changes.reportError(request.id("team"), request.id("agentId"), message,
                clock.instant());
        ObjectNode body = Json.object().put("success", true)
                .put("category", c.category().name().toLowerCase())
                .put("action", c.action());
        if (!c.retryDelaysSeconds().isEmpty()) {
            body.set("retryDelaysSeconds", Json.MAPPER.valueToTree(c.retryDelaysSeconds()));
        }
        return Reply.ok(body);
    }

    private Reply recovery(ApiRequest request) {
        String team = request.id("team");
        String agentId = request.id("agentId");
        Duration maxAge = Duration.ofSeconds(intQuery(request, "maxAgeSeconds",
                (int) config.recoveryMaxAge().toSeconds(), 1, Integer.MAX_VALUE));
        AgentRecords.Recovered recovered = records.recovery(team, agentId, maxAge, clock.instant());
        Agent agent = recovered.agent();
        Recovery.Answer answer = recovered.answer();
        ObjectNode body = Json.object().put("available", answer.available());
        Json.putIfPresent(body, "reason", answer.reason());
        if (answer.checkpointJson() != null) {
            body.set("checkpoint", parseStored(answer.checkpointJson()));
        }
        Json.putTime(body, "savedAt", answer.savedAt());
        body.put("agentStatus", agent.status().wire());
        Json.putTime(body, "heartbeatTs", agent.heartbeatAt());
        return Reply.ok(body);
    }

    static int intQuery(ApiRequest request, String name, int fallback, int min, int max) {
        String raw = request.query(name);
        if (raw == null) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw LifelineException.badInput("INVALID_QUERY", "'" + name + "' must be a whole number from " + min
                + " to " + max);
    }

    private static JsonNode parseStored(String json) {
        try {
            return Json.parse(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored JSON is always valid", e);
        }
    }
}
