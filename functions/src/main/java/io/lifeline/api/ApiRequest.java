package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/** One API Gateway HTTP API (payload 2.0) request, with the caller as the authorizer described it. */
public final class ApiRequest {
    /** Authorizer context keys, shared with {@link AuthorizerHandler}. */
    static final String CTX_TEAM = "team";
    static final String CTX_SCOPE = "scope";
    static final String CTX_KEY_ID = "keyId";

    private final APIGatewayV2HTTPEvent event;
    /** For the request's metrics: heartbeats accepted, and batch entries refused by error code. */
    private int accepted;
    private final Map<String, Integer> refusedEntries = new java.util.TreeMap<>();

    ApiRequest(APIGatewayV2HTTPEvent event) {
        this.event = event;
    }

    void accepted() {
        accepted++;
    }

    int acceptedCount() {
        return accepted;
    }

    /** A batch entry refused while the request as a whole succeeded. */
    void refusedEntry(String code) {
        refusedEntries.merge(code, 1, Integer::sum);
    }

    Map<String, Integer> refusedEntries() {
        return refusedEntries;
    }

    /** A request header by name, any case; null when absent. */
    String header(String name) {
        Map<String, String> headers = event.getHeaders();
        if (headers == null) {
            return null;
        }
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (name.equalsIgnoreCase(h.getKey())) {
                return h.getValue();
            }
        }
        return null;
    }

    String routeKey() {
        return event.getRouteKey();
    }

    String requestId() {
        return event.getRequestContext() == null ? null : event.getRequestContext().getRequestId();
    }

    /** The key's team, or null when the caller presented no valid key. */
    String callerTeam() {
        return context(CTX_TEAM);
    }

    /** The id of the caller's key (the authorizer's), or null. */
    String callerKeyId() {
        return context(CTX_KEY_ID);
    }

    Scope callerScope() {
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
        Map<String, String> params = event.getPathParameters();
        return Limits.requireId("Path parameter '" + name + "'", params == null ? null : params.get(name));
    }

    /** A path parameter as sent, not validated (null when absent); for logs. */
    String pathParameter(String name) {
        Map<String, String> params = event.getPathParameters();
        return params == null ? null : params.get(name);
    }

    String query(String name) {
        Map<String, String> params = event.getQueryStringParameters();
        return params == null ? null : params.get(name);
    }

    /** The body as JSON, refused when larger than {@link Limits#MAX_BODY_BYTES} or not JSON. */
    JsonNode body() {
        String raw = event.getBody();
        if (raw == null || raw.isEmpty()) {
            throw LifelineException.badInput("INVALID_JSON", "The request needs a JSON body");
        }
        byte[] bytes = event.getIsBase64Encoded()
                ? decode(raw)
                : raw.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > Limits.MAX_BODY_BYTES) {
            throw new LifelineException(LifelineException.Kind.TOO_LARGE, "PAYLOAD_TOO_LARGE",
                    "The body is " + bytes.length + " bytes; the limit is " + Limits.MAX_BODY_BYTES);
        }
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
        for (java.util.Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
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
