package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Routes a Lambda Function URL's request, which carries no route key, no path parameters and no authorizer's word:
 * the registered route whose method and path template match the event's method and rawPath (each segment
 * percent-decoded) gives its route key and path parameters, and the caller's key is looked up through the key cache
 * with the authorizer's rules. The answer is a new, resolved {@link ApiRequest}.
 */
final class FunctionUrlRouter {
    private final KeyCache keys;

    FunctionUrlRouter(KeyCache keys) {
        this.keys = keys;
    }

    /**
     * {@code request} with its route resolved against {@code routeKeys}, then its caller as the key cache knows the
     * key ({@link #identified}); refused 404 ROUTE_NOT_FOUND when no route matches.
     */
    ApiRequest resolve(ApiRequest request, Collection<String> routeKeys) {
        String method = request.method();
        String rawPath = request.rawPath();
        if (method != null && rawPath != null && rawPath.startsWith("/")) {
            String[] segments = rawPath.substring(1).split("/", -1);
            for (String routeKey : routeKeys) {
                Map<String, String> params = match(routeKey, method, segments);
                if (params != null) {
                    return request.routed(routeKey, params.isEmpty() ? null : params);
                }
            }
        }
        throw notFound(request);
    }

    /**
     * A routed request with its caller: null (no key, or an unknown one) when the key cache does not know the key,
     * which the handler answers 401, as for an HTTP API request the authorizer did not know. Unknown keys are
     * charged to the request's source address ({@link KeyCache}). The cache's failures (503) pass through.
     */
    ApiRequest identified(ApiRequest routed) {
        String source = routed.sourceIp();
        return routed.identified(AuthorizerHandler.bearerKey(routed.headers()).flatMap(k -> keys.find(k, source))
                .orElse(null));
    }

    static LifelineException notFound(ApiRequest request) {
        return new LifelineException(LifelineException.Kind.NOT_FOUND, "ROUTE_NOT_FOUND",
                "No route " + HttpApiHandler.printable(request.method() + " " + request.rawPath(), 200));
    }

    /** The path parameters when {@code routeKey} ("METHOD /a/{b}") matches; null when it does not. */
    static Map<String, String> match(String routeKey, String method, String[] segments) {
        int space = routeKey.indexOf(' ');
        if (!routeKey.substring(0, space).equals(method)) {
            return null;
        }
        String[] pattern = routeKey.substring(space + 2).split("/", -1);
        if (pattern.length != segments.length) {
            return null;
        }
        Map<String, String> params = new LinkedHashMap<>();
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

    /** A path segment's percent-escapes decoded as UTF-8 ('+' stays '+'); null when an escape is malformed. */
    static String decodePathSegment(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        try {
            return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
