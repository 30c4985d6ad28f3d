package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.auth.Scope;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.util.HashMap;
import java.util.Map;

/**
 * The shared front of every API function: finds the route by its route key, checks that the caller's key
 * belongs to the path's team and has the route's scope (before anything is read, so a key of another team
 * learns nothing), runs it, and turns every failure into the JSON error of DESIGN.md section 4.
 */
public abstract class HttpApiHandler implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    /** What a route does with a request: a status and a JSON body. */
    @FunctionalInterface
    protected interface Action {
        Reply run(ApiRequest request);
    }

    protected record Reply(int status, JsonNode body) {
        static Reply ok(JsonNode body) {
            return new Reply(200, body);
        }

        static Reply created(JsonNode body) {
            return new Reply(201, body);
        }
    }

    private record Route(Scope scope, Action action) {
    }

    /** Seconds a throttled caller is asked to wait. */
    static final int RETRY_AFTER_SECONDS = 1;

    private final Map<String, Route> routes = new HashMap<>();
    /** Set by the heartbeat function, whose request lines also carry its metrics (EMF). */
    private java.time.Clock metricsClock;

    /** This handler's request lines carry the heartbeat metrics, timestamped by {@code clock}. */
    protected final void countHeartbeats(java.time.Clock clock) {
        this.metricsClock = clock;
    }

    /** Registers {@code "METHOD /path/{param}"} exactly as template.yaml names the route. */
    protected final void route(String routeKey, Scope scope, Action action) {
        routes.put(routeKey, new Route(scope, action));
    }

    /** The route keys this handler serves; a test checks them against template.yaml. */
    public final java.util.Set<String> routeKeys() {
        return java.util.Set.copyOf(routes.keySet());
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        long started = System.nanoTime();
        ApiRequest request = new ApiRequest(event);
        APIGatewayV2HTTPResponse response;
        String code = null;
        String failure = null;
        try {
            Route route = routes.get(request.routeKey());
            if (route == null) {
                throw new LifelineException(LifelineException.Kind.NOT_FOUND, "ROUTE_NOT_FOUND",
                        "No route " + request.routeKey());
            }
            authorize(request, route.scope());
            Reply reply = route.action().run(request);
            response = respond(reply.status(), reply.body(), null);
            if (request.routeKey().startsWith("GET ") && reply.status() == 200) {
                response = conditional(request, response);
            }
        } catch (LifelineException e) {
            code = e.code();
            response = error(e);
        } catch (RuntimeException e) {
            // A bug, not the caller's fault: logged (below) with the request id, answered without internals.
            code = "INTERNAL_ERROR";
            failure = e.toString();
            ObjectNode body = Json.object().put("success", false)
                    .put("error", "Internal error; the request id is " + request.requestId())
                    .put("code", "INTERNAL_ERROR");
            response = respond(500, body, null);
        }
        logRequest(request, response.getStatusCode(), code, failure, System.nanoTime() - started);
        return response;
    }

    /**
     * The one log line of a request: team, agentId (when the path has one), requestId, route, status,
     * outcome (ok, refused with the error code, or error) and durationMs. README.md, "Logs".
     */
    private void logRequest(ApiRequest request, int status, String code, String failure, long nanos) {
        String outcome = failure != null ? "error" : code != null ? "refused" : "ok";
        ObjectNode line = Log.line(failure != null ? "ERROR" : status >= 500 ? "WARN" : "INFO", "request");
        Json.putIfPresent(line, "team", request.pathParameter("team"));
        Json.putIfPresent(line, "agentId", request.pathParameter("agentId"));
        Json.putIfPresent(line, "requestId", request.requestId());
        Json.putIfPresent(line, "route", request.routeKey());
        line.put("status", status).put("outcome", outcome);
        Json.putIfPresent(line, "code", code);
        Json.putIfPresent(line, "error", failure);
        double durationMs = Math.round(nanos / 10_000.0) / 100.0;
        line.put("durationMs", durationMs);
        if (metricsClock == null) {
            Log.emit(line);
            return;
        }
        java.time.Instant now = metricsClock.instant();
        Metrics metrics = Metrics.on(line, Metrics.HEARTBEAT_FUNCTION, now)
                .count(Metrics.HEARTBEATS, request.acceptedCount());
        if (code != null) {
            metrics.put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, 1, Map.of(Metrics.CODE, code));
        }
        metrics.emit();
        // Entries of a batch refused on their own: a document holds one value per dimension, so one line per
        // code. Only batches with refused entries pay for it.
        request.refusedEntries().forEach((entryCode, n) -> {
            ObjectNode extra = Log.line("INFO", "heartbeats rejected");
            Json.putIfPresent(extra, "team", request.pathParameter("team"));
            Json.putIfPresent(extra, "requestId", request.requestId());
            Json.putIfPresent(extra, "route", request.routeKey());
            extra.put("outcome", "refused").put("durationMs", durationMs);
            Metrics.on(extra, Metrics.HEARTBEAT_FUNCTION, now)
                    .put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, n, Map.of(Metrics.CODE, entryCode)).emit();
        });
    }

    /**
     * A GET answer gets a weak ETag of its body; when the caller's If-None-Match names it, the answer is
     * 304 with no body, so a dashboard polling unchanged data costs almost nothing on the wire.
     */
    static APIGatewayV2HTTPResponse conditional(ApiRequest request, APIGatewayV2HTTPResponse response) {
        String etag = weakEtag(response.getBody());
        response.getHeaders().put("etag", etag);
        String ifNoneMatch = request.header("if-none-match");
        if (ifNoneMatch != null) {
            for (String candidate : ifNoneMatch.split(",")) {
                String c = candidate.trim();
                if (c.equals("*") || c.equals(etag) || ("W/" + c).equals(etag)) {
                    response.setStatusCode(304);
                    response.setBody(null);
                    response.getHeaders().remove("content-type");
                    break;
                }
            }
        }
        return response;
    }

    static String weakEtag(String body) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "W/\"" + java.util.HexFormat.of().formatHex(digest, 0, 16) + "\"";
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always there", e);
        }
    }

    private static void authorize(ApiRequest request, Scope required) {
        String team = request.callerTeam();
        Scope scope = request.callerScope();
        if (scope == null || (team == null && scope != Scope.OPERATOR)) {
            throw new LifelineException(LifelineException.Kind.UNAUTHENTICATED, "UNAUTHENTICATED",
                    "Missing or unknown API key; send Authorization: Bearer <key>");
        }
        if (required == Scope.OPERATOR || scope == Scope.OPERATOR) {
            // Operator routes have no team; an operator key opens nothing but them (least privilege).
            if (scope != required) {
                throw new LifelineException(LifelineException.Kind.FORBIDDEN, "INSUFFICIENT_SCOPE",
                        scope == Scope.OPERATOR ? "An operator key only creates teams; use a key of the team"
                                : "This route needs an operator key; this key has '" + scope.wire() + "'");
            }
            return;
        }
        if (!team.equals(request.id("team"))) {
            throw new LifelineException(LifelineException.Kind.FORBIDDEN, "FORBIDDEN",
                    "This key belongs to another team");
        }
        if (!scope.covers(required)) {
            throw new LifelineException(LifelineException.Kind.FORBIDDEN, "INSUFFICIENT_SCOPE",
                    "This route needs a key with scope '" + required.wire() + "'; this key has '" + scope.wire() + "'");
        }
    }

    static APIGatewayV2HTTPResponse error(LifelineException e) {
        ObjectNode body = errorBody(e);
        return respond(status(e.kind()), body,
                e.kind() == LifelineException.Kind.THROTTLED || e.kind() == LifelineException.Kind.UNAVAILABLE
                        ? Integer.toString(RETRY_AFTER_SECONDS) : null);
    }

    /** The JSON error: success false, a sentence, a machine code, and the agent's status where it matters. */
    static ObjectNode errorBody(LifelineException e) {
        ObjectNode body = Json.object().put("success", false).put("error", e.getMessage()).put("code", e.code());
        if (e.currentStatus() != null) {
            body.put("agentStatus", e.currentStatus().wire());
            body.put("rejoinRequired", !e.currentStatus().isAlive() && "REJOIN_REQUIRED".equals(e.code()));
        }
        return body;
    }

    static int status(LifelineException.Kind kind) {
        return switch (kind) {
            case BAD_INPUT -> 400;
            case UNAUTHENTICATED -> 401;
            case FORBIDDEN -> 403;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case TOO_LARGE -> 413;
            case THROTTLED, UNAVAILABLE -> 503;
        };
    }

    private static APIGatewayV2HTTPResponse respond(int status, JsonNode body, String retryAfter) {
        Map<String, String> headers = new HashMap<>();
        headers.put("content-type", "application/json");
        headers.put("cache-control", "no-store");
        if (retryAfter != null) {
            headers.put("retry-after", retryAfter);
        }
        return APIGatewayV2HTTPResponse.builder().withStatusCode(status).withHeaders(headers)
                .withBody(Json.write(body)).build();
    }
}
