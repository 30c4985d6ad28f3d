package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.TeamSettings;
import io.lifeline.app.TeamKeys;
import io.lifeline.auth.Scope;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.team.KeyStore;
import io.lifeline.support.Json;
import io.lifeline.support.Page;
import java.time.Clock;
import java.util.Set;

/**
 * A team's API keys (admin): create one (its secret is shown once), list them, revoke one. And the one operator
 * routes: {@code POST /v1/teams} creates a team with its first admin key, and
 * {@code POST /v1/teams/{team}/admin-keys} mints a new admin key for an existing team (the way back when a
 * team has lost its admin keys; audited as an {@code AdminKeyMinted} event). Revoking a team's last admin key
 * is refused (409 LAST_ADMIN_KEY).
 */
public final class KeysHandler extends HttpApiHandler {
    static final int MAX_LABEL_CHARS = 64;

    private final TeamKeys keys;
    private final Clock clock;

    public KeysHandler() {
        this(Wiring.fromEnvironment());
    }

    public KeysHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public KeysHandler(UseCases app) {
        this.keys = app.keys();
        this.clock = app.wiring().clock();
        route("POST /v1/teams", Scope.OPERATOR, this::createTeam);
        route("POST /v1/teams/{team}/admin-keys", Scope.OPERATOR, this::mintAdminKey);
        route("POST /v1/teams/{team}/keys", Scope.ADMIN, this::create);
        route("GET /v1/teams/{team}/keys", Scope.ADMIN, this::list);
        route("DELETE /v1/teams/{team}/keys/{keyId}", Scope.ADMIN, this::revoke);
    }

    private Reply create(ApiRequest request) {
        Fields f = Fields.of(request.body(), "the key", Set.of("scope", "label"));
        String scopeText = f.requiredString("scope", 16);
        Scope scope = Scope.fromWire(scopeText).filter(Scope::isTeamScope).orElseThrow(() -> LifelineException
                .badInput("INVALID_FIELD", "'scope' must be one of read, agent, admin"));
        KeyStore.NewKey key = keys.createKey(request.id("team"), scope, f.string("label", MAX_LABEL_CHARS),
                clock.instant());
        return Reply.created(Json.object().put("keyId", key.keyId()).put("key", key.key())
                .put("scope", key.scope().wire()).put("note", "Store this key now; it is not shown again."));
    }

    /** Operator: {@code {label?}} -> 201 with a new admin key of the team, or 404 TEAM_NOT_FOUND. */
    private Reply mintAdminKey(ApiRequest request) {
        Fields f = Fields.of(request.body(), "the key", Set.of("label"));
        String label = f.string("label", MAX_LABEL_CHARS);
        KeyStore.NewKey key = keys.mintAdminKey(request.id("team"), label == null ? "minted by an operator" : label,
                request.callerKeyId(), clock.instant());
        return Reply.created(Json.object().put("keyId", key.keyId())
                .put("key", key.key()).put("scope", key.scope().wire())
                .put("note", "Store this key now; it is not shown again."));
    }

    /** {@code {team, leaderAgentId?, selfPreservationThreshold?, selfPreservationMinAlive?}} -> 201, or 409. */
    private Reply createTeam(ApiRequest request) {
        JsonNode body = request.body();
        Fields f = Fields.of(body, "the team", Set.of("team", "leaderAgentId", "selfPreservationThreshold",
                "selfPreservationMinAlive"));
        String team = f.requiredId("team");
        TeamHandler.Settings s = TeamHandler.Settings.parse(body, f);
        KeyStore.NewKey key = keys.createTeam(team, s.leader(), s.threshold(), s.minAlive(), clock.instant());
        var answer = TeamHandler.view(new TeamSettings(team, s.leader(), null, null, s.threshold(), s.minAlive()));
        answer.set("adminKey", Json.object().put("keyId", key.keyId()).put("key", key.key())
                .put("scope", key.scope().wire()));
        return Reply.created(answer.put("note", "Store the admin key now; it is not shown again."));
    }

    private Reply list(ApiRequest request) {
        Page<KeyStore.KeyRef> page = keys.page(request.id("team"),
                AgentsHandler.intQuery(request, "limit", Page.DEFAULT_LIMIT, 1, Page.MAX_LIMIT),
                AgentsHandler.cursor(request));
        ObjectNode body = Json.object().set("keys", Views.array(page.items(), ref -> {
            var n = Json.object().put("keyId", ref.keyId()).put("scope", ref.scope().wire());
            Json.putIfPresent(n, "label", ref.label());
            Json.putTime(n, "createdAt", ref.createdAt());
            Json.putIfPresent(n, "mintedBy", ref.mintedBy());
            return n;
        }));
        Json.putIfPresent(body, "nextCursor", page.cursor());
        return Reply.ok(body);
    }

    private Reply revoke(ApiRequest request) {
        String keyId = request.id("keyId");
        keys.revoke(request.id("team"), keyId);
        return Reply.ok(Json.object().put("success", true).put("revoked", keyId));
    }
}
