package io.lifeline.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.store.team.KeyStore;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A Function URL's request routed by {@link FunctionUrlRouter}: the route key and path parameters matched on its method
 * and rawPath (segments percent-decoded), its caller from the key cache, each step a new {@link ApiRequest} (the one it
 * was made from is left as it was); and {@link Headers}, the one header lookup, in any case.
 */
@Tag("unit")
class FunctionUrlRouterTest {
    private static final List<String> ROUTES = List.of("POST /v1/teams/{team}/agents/{agentId}/heartbeat",
            "POST /v1/teams/{team}/heartbeats");
    private final String good = ApiKeys.generate();
    private final FunctionUrlRouter router = new FunctionUrlRouter(new KeyCache(
            k -> k.equals(good) ? Optional.of(new KeyStore.KeyInfo("t1", Scope.AGENT, "key-1")) : Optional.empty(),
            new MutableClock(Instant.parse("2026-11-27T10:00:00Z")), Duration.ofSeconds(300)));

    private static ApiRequest urlRequest(String method, String rawPath, Map<String, String> headers) {
        APIGatewayV2HTTPEvent event = new APIGatewayV2HTTPEvent();
        event.setRouteKey("$default");
        event.setRawPath(rawPath);
        event.setHeaders(headers);
        APIGatewayV2HTTPEvent.RequestContext context = new APIGatewayV2HTTPEvent.RequestContext();
        APIGatewayV2HTTPEvent.RequestContext.Http http = new APIGatewayV2HTTPEvent.RequestContext.Http();
        http.setMethod(method);
        context.setHttp(http);
        event.setRequestContext(context);
        return new ApiRequest(event);
    }

    @Test
    void resolve_matchesTheRoute_decodesItsParameters_andIsANewRequest() {
        ApiRequest sent = urlRequest("POST", "/v1/teams/t1/agents/a%2Fb%20c/heartbeat",
                Map.of("Authorization", "Bearer " + good));
        ApiRequest routed = router.resolve(sent, ROUTES);
        assertNotSame(sent, routed);
        assertEquals("$default", sent.routeKey(), "the request it was made from is unchanged");
        assertNull(sent.pathParameter("agentId"));
        assertEquals("POST /v1/teams/{team}/agents/{agentId}/heartbeat", routed.routeKey());
        assertEquals("t1", routed.pathParameter("team"));
        assertEquals("a/b c", routed.pathParameter("agentId"));
        assertNull(routed.callerTeam(), "no caller until it is identified");
        ApiRequest identified = router.identified(routed);
        assertEquals("t1", identified.callerTeam());
        assertEquals(Scope.AGENT, identified.callerScope());
        assertEquals("key-1", identified.callerKeyId());
        assertNull(routed.callerTeam(), "identifying made a new request");
    }

    @Test
    void resolve_refusesAPathNoRouteMatches_andAnUnknownKeyHasNoCaller() {
        for (String[] miss : new String[][] {{"GET", "/v1/teams/t1/heartbeats"}, {"POST", "/v1/teams/t1/heartbeat"},
                {"POST", "/v1/teams//heartbeats"}, {"POST", "/v1/teams/%zz/heartbeats"}, {"POST", "v1/teams/t1/heartbeats"}}) {
            LifelineException e = assertThrows(LifelineException.class,
                    () -> router.resolve(urlRequest(miss[0], miss[1], Map.of()), ROUTES), miss[1]);
            assertEquals("ROUTE_NOT_FOUND", e.code());
        }
        ApiRequest stranger = router.identified(router.resolve(urlRequest("POST", "/v1/teams/t1/heartbeats",
                Map.of("authorization", "Bearer " + ApiKeys.generate())), ROUTES));
        assertEquals("POST /v1/teams/{team}/heartbeats", stranger.routeKey());
        assertNull(stranger.callerScope(), "an unknown key: no caller, answered 401 by the handler");
    }

    @Test
    void headers_areFoundInAnyCase_andAbsentOnesAreNull() {
        Map<String, String> headers = new HashMap<>(Map.of("X-Lifeline-Agent", "a1", "if-none-match", "W/\"x\""));
        assertEquals("a1", Headers.get(headers, "x-lifeline-agent"));
        assertEquals("a1", Headers.get(headers, "X-LIFELINE-AGENT"));
        assertEquals("W/\"x\"", Headers.get(headers, "If-None-Match"));
        assertNull(Headers.get(headers, "authorization"));
        assertNull(Headers.get(null, "authorization"));
        ApiRequest request = urlRequest("POST", "/", headers);
        assertEquals("a1", request.header("x-lifeline-agent"));
        assertTrue(AuthorizerHandler.bearerKey(Map.of("AUTHORIZATION", "bearer " + good)).isPresent());
    }
}
