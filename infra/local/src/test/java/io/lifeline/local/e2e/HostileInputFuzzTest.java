package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.team.KeyStore;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A seeded fuzz of hostile requests against every route of template.yaml, through the real HTTP
 * front door of a Lifeline Local started here. Every request is built to be invalid (a bad or missing key,
 * another team, a hostile or unknown id, a bad query, or a body that is malformed, truncated, of wrong types,
 * too deep, too long, duplicated, unknown, invalid UTF-8, or up to 10 MB), so none may write: the table is
 * compared before and after. Every answer must be below 500 and a JSON error whose code is in openapi.yaml's
 * ErrorCode enum (or the gateway's own documented {@code {"message"}} refusals); no non-GET may succeed; no
 * key may appear in any log line. The seed is printed; replay with {@code -Dlifeline.fuzzSeed=N}, and
 * {@code -Dlifeline.fuzzRequests=N} sends more.
 */
@Tag("e2e")
class HostileInputFuzzTest {
    private static final Path SPEC = TestStack.templatePath().resolveSibling("openapi.yaml");
    private static final String TEAM = LifelineLocal.LOCAL_TEAM;
    private static final String OTHER_TEAM = "fz-other";
    /** The gateway's own refusals (openapi.yaml's GatewayError), by status. */
    private static final Map<Integer, String> GATEWAY_MESSAGES = Map.of(401, "Unauthorized", 403, "Forbidden",
            404, "Not Found", 405, "Method Not Allowed", 413, "Request Entity Too Large");
    private static final int GATEWAY_MAX_BODY = 10 * 1024 * 1024;

    /** One route of the template, with what openapi.yaml says about it. */
    record Route(String method, String path, List<String> params, ObjectNode exampleBody, List<String> required,
                 Map<String, JsonNode> properties, List<String> queryParams) {
        boolean hasBody() {
            return exampleBody != null;
        }

        List<String> ids() {
            return params.stream().filter(p -> !p.equals("team")).toList();
        }
    }

    /** One request as sent, for the failure message; {@code expect} is the one 400 code it must get, or null. */
    record Sent(String kind, String method, String rawPath, Map<String, List<String>> headers, byte[] body,
                String expect) {
        @Override
        public String toString() {
            String b = body == null ? "" : new String(body, 0, Math.min(body.length, 300), StandardCharsets.UTF_8);
            return kind + ": " + method + " " + rawPath + " " + headers.keySet() + " body(" + (body == null ? 0
                    : body.length) + ")=" + b;
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void hostileRequests_toEveryRoute_answerKnownJsonErrors_andWriteNothing() throws Exception {
        long seed = Long.getLong("lifeline.fuzzSeed", System.nanoTime());
        int count = Integer.getInteger("lifeline.fuzzRequests", 5200);
        System.out.println("HostileInputFuzzTest seed: " + seed + " (replay with -Dlifeline.fuzzSeed=" + seed + ")");
        JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(SPEC.toFile());
        Set<String> codes = new HashSet<>();
        spec.at("/components/schemas/ErrorCode/enum").forEach(c -> codes.add(c.asText()));
        codes.remove("INTERNAL_ERROR");

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        // Healthy agents stay healthy for the whole run: the sweep must have no reason to write.
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", "604800"), Clock.systemUTC()))) {
            List<Route> routes = routes(local.gateway(), spec);
            Fixture f = setUp(local);
            Generator g = new Generator(new Random(seed), f);
            List<Sent> requests = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                requests.add(g.next(routes.get(i % routes.size())));
            }
            awaitQuiet(local);
            Map<String, Map<String, AttributeValue>> before = snapshot(local.dynamo());

            PrintStream tee = new PrintStream(captured, true, StandardCharsets.UTF_8);
            System.setOut(tee);
            System.setErr(tee);
            StringBuffer logLines = new StringBuffer();
            Log.sink(line -> logLines.append(line).append('\n'));
            Map<String, AtomicInteger> byOutcome = new ConcurrentHashMap<>();
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (Sent s : requests) {
                    futures.add(pool.submit(() -> {
                        String problem = check(s, send(local.url(), s), codes, byOutcome);
                        if (problem != null) {
                            failures.add(problem + "\n    request " + s);
                        }
                        return null;
                    }));
                }
                for (Future<?> fu : futures) {
                    fu.get();
                }
            } finally {
                pool.shutdownNow();
                Log.sink(null);
                System.setOut(originalOut);
                System.setErr(originalErr);
            }
            awaitQuiet(local);
            Map<String, Map<String, AttributeValue>> after = snapshot(local.dynamo());

            Map<String, Integer> kinds = new TreeMap<>();
            requests.forEach(s -> kinds.merge(s.kind(), 1, Integer::sum));
            String report = String.format("HostileInputFuzzTest: seed %d, %d requests over %d routes; by kind %s;"
                    + " answers %s; %d failures%n", seed, requests.size(), routes.size(), kinds, new TreeMap<>(byOutcome),
                    failures.size());
            System.out.print(report);
            Path out = Path.of("target", "reliability");
            Files.createDirectories(out);
            Files.writeString(out.resolve("fuzz.txt"), report);

            if (!failures.isEmpty()) {
                fail(failures.size() + " bad answers, e.g.:\n" + String.join("\n", failures.subList(0,
                        Math.min(15, failures.size()))));
            }
            assertEquals(before, after, "a refused request changed the table: " + difference(before, after));
            String logs = captured.toString(StandardCharsets.UTF_8) + logLines;
            assertTrue(logLines.indexOf("\"msg\":\"request\"") >= 0, "the requests' log lines were captured");
            for (String key : f.secrets) {
                assertTrue(!logs.contains(key), "a key appeared in the logs: " + key);
            }
            assertTrue(requests.size() >= 5000);
        }
    }

    /** The fuzz's first find: "\\ud800" is valid JSON but no character; stored, it came back as "?". */
    @Test
    void unpairedSurrogate_anywhereInABody_isRefusedAsInvalidJson_andWritesNothing() throws Exception {
        try (TestStack stack = TestStack.start()) {
            stack.ready("sur-1");
            for (String body : List.of("{\"metadata\":{\"deep\":[\"ok\",\"\\udc00\"]}}",
                    "{\"checkpoint\":{\"\\ud83d\":1}}", "{\"status\":\"ready\",\"metadata\":{\"n\":\"a\\ud800b\"}}")) {
                TestStack.Reply r = stack.writesNothing(() -> stack.heartbeat("sur-1", body));
                assertEquals(400, r.status(), body);
                assertEquals("INVALID_JSON", r.code(), body);
            }
            TestStack.Reply pair = stack.heartbeat("sur-1", "{\"metadata\":{\"emoji\":\"\\ud83d\\udc80\"}}");
            assertEquals(200, pair.status(), "a proper surrogate pair is a character: " + pair.body());
        }
    }

    // ---- the routes, from template.yaml (Local's gateway) and openapi.yaml ------------------------------------

    static List<Route> routes(LocalGateway gateway, JsonNode spec) {
        List<Route> routes = new ArrayList<>();
        for (String key : gateway.routeKeys()) {
            String method = key.substring(0, key.indexOf(' '));
            String path = key.substring(key.indexOf(' ') + 1);
            List<String> params = new ArrayList<>();
            Matcher m = Pattern.compile("\\{(\\w+)}").matcher(path);
            while (m.find()) {
                params.add(m.group(1));
            }
            JsonNode op = spec.path("paths").path(path).path(method.toLowerCase());
            ObjectNode example = null;
            List<String> required = new ArrayList<>();
            Map<String, JsonNode> properties = new LinkedHashMap<>();
            JsonNode content = op.path("requestBody").path("content").path("application/json");
            if (!content.isMissingNode()) {
                example = Json.object();
                for (JsonNode ex : content.path("examples")) {
                    if (ex.path("value").isObject() && ex.path("value").size() > example.size()) {
                        example = (ObjectNode) ex.path("value").deepCopy();
                    }
                }
                JsonNode schema = resolve(spec, content.path("schema"));
                schema.path("required").forEach(r -> required.add(r.asText()));
                schema.path("properties").fields().forEachRemaining(e -> properties.put(e.getKey(),
                        resolve(spec, e.getValue())));
            }
            List<String> query = new ArrayList<>();
            for (JsonNode p : op.path("parameters")) {
                JsonNode param = resolve(spec, p);
                if ("query".equals(param.path("in").asText())) {
                    query.add(param.path("name").asText());
                }
            }
            routes.add(new Route(method, path, params, example, required, properties, query));
        }
        return routes;
    }

    private static JsonNode resolve(JsonNode spec, JsonNode node) {
        while (node.has("$ref")) {
            node = spec.at(node.get("$ref").asText().substring(1));
        }
        return node;
    }

    // ---- what exists before the fuzz: valid ids, so hostile bodies reach the handlers' checks -------------------

    static final class Fixture {
        final String admin;
        final String otherAdmin;
        final String read;
        final String revoked;
        final List<String> secrets = new ArrayList<>();
        final Map<String, String> realIds = new LinkedHashMap<>();

        Fixture(String admin, String otherAdmin, String read, String revoked) {
            this.admin = admin;
            this.otherAdmin = otherAdmin;
            this.read = read;
            this.revoked = revoked;
            secrets.addAll(List.of(admin, otherAdmin, read, revoked));
        }
    }

    private Fixture setUp(LifelineLocal local) throws Exception {
        KeyStore keys = new KeyStore(local.dynamo(), local.tables());
        Instant now = Instant.now();
        String otherAdmin = keys.createTeam(OTHER_TEAM, now).key();
        String read = keys.createKey(TEAM, Scope.READ, "fuzz read", now).key();
        KeyStore.NewKey doomed = keys.createKey(TEAM, Scope.AGENT, "fuzz revoked", now);
        keys.revoke(TEAM, doomed.keyId());
        Fixture f = new Fixture(local.adminKey(), otherAdmin, read, doomed.key());
        URI base = local.url();
        ok(call(base, f.admin, "POST", "/v1/teams/local/agents",
                "{\"agentId\":\"fz-a1\",\"name\":\"Fuzz\",\"role\":\"worker\",\"hostId\":\"fz-h1\"}"), 201);
        ok(call(base, f.admin, "POST", "/v1/teams/local/agents",
                "{\"agentId\":\"fz-a2\",\"name\":\"Fuzz 2\",\"role\":\"worker\"}"), 201);
        ok(call(base, f.admin, "POST", "/v1/teams/local/agents/fz-a1/join", null), 200);
        ok(call(base, f.admin, "POST", "/v1/teams/local/tasks", "{\"taskId\":\"fz-t1\",\"title\":\"T\"}"), 201);
        f.realIds.putAll(Map.of("agentId", "fz-a1", "taskId", "fz-t1", "hostId", "fz-h1", "keyId",
                doomed.keyId(), "commandId", "fz-c1", "file", "app.js", "runtime", "claude-code"));
        return f;
    }

    private static void ok(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
    }

    private HttpResponse<String> call(URI base, String key, String method, String path, String body)
            throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).header("Authorization", "Bearer " + key)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    // ---- the generator -------------------------------------------------------------------------------------------

    /** Ids that are never valid: traversal, encodings, unicode tricks, invalid UTF-8, injections, past 64. */
    static final List<String> HOSTILE_IDS = List.of("..", ".", "..%2F..%2Fetc%2Fpasswd", "%2e%2e", "%2e%2e%2f",
            "..%5C..%5Cwindows", "%00", "fz-a1%00", "fz-a1%0A", "%C3%28", "%FF%FE", "%E2%80%AEevil", "fz%E2%80%8Ba1",
            "%EF%BD%81%EF%BD%87", "a%20b", "%25", "%23", "TEAM%23local", "AGENT%23fz-a1", "%27%20OR%201%3D1--",
            "%24%7Bjndi%3Aldap%3A%2F%2Fx%7D", "%3Cscript%3E", "*", "fz-a1%2Fjoin", "%F0%9F%92%80",
            "a".repeat(65), "x".repeat(1000), "%ED%A0%80");

    /**
     * Times the events route must refuse with 400 INVALID_QUERY: outside its 1970..2286 key range (up to the
     * years Instant itself ends at, and past them), or not an ISO-8601 instant; "%2B" is "+", a bare "+" a space.
     */
    static final List<String> HOSTILE_TIMES = List.of("2300-01-01T00:00:00Z", "2286-11-20T17:46:40Z",
            "%2B1000000000-12-31T23:59:59.999999999Z", "+1000000000-01-01T00:00:00Z", "%2B1000000001-01-01T00:00:00Z",
            "-999999999-01-01T00:00:00Z", "-1000000000-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z",
            "1969-01-01T00:00:00Z", "yesterday", "2026-03-01", "2026-03-01T12:00:00", "1700000000000",
            "2026-13-01T00:00:00Z", "2026-03-01T12:00:00Z%00", "%00", "", "now", "2026-03-01T12:00:00Z,x",
            "2026-03-01%2012:00:00Z", "P1D", "-PT1H");

    final class Generator {
        private final Random random;
        private final Fixture f;

        Generator(Random random, Fixture f) {
            this.random = random;
            this.f = f;
        }

        private <T> T pick(List<T> list) {
            return list.get(random.nextInt(list.size()));
        }

        Sent next(Route route) {
            List<String> kinds = new ArrayList<>(List.of("auth", "team", "method"));
            if (!route.ids().isEmpty()) {
                kinds.add("path-id");
                kinds.add("path-id");
                if (!route.path().contains("{file}")) {
                    kinds.add("unknown-id");
                }
            }
            if (route.hasBody()) {
                for (int i = 0; i < 6; i++) {
                    kinds.add("body");
                }
            }
            if (!route.queryParams().isEmpty()) {
                kinds.add("query");
                kinds.add("query");
            }
            String kind = pick(kinds);
            Map<String, String> ids = new LinkedHashMap<>();
            for (String p : route.params()) {
                ids.put(p, p.equals("team") ? TEAM : f.realIds.get(p));
            }
            String key = f.admin;
            String method = route.method();
            String query = route.queryParams().isEmpty() || random.nextInt(4) > 0 ? null
                    : validQuery(pick(route.queryParams()));
            String expect = null;
            byte[] body = route.hasBody() ? Json.write(route.exampleBody()).getBytes(StandardCharsets.UTF_8) : null;
            Map<String, List<String>> headers = new LinkedHashMap<>();
            String sub;
            switch (kind) {
                case "auth" -> {
                    sub = pick(List.of("none", "basic", "empty-bearer", "unknown", "long", "unicode", "revoked",
                            "other-team", "read-scope", "two-keys", "lowercase-scheme-unknown", "no-scheme"));
                    key = switch (sub) {
                        case "none" -> null;
                        case "unknown" -> "ll_" + "A".repeat(43);
                        case "long" -> "ll_" + "b".repeat(200 + random.nextInt(4000));
                        case "unicode" -> "ll_caf\u00e9\u00ff\u00a0";
                        case "revoked" -> f.revoked;
                        case "other-team" -> f.otherAdmin;
                        case "read-scope" -> f.read;
                        default -> f.admin;
                    };
                    if (sub.equals("read-scope") && method.equals("GET")) {
                        key = f.otherAdmin;
                    }
                    switch (sub) {
                        case "basic" -> headers.put("Authorization", List.of("Basic " + Base64.getEncoder()
                                .encodeToString(("admin:" + f.admin).getBytes(StandardCharsets.UTF_8))));
                        case "empty-bearer" -> headers.put("Authorization", List.of("Bearer "));
                        case "two-keys" -> headers.put("Authorization", List.of("Bearer " + f.admin,
                                "Bearer " + f.otherAdmin));
                        case "lowercase-scheme-unknown" -> headers.put("Authorization", List.of("bearer ll_nope"));
                        case "no-scheme" -> headers.put("Authorization", List.of(f.admin));
                        default -> {
                        }
                    }
                    if (headers.containsKey("Authorization")) {
                        key = null;
                    }
                }
                case "team" -> {
                    sub = pick(List.of("other", "hostile", "unknown"));
                    ids.put("team", switch (sub) {
                        case "other" -> OTHER_TEAM;
                        case "unknown" -> "no-such-team";
                        default -> pick(HOSTILE_IDS);
                    });
                    if (route.path().contains("{file}") || !route.params().contains("team")) {
                        method = "PATCH";
                        sub = "no-team-route";
                    }
                }
                case "method" -> {
                    sub = pick(List.of("PATCH", "OPTIONS", "FOO", "PURGE"));
                    method = sub;
                }
                case "path-id" -> {
                    String which = pick(route.ids());
                    ids.put(which, pick(HOSTILE_IDS));
                    sub = which;
                }
                case "unknown-id" -> {
                    String which = pick(route.ids());
                    ids.put(which, "fz-ghost-" + random.nextInt(1_000_000));
                    sub = which;
                }
                case "query" -> {
                    String param = pick(route.queryParams());
                    if (route.queryParams().contains("since") && random.nextBoolean()) {
                        param = pick(List.of("since", "until")); // most of the events route's mutations are times
                    }
                    String value = pick(List.of("-1", "0", "101", "abc", "1e3", "99999999999999999999", "%00",
                            "%E2%80%AE", "", "%FF", "bogus", "1.5", "%20", "a".repeat(300), "1%2C2"));
                    query = param + "=" + value + (random.nextBoolean() ? "" : "&" + param + "=" + value);
                    sub = param;
                    if (param.equals("type") || param.equals("status")) {
                        query = param + "=" + pick(List.of("bogus", "%00", "DEAD", "dead%20", "a".repeat(300)));
                    }
                    if (param.equals("since") || param.equals("until")) {
                        // A hostile time, or since after until (by a millisecond, a day, or across the epoch).
                        query = random.nextInt(4) > 0 ? param + "=" + pick(HOSTILE_TIMES) : pick(List.of(
                                "since=2026-03-01T00:00:00.001Z&until=2026-03-01T00:00:00Z",
                                "until=2026-03-01T00:00:00Z&since=2026-03-02T00:00:00Z",
                                "since=2286-11-20T17:46:39.999Z&until=1970-01-01T00:00:00Z"));
                        if (random.nextBoolean()) {
                            query += "&" + validQuery("limit") + "&" + validQuery("agentId");
                        }
                        expect = "INVALID_QUERY";
                    }
                }
                default -> {
                    // A runtime's hook body is any JSON object by design (unknown fields, any types: only a few names
                    // are read), so only what is not one object, or is deeper or larger than its limits, is hostile.
                    boolean hook = route.path().contains("/hooks/");
                    sub = pick(hook ? List.of("truncated", "malformed", "deep", "not-object", "oversize")
                            : List.of("truncated", "malformed", "wrong-type", "huge-number", "deep", "too-long",
                            "at-limit-plus-unknown", "unicode-id", "lone-surrogate", "invalid-utf8", "duplicate-key",
                            "unknown-field", "missing-field", "not-object", "oversize"));
                    body = hook && sub.equals("oversize") ? hookOversize(route) : hostileBody(route, sub);
                    if (body == null) {
                        sub = "unknown-field";
                        body = withField(route.exampleBody(), "__proto__", Json.object().put("admin", true));
                    }
                }
            }
            if (key != null) {
                headers.put("Authorization", List.of("Bearer " + key));
            }
            if (random.nextInt(5) == 0) {
                String extra = pick(List.of("X-Forwarded-For", "Content-Type", "X-Amz-Date", "Accept", "Cookie",
                        "X-Lifeline-Team", "If-None-Match"));
                headers.put(extra, List.of(pick(List.of("text/plain", "application/x-www-form-urlencoded",
                        "1.2.3.4, 127.0.0.1", "team=" + OTHER_TEAM, "\"W/x\"", "x".repeat(2000), "*/*"))));
            }
            String rawPath = route.path();
            for (Map.Entry<String, String> e : ids.entrySet()) {
                rawPath = rawPath.replace("{" + e.getKey() + "}", e.getValue());
            }
            return new Sent(kind + "/" + sub, method, rawPath + (query == null ? "" : "?" + query), headers, body,
                    expect);
        }

        private String validQuery(String p) {
            return p + "=" + switch (p) {
                case "status" -> "dead";
                case "type" -> "AgentStatusChanged";
                case "since", "until" -> "2026-03-01T12:00:00Z";
                case "agentId" -> f.realIds.get("agentId");
                default -> "5";
            };
        }

        /** A hook body past its own limit (Lambda's 6 MB) and under the gateway's. */
        private byte[] hookOversize(Route route) {
            ObjectNode b = route.exampleBody().deepCopy();
            b.put("tool_response", "p".repeat(Limits.MAX_HOOK_BODY_BYTES + 1 + random.nextInt(100_000)));
            return utf8(Json.write(b));
        }

        /** A body that no handler may accept; null when this kind cannot apply to the route's body. */
        private byte[] hostileBody(Route route, String kind) {
            ObjectNode base = route.exampleBody();
            String text = Json.write(base);
            List<String> fields = new ArrayList<>(route.properties().keySet());
            switch (kind) {
                case "truncated" -> {
                    return utf8(text.substring(0, 1 + random.nextInt(Math.max(1, text.length() - 1))));
                }
                case "malformed" -> {
                    String bad = pick(List.of(text + ",", text + "}", "{" + text, text.replace("\"", "'"),
                            text.replaceFirst("\"(\\w+)\":", "$1:"), "{\"a\":NaN}", text + "//c", "/*c*/" + text,
                            "{\"x\":1,}", "{,}", "{\"x\" 1}", text.replace(":", "="), "\uFEFF{]", "{\"\\u00\":1}",
                            "{\"x\":\"\\q\"}", "{\"x\":01}", "{\"x\":.5}", "{\"x\":+1}", "{\"x\":\"a\nb\"}"));
                    // An empty example survives some rewrites unchanged, and {} is a valid optional body.
                    return utf8(bad.equals(text) ? "{,}" : bad);
                }
                case "not-object" -> {
                    return utf8(pick(List.of("[]", "[" + text + "]", "null", "true", "0", "\"{}\"", "1e999")));
                }
                case "deep" -> {
                    int depth = 65 + random.nextInt(20_000);
                    String field = fields.isEmpty() ? "x" : pick(fields);
                    boolean arrays = random.nextBoolean();
                    return utf8("{\"" + field + "\":" + (arrays ? "[".repeat(depth) + "]".repeat(depth)
                            : "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)) + "}");
                }
                case "duplicate-key" -> {
                    if (base.isEmpty()) {
                        return utf8("{\"reason\":\"a\",\"reason\":\"b\"}");
                    }
                    String f = base.fieldNames().next();
                    return utf8("{\"" + f + "\":" + Json.write(base.get(f)) + "," + text.substring(1));
                }
                case "unknown-field" -> {
                    return withField(base, pick(List.of("__proto__", "constructor", "AgentId", "agentid", "pk", "sk",
                            "status ", "team", "$where", "")), Json.object().put("x", 1));
                }
                case "missing-field" -> {
                    if (route.required().isEmpty()) {
                        return null;
                    }
                    ObjectNode b = base.deepCopy();
                    b.remove(pick(route.required()));
                    return utf8(Json.write(b));
                }
                case "oversize" -> {
                    int size = pick(List.of(Limits.MAX_BODY_BYTES + 1, Limits.MAX_BODY_BYTES + 100, 100_000,
                            1 << 20, GATEWAY_MAX_BODY, GATEWAY_MAX_BODY + 1));
                    if (size >= 1 << 20 && random.nextInt(8) > 0) {
                        size = Limits.MAX_BODY_BYTES + 1 + random.nextInt(50_000);
                    }
                    ObjectNode b = base.deepCopy();
                    String pad = "p".repeat(size);
                    b.put(fields.isEmpty() ? "reason" : pick(fields), pad);
                    return utf8(Json.write(b));
                }
                case "invalid-utf8" -> {
                    byte[] bad = pick(List.of(new byte[] {(byte) 0xC3, 0x28}, new byte[] {(byte) 0xFF},
                            new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, new byte[] {(byte) 0xF8, (byte) 0x88,
                                    (byte) 0x80, (byte) 0x80, (byte) 0x80}, new byte[] {(byte) 0xC0, (byte) 0xAF}));
                    // Outside a string (where no parser may accept it), or as an id's value.
                    String idField = fields.stream().filter(x -> x.endsWith("Id")).findFirst().orElse(null);
                    if (idField != null && random.nextBoolean()) {
                        byte[] prefix = utf8("{\"" + idField + "\":\"a");
                        byte[] suffix = utf8("\"}");
                        return concat(prefix, bad, suffix);
                    }
                    byte[] t = utf8(text);
                    return concat(Arrays.copyOf(t, t.length - 1), bad, utf8("}"));
                }
                default -> {
                    // Field-level kinds: one property of the route's schema gets a hostile value.
                    if (fields.isEmpty()) {
                        return null;
                    }
                    String field = pick(fields);
                    JsonNode schema = route.properties().get(field);
                    return fieldMutation(base, field, schema, kind);
                }
            }
        }

        private byte[] fieldMutation(ObjectNode base, String field, JsonNode schema, String kind) {
            String type = schema.path("type").isArray() ? schema.path("type").get(0).asText()
                    : schema.path("type").asText("");
            ObjectNode b = base.deepCopy();
            switch (kind) {
                case "wrong-type" -> {
                    List<JsonNode> wrong = new ArrayList<>();
                    if (!type.equals("string")) {
                        wrong.add(Json.MAPPER.getNodeFactory().textNode("12"));
                    }
                    if (!type.equals("integer") && !type.equals("number")) {
                        wrong.add(Json.MAPPER.getNodeFactory().numberNode(12));
                    }
                    if (!type.equals("array")) {
                        wrong.add(Json.MAPPER.createArrayNode().add("x"));
                    }
                    if (!type.equals("object")) {
                        wrong.add(Json.object().put("x", "y"));
                    }
                    if (!type.equals("boolean")) {
                        wrong.add(Json.MAPPER.getNodeFactory().booleanNode(true));
                    }
                    b.set(field, pick(wrong));
                    if (schema.has("oneOf") || schema.has("anyOf") || type.isEmpty()) {
                        // A field of several types: add an unknown field too, so the body is invalid regardless.
                        b.put("fz-unknown", 1);
                    }
                }
                case "huge-number" -> {
                    // Out of every numeric field's range, or not an integer, or not representable at all.
                    String n = pick(List.of("1e400", "-1e400", "99999999999999999999999999", "-1", "1.5",
                            "-9223372036854775809", "NaN", "-0.0000001"));
                    String rest = Json.write(without(b, field));
                    return utf8("{\"" + field + "\":" + n + (rest.equals("{}") ? "" : "," + rest.substring(1,
                            rest.length() - 1)) + "}");
                }
                case "too-long" -> {
                    int limit = limitOf(field);
                    b.put(field, "x".repeat(limit + 1 + random.nextInt(limit * 4 + 10)));
                    if (!type.equals("string")) {
                        b.put("fz-unknown", 1);
                    }
                }
                case "at-limit-plus-unknown" -> {
                    b.put(field, "x".repeat(limitOf(field)));
                    b.put("fz-unknown", 1);
                }
                case "unicode-id" -> {
                    String trick = pick(List.of("fz\u202Ea1", "fz\u200Ba1", "ｆｚ-a1", "fz-a\u0301", "\uD83D\uDC80",
                            "fz-a1\u0000", "fz-a1\n", "Ⅸ", "\u0130d"));
                    String idField = route(b, field);
                    b.put(idField, trick);
                    if (!idField.endsWith("Id")) {
                        b.put("fz-unknown", 1);
                    }
                }
                case "lone-surrogate" -> {
                    // A string that is not Unicode text: no stored name or reason may hold one.
                    String text = Json.write(b.put(field, "PLACEHOLDER"));
                    return utf8(text.replace("\"PLACEHOLDER\"", pick(List.of("\"\\ud800\"", "\"a\\udfff\"",
                            "\"\\udc00\\ud800\""))));
                }
                default -> throw new IllegalArgumentException(kind);
            }
            return utf8(Json.write(b));
        }

        private String route(ObjectNode b, String field) {
            for (Iterator<String> it = b.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                if (f.endsWith("Id")) {
                    return f;
                }
            }
            return field;
        }
    }

    private static ObjectNode without(ObjectNode b, String field) {
        ObjectNode c = b.deepCopy();
        c.remove(field);
        return c;
    }

    private static int limitOf(String field) {
        return switch (field) {
            case "name" -> Limits.MAX_NAME_BYTES;
            case "role" -> Limits.MAX_ROLE_BYTES;
            case "schedule" -> Limits.MAX_SCHEDULE_CHARS;
            case "timeZone" -> Limits.MAX_TIME_ZONE_CHARS;
            case "reason" -> Limits.MAX_REASON_CHARS;
            case "title" -> Limits.MAX_TASK_TITLE_CHARS;
            case "message" -> Limits.MAX_ERROR_MESSAGE_CHARS;
            case "description", "result" -> 2048;
            case "metadata" -> Limits.MAX_METADATA_BYTES;
            case "checkpoint" -> Limits.MAX_CHECKPOINT_BYTES;
            default -> 64;
        };
    }

    private static byte[] withField(ObjectNode base, String field, JsonNode value) {
        ObjectNode b = base.deepCopy();
        b.set(field, value);
        return utf8(Json.write(b));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    // ---- sending and judging -------------------------------------------------------------------------------------

    private HttpResponse<String> send(URI base, Sent s) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + s.rawPath())).timeout(Duration.ofSeconds(60))
                .method(s.method(), s.body() == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(s.body()));
        s.headers().forEach((name, values) -> values.forEach(v -> b.header(name, v)));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Null when the answer is a proper refusal (or a GET's answer); else what is wrong with it. */
    static String check(Sent s, HttpResponse<String> r, Set<String> codes, Map<String, AtomicInteger> tally) {
        int status = r.statusCode();
        if (status >= 500) {
            return "answered " + status + ": " + r.body();
        }
        if (s.expect() != null && status != 400) {
            return "expected 400 " + s.expect() + ", answered " + status + ": " + r.body();
        }
        if (status < 400) {
            tally.computeIfAbsent(Integer.toString(status), k -> new AtomicInteger()).incrementAndGet();
            boolean harmlessRead = "GET".equals(s.method()) || "HEAD".equals(s.method());
            return harmlessRead ? null : "an invalid " + s.method() + " was accepted (" + status + "): " + r.body();
        }
        JsonNode body;
        try {
            body = Json.parse(r.body());
        } catch (Exception e) {
            return "answered " + status + " with a body that is not JSON: " + r.body();
        }
        if (s.expect() != null && !s.expect().equals(body.path("code").asText())) {
            return "expected code " + s.expect() + ": " + r.body();
        }
        if (body.has("code")) {
            String code = body.get("code").asText();
            tally.computeIfAbsent(status + " " + code, k -> new AtomicInteger()).incrementAndGet();
            if (!codes.contains(code)) {
                return "unknown code " + code + ": " + r.body();
            }
            if (!body.path("success").isBoolean() || body.get("success").asBoolean()
                    || !body.path("error").isTextual()) {
                return "an error body without success:false and an error sentence: " + r.body();
            }
            return null;
        }
        String message = body.path("message").asText(null);
        tally.computeIfAbsent(status + " gateway", k -> new AtomicInteger()).incrementAndGet();
        if (message == null || !message.equals(GATEWAY_MESSAGES.get(status)) || body.size() != 1) {
            return "neither an error with a code nor one of the gateway's refusals: " + status + " " + r.body();
        }
        return null;
    }

    // ---- the table -----------------------------------------------------------------------------------------------

    static Map<String, Map<String, AttributeValue>> snapshot(DynamoDbClient dynamo) {
        Map<String, Map<String, AttributeValue>> items = new TreeMap<>();
        var tables = new Tables(LifelineLocal.TABLE_PREFIX + "-live", LifelineLocal.TABLE_PREFIX + "-ledger");
        for (String table : List.of(tables.live(), tables.ledger())) {
            dynamo.scanPaginator(s -> s.tableName(table).consistentRead(true)).items()
                    .forEach(i -> items.put(table + " | " + i.get("pk").s() + " | " + i.get("sk").s(), i));
        }
        return items;
    }

    /** Waits until the outbox has caught up: the table the same for a second. */
    static void awaitQuiet(LifelineLocal local) throws InterruptedException {
        Map<String, Map<String, AttributeValue>> last = snapshot(local.dynamo());
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            Map<String, Map<String, AttributeValue>> now = snapshot(local.dynamo());
            if (now.equals(last)) {
                return;
            }
            last = now;
        }
        throw new AssertionError("the table never settled");
    }

    static String difference(Map<String, Map<String, AttributeValue>> before,
                             Map<String, Map<String, AttributeValue>> after) {
        List<String> d = new ArrayList<>();
        before.forEach((k, v) -> {
            if (!after.containsKey(k)) {
                d.add("removed " + k);
            } else if (!after.get(k).equals(v)) {
                d.add("changed " + k + ": " + v + " -> " + after.get(k));
            }
        });
        after.forEach((k, v) -> {
            if (!before.containsKey(k)) {
                d.add("added " + k + ": " + v);
            }
        });
        return String.join("; ", d);
    }
}
