package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.store.team.KeyStore;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;

/**
 * One API Gateway HTTP API (payload 2.0) request, with the caller as the authorizer described it. Read-only: a
 * Function URL request resolved by {@link FunctionUrlRouter} is a new instance.
 */
public final class ApiRequest {
    /** Authorizer context keys, shared with {@link AuthorizerHandler}. */
    static final String CTX_TEAM = "team";
    static final String CTX_SCOPE = "scope";
    static final String CTX_KEY_ID = "keyId";

    private final APIGatewayV2HTTPEvent event;
    /** The route and path parameters: the event's own, or (Function URL) those matched on its rawPath. */
    private final String routeKey;
    private final Map<String, String> pathParameters;
    /** The caller as the handler found it (Function URL): replaces the authorizer's context. */
    private final boolean selfAuthorized;
    private final KeyStore.KeyInfo caller;
    /** The body as {@link #body} parsed it (null until then). */
    private JsonNode parsedBody;

    ApiRequest(APIGatewayV2HTTPEvent event) {
        this(event, event.getRouteKey(), event.getPathParameters(), false, null);
    }

    private ApiRequest(APIGatewayV2HTTPEvent event, String routeKey, Map<String, String> pathParameters,
                       boolean selfAuthorized, KeyStore.KeyInfo caller) {
        this.event = event;
        this.routeKey = routeKey;
        this.pathParameters = pathParameters == null ? null : Collections.unmodifiableMap(pathParameters);
        this.selfAuthorized = selfAuthorized;
        this.caller = caller;
    }

    /**
     * True for a Lambda Function URL's event: payload 2.0 like the HTTP API's, but with route key
     * {@code $default}, no path parameters and no authorizer. Our HTTP API has no {@code $default} route, so an
     * event of the API never looks like this.
     */
    boolean viaFunctionUrl() {
        return "$default".equals(event.getRouteKey());
    }

    /** The HTTP method, from the request context (both event shapes carry it there). */
    String method() {
        return event.getRequestContext() == null || event.getRequestContext().getHttp() == null ? null
                : event.getRequestContext().getHttp().getMethod();
    }

    /**
     * The address the request came from ({@code requestContext.http.sourceIp}, as API Gateway and a Function URL both
     * give it: for a Function URL the TCP peer, so the client cannot choose it), or null; cut to the longest textual address (an IPv4-mapped IPv6 one, 45 characters).
     */
    String sourceIp() {
        String ip = event.getRequestContext() == null || event.getRequestContext().getHttp() == null ? null
                : event.getRequestContext().getHttp().getSourceIp();
        return ip == null || ip.isEmpty() || ip.length() > MAX_SOURCE_IP_CHARS ? null : ip;
    }

    /** The longest textual IP address: an IPv4-mapped IPv6 address. */
    static final int MAX_SOURCE_IP_CHARS = 45;

    /** The path as sent (percent-encoded), or null. */
    String rawPath() {
        return event.getRawPath();
    }

    /**
     * This Function URL request with the route matched on its rawPath; it authorizes itself, and has no caller until
     * {@link #identified}.
     */
    ApiRequest routed(String matchedRouteKey, Map<String, String> params) {
        return new ApiRequest(event, matchedRouteKey, params, true, null);
    }

    /** This routed Function URL request with its caller, as the key cache found it (null: no or unknown key). */
    ApiRequest identified(KeyStore.KeyInfo info) {
        return new ApiRequest(event, routeKey, pathParameters, true, info);
    }

    /** The request's headers as the event carries them (an empty map when none). */
    Map<String, String> headers() {
        return event.getHeaders() == null ? Map.of() : Collections.unmodifiableMap(event.getHeaders());
    }

    /** A request header by name, any case ({@link Headers#get}); null when absent. */
    String header(String name) {
        return Headers.get(event.getHeaders(), name);
    }

    String routeKey() {
        return routeKey;
    }

    String requestId() {
        return event.getRequestContext() == null ? null : event.getRequestContext().getRequestId();
    }

