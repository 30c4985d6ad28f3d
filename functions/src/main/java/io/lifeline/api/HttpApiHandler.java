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
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The shared front of every API function: finds the route by its route key, checks that the caller's key
 * belongs to the path's team and has the route's scope, or, for an operator route, is an operator key (before
 * anything is read, so a key of another team learns nothing), runs it, and turns every failure into the API's JSON
 * error (docs/api.md).
 */
public abstract class HttpApiHandler implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    /** What a route does with a request: a status and a JSON body. */
    @FunctionalInterface
    protected interface Action {
        Reply run(ApiRequest request);
    }

    /** A route's answer: a status and a JSON body. A handler may extend it to carry its request's own account. */
    protected static class Reply {
        private final int status;
        private final JsonNode body;

        protected Reply(int status, JsonNode body) {
            this.status = status;
            this.body = body;
        }

        static Reply ok(JsonNode body) {
            return new Reply(200, body);
        }

        static Reply created(JsonNode body) {
            return new Reply(201, body);
        }

        int status() {
            return status;
        }

        JsonNode body() {
            return body;
        }
    }

    /**
     * A request as answered, for its log line: the request (resolved, for a Function URL's), the route's reply (null
     * when it was refused or failed), the answer's status, the error code of a refusal, a failure's description,
     * and how long it took.
     */
    protected record Answered(ApiRequest request, Reply reply, int status, String code, String failure, long nanos) {
        String outcome() {
            return failure != null ? "error" : code != null ? "refused" : "ok";
        }

        double durationMs() {
            return Math.round(nanos / 10_000.0) / 100.0;
        }
    }

    private record Route(Scope scope, Action action) {
    }

    /** Seconds a throttled caller is asked to wait. */
    static final int RETRY_AFTER_SECONDS = 1;

    private final Map<String, Route> routes = new HashMap<>();
    /** A function with a Function URL routes and authorizes those requests itself (no authorizer runs); else null. */
    private final FunctionUrlRouter functionUrls;

    /** A handler answered only through API Gateway, whose authorizer has checked the key. */
    protected HttpApiHandler() {
        this.functionUrls = null;
    }

    /**
     * A handler that also answers its routes through a Lambda Function URL: the route is matched on the event's
     * rawPath and method, and the caller's key is checked through {@code cache}, with the authorizer's rules
     * ({@link FunctionUrlRouter}).
     */
    protected HttpApiHandler(KeyCache cache) {
        this.functionUrls = new FunctionUrlRouter(cache);
    }

    /** Registers {@code "METHOD /path/{param}"} exactly as template.yaml names the route. */
    protected final void route(String routeKey, Scope scope, Action action) {
        routes.put(routeKey, new Route(scope, action));
    }

    /**
     * A caller's text for a message or a log line: at most {@code max} characters, control characters as '?', so
     * a made-up path can neither flood a line nor forge one.
     */
    static String printable(String text, int max) {
        StringBuilder b = new StringBuilder(Math.min(text.length(), max));
        for (int i = 0; i < text.length() && b.length() < max; i++) {
            char c = text.charAt(i);
            b.append(Character.isISOControl(c) ? '?' : c);
        }
        return b.toString();
    }

    /** The route keys this handler serves; a test checks them against template.yaml. */
    public final Set<String> routeKeys() {
        return Set.copyOf(routes.keySet());
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        long started = System.nanoTime();
        ApiRequest request = new ApiRequest(event);
        APIGatewayV2HTTPResponse response;
        Reply reply = null;
        String code = null;
        String failure = null;
        try {
            if (request.viaFunctionUrl()) {
                if (functionUrls == null) {
                    throw FunctionUrlRouter.notFound(request);
                }
                request = functionUrls.resolve(request, routes.keySet());
                request = functionUrls.identified(request);
            }
            Route route = routes.get(request.routeKey());
            if (route == null) {
                throw new LifelineException(LifelineException.Kind.NOT_FOUND, "ROUTE_NOT_FOUND",
                        "No route " + request.routeKey());
            }
            authorize(request, route.scope());
            reply = route.action().run(request);
            response = respond(reply.status(), reply.body(), null);
            if (request.routeKey() != null && request.routeKey().startsWith("GET ") && reply.status() == 200) {
                response = conditional(request, response);
            }
        } catch (LifelineException e) {
            code = e.code();
            reply = null;
            response = error(e);
        } catch (RuntimeException e) {
            // A bug, not the caller's fault: logged (below) with the request id, answered without internals.
            code = "INTERNAL_ERROR";
            failure = e.toString();
            reply = null;
            ObjectNode body = Json.object().put("success", false)
                    .put("error", "Internal error; the request id is " + request.requestId())
                    .put("code", "INTERNAL_ERROR");
            response = respond(500, body, null);
        }
        logRequest(new Answered(request, reply, response.getStatusCode(), code, failure,
                System.nanoTime() - started));
        return response;
    }

    /**
     * Writes the request's one log line ({@link #requestLine}). README.md, "Logs and metrics". A handler with its
     * own account of requests (the heartbeat function's summary and metrics) overrides it.
     */
    protected void logRequest(Answered answered) {
        Log.emit(requestLine(answered, List.of()));
    }

    /**
     * The one log line of a request: team, agentId (when the path has one), requestId, route, status,
     * outcome (ok, refused with the error code, or error), the status changes it made ({@code changes}, when
     * any) and durationMs.
     */
    protected static ObjectNode requestLine(Answered a, List<String> changes) {
        ApiRequest request = a.request();
        ObjectNode line = Log.line(a.failure() != null ? "ERROR" : a.status() >= 500 ? "WARN" : "INFO", "request");
        Json.putIfPresent(line, "team", request.pathParameter("team"));
        Json.putIfPresent(line, "agentId", request.pathParameter("agentId"));
        Json.putIfPresent(line, "requestId", request.requestId());
        Json.putIfPresent(line, "route", request.routeKey() != null ? request.routeKey()
                : printable(request.method() + " " + request.rawPath(), 200));
        if (request.viaFunctionUrl()) {
            line.put("via", "url");
        }
        line.put("status", a.status()).put("outcome", a.outcome());
        Json.putIfPresent(line, "code", a.code());
        Json.putIfPresent(line, "error", a.failure());
        if (!changes.isEmpty()) {
            changes.forEach(line.putArray("changes")::add);
        }
        line.put("durationMs", a.durationMs());
        return line;
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
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(body.getBytes(StandardCharsets.UTF_8));
            return "W/\"" + HexFormat.of().formatHex(digest, 0, 16) + "\"";
        } catch (NoSuchAlgorithmException e) {
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
            // An operator key belongs to no team and opens nothing but the operator routes (least privilege); those
            // routes need one, whatever team their path names.
            if (scope != required) {
                throw new LifelineException(LifelineException.Kind.FORBIDDEN, "INSUFFICIENT_SCOPE",
                        scope == Scope.OPERATOR ? "An operator key only creates teams, mints a team's admin key and "
                                + "releases the fleet hold; use a key of the team"
                                : "This route needs an operator key; this key has '" + scope.wire() + "'");
            }
            return;
        }
        if (!team.equals(request.id("team"))) {
            throw new LifelineException(LifelineException.Kind.FORBIDDEN, "FORBIDDEN",
                    wrongTeam(team, request.id("team")));
        }
        if (!scope.covers(required)) {
            throw new LifelineException(LifelineException.Kind.FORBIDDEN, "INSUFFICIENT_SCOPE",
                    "This route needs a key with scope '" + required.wire() + "'; this key has '" + scope.wire() + "'");
        }
    }

    /**
     * A key used on another team's path, most often a misspelt team. The sentence names only what the caller
     * already holds (its key's team and the team it typed) and never whether the typed team exists: that would let
     * one team's key learn the names of others, one guess at a time. Nothing is read before this answer
     * (docs/design/api-and-auth/decisions.md, "A misspelt team").
     */
    static String wrongTeam(String keyTeam, String pathTeam) {
        return "This key is for team '" + keyTeam + "', not '" + pathTeam + "': a key opens only its own team's "
                + "routes" + (nearlyEqual(keyTeam, pathTeam) ? "; did you mean '" + keyTeam + "'?"
                : "; check the team in the URL, or use a key of that team");
    }

    /** Two team names a slip of the keyboard apart: equal ignoring case, or at most two edits apart. */
    static boolean nearlyEqual(String a, String b) {
        if (a.equalsIgnoreCase(b)) {
            return true;
        }
        if (Math.abs(a.length() - b.length()) > 2) {
            return false;
        }
        int[] prev = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            int[] cur = new int[b.length() + 1];
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int swap = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + swap);
            }
            prev = cur;
        }
        return prev[b.length()] <= 2;
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
