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
 * learns nothing), runs it, and turns every failure into the API's JSON error (docs/api.md).
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
    /** Set by the heartbeat function: its routine beats are counted here, not logged one by one. */
    private java.time.Clock metricsClock;
    private io.lifeline.support.Summary summary;
    /** Set by a function with a Function URL: it authorizes those requests itself (no authorizer runs). */
    private KeyCache keyCache;

    /**
     * This handler counts heartbeats: accepted beats go into a {@link io.lifeline.support.Summary} written once per
     * {@code summaryEvery}; refusals, errors and status changes still write their own line (with EMF).
     */
    protected final void countHeartbeats(java.time.Clock clock, java.time.Duration summaryEvery) {
        this.metricsClock = clock;
        this.summary = new io.lifeline.support.Summary(Metrics.HEARTBEAT_FUNCTION, clock, summaryEvery);
    }

    /**
     * This handler also answers its routes through a Lambda Function URL: the route is matched on the event's
     * rawPath and method, and the caller's key is checked through {@code cache}, with the authorizer's rules.
     */
    protected final void answerFunctionUrls(KeyCache cache) {
        this.keyCache = cache;
    }

    /** Registers {@code "METHOD /path/{param}"} exactly as template.yaml names the route. */
    protected final void route(String routeKey, Scope scope, Action action) {
        routes.put(routeKey, new Route(scope, action));
    }

    /**
     * A Function URL request's route: the registered route whose method and path template match the event's
     * method and rawPath (each segment percent-decoded), with its path parameters; refused 404 ROUTE_NOT_FOUND
     * otherwise. Then the caller's key, looked up through the key cache (no key or an unknown one: no caller,
     * which {@link #authorize} answers 401, as for an HTTP API request the authorizer did not know).
     */
    private Route resolveFunctionUrl(ApiRequest request) {
        String method = request.method();
        String rawPath = request.rawPath();
        Route found = null;
        if (keyCache != null && method != null && rawPath != null && rawPath.startsWith("/")) {
            String[] segments = rawPath.substring(1).split("/", -1);
            for (Map.Entry<String, Route> r : routes.entrySet()) {
                Map<String, String> params = match(r.getKey(), method, segments);
                if (params != null) {
                    request.resolve(r.getKey(), params.isEmpty() ? null : params);
                    found = r.getValue();
                    break;
                }
            }
        }
        if (found == null) {
            throw new LifelineException(LifelineException.Kind.NOT_FOUND, "ROUTE_NOT_FOUND",
                    "No route " + printable(method + " " + rawPath, 200));
        }
        request.selfAuthorized(AuthorizerHandler.bearerKey(request.headers()).flatMap(keyCache::find).orElse(null));
        return found;
    }

    /** The path parameters when {@code routeKey} ("METHOD /a/{b}") matches; null when it does not. */
    private static Map<String, String> match(String routeKey, String method, String[] segments) {
        int space = routeKey.indexOf(' ');
        if (!routeKey.substring(0, space).equals(method)) {
            return null;
        }
        String[] pattern = routeKey.substring(space + 2).split("/", -1);
        if (pattern.length != segments.length) {
            return null;
        }
        Map<String, String> params = new java.util.LinkedHashMap<>();
        for (int i = 0; i < pattern.length; i++) {
            String actual = decodePathSegment(segments[i]);
            if (actual == null) {
                return null;
            }
            if (pattern[i].startsWith("{")) {
                if (actual.isEmpty()) {
                    return null;
                }
                params.put(pattern[i].substring(1, pattern[i].length() - 1), actual);
            } else if (!pattern[i].equals(actual)) {
                return null;
            }
        }
        return params;
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

    /** A path segment's percent-escapes decoded as UTF-8 ('+' stays '+'); null when an escape is malformed. */
    static String decodePathSegment(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        try {
            return java.net.URLDecoder.decode(segment.replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
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
            Route route;
            if (request.viaFunctionUrl()) {
                route = resolveFunctionUrl(request);
            } else {
                route = routes.get(request.routeKey());
                if (route == null) {
                    throw new LifelineException(LifelineException.Kind.NOT_FOUND, "ROUTE_NOT_FOUND",
                            "No route " + request.routeKey());
                }
            }
            authorize(request, route.scope());
            Reply reply = route.action().run(request);
            response = respond(reply.status(), reply.body(), null);
            if (request.routeKey() != null && request.routeKey().startsWith("GET ") && reply.status() == 200) {
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
     * outcome (ok, refused with the error code, or error) and durationMs. README.md, "Logs and metrics".
     * The heartbeat function writes no line for a routine beat (accepted, no status change): its count goes into
     * the function's summary, written once per interval; a refusal, an error or a status change writes its line.
     */
    private void logRequest(ApiRequest request, int status, String code, String failure, long nanos) {
        java.time.Instant now = metricsClock == null ? null : metricsClock.instant();
        if (summary != null) {
            // A property, not a metric: AWS/Lambda's Invocations counts the requests for free, and no alarm watches
            // it ($0.30 a month; docs/design/deploy-and-cost/decisions.md, "An idle deployment under $1 a month").
            summary.note(Metrics.HEARTBEATS, request.acceptedCount());
            if (keyCache != null) {
                summary.note(Metrics.KEY_LOOKUPS, keyCache.drainLookups());
            }
            if (code == null && failure == null && request.changes().isEmpty() && request.refusedEntries().isEmpty()) {
                summary.flushIfDue();
                return;
            }
        }
        String outcome = failure != null ? "error" : code != null ? "refused" : "ok";
        ObjectNode line = Log.line(failure != null ? "ERROR" : status >= 500 ? "WARN" : "INFO", "request");
        Json.putIfPresent(line, "team", request.pathParameter("team"));
        Json.putIfPresent(line, "agentId", request.pathParameter("agentId"));
        Json.putIfPresent(line, "requestId", request.requestId());
        Json.putIfPresent(line, "route", request.routeKey() != null ? request.routeKey()
                : printable(request.method() + " " + request.rawPath(), 200));
        if (request.viaFunctionUrl()) {
            line.put("via", "url");
        }
        line.put("status", status).put("outcome", outcome);
        Json.putIfPresent(line, "code", code);
        Json.putIfPresent(line, "error", failure);
        if (!request.changes().isEmpty()) {
            request.changes().forEach(line.putArray("changes")::add);
        }
        double durationMs = Math.round(nanos / 10_000.0) / 100.0;
        line.put("durationMs", durationMs);
        if (metricsClock == null) {
            Log.emit(line);
            return;
        }
        if (code != null) {
            // A 500 is our fault, not the caller's: also a Faults count (the canary's rollback alarm by default).
            Metrics.on(line, Metrics.HEARTBEAT_FUNCTION, now)
                    .put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, 1, Map.of(Metrics.CODE, code))
                    .fault("INTERNAL_ERROR".equals(code) ? 1 : 0).emit();
        } else {
            Log.emit(line);
        }
        // Entries of a batch refused on their own: a document holds one value per dimension, so one line per
        // code. Only batches with refused entries pay for it.
        request.refusedEntries().forEach((entryCode, n) -> {
            ObjectNode extra = Log.line("INFO", "heartbeats rejected");
            Json.putIfPresent(extra, "team", request.pathParameter("team"));
            Json.putIfPresent(extra, "requestId", request.requestId());
            Json.putIfPresent(extra, "route", request.routeKey());
            extra.put("outcome", "refused").put("durationMs", durationMs);
            Metrics.on(extra, Metrics.HEARTBEAT_FUNCTION, now)
                    .put(Metrics.HEARTBEATS_REJECTED, Metrics.Unit.COUNT, n, Map.of(Metrics.CODE, entryCode))
                    .fault("INTERNAL_ERROR".equals(entryCode) ? n : 0).emit();
        });
        summary.flushIfDue();
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
