package io.lifeline.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.app.HostCommands;
import io.lifeline.auth.Scope;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.support.Json;
import java.time.Clock;

/**
 * The restart channel's pull side, for daemons behind NAT: a host polls its pending commands and
 * acknowledges each one once.
 */
public final class HostsHandler extends HttpApiHandler {
    private final HostCommands commands;
    private final Clock clock;

    public HostsHandler() {
        this(Wiring.fromEnvironment());
    }

    public HostsHandler(Wiring wiring) {
        this(new UseCases(wiring));
    }

    public HostsHandler(UseCases app) {
        this.commands = app.hostCommands();
        this.clock = app.wiring().clock();
        route("GET /v1/teams/{team}/hosts/{hostId}/commands", Scope.AGENT, this::pending);
        route("POST /v1/teams/{team}/hosts/{hostId}/commands/{commandId}/ack", Scope.AGENT, this::ack);
    }

    private Reply pending(ApiRequest request) {
        var list = commands.pending(request.id("team"), request.id("hostId"), clock.instant());
        return Reply.ok(Json.object().put("count", list.size()).set("commands", Views.array(list, HostsHandler::view)));
    }

    private Reply ack(ApiRequest request) {
        return Reply.ok(view(commands.ack(request.id("team"), request.id("hostId"), request.id("commandId"),
                clock.instant())).put("success", true));
    }

    private static ObjectNode view(HostCommandStore.Command c) {
        ObjectNode n = Json.object().put("commandId", c.commandId()).put("hostId", c.hostId()).put("type", c.type())
                .put("agentId", c.agentId()).put("attempt", c.attempt());
        Json.putIfPresent(n, "reason", c.reason());
        n.put("state", c.state());
        Json.putTime(n, "createdAt", c.createdAt());
        Json.putTime(n, "expiresAt", c.expiresAt());
        Json.putTime(n, "ackedAt", c.ackedAt());
        return n;
    }
}
