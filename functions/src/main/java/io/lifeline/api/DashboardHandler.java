package io.lifeline.api;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.lifeline.config.Wiring;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The dashboard: a static page (HTML, CSS, JS and an SVG favicon kept under {@code dashboard/} in this jar) served with no
 * key on {@code GET /} and {@code GET /dashboard/{file}}. The page asks for a team and key and calls the JSON
 * API from the browser; nothing here reads the table. The Content-Security-Policy allows only this origin:
 * no inline script or style, nothing fetched from elsewhere.
 */
public final class DashboardHandler implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    /** The policy every answer carries. */
    public static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors 'none'";

    private static final Map<String, String> TYPES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "app.js", "text/javascript; charset=utf-8",
            "style.css", "text/css; charset=utf-8",
            "favicon.svg", "image/svg+xml");

    private final Map<String, String> files = new HashMap<>();

    /** As Lifeline Local builds every function; the page needs nothing of the wiring. */
    public DashboardHandler(Wiring wiring) {
        this();
    }

    public DashboardHandler() {
        for (String name : TYPES.keySet()) {
            try (InputStream in = DashboardHandler.class.getResourceAsStream("/dashboard/" + name)) {
                if (in == null) {
                    throw new IllegalStateException("dashboard/" + name + " is missing from the jar");
                }
                files.put(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalStateException("cannot read dashboard/" + name, e);
            }
        }
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        String method = event.getRequestContext() != null && event.getRequestContext().getHttp() != null
                ? event.getRequestContext().getHttp().getMethod() : "GET";
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            return plain(405, "Method Not Allowed");
        }
        String name = "index.html";
        String path = event.getRawPath();
        if (path != null && path.startsWith("/dashboard/")) {
            name = event.getPathParameters() == null ? null : event.getPathParameters().get("file");
            if (name == null) {
                name = path.substring("/dashboard/".length());
            }
        } else if (path != null && !"/".equals(path) && !path.isEmpty()) {
            return plain(404, "Not Found");
        }
        String body = files.get(name);
        if (body == null) {
            return plain(404, "Not Found");
        }
        Map<String, String> headers = securityHeaders();
        headers.put("content-type", TYPES.get(name));
        // Always revalidated (cheap with the ETag), so a deploy shows at once.
        headers.put("cache-control", "no-cache");
        String etag = HttpApiHandler.weakEtag(body);
        headers.put("etag", etag);
        String ifNoneMatch = Headers.get(event.getHeaders(), "if-none-match");
        if (ifNoneMatch != null && (ifNoneMatch.contains(etag) || ifNoneMatch.contains(etag.substring(2)))) {
            headers.remove("content-type");
            return APIGatewayV2HTTPResponse.builder().withStatusCode(304).withHeaders(headers).build();
        }
        return APIGatewayV2HTTPResponse.builder().withStatusCode(200).withHeaders(headers).withBody(body).build();
    }

    private static Map<String, String> securityHeaders() {
        Map<String, String> h = new HashMap<>();
        h.put("content-security-policy", CSP);
        h.put("x-content-type-options", "nosniff");
        h.put("referrer-policy", "no-referrer");
        h.put("x-frame-options", "DENY");
        return h;
    }

    /** A refusal in the gateway's own JSON shape ({@code {"message": ...}}), like every other refusal of the API. */
    private static APIGatewayV2HTTPResponse plain(int status, String message) {
        Map<String, String> h = securityHeaders();
        h.put("content-type", "application/json");
        h.put("cache-control", "no-store");
        return APIGatewayV2HTTPResponse.builder().withStatusCode(status).withHeaders(h)
                .withBody("{\"message\":\"" + message + "\"}").build();
    }
}
