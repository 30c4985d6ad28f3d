package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.engine.Engine;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What a heartbeat costs to watch, measured from the handlers' real output: log bytes a beat written by
 * the heartbeat function (and, on the HTTP API path, by the authorizer), key look-ups (GetItems) a beat, through
 * the Function URL and through the HTTP API, one agent and a daemon's batch of 25, at 30 s beats on a test clock
 * (counts, never times). Then the observability and ingress lines per agent-month those figures price at, for
 * the cost model (BENCHMARKS.md section 6, "Observability and ingress, measured"). Lambda's platform lines are 0 a
 * beat under the template's SystemLogLevel WARN (START/END/REPORT are INFO); traces are 0 under the default
 * HeartbeatTracing PassThrough; both are printed with the figure they would have at INFO / Active.
 *
 * <p>Run: {@code java -cp bench/target/... io.lifeline.bench.ObservabilityBench} (after {@code mvn package}).
 */
public final class ObservabilityBench {
    /** Published prices (us-east-1), beside bench/prices.json's: CloudWatch Logs ingestion, X-Ray traces. */
    public static final double LOGS_INGEST_PER_GB = 0.50;
    public static final double XRAY_TRACES_PER_MILLION = 5.00;
    public static final double API_GATEWAY_HTTP_PER_MILLION = 1.00;
    public static final double LAMBDA_PER_MILLION = 0.20;
    public static final double DYNAMO_READ_UNITS_PER_MILLION = 0.125;
    /** Lambda's START, END and REPORT lines of one invocation in plain text (the estimate, INFO level). */
    public static final int PLATFORM_BYTES_AT_INFO = 300;
    public static final double SECONDS_PER_MONTH = 30 * 86_400.0;

    /** One path's measured figures, per beat. */
    public record Figures(String path, int agentsPerRequest, int beats, double logBytesPerBeat,
                          double authorizerLogBytesPerBeat, double keyLookupsPerBeat) {
    }

    /** The priced lines per agent-month at {@code beatSeconds}. */
    public record Lines(double ingress, double lambdaRequests, double logs, double keyLookups, double traces,
                        double total) {
    }

    /** A clock the bench moves itself. */
    static final class SteppingClock extends Clock {
        private volatile Instant now;

        SteppingClock(Instant start) {
            now = start;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /**
     * Prices one path's figures: requests = beats / agents per request; ingress at API Gateway's price or none
     * (URL); Lambda requests for the heartbeat function (and the authorizer once per key and 300 s on the API path);
     * log bytes at CloudWatch Logs' ingestion price; key look-ups as eventually consistent GetItems (half a read unit).
     */
    public static Lines price(Figures f, double beatSeconds, boolean viaUrl, double tracedShare) {
        double beats = SECONDS_PER_MONTH / beatSeconds;
        double requests = beats / f.agentsPerRequest();
        double ingress = viaUrl ? 0 : requests * API_GATEWAY_HTTP_PER_MILLION / 1e6;
        double authorizerRuns = viaUrl ? 0 : SECONDS_PER_MONTH / 300.0 / f.agentsPerRequest();
        double lambda = (requests + authorizerRuns) * LAMBDA_PER_MILLION / 1e6;
        double logs = beats * (f.logBytesPerBeat() + f.authorizerLogBytesPerBeat()) / 1e9 * LOGS_INGEST_PER_GB;
        double keys = beats * f.keyLookupsPerBeat() * 0.5 * DYNAMO_READ_UNITS_PER_MILLION / 1e6;
        double traces = requests * tracedShare * XRAY_TRACES_PER_MILLION / 1e6;
        return new Lines(ingress, lambda, logs, keys, traces, ingress + lambda + logs + keys + traces);
    }

    /** Runs {@code beats} heartbeats of {@code agents} agents (batched when more than one) through one path. */
    static Figures measure(DynamoDbClient store, boolean viaUrl, int agents, int beats) throws Exception {
        SteppingClock clock = new SteppingClock(Instant.parse("2026-03-01T00:00:00Z"));
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        try (MeteredStack stack = new MeteredStack(store, "obs-" + (viaUrl ? "url" : "api") + "-" + agents,
                Map.of(), clock)) {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < agents; i++) {
                ids.add("a" + i);
                stack.readyAgent("a" + i);
            }
            String base = viaUrl ? LocalGateway.urlPath(LifelineLocal.HEARTBEAT_URL_FUNCTION) : "";
            String path = agents == 1 ? base + stack.agentPath("a0") + "/heartbeat"
                    : base + "/v1/teams/" + MeteredStack.TEAM + "/heartbeats";
            StringBuilder batch = new StringBuilder("{\"heartbeats\":[");
            for (int i = 0; i < agents; i++) {
                batch.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(ids.get(i)).append("\"}");
            }
            String body = agents == 1 ? "{}" : batch.append("]}").toString();
            stack.meter.reset();
            Log.sink(lines::add);
            try {
                for (int sent = 0; sent < beats; sent += agents) {
                    clock.advance(Duration.ofSeconds(30));
                    stack.expect(200, "POST", path, body);
                }
            } finally {
                Log.sink(null);
            }
            long heartbeatBytes = 0;
            long authorizerBytes = 0;
            for (String l : lines) {
                long n = l.getBytes(StandardCharsets.UTF_8).length + 1L;
                if ("authorize".equals(Json.parse(l).path("msg").asText())) {
                    authorizerBytes += n;
                } else {
                    heartbeatBytes += n;
                }
            }
            int getItems = stack.meter.totals().byOperation().getOrDefault("GetItem", 0);
            // On the API path the authorizer's GetItem is its own; on the URL path the handler's key cache makes it.
            return new Figures(viaUrl ? "Function URL" : "HTTP API", agents, beats, (double) heartbeatBytes / beats,
                    (double) authorizerBytes / beats, (double) getItems / beats);
        }
    }

