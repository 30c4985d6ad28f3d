package io.lifeline.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.FailureDomains;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.TeamFleetHold;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TeamHold;
import io.lifeline.agent.TeamSettings;
import io.lifeline.app.Teams;
import io.lifeline.auth.Scope;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.team.FleetStore;
import io.lifeline.support.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;

/** A team's settings (leader, self-preservation), its maintenance pause, and its recent events. */
public final class TeamHandler extends HttpApiHandler {
    private static final int DEFAULT_EVENTS = 50;
    /**
     * The event types the log holds (EventCatalogue's, openapi.yaml's EventType; written out here so that api
     * does not depend on events, which depends on api): any other filter is a mistake, not "no events".
     */
    static final List<String> EVENT_TYPES = List.of("AgentStatusChanged", "TasksReassigned", "LeaderNotified",
            "MassStaleSuspected", "SessionRotationRequested", "AgentRestartRequested", "AdminKeyMinted",
            "HostLeaseExpired", "HostLeaseRestored", "FleetMassStaleSuspected", "FleetMassStaleResolved",
            "AgentAwaitingInput", "AgentInputResumed", "AgentStalled", "AgentProgressResumed", "AgentParked",
            "AgentResumed", "AlertBurstStarted",
            "AlertDigest", "AlertBurstResolved", "AlertStallBurstStarted", "AlertStallDigest",
            "AlertStallBurstResolved", "AgentFlapping", "AgentFlappingResolved");

    /**
     * Why a fleet-wide hold holds a team, in words that name nothing of any other team (its share carries this
     * team's counts alone; the fleet's own event, the operator's, names the teams).
     */
    static final String FLEET_WHY = "too many agents across the whole fleet fell silent at once: Lifeline itself may"
            + " be unable to hear them, so no agent of any team is marked dead while the fleet-wide hold stands";

    private final Teams teams;
    private final Clock clock;

    public TeamHandler() {
        this(Wiring.fromEnvironment());
    }

    public TeamHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public TeamHandler(UseCases app) {
        this.teams = app.teams();
        this.clock = app.wiring().clock();
        route("GET /v1/teams/{team}/settings", Scope.READ, this::settings);
        route("PUT /v1/teams/{team}/settings", Scope.ADMIN, this::updateSettings);
        route("POST /v1/teams/{team}/pause", Scope.ADMIN, this::pause);
        route("POST /v1/teams/{team}/resume", Scope.ADMIN, this::resume);
        route("POST /v1/teams/{team}/hold/release", Scope.ADMIN, this::releaseHold);
        route("POST /v1/fleet/hold/release", Scope.OPERATOR, this::releaseFleetHold);
        route("GET /v1/teams/{team}/events", Scope.READ, this::events);
    }

    private Reply settings(ApiRequest request) {
        return Reply.ok(view(teams.settings(request.id("team"))));
    }

    private Reply updateSettings(ApiRequest request) {
        JsonNode body = request.body();
        Fields f = Fields.of(body, "the settings", Set.of("leaderAgentId", "selfPreservationThreshold",
                "selfPreservationMinAlive", "workingAllowanceSeconds", "waitingForInputAllowanceSeconds",
                "waitingForPersonAllowanceSeconds", "failureDomains", "stallAfterSeconds", "onStall"));
        Settings c = Settings.parse(body, f);
        FailureDomains domains = failureDomains(f);
        Duration working = allowance(f, "workingAllowanceSeconds");
        Duration input = allowance(f, "waitingForInputAllowanceSeconds");
        Duration person = allowance(f, "waitingForPersonAllowanceSeconds");
        Duration stallAfter = allowance(f, "stallAfterSeconds");
        Liveness.OnStall onStall = AgentsHandler.onStall(f);
        if (c.leader() == null && !c.clearLeader() && c.threshold() == null && c.minAlive() == null
                && working == null && input == null && person == null && domains == null && stallAfter == null
                && onStall == null) {
            throw LifelineException.badInput("MISSING_FIELD", "Give at least one setting to change");
        }
        return Reply.ok(view(teams.update(request.id("team"), c.leader(), c.clearLeader(), c.threshold(),
                c.minAlive(), working, input, person, domains, stallAfter, onStall)));
    }

