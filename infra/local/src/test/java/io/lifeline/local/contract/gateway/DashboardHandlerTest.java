package io.lifeline.local.contract.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.lifeline.api.DashboardHandler;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The dashboard's page: served with no key, strict CSP, and nothing on it points outside this origin. */
@Tag("contract")
class DashboardHandlerTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void page_isServedByTheGateway_withNoAuthorizationHeader() {
        LocalGateway.Response r = stack.gateway.handle("GET", "/", null, Map.of(), null);
        assertEquals(200, r.status(), r.body());
        assertEquals("text/html; charset=utf-8", r.headers().get("content-type"));
        assertEquals(DashboardHandler.CSP, r.headers().get("content-security-policy"));
        assertTrue(r.headers().get("content-security-policy").contains("script-src 'self'"));
        assertFalse(r.headers().get("content-security-policy").contains("unsafe-inline"));
        assertEquals("no-cache", r.headers().get("cache-control"));
        assertNotNull(r.headers().get("etag"));
        assertTrue(r.body().contains("/dashboard/app.js") && r.body().contains("/dashboard/style.css"));
        for (String asset : List.of("app.js", "style.css")) {
            LocalGateway.Response a = stack.gateway.handle("GET", "/dashboard/" + asset, null, Map.of(), null);
            assertEquals(200, a.status(), asset);
        }
        LocalGateway.Response icon = stack.gateway.handle("GET", "/dashboard/favicon.svg", null, Map.of(), null);
        assertEquals(200, icon.status(), "the page's favicon");
        assertEquals("image/svg+xml", icon.headers().get("content-type"));
        assertTrue(r.body().contains("href=\"/dashboard/favicon.svg\""), "the page names it, so no /favicon.ico 404");
        assertEquals(404, stack.gateway.handle("GET", "/dashboard/nope.js", null, Map.of(), null).status());
        assertEquals(404, stack.gateway.handle("GET", "/dashboard/..%2Fapp.js", null, Map.of(), null).status());
        // The JSON API still needs a key.
        assertEquals(401, stack.gateway.handle("GET", "/v1/teams/acme/agents", null, Map.of(), null).status());
    }

    @Test
    void page_answers304_forItsETag() {
        LocalGateway.Response first = stack.gateway.handle("GET", "/", null, Map.of(), null);
        LocalGateway.Response again = stack.gateway.handle("GET", "/", null,
                Map.of("If-None-Match", List.of(first.headers().get("etag"))), null);
        assertEquals(304, again.status());
        assertEquals("", again.body());
    }

    @Test
    void page_inlinesNothing_andReferencesNoExternalUrl() {
        DashboardHandler handler = new DashboardHandler();
        for (String path : List.of("/", "/dashboard/app.js", "/dashboard/style.css", "/dashboard/favicon.svg")) {
            APIGatewayV2HTTPEvent event = APIGatewayV2HTTPEvent.builder().withRawPath(path)
                    .withPathParameters(path.equals("/") ? null : Map.of("file", path.substring(11))).build();
            APIGatewayV2HTTPResponse r = handler.handleRequest(event, null);
            assertEquals(200, r.getStatusCode(), path);
            // An SVG's namespace is a name, not an address anything fetches.
            String body = r.getBody().toLowerCase().replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assertFalse(body.contains("http://") || body.contains("https://"), path + " names an external URL");
            assertFalse(body.contains("//cdn") || body.contains("@import"), path);
            if (path.equals("/")) {
                assertFalse(body.contains("<style") || body.contains(" style=") || body.contains(" onclick="),
                        "inline style or handler would need 'unsafe-inline'");
                assertFalse(body.matches("(?s).*<script>.*"), "inline script");
            }
        }
    }

    @Test
    void getAnswers_carryAWeakETag_and304WhenItMatches() {
        LocalGateway.Response first = stack.raw("list-agents", stack.adminKey, Map.of("team", TestStack.TEAM),
                null, null);
        assertEquals(200, first.status());
        String etag = first.headers().get("etag");
        assertNotNull(etag, "GET answers carry an ETag");
        assertTrue(etag.startsWith("W/\""), etag);
        LocalGateway.Response again = stack.gateway.handle("GET", "/v1/teams/" + TestStack.TEAM + "/agents", null,
                Map.of("Authorization", List.of("Bearer " + stack.adminKey), "If-None-Match", List.of(etag)), null);
        assertEquals(304, again.status());
        assertEquals("", again.body());
        stack.register("etag-agent");
        LocalGateway.Response changed = stack.gateway.handle("GET", "/v1/teams/" + TestStack.TEAM + "/agents",
                null, Map.of("Authorization", List.of("Bearer " + stack.adminKey), "If-None-Match", List.of(etag)),
                null);
        assertEquals(200, changed.status());
    }
}
