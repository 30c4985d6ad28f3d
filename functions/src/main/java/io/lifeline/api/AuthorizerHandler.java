package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2CustomAuthorizerEvent;
import com.amazonaws.services.lambda.runtime.events.SimpleIAMPolicyResponse;
import io.lifeline.config.Wiring;
import io.lifeline.store.KeyStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The HTTP API's Lambda authorizer (payload 2.0, simple responses, cached by the Authorization header).
 * It says who the caller is: their team, scope and key id go into the request context. It lets unknown keys
 * through with an empty context, so the handler answers DESIGN.md's JSON 401 rather than the gateway's bare
 * 403; handlers refuse every request without a team in the context, except an operator key on an operator route.
 */
public final class AuthorizerHandler
        implements RequestHandler<APIGatewayV2CustomAuthorizerEvent, SimpleIAMPolicyResponse> {
    private static final String BEARER = "Bearer ";
    /** Longer than any key we issue; refused without a lookup. */
    private static final int MAX_KEY_CHARS = 128;

    private final KeyStore keys;

    public AuthorizerHandler() {
        this(Wiring.fromEnvironment());
    }

    public AuthorizerHandler(Wiring wiring) {
        this.keys = new KeyStore(wiring.dynamo(), wiring.config().tableName());
    }

    @Override
    public SimpleIAMPolicyResponse handleRequest(APIGatewayV2CustomAuthorizerEvent event, Context context) {
        Map<String, String> ctx = new HashMap<>();
        // A store failure propagates: the gateway then answers 500 and, unlike an answer, does not cache it,
        // so a throttled moment never locks a good key out for the cache's lifetime.
        bearerKey(event).flatMap(keys::find).ifPresent(info -> {
            if (info.team() != null) { // an operator key belongs to no team
                ctx.put(ApiRequest.CTX_TEAM, info.team());
            }
            ctx.put(ApiRequest.CTX_SCOPE, info.scope().wire());
            ctx.put(ApiRequest.CTX_KEY_ID, info.keyId());
        });
        return SimpleIAMPolicyResponse.builder().withIsAuthorized(true).withContext(ctx).build();
    }

    static Optional<String> bearerKey(APIGatewayV2CustomAuthorizerEvent event) {
        Map<String, String> headers = event.getHeaders();
        String value = null;
        if (headers != null) {
            for (Map.Entry<String, String> h : headers.entrySet()) {
                if ("authorization".equalsIgnoreCase(h.getKey())) {
                    value = h.getValue();
                }
            }
        }
        if (value == null || !value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Optional.empty();
        }
        String key = value.substring(BEARER.length()).trim();
        return key.isEmpty() || key.length() > MAX_KEY_CHARS ? Optional.empty() : Optional.of(key);
    }
}