    /** The key's team, or null when the caller presented no valid key. */
    String callerTeam() {
        return selfAuthorized ? (caller == null ? null : caller.team()) : context(CTX_TEAM);
    }

    /** The id of the caller's key (the authorizer's), or null. */
    String callerKeyId() {
        return selfAuthorized ? (caller == null ? null : caller.keyId()) : context(CTX_KEY_ID);
    }

    Scope callerScope() {
        if (selfAuthorized) {
            return caller == null ? null : caller.scope();
        }
        String scope = context(CTX_SCOPE);
        return scope == null ? null : Scope.fromWire(scope).orElse(null);
    }

    private String context(String name) {
        if (event.getRequestContext() == null || event.getRequestContext().getAuthorizer() == null) {
            return null;
        }
        Map<String, Object> lambda = event.getRequestContext().getAuthorizer().getLambda();
        Object value = lambda == null ? null : lambda.get(name);
        return value == null || value.toString().isEmpty() ? null : value.toString();
    }

    /** A path parameter, validated as an id. */
    String id(String name) {
        Map<String, String> params = pathParameters;
        return Limits.requireId("Path parameter '" + name + "'", params == null ? null : params.get(name));
    }

    /** A path parameter as sent, not validated (null when absent); for logs. */
    String pathParameter(String name) {
        Map<String, String> params = pathParameters;
        return params == null ? null : params.get(name);
    }

    String query(String name) {
        Map<String, String> params = event.getQueryStringParameters();
        return params == null ? null : params.get(name);
    }

    /**
     * The body as JSON, refused when larger than {@link Limits#MAX_BODY_BYTES} or not JSON; parsed once, on the first
     * call (a route that reads it twice, as a batch does, pays for one parse).
     */
    JsonNode body() {
        if (parsedBody == null) {
            parsedBody = parseBody();
        }
        return parsedBody;
    }

    private JsonNode parseBody() {
        byte[] bytes = bytes(Limits.MAX_BODY_BYTES);
        JsonNode body;
        try {
            body = Json.parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (JsonProcessingException e) {
            throw LifelineException.badInput("INVALID_JSON", "The body is not valid JSON: " + Json.problem(e));
        }
        if (!wellFormed(body)) {
            // JSON lets "\ud800" through, but it is no character: stored, it would come back as "?".
            throw LifelineException.badInput("INVALID_JSON",
                    "The body holds a string with an unpaired surrogate escape, which is not Unicode text");
        }
        return body;
    }

    /** True when every string and field name in {@code node} is valid Unicode (no unpaired surrogate). */
    static boolean wellFormed(JsonNode node) {
        if (node.isTextual()) {
            return wellFormed(node.textValue());
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!wellFormed(e.getKey()) || !wellFormed(e.getValue())) {
                return false;
            }
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                if (!wellFormed(element)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** The body's bytes as sent (base64 decoded), refused when larger than {@code maxBytes} or absent. */
    byte[] bytes(int maxBytes) {
        String raw = event.getBody();
        if (raw == null || raw.isEmpty()) {
            throw LifelineException.badInput("INVALID_JSON", "The request needs a JSON body");
        }
        byte[] bytes = event.getIsBase64Encoded() ? decode(raw) : raw.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > maxBytes) {
            throw new LifelineException(LifelineException.Kind.TOO_LARGE, "PAYLOAD_TOO_LARGE",
                    "The body is " + bytes.length + " bytes; the limit is " + maxBytes);
        }
        return bytes;
    }

    /** The body if there is one, else an empty object (for routes whose body is optional). */
    JsonNode optionalBody() {
        String raw = event.getBody();
        return raw == null || raw.isBlank() ? Json.object() : body();
    }

    private static byte[] decode(String raw) {
        try {
            return Base64.getDecoder().decode(raw);
        } catch (IllegalArgumentException e) {
            throw LifelineException.badInput("INVALID_BODY", "The body is marked base64 but is not");
        }
    }
}