    /** {@code failureDomains}: {@code host}, {@code source} or {@code none}; null when not given. */
    private static FailureDomains failureDomains(Fields f) {
        String text = f.string("failureDomains", 16);
        return text == null ? null : FailureDomains.fromWire(text).orElseThrow(() -> LifelineException.badInput(
                "INVALID_FIELD", "'failureDomains' must be one of host, source, none; was '" + text + "'"));
    }

    /**
     * An admin releases the team's self-preservation hold, its own and its share of a fleet-wide one: its silent
     * agents are marked dead as judged from the next sweep.
     */
    private Reply releaseHold(ApiRequest request) {
        return Reply.ok(view(teams.releaseHold(request.id("team"), clock.instant())));
    }

    /**
     * The operator releases the fleet-wide hold itself: from the next sweep every team is judged by its own guard, as
     * if no fleet-wide hold stood, until the silence ends and the flag comes down (its one resolve). The answer is
     * the operator's, who sees the whole fleet: the hold's counts when it began. 409 {@code NO_HOLD} when none
     * stands unreleased.
     */
    private Reply releaseFleetHold(ApiRequest request) {
        FleetStore.Released r = teams.releaseFleetHold(clock.instant());
        if (r == null) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "NO_HOLD",
                    "No fleet-wide hold stands (or it was released already): nothing to release");
        }
        ObjectNode h = Json.object().put("held", false).put("aliveAgents", r.alive()).put("staleAgents", r.stale())
                .put("teamCount", r.teamCount());
        Json.putTime(h, "since", r.since());
        Json.putTime(h, "releasedAt", r.releasedAt());
        ObjectNode n = Json.object();
        n.set("fleetHold", h);
        return Reply.ok(n);
    }

    /** An allowance in seconds, within stale-after's bounds; null when not given. */
    private static Duration allowance(Fields f, String field) {
        Long seconds = f.integer(field, Limits.MIN_STALE_AFTER_SECONDS, Limits.MAX_STALE_AFTER_SECONDS);
        return seconds == null ? null : Duration.ofSeconds(seconds);
    }

    /** Settings as a body gives them (PUT settings, POST /v1/teams); null leaves one as it is. */
    record Settings(String leader, boolean clearLeader, Double threshold, Integer minAlive) {
        static Settings parse(JsonNode body, Fields f) {
            boolean clearLeader = body.has("leaderAgentId") && body.get("leaderAgentId").isNull();
            String leader = clearLeader ? null : f.id("leaderAgentId");
            Double threshold = null;
            if (f.has("selfPreservationThreshold")) {
                JsonNode t = body.get("selfPreservationThreshold");
                if (!t.isNumber() || !(t.doubleValue() > 0 && t.doubleValue() <= 1)) {
                    throw LifelineException.badInput("INVALID_FIELD",
                            "'selfPreservationThreshold' must be a share above 0 and at most 1");
                }
                threshold = t.doubleValue();
            }
            Long minAlive = f.integer("selfPreservationMinAlive", 1, 1_000_000);
            return new Settings(leader, clearLeader, threshold, minAlive == null ? null : minAlive.intValue());
        }
    }

    private Reply pause(ApiRequest request) {
        Pause p = Pause.parse(request.body(), clock.instant());
        return Reply.ok(view(teams.pause(request.id("team"), p.until(), p.reason())));
    }

    private Reply resume(ApiRequest request) {
        return Reply.ok(view(teams.resume(request.id("team"))));
    }

    private Reply events(ApiRequest request) {
        int limit = AgentsHandler.intQuery(request, "limit", DEFAULT_EVENTS, 1, Limits.MAX_PAGE_SIZE);
        String type = request.query("type");
        if (type != null && !EVENT_TYPES.contains(type)) {
            throw LifelineException.badInput("INVALID_QUERY", "'type' must be one of "
                    + String.join(", ", EVENT_TYPES));
        }
        String agentId = request.query("agentId") == null ? null
                : Limits.requireId("Query parameter 'agentId'", request.query("agentId"));
        Instant since = time(request, "since");
        Instant until = time(request, "until");
        if (since != null && until != null && since.isAfter(until)) {
            throw LifelineException.badInput("INVALID_QUERY", "'since' must not be after 'until'");
        }
        String team = request.id("team");
        String before = EventCursor.decode(team, request.query("cursor"));
        var page = teams.events(team, agentId, type, since, until, limit, before);
        var list = page.entries();
        ObjectNode answer = Json.object().put("count", list.size());
        answer.set("events", Views.array(list, e -> {
            ObjectNode v = Json.object().put("eventId", e.eventId()).put("type", e.type());
            Json.putTime(v, "at", e.at());
            try {
                v.set("detail", Json.parse(e.detailJson()));
            } catch (JsonProcessingException ex) {
                throw new IllegalStateException("logged detail is always JSON", ex);
            }
            return v;
        }));
        if (page.next() != null) {
            answer.put("nextCursor", EventCursor.encode(team, page.next()));
        }
        return Reply.ok(answer);
    }

    /** The event log's sort key holds epoch milliseconds padded to 13 digits: these bounds, end exclusive. */
    static final Instant EARLIEST_QUERY_TIME = Instant.EPOCH;
    static final Instant LATEST_QUERY_TIME = Instant.ofEpochMilli(10_000_000_000_000L); // 2286-11-20T17:46:40Z

    private static Instant time(ApiRequest request, String name) {
        String raw = request.query(name);
        if (raw == null) {
            return null;
        }
        Instant at;
        try {
            at = Instant.parse(raw);
        } catch (DateTimeParseException e) {
            throw LifelineException.badInput("INVALID_QUERY", "'" + name + "' must be an ISO-8601 time such as "
                    + "2026-03-01T12:00:00Z");
        }
        // Outside the sort key's 13 digits a bound would compare as text in the wrong place (or overflow):
        // refuse it rather than answer the wrong events.
        if (at.isBefore(EARLIEST_QUERY_TIME) || !at.isBefore(LATEST_QUERY_TIME)) {
            throw LifelineException.badInput("INVALID_QUERY", "'" + name + "' must be between "
                    + EARLIEST_QUERY_TIME + " and " + LATEST_QUERY_TIME);
        }
        return at;
    }

    static ObjectNode view(TeamSettings s) {
        ObjectNode n = Json.object().put("team", s.team());
        Json.putIfPresent(n, "leaderAgentId", s.leaderAgentId());
        Json.putTime(n, "pausedUntil", s.pausedUntil());
        Json.putIfPresent(n, "pauseReason", s.pauseReason());
        if (s.selfPreservationThreshold() != null) {
            n.put("selfPreservationThreshold", s.selfPreservationThreshold());
        }
        if (s.selfPreservationMinAlive() != null) {
            n.put("selfPreservationMinAlive", s.selfPreservationMinAlive());
        }
        if (s.workingAllowance() != null) {
            n.put("workingAllowanceSeconds", s.workingAllowance().toSeconds());
        }
        if (s.inputAllowance() != null) {
            n.put("waitingForInputAllowanceSeconds", s.inputAllowance().toSeconds());
        }
        if (s.personAllowance() != null) {
            n.put("waitingForPersonAllowanceSeconds", s.personAllowance().toSeconds());
        }
        if (s.stallAfter() != null) {
            n.put("stallAfterSeconds", s.stallAfter().toSeconds());
        }
        if (s.onStall() != null) {
            n.put("onStall", s.onStall().wire());
        }
        n.put("failureDomains", FailureDomains.of(s).wire());
        TeamHold hold = s.hold();
        if (hold != null) {
            ObjectNode h = n.putObject("hold").put("held", hold.holding()).put("aliveAgents", hold.alive())
                    .put("staleAgents", hold.stale());
            Json.putTime(h, "since", hold.since());
            Json.putIfPresent(h, "why", hold.why());
            Json.putTime(h, "releasedAt", hold.releasedAt());
        }
        TeamFleetHold share = s.fleetHold();
        if (share != null) {
            ObjectNode h = n.putObject("fleetHold").put("held", share.holding()).put("aliveAgents", share.alive())
                    .put("staleAgents", share.stale());
            Json.putTime(h, "since", share.since());
            h.put("why", FLEET_WHY);
            Json.putTime(h, "releasedAt", share.releasedAt());
        }
        return n;
    }
}
