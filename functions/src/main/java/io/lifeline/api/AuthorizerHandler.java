package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2CustomAuthorizerEvent;
import com.amazonaws.services.lambda.runtime.events.SimpleIAMPolicyResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.app.TeamKeys;
import io.lifeline.auth.ApiKeys;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The HTTP API's Lambda authorizer (payload 2.0, simple responses, cached by the Authorization header).
 * It says who the caller is: their team, scope and key id go into the request context. It lets unknown keys
 * through with an empty context, so the handler answers the API's JSON 401 rather than the gateway's bare
 * 403; handlers refuse every request without a team in the context, except an operator key on an operator route.
 */
public final class AuthorizerHandler
        implements RequestHandler<APIGatewayV2CustomAuthorizerEvent, SimpleIAMPolicyResponse> {
    private static final String BEARER = "Bearer ";
    /** Longer than any key we issue; refused without a lookup. */
    private static final int MAX_KEY_CHARS = 128;

    private final TeamKeys keys;

    public AuthorizerHandler() {
        this(Wiring.fromEnvironment());
    }

    public AuthorizerHandler(Wiring wiring) {
        this.keys = new UseCases(wiring).keys();
    }

    @Override
    public SimpleIAMPolicyResponse handleRequest(APIGatewayV2CustomAuthorizerEvent event, Context context) {
        long started = System.nanoTime();
        // The API request's id, so this line and the handler's request line can be found together.
        String requestId = event.getRequestContext() != null ? event.getRequestContext().getRequestId()
                : context == null ? null : context.getAwsRequestId();
        try (Log.Invocation ignored = Log.invocation(requestId, "authorize")) {
            Map<String, String> ctx = new HashMap<>();
            Optional<String> key = bearerKey(event);
            try {
                // A store failure propagates: the gateway then answers 500 and, unlike an answer, does not cache
                // it, so a throttled moment never locks a good key out for the cache's lifetime.
                // A malformed key is unknown without a look-up (io.lifeline.auth.ApiKeys.wellFormed).
                key.filter(ApiKeys::wellFormed).flatMap(keys::find).ifPresent(info -> {
                    if (info.team() != null) { // an operator key belongs to no team
                        ctx.put(ApiRequest.CTX_TEAM, info.team());
                    }
                    ctx.put(ApiRequest.CTX_SCOPE, info.scope().wire());
                    ctx.put(ApiRequest.CTX_KEY_ID, info.keyId());
                });
            } catch (RuntimeException e) {
                Log.emit(log("ERROR", null, "error", started).put("error", e.toString()));
                throw e;
            }
            // Never the key itself: its id, once known, is enough to trace a caller.
            String outcome = key.isEmpty() ? "no_key" : ctx.isEmpty() ? "unknown_key" : "known_key";
            ObjectNode line = log("INFO", ctx.get(ApiRequest.CTX_TEAM), outcome, started);
            Json.putIfPresent(line, "keyId", ctx.get(ApiRequest.CTX_KEY_ID));
            Log.emit(line);
            return SimpleIAMPolicyResponse.builder().withIsAuthorized(true).withContext(ctx).build();
        }
    }

    private static ObjectNode log(String level, String team, String outcome, long started) {
        ObjectNode line = Log.line(level, "authorize");
        Json.putIfPresent(line, "team", team);
        return line.put("outcome", outcome)
                .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis());
    }

    static Optional<String> bearerKey(APIGatewayV2CustomAuthorizerEvent event) {
        return bearerKey(event.getHeaders());
    }

    /** The key of an {@code Authorization: Bearer <key>} header, by the authorizer's rules (shared with URLs). */
    static Optional<String> bearerKey(Map<String, String> headers) {
        String value = Headers.get(headers, "authorization");
        if (value == null || !value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Optional.empty();
        }
        String key = value.substring(BEARER.length()).trim();
        return key.isEmpty() || key.length() > MAX_KEY_CHARS ? Optional.empty() : Optional.of(key);
    }
}