    /**
     * The figures the cost model takes from the functions' real output: log bytes a beat on each path for 1, 10 and
     * 25 agents a request ({@code beats} beats each), and the line of a sweep that found nothing to do (0 agents).
     */
    static Measures measures(double heartbeatMillis, int beats) throws Exception {
        DynamoDbClient store = new Engine(Clock.systemUTC()).client();
        Map<String, BeatLog> logs = new LinkedHashMap<>();
        for (int agents : new int[] {1, 10, 25}) {
            for (boolean url : new boolean[] {true, false}) {
                Figures f = measure(store, url, agents, beats);
                logs.put((url ? "url/" : "api/") + agents, new BeatLog(f.logBytesPerBeat(),
                        f.authorizerLogBytesPerBeat()));
            }
        }
        return new Measures(heartbeatMillis, idleSweepLineBytes(store), logs);
    }

    /**
     * The bytes of the line a scheduled sweep of an empty deployment writes (the template's SweepFunction on Local,
     * with a request id as long as Lambda's), as CloudWatch Logs ingests it: UTF-8 plus a newline.
     */
    static double idleSweepLineBytes(DynamoDbClient store) throws Exception {
        SteppingClock clock = new SteppingClock(Instant.parse("2026-03-01T00:00:00Z"));
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        try (MeteredStack stack = new MeteredStack(store, "obs-sweep", Map.of(), clock)) {
            RequestHandler<
                    ScheduledEvent, List<String>> sweep =
                    stack.handler("SweepFunction");
            Log.sink(lines::add);
            try {
                sweep.handleRequest(new ScheduledEvent(),
                        new LocalContext("SweepFunction", UUID.randomUUID().toString()));
            } finally {
                Log.sink(null);
            }
        }
        List<String> sweeps = lines.stream().filter(l -> l.contains("\"msg\":\"sweep\"")).toList();
        if (sweeps.size() != 1) {
            throw new IllegalStateException("one sweep line expected: " + lines);
        }
        return sweeps.get(0).getBytes(StandardCharsets.UTF_8).length + 1;
    }

    public static void main(String[] args) throws Exception {
        int beats = 1_000;
        DynamoDbClient store = new Engine(Clock.systemUTC()).client();
        List<Figures> all = List.of(measure(store, true, 1, beats), measure(store, false, 1, beats),
                measure(store, true, 25, beats), measure(store, false, 25, beats));
        System.out.println("Observability and ingress, measured (1 key, 30 s beats, 300 s summary, WARN system logs)");
        System.out.printf("%-14s %6s %12s %12s %12s%n", "path", "batch", "log B/beat", "auth B/beat", "GetItem/beat");
        for (Figures f : all) {
            System.out.printf("%-14s %6d %12.1f %12.1f %12.5f%n", f.path(), f.agentsPerRequest(), f.logBytesPerBeat(),
                    f.authorizerLogBytesPerBeat(), f.keyLookupsPerBeat());
        }
        System.out.println();
        System.out.println("$ per agent-month at 30 s (ingress, Lambda requests, logs, key look-ups, traces = total)");
        for (Figures f : all) {
            boolean url = f.path().equals("Function URL");
            print(f.path() + " x" + f.agentsPerRequest() + " (tracing off)", price(f, 30, url, 0));
        }
        Figures single = all.get(0);
        Figures platform = new Figures("platform lines at INFO", 1, beats,
                single.logBytesPerBeat() + PLATFORM_BYTES_AT_INFO, 0, single.keyLookupsPerBeat());
        print("URL x1, SystemLogLevel INFO", price(platform, 30, true, 0));
        // Lambda's Active sampling: the first request a second and 5 % of the rest; one agent at 30 s is always
        // the first of its second, so every beat is traced.
        print("URL x1, HeartbeatTracing Active", price(single, 30, true, 1.0));
    }

    private static void print(String what, Lines l) {
        System.out.printf("  %-34s %.4f + %.4f + %.4f + %.6f + %.4f = %.4f%n", what, l.ingress(), l.lambdaRequests(),
                l.logs(), l.keyLookups(), l.traces(), l.total());
    }

    private ObservabilityBench() {
    }
}
