package io.lifeline.local.http;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2CustomAuthorizerEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SimpleIAMPolicyResponse;
import io.lifeline.api.Headers;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.runtime.LocalMetrics;
import io.lifeline.local.template.SamTemplate;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What API Gateway's HTTP API does for a request, for the routes and authorizer of template.yaml: match the
 * route, build the payload 2.0 event, run the Lambda authorizer (cached by the Authorization header for the
 * template's ReauthorizeEvery), put its context on the event and invoke the route's function. Where the
 * gateway itself answers (no route, no Authorization header, authorizer refused or failed) it answers as
 * the gateway does. A route whose template event says {@code Auth: { Authorizer: NONE }} is public: no
 * Authorization header is needed and no authorizer runs.
 */
public final class LocalGateway {
    /** A response as the client receives it. */
    public record Response(int status, Map<String, String> headers, String body) {
    }

    private record Target(SamTemplate.Route route, String functionId, String[] segments) {
    }

    private record CachedAuth(Map<String, String> context, boolean authorized, Instant expires) {
    }

    private static final DateTimeFormatter REQUEST_TIME =
            DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ENGLISH).withZone(ZoneOffset.UTC);

    private final FunctionHost host;
    private final Clock clock;
    private final String authorizerId;
    private final int authorizerCacheSeconds;
    private final List<Target> targets = new ArrayList<>();
    private final Map<String, String> functionByRouteKey = new HashMap<>();
    private final Set<String> publicRouteKeys = new HashSet<>();
    private final Map<String, CachedAuth> authCache = new ConcurrentHashMap<>();

    /** Function URLs of template.yaml: the functions that have one (Local serves each under {@link #urlPath}). */
    private final Set<String> functionUrls;

    public LocalGateway(SamTemplate template, FunctionHost host, Clock clock) {
        this(template, host, clock, Set.of());
    }

    public LocalGateway(SamTemplate template, FunctionHost host, Clock clock, Set<String> functionUrls) {
        this.functionUrls = Set.copyOf(functionUrls);
        this.host = host;
        this.clock = clock;
        this.authorizerId = template.authorizerFunction();
        this.authorizerCacheSeconds = template.authorizerCacheSeconds();
        for (SamTemplate.Function f : host.functions()) {
            for (SamTemplate.Route r : f.routes()) {
                targets.add(new Target(r, f.logicalId(),
                        r.path().length() <= 1 ? new String[0] : r.path().substring(1).split("/")));
                functionByRouteKey.put(r.routeKey(), f.logicalId());
                if (r.publicRoute()) {
                    publicRouteKeys.add(r.routeKey());
                }
            }
        }
        // Like the gateway, prefer the route with more literal segments when two match.
        targets.sort((a, b) -> Long.compare(literals(b.segments()), literals(a.segments())));
    }

    private static long literals(String[] segments) {
        return Arrays.stream(segments).filter(s -> !s.startsWith("{")).count();
    }

    /** Where Lifeline Local serves the API description, with no key (not a route of template.yaml). */
    public static final String OPENAPI_PATH = "/openapi.yaml";

    /** The repo's openapi.yaml, bundled into the jar next to template.yaml. */
    static Response openApi() {
        try (var in = LocalGateway.class.getResourceAsStream(OPENAPI_PATH)) {
            if (in == null) {
                return gatewayError(404, "Not Found");
            }
            return new Response(200, Map.of("content-type", "application/yaml; charset=utf-8"),
                    new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return gatewayError(500, "Internal Server Error");
        }
    }

    private volatile Supplier<String> metricsView;

    /** Serves {@code view} at {@link LocalMetrics#PATH}: the metrics Local extracted from the functions' lines. */
    public void serveMetrics(Supplier<String> view) {
        this.metricsView = view;
    }

    /** The route keys the gateway serves, as template.yaml declares them. */
    public List<String> routeKeys() {
        return List.copyOf(functionByRouteKey.keySet());
    }

    /**
     * The route keys that need a key: every route but those the template leaves public
     * ({@code Auth: { Authorizer: NONE }}, such as the dashboard's page). These are the JSON API.
     */
    public List<String> apiRouteKeys() {
        return functionByRouteKey.keySet().stream().filter(k -> !publicRouteKeys.contains(k)).toList();
    }

    /** The route keys the template leaves public: the gateway runs no authorizer for them. */
    public List<String> publicRouteKeys() {
        return List.copyOf(publicRouteKeys);
    }

    /**
     * Where Lifeline Local serves a function's Function URL: {@code /lambda-url/<LogicalId>}, so the heartbeat URL
     * of Local is {@code http://127.0.0.1:<port>/lambda-url/HeartbeatUrlFunction} (a second path on the one port; on
     * AWS it is a host of its own). What follows the prefix is the rawPath the function sees.
     */
    public static final String URL_PREFIX = "/lambda-url/";
    /** The source of a request handed in without one: this machine (Local listens on loopback only). */
    static final String LOOPBACK = "127.0.0.1";

    /** The path of {@code functionId}'s Function URL on Local's port. */
    public static String urlPath(String functionId) {
        return URL_PREFIX + functionId;
    }

    /** The functions that have a Function URL here. */
    public Set<String> functionUrls() {
        return functionUrls;
    }

    /** An HTTP request as it arrives from this machine (source 127.0.0.1): see the next method. */
    public Response handle(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                           String body) {
        return handle(method, rawPath, rawQuery, headers, body, LOOPBACK);
    }

    /**
     * An HTTP request as it arrives: headers by name (any case), the raw query string without '?', and the client's
     * address, which the event carries as {@code requestContext.http.sourceIp} (as API Gateway and Function URLs
     * give the TCP peer's).
     */
    public Response handle(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                           String body, String sourceIp) {
        if ("GET".equals(method) && OPENAPI_PATH.equals(rawPath)) {
            return openApi();
        }
        Supplier<String> metrics = metricsView;
        if ("GET".equals(method) && LocalMetrics.PATH.equals(rawPath) && metrics != null) {
            return new Response(200, Map.of("content-type", "application/json"), metrics.get());
        }
        if (rawPath.startsWith(URL_PREFIX)) {
            int end = rawPath.indexOf('/', URL_PREFIX.length());
            String functionId = rawPath.substring(URL_PREFIX.length(), end < 0 ? rawPath.length() : end);
            if (functionUrls.contains(functionId)) {
                return invokeUrl(functionId, urlEvent(method, end < 0 ? "/" : rawPath.substring(end), rawQuery,
                        headers, body, sourceIp));
            }
            return gatewayError(404, "Not Found");
        }
        String[] segments = rawPath.length() <= 1 ? new String[0] : rawPath.substring(1).split("/", -1);
        for (Target t : targets) {
            Map<String, String> params = match(t, method, segments);
            if (params != null) {
                return invoke(event(t.route(), params, rawPath, rawQuery, headers, body, sourceIp));
            }
        }
        return gatewayError(404, "Not Found");
    }

    private static Map<String, String> match(Target t, String method, String[] segments) {
        if (!t.route().method().equals(method) || t.segments().length != segments.length) {
            return null;
        }
        Map<String, String> params = new LinkedHashMap<>();
        for (int i = 0; i < segments.length; i++) {
            String pattern = t.segments()[i];
            String actual = URLDecoder.decode(segments[i], StandardCharsets.UTF_8);
            if (pattern.startsWith("{")) {
                if (actual.isEmpty()) {
                    return null;
                }
                params.put(pattern.substring(1, pattern.length() - 1), actual);
            } else if (!pattern.equals(actual)) {
                return null;
            }
        }
        return params;
    }

    private APIGatewayV2HTTPEvent event(SamTemplate.Route route, Map<String, String> params, String rawPath,
                                        String rawQuery, Map<String, List<String>> headers, String body,
                                        String sourceIp) {
        Map<String, String> joined = joinedHeaders(headers);
        Map<String, String> query = queryParameters(rawQuery);
        Instant now = clock.instant();
        APIGatewayV2HTTPEvent.RequestContext context = APIGatewayV2HTTPEvent.RequestContext.builder()
                .withRouteKey(route.routeKey()).withAccountId("000000000000").withStage("$default")
                .withApiId("local").withDomainName("127.0.0.1").withDomainPrefix("local")
                .withTime(REQUEST_TIME.format(now)).withTimeEpoch(now.toEpochMilli())
                .withRequestId(UUID.randomUUID().toString())
                .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod(route.method())
                        .withPath(rawPath).withProtocol("HTTP/1.1").withSourceIp(sourceIp)
                        .withUserAgent(joined.getOrDefault("user-agent", "")).build())
                .build();
        return APIGatewayV2HTTPEvent.builder().withVersion("2.0").withRouteKey(route.routeKey())
                .withRawPath(rawPath).withRawQueryString(rawQuery == null ? "" : rawQuery)
                .withHeaders(joined).withQueryStringParameters(query.isEmpty() ? null : query)
                .withPathParameters(params.isEmpty() ? null : params)
                .withBody(body == null || body.isEmpty() ? null : body).withIsBase64Encoded(false)
                .withRequestContext(context).build();
    }

    /** Header names lowercased and repeated values joined with commas, as payload 2.0 delivers them. */
    private static Map<String, String> joinedHeaders(Map<String, List<String>> headers) {
        Map<String, String> joined = new LinkedHashMap<>();
        headers.forEach((name, values) -> joined.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
        return joined;
    }

    /** The decoded query parameters, a repeated name's values joined with commas, as payload 2.0 delivers them. */
    private static Map<String, String> queryParameters(String rawQuery) {
        Map<String, String> query = new LinkedHashMap<>();
        if (rawQuery != null && !rawQuery.isEmpty()) {
            for (String pair : rawQuery.split("&")) {
                int eq = pair.indexOf('=');
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                query.merge(name, value, (a, b) -> a + "," + b);
            }
        }
        return query;
    }

    /**
     * A request as a Lambda Function URL delivers it (payload 2.0): route key {@code $default}, no path parameters,
     * no authorizer, the body base64-encoded unless its content type is text (as Lambda decides).
     */
    APIGatewayV2HTTPEvent urlEvent(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                                   String body, String sourceIp) {
        Map<String, String> joined = joinedHeaders(headers);
        Map<String, String> query = queryParameters(rawQuery);
        Instant now = clock.instant();
        boolean text = textContent(joined.get("content-type"));
        String sent = body == null || body.isEmpty() ? null : text ? body
                : Base64.getEncoder().encodeToString(body.getBytes(StandardCharsets.UTF_8));
        APIGatewayV2HTTPEvent.RequestContext context = APIGatewayV2HTTPEvent.RequestContext.builder()
                .withRouteKey("$default").withAccountId("anonymous").withStage("$default")
                .withApiId("local").withDomainName("local.lambda-url.local.on.aws").withDomainPrefix("local")
                .withTime(REQUEST_TIME.format(now)).withTimeEpoch(now.toEpochMilli())
                .withRequestId(UUID.randomUUID().toString())
                .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod(method)
                        .withPath(rawPath).withProtocol("HTTP/1.1").withSourceIp(sourceIp)
                        .withUserAgent(joined.getOrDefault("user-agent", "")).build())
                .build();
        return APIGatewayV2HTTPEvent.builder().withVersion("2.0").withRouteKey("$default")
                .withRawPath(rawPath).withRawQueryString(rawQuery == null ? "" : rawQuery)
                .withHeaders(joined).withQueryStringParameters(query.isEmpty() ? null : query)
                .withBody(sent).withIsBase64Encoded(sent != null && !text)
                .withRequestContext(context).build();
    }

    /** Lambda's rule for a URL's body: text types arrive as they are, anything else (or none) base64-encoded. */
    static boolean textContent(String contentType) {
        if (contentType == null) {
            return false;
        }
        String t = contentType.toLowerCase(Locale.ROOT);
        return t.startsWith("text/") || t.contains("json") || t.contains("javascript") || t.contains("xml")
                || t.startsWith("application/x-www-form-urlencoded");
    }

    /**
     * Invokes {@code functionId} with a Function URL event: no authorizer runs (AuthType NONE). Under the function's
     * reserved concurrency, as Lambda runs it: past it, the URL answers as Lambda's does for a throttled invocation,
     * 429 with {@code {"message":"Rate Exceeded."}} and {@code x-amzn-ErrorType: TooManyRequestsException}.
     */
    public Response invokeUrl(String functionId, APIGatewayV2HTTPEvent event) {
        host.awaitRunning();
        try {
            return run(functionId, event);
        } catch (FunctionHost.ThrottledException e) {
            return URL_THROTTLED;
        } catch (RuntimeException e) {
            // As a Function URL answers an unhandled error: 502, no detail.
            System.err.println(functionId + " failed: " + e);
            return gatewayError(502, "Internal Server Error");
        }
    }

    /** The function's answer to the event, its body decoded when it came base64-encoded. */
    private Response run(String functionId, APIGatewayV2HTTPEvent event) throws FunctionHost.ThrottledException {
        RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> handler = host.handler(functionId);
        APIGatewayV2HTTPResponse r = host.invoke(functionId, () -> handler.handleRequest(event,
                new LocalContext(functionId, event.getRequestContext().getRequestId())));
        Map<String, String> headers = r.getHeaders() == null ? Map.of() : r.getHeaders();
        String body = r.getBody();
        if (r.getIsBase64Encoded() && body != null) {
            body = new String(Base64.getDecoder().decode(body), StandardCharsets.UTF_8);
        }
        return new Response(r.getStatusCode(), headers, body == null ? "" : body);
    }

    /**
     * Runs the authorizer and the route's function for an event that names its route (as a fixture does).
     * Any authorizer context already on the event is replaced by what the authorizer says.
     */
    public Response invoke(APIGatewayV2HTTPEvent event) {
        host.awaitRunning();
        String functionId = functionByRouteKey.get(event.getRouteKey());
        if (functionId == null) {
            return gatewayError(404, "Not Found");
        }
        if (event.getRequestContext() == null) {
            event.setRequestContext(new APIGatewayV2HTTPEvent.RequestContext());
        }
        if (publicRouteKeys.contains(event.getRouteKey())) {
            // Authorizer NONE: the gateway passes the request on as it came, with no authorizer context.
            event.getRequestContext().setAuthorizer(null);
        } else {
            String authorization = Headers.get(event.getHeaders(), "authorization");
            if (authorization == null || authorization.isBlank()) {
                return gatewayError(401, "Unauthorized");
            }
            CachedAuth auth;
            try {
                auth = authorize(event, authorization);
            } catch (FunctionHost.ThrottledException e) {
                return gatewayError(500, "Internal Server Error");
            } catch (RuntimeException e) {
                System.err.println("authorizer failed: " + e);
                return gatewayError(500, "Internal Server Error");
            }
            if (!auth.authorized()) {
                return gatewayError(403, "Forbidden");
            }
            event.getRequestContext().setAuthorizer(APIGatewayV2HTTPEvent.RequestContext.Authorizer.builder()
                    .withLambda(new HashMap<>(auth.context())).build());
        }
        try {
            return run(functionId, event);
        } catch (FunctionHost.ThrottledException e) {
            // As an HTTP API answers when Lambda throttles its integration (Lambda's 429): 500 with the gateway's own
            // body and no code, the function never having run. The answer clients retry (README, "Throttled answers").
            return gatewayError(500, "Internal Server Error");
        } catch (RuntimeException e) {
            // An unhandled exception in a function: the gateway answers 500 with no detail.
            System.err.println(functionId + " failed: " + e);
            return gatewayError(500, "Internal Server Error");
        }
    }

    private CachedAuth authorize(APIGatewayV2HTTPEvent event, String authorization) {
        Instant now = clock.instant();
        CachedAuth cached = authCache.get(authorization);
        if (cached != null && now.isBefore(cached.expires())) {
            return cached;
        }
        APIGatewayV2CustomAuthorizerEvent authEvent = APIGatewayV2CustomAuthorizerEvent.builder()
                .withVersion("2.0").withType("REQUEST")
                .withRouteArn("arn:aws:execute-api:local:000000000000:local/$default/"
                        + event.getRouteKey().replace(' ', '/'))
                .withIdentitySource(List.of(authorization)).withRouteKey(event.getRouteKey())
                .withRawPath(event.getRawPath()).withRawQueryString(event.getRawQueryString())
                .withHeaders(event.getHeaders()).withQueryStringParameters(event.getQueryStringParameters())
                .withPathParameters(event.getPathParameters())
                // As API Gateway does: the authorizer sees the request's id, so its log line matches the request's.
                .withRequestContext(APIGatewayV2CustomAuthorizerEvent.RequestContext.builder()
                        .withRequestId(event.getRequestContext() == null ? null
                                : event.getRequestContext().getRequestId())
                        .withRouteKey(event.getRouteKey()).withStage("$default").build())
                .build();
        RequestHandler<APIGatewayV2CustomAuthorizerEvent, SimpleIAMPolicyResponse> authorizer =
                host.handler(authorizerId);
        SimpleIAMPolicyResponse answer = host.invoke(authorizerId, () -> authorizer.handleRequest(authEvent,
                new LocalContext(authorizerId, UUID.randomUUID().toString())));
        CachedAuth result = new CachedAuth(answer.getContext() == null ? Map.of() : answer.getContext(),
                answer.getIsAuthorized(), now.plusSeconds(authorizerCacheSeconds));
        if (authorizerCacheSeconds > 0) {
            authCache.put(authorization, result);
        }
        return result;
    }

    /**
     * True when {@code authorization} was authorized and that answer is still cached: the front door lets such a
     * key through while it answers a client's flood of refused keys with 429.
     */
    boolean recentlyAuthorized(String authorization) {
        CachedAuth cached = authCache.get(authorization);
        return cached != null && cached.authorized() && clock.instant().isBefore(cached.expires());
    }

    /** A Function URL's answer when Lambda throttled the invocation (the function never ran). */
    static final Response URL_THROTTLED = new Response(429, Map.of("content-type", "application/json",
            "x-amzn-ErrorType", "TooManyRequestsException"), "{\"message\":\"Rate Exceeded.\"}");

    private static Response gatewayError(int status, String message) {
        return new Response(status, Map.of("content-type", "application/json"),
                "{\"message\":\"" + message + "\"}");
    }
}
