package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.lifeline.api.HeartbeatHandler;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Figure 3: heartbeats per second and latency through Lifeline Local's HTTP front door (java.net.http clients)
 * and through the heartbeat handler called in-process, each against bare conditional UpdateItem calls on the
 * same DynamoDB Local in the same run. One agent per client thread, so no two threads write one item.
 */
public final class ThroughputBench {

    /** One run: ops/s and latency percentiles in ms. */
    public record Result(String name, int threads, int ops, double perSecond, double p50, double p99) {
    }

    interface Beat {
        void beat(int thread) throws Exception;
    }

    private ThroughputBench() {
    }

    static void run(Report report, int threads, int totalOps, Measured measured) throws Exception {
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(),
                Map.of(), Clock.systemUTC()))) {
            HttpClient[] clients = new HttpClient[threads];
            for (int i = 0; i < threads; i++) {
                clients[i] = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            }
            String base = local.url().toString();
            String key = local.adminKey();
            for (String prefix : new String[] {"http", "inproc", "bare"}) {
                for (int i = 0; i < threads; i++) {
                    String id = prefix + "-" + i;
                    expect(201, post(clients[0], base + "/v1/teams/local/agents", key,
                            "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}"));
                    expect(200, post(clients[0], base + "/v1/teams/local/agents/" + id + "/join", key, ""));
                }
            }
            DynamoDbClient dynamo = local.dynamo();
            Map<String, String> env = new HashMap<>();
            env.put("LIVE_TABLE", local.tables().live());
            env.put("LEDGER_TABLE", local.tables().ledger());
            HeartbeatHandler handler = new HeartbeatHandler(new Wiring(Config.fromEnvironment(env), Clock.systemUTC(),
                    dynamo));
            Beat http = t -> expect(200, post(clients[t], base + "/v1/teams/local/agents/http-" + t + "/heartbeat",
                    key, "{}"));
            Beat inproc = t -> {
                APIGatewayV2HTTPResponse r = handler.handleRequest(event("inproc-" + t), null);
                if (r.getStatusCode() != 200) {
                    throw new IllegalStateException("in-process heartbeat answered " + r.getStatusCode() + r.getBody());
                }
            };
            Beat bare = t -> bareUpdate(dynamo, "bare-" + t);
            int warm = Math.max(200, totalOps / 5);
            for (Beat b : List.of(bare, inproc, http)) {
                measure("warm-up", b, threads, warm);
            }
            Result bare1 = measure("bare UpdateItem", bare, threads, totalOps);
            Result in = measure("handler in-process", inproc, threads, totalOps);
            Result web = measure("HTTP front door", http, threads, totalOps);
            Result bare2 = measure("bare UpdateItem", bare, threads, totalOps);
            Result single = measure("handler in-process, 1 thread", inproc, 1, Math.max(300, totalOps / 4));
            Result bareSingle = measure("bare UpdateItem, 1 thread", bare, 1, Math.max(300, totalOps / 4));
            double bareRate = (bare1.perSecond() + bare2.perSecond()) / 2;
            double bareP50 = (bare1.p50() + bare2.p50()) / 2;
            double bareP99 = (bare1.p99() + bare2.p99()) / 2;
            String ref = "bare cond. UpdateItem (" + threads + " thr)";
            report.add("3", "in-process handler: heartbeats/s (" + threads + " threads)", in.perSecond(), "1/s", ref,
                    bareRate, ">= 0.8x", in.perSecond() >= 0.8 * bareRate);
            report.add("3", "in-process handler: p50 latency", in.p50(), "ms", ref, bareP50, null, null);
            report.add("3", "in-process handler: p99 latency", in.p99(), "ms", ref, bareP99, null, null);
            report.add("3", "HTTP front door: heartbeats/s (" + threads + " clients)", web.perSecond(), "1/s", ref,
                    bareRate, ">= 0.5x", web.perSecond() >= 0.5 * bareRate);
            report.add("3", "HTTP front door: p50 latency", web.p50(), "ms", ref, bareP50, null, null);
            report.add("3", "HTTP front door: p99 latency", web.p99(), "ms", ref, bareP99, null, null);
            report.add("3", "in-process handler, 1 thread: p50 latency", single.p50(), "ms",
                    "bare UpdateItem, 1 thread", bareSingle.p50(), null, null);
            measured.handlerWarmMillis = single.p50();
            var d = report.details().putArray("throughput");
            for (Result r : List.of(bare1, in, web, bare2, single, bareSingle)) {
                d.add(Json.MAPPER.valueToTree(r));
            }
        }
    }

    static APIGatewayV2HTTPEvent event(String agentId) {
        String path = "/v1/teams/local/agents/" + agentId + "/heartbeat";
        return APIGatewayV2HTTPEvent.builder().withVersion("2.0")
                .withRouteKey("POST /v1/teams/{team}/agents/{agentId}/heartbeat").withRawPath(path)
                .withHeaders(Map.of("content-type", "application/json"))
                .withPathParameters(Map.of("team", "local", "agentId", agentId)).withBody("{}")
                .withIsBase64Encoded(false)
                .withRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder()
                        .withRouteKey("POST /v1/teams/{team}/agents/{agentId}/heartbeat")
                        .withRequestId("bench").withTimeEpoch(System.currentTimeMillis())
                        .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod("POST")
                                .withPath(path).build())
                        .withAuthorizer(APIGatewayV2HTTPEvent.RequestContext.Authorizer.builder()
                                .withLambda(new HashMap<>(Map.of("team", "local", "scope", "admin", "keyId", "bench")))
                                .build())
                        .build())
                .build();
    }

    /** What a heartbeat's write is at its core: one conditional UpdateItem on the agent item. */
    static void bareUpdate(DynamoDbClient dynamo, String agentId) {
        long now = System.currentTimeMillis();
        dynamo.updateItem(u -> u.tableName(LifelineLocal.TABLE_PREFIX + "-live")
                .key(Map.of("pk", AttributeValue.fromS("TEAM#local#AGENT#" + agentId), "sk", AttributeValue.fromS("AGENT")))
                .updateExpression("SET hbAt = :now, deadline = :d, misses = :zero ADD beats :one")
                .conditionExpression("#s IN (:ready, :working)")
                .expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":now", AttributeValue.fromN(Long.toString(now)),
                        ":d", AttributeValue.fromN(Long.toString(now + 60_000)), ":zero", AttributeValue.fromN("0"),
                        ":one", AttributeValue.fromN("1"), ":ready", AttributeValue.fromS("ready"),
                        ":working", AttributeValue.fromS("working"))));
    }

    static Result measure(String name, Beat beat, int threads, int totalOps) throws Exception {
        int each = totalOps / threads;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<long[]>> parts = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                parts.add(pool.submit((Callable<long[]>) () -> {
                    long[] lat = new long[each];
                    for (int i = 0; i < each; i++) {
                        long s = System.nanoTime();
                        beat.beat(thread);
                        lat[i] = System.nanoTime() - s;
                    }
                    return lat;
                }));
            }
            long[] all = new long[each * threads];
            int k = 0;
            for (Future<long[]> f : parts) {
                long[] l = f.get();
                System.arraycopy(l, 0, all, k, l.length);
                k += l.length;
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Arrays.sort(all);
            Result r = new Result(name, threads, all.length, all.length / seconds, pct(all, 0.50), pct(all, 0.99));
            if (!name.equals("warm-up")) {
                System.out.printf("  %-32s %8.0f/s  p50 %6.2f ms  p99 %6.2f ms%n", name, r.perSecond(), r.p50(),
                        r.p99());
            }
            return r;
        } finally {
            pool.shutdownNow();
        }
    }

    static double pct(long[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    static HttpResponse<String> post(HttpClient client, String url, String key, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static void expect(int status, HttpResponse<String> r) {
        if (r.statusCode() != status) {
            throw new IllegalStateException(r.uri() + " answered " + r.statusCode() + ": " + r.body());
        }
    }
}
