package io.lifeline.local.stack;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.amazonaws.services.lambda.runtime.tests.EventLoader;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LocalRuntime;
import io.lifeline.local.aws.LocalClients;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.LocalQueues;
import io.lifeline.local.aws.LocalStepFunctions;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.aws.asl.HistoryEvent;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.PolicyGuard;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.support.Json;
import io.lifeline.testing.MutableClock;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assertions;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;

/**
 * The functions of template.yaml over fresh tables in the shared engine (in process), behind the local gateway
 * (authorizer included), with a test clock. Requests are real API Gateway v2 events loaded from the
 * fixtures under src/test/resources/apigw, with path, key and body filled in.
 */
public final class TestStack implements AutoCloseable {
    public static final String TEAM = "acme";
    public static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

    /** A response, with the body parsed. */
    public record Reply(int status, Map<String, String> headers, JsonNode body) {
        public String text(String field) {
            JsonNode v = body.get(field);
            return v == null || v.isNull() ? null : v.asText();
        }

        public String code() {
            return text("code");
        }
    }

    public final MutableClock clock;
    public final DynamoDbClient dynamo;
    /** This stack's live and ledger tables (fresh names in the shared engine). */
    public final Tables tables;
    private final LocalTables localTables;
    public final LocalGateway gateway;
    public final StreamPump pump;
    public final FunctionHost host;
    /** The stack's own EventBridge stand-in, with the template's rules. */
    public final LocalEventBus bus;
    /** The template's state machines, run by the ASL interpreter at the stack's clock. */
    public final LocalStepFunctions stepFunctions;
    /** The template's SQS queues (the sweep's clock): nothing is delivered until a test calls deliverDue(). */
    public final LocalQueues queues;
    public final String adminKey;
    /** An operator key (no team; it may only create teams, mint a team's admin key and release the fleet hold). */
    public final String operatorKey;
    private final KeyStore keys;
    private final DynamoDbClient admin;
    private final SamTemplate template;
    private final LocalRuntime runtime;
    private final DynamoDbStreamsClient streams;

    /** Interceptors of the functions' EventBridge client (PutEvents faults at the SDK level). */
    private final List<ExecutionInterceptor> busInterceptors;

    private TestStack(MutableClock clock, List<ExecutionInterceptor> interceptors, Map<String, String> parameters,
                      URI dynamoEndpoint, List<ExecutionInterceptor> busInterceptors, Path templateFile,
                      boolean skipLateSweeps)
            throws Exception {
        this.busInterceptors = List.copyOf(busInterceptors);
        this.clock = clock;
        this.admin = dynamoEndpoint != null ? LocalClients.build(DynamoDbClient.builder(), dynamoEndpoint)
                : SharedDynamo.client();
        this.template = templateFile == null ? template() : SamTemplate.read(templateFile);
        this.localTables = LocalTables.named(template, "t-" + UUID.randomUUID());
        this.tables = localTables.tables();
        localTables.ensure(admin, template);
        if (interceptors.isEmpty()) {
            this.dynamo = admin;
        } else if (dynamoEndpoint != null) {
            this.dynamo = LocalClients.build(DynamoDbClient.builder()
                    .overrideConfiguration(c -> interceptors.forEach(c::addExecutionInterceptor)), dynamoEndpoint);
        } else {
            this.dynamo = Intercepted.around(admin, interceptors);
        }
        this.streams = dynamoEndpoint != null ? LocalClients.build(DynamoDbStreamsClient.builder(), dynamoEndpoint)
                : SharedDynamo.streams();
        // No background tick: tests move the clock and call stepFunctions.runDue() themselves.
        this.runtime = LocalRuntime.builder().template(template).tables(dynamo, localTables)
                .busName("bus-" + tables.live())
                .clock(clock).parameters(parameters).stepFunctions(1.0, false)
                .streams(streams, localTables.streamArn(admin), null)
                .busClient(this::busClient).skipLateSweeps(skipLateSweeps).build();
        this.bus = runtime.bus;
        this.host = runtime.host;
        hosts.add(host);
        this.stepFunctions = runtime.stepFunctions;
        this.queues = runtime.queues;
        this.gateway = runtime.gateway;
        this.pump = runtime.pump;
        this.keys = new KeyStore(admin, tables);
        this.adminKey = keys.createTeam(TEAM, clock.instant()).key();
        this.operatorKey = keys.createOperatorKey("test", clock.instant()).key();
    }

    public static TestStack start() throws Exception {
        return builder().build();
    }

    /**
     * The stacks a test class opens as it goes (each with its own clock or faults), closed together by the class's
     * {@code @AfterAll}: a stack's close fails on a call its functions' policies do not allow.
     */
    public static final class Opened {
        private final List<TestStack> stacks = Collections.synchronizedList(new ArrayList<>());

        public TestStack open(Builder builder) throws Exception {
            TestStack s = builder.build();
            stacks.add(s);
            return s;
        }

        public TestStack open() throws Exception {
            return open(builder());
        }

        public void closeAll() {
            stacks.forEach(TestStack::close);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The repo's template.yaml (the build passes its path), as Local reads it. */
    public static SamTemplate template() throws Exception {
        return SamTemplate.read(templatePath());
    }

    /** Where the repo's template.yaml is, for tests that read parts Local does not model (input transformers). */
    public static Path templatePath() {
        return Path.of(System.getProperty("lifeline.template", "../../template.yaml"));
    }

    /**
     * The template's functions instantiated afresh over this stack's table, bus and clock, as a new Lambda
     * container would be: nothing remembered from earlier invocations (the publisher's sent ids included).
     */
    /** The template's generated secrets as this stack made them (what the webhooks send in X-Lifeline-Token). */
    public Map<String, String> secrets() {
        return runtime.secrets;
    }

    public FunctionHost freshHost() {
        FunctionHost fresh = runtime.newHost();
        hosts.add(fresh);
        return fresh;
    }

    /** Every host this stack made: {@link #close} fails when a function made a call its policy does not allow. */
    private final List<FunctionHost> hosts = new CopyOnWriteArrayList<>();

    /** The functions' PutEvents client, with the stack's bus interceptors when it has any. */
    private EventBridgeClient busClient(LocalEventBus bus) {
        return busInterceptors.isEmpty() ? bus.client()
                : LocalClients.build(EventBridgeClient.builder()
                        .overrideConfiguration(c -> busInterceptors.forEach(c::addExecutionInterceptor)),
                        bus.endpoint());
    }

    public static final class Builder {
        private MutableClock clock = new MutableClock(START);
        private final List<ExecutionInterceptor> interceptors = new ArrayList<>();
        private final List<ExecutionInterceptor> busInterceptors = new ArrayList<>();
        private final Map<String, String> parameters = new HashMap<>();
        private URI dynamoEndpoint;
        private Path templateFile;
        private boolean skipLateSweeps = true;

        /** Another template than the repo's (a test's variant of it). */
        public Builder template(Path file) {
            templateFile = file;
            return this;
        }

        public Builder interceptor(ExecutionInterceptor i) {
            interceptors.add(i);
            return this;
        }

        /** An interceptor on the functions' EventBridge client (the publisher's PutEvents). */
        public Builder busInterceptor(ExecutionInterceptor i) {
            busInterceptors.add(i);
            return this;
        }

        public Builder parameter(String name, String value) {
            parameters.put(name, value);
            return this;
        }

        /** Local's late-sweep rule (on by default); false sweeps as the Lambda runtime does: every sweep judges. */
        public Builder skipLateSweeps(boolean skip) {
            skipLateSweeps = skip;
            return this;
        }

        /** Runs against another DynamoDB (LocalStack) instead of the shared engine. */
        public Builder dynamoEndpoint(URI endpoint) {
            dynamoEndpoint = endpoint;
            return this;
        }

        public Builder clock(MutableClock c) {
            clock = c;
            return this;
        }

        public TestStack build() throws Exception {
            return new TestStack(clock, interceptors, parameters, dynamoEndpoint, busInterceptors, templateFile,
                    skipLateSweeps);
        }
    }

    public KeyStore keys() {
        return keys;
    }

    /** A new key of {@code team} (created if need be) with {@code scope}. */
    public String key(String team, Scope scope) {
        if (!keys.teamExists(team)) {
            String admin = keys.createTeam(team, clock.instant()).key();
            if (scope == Scope.ADMIN) {
                return admin;
            }
        }
        return keys.createKey(team, scope, "test", clock.instant()).key();
    }

    // ---- requests through real API Gateway v2 fixtures -------------------------------------------------

    /** Sends the fixture {@code route} with the path parameters, key, query and body given. */
    public Reply send(String route, String key, Map<String, String> path, Map<String, String> query, String body) {
        LocalGateway.Response r = raw(route, key, path, query, body);
        try {
            return new Reply(r.status(), r.headers(), Json.parse(r.body()));
        } catch (Exception e) {
            throw new IllegalStateException("not JSON: " + r.body(), e);
        }
    }

    /** Like {@link #send}, the request coming from {@code sourceIp} (its {@code requestContext.http.sourceIp}). */
    public Reply sendFrom(String sourceIp, String route, String key, Map<String, String> path, String body) {
        LocalGateway.Response r = raw(sourceIp, route, key, path, null, body);
        try {
            return new Reply(r.status(), r.headers(), Json.parse(r.body()));
        } catch (Exception e) {
            throw new IllegalStateException("not JSON: " + r.body(), e);
        }
    }

    /** Like {@link #send}, but the response exactly as the client receives it (to compare answers byte for byte). */
    public LocalGateway.Response raw(String route, String key, Map<String, String> path, Map<String, String> query,
                                     String body) {
        return raw(null, route, key, path, query, body);
    }

    /**
     * Like {@link #send}, through {@code via}: a gateway over another {@link #freshHost()}, whose functions are other
     * execution environments of the same deployment (their own memory, the same tables).
     */
    public Reply sendVia(LocalGateway via, String route, String key, Map<String, String> path, String body) {
        LocalGateway.Response r = raw(via, null, route, key, path, null, body);
        try {
            return new Reply(r.status(), r.headers(), Json.parse(r.body()));
        } catch (Exception e) {
            throw new IllegalStateException("not JSON: " + r.body(), e);
        }
    }

    private LocalGateway.Response raw(String sourceIp, String route, String key, Map<String, String> path,
                                      Map<String, String> query, String body) {
        return raw(gateway, sourceIp, route, key, path, query, body);
    }

    private static LocalGateway.Response raw(LocalGateway via, String sourceIp, String route, String key,
                                             Map<String, String> path, Map<String, String> query, String body) {
        APIGatewayV2HTTPEvent event = EventLoader.loadApiGatewayHttpEvent("apigw/" + route + ".json");
        if (sourceIp != null) {
            event.getRequestContext().getHttp().setSourceIp(sourceIp);
        }
        Map<String, String> params = new LinkedHashMap<>(event.getPathParameters() == null ? Map.of()
                : event.getPathParameters());
        params.putAll(path);
        String raw = event.getRouteKey().substring(event.getRouteKey().indexOf(' ') + 1);
        for (Map.Entry<String, String> p : params.entrySet()) {
            raw = raw.replace("{" + p.getKey() + "}", p.getValue());
        }
        event.setPathParameters(params.isEmpty() ? null : params);
        event.setRawPath(raw);
        event.getRequestContext().getHttp().setPath(raw);
        event.getRequestContext().setRequestId(UUID.randomUUID().toString());
        event.getRequestContext().setAuthorizer(null);
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        if (key == null) {
            headers.remove("authorization");
        } else {
            headers.put("authorization", "Bearer " + key);
        }
        event.setHeaders(headers);
        event.setQueryStringParameters(query == null || query.isEmpty() ? null : query);
        event.setBody(body);
        return via.invoke(event);
    }

    /** A request of the admin key on team {@link #TEAM}, for routes with an agent id. */
    public Reply agent(String route, String agentId, String body) {
        return send(route, adminKey, Map.of("team", TEAM, "agentId", agentId), null, body);
    }

    public Reply team(String route, String body) {
        return send(route, adminKey, Map.of("team", TEAM), null, body);
    }

    /** A request of the admin key on team {@link #TEAM}, for routes with a task id. */
    public Reply task(String route, String taskId, String body) {
        return send(route, adminKey, Map.of("team", TEAM, "taskId", taskId), null, body);
    }

    public Reply register(String agentId) {
        return team("register", "{\"agentId\":\"" + agentId + "\",\"name\":\"Agent " + agentId
                + "\",\"role\":\"worker\",\"hostId\":\"host-1\"}");
    }

    /** Registers and joins: the agent ends ready. */
    public Reply ready(String agentId) {
        register(agentId);
        return agent("join", agentId, null);
    }

    public Reply heartbeat(String agentId, String body) {
        return agent("heartbeat", agentId, body);
    }

    /** Runs one sweep now (the template's SweepFunction, invoked as its schedule would); the ids marked dead. */
    @SuppressWarnings("unchecked")
    public List<String> sweep() {
        RequestHandler<ScheduledEvent,
                List<String>> sweep = host.handler("SweepFunction");
        return sweep.handleRequest(new ScheduledEvent(),
                new LocalContext("SweepFunction", UUID.randomUUID().toString()));
    }

    public Reply createTask(String taskId) {
        return team("create-task", "{\"taskId\":\"" + taskId + "\",\"title\":\"Task " + taskId + "\"}");
    }

    /** The agent's history as the API answers it (newest first, at most {@code limit}, 1..100). */
    public List<JsonNode> transitions(String agentId, int limit) {
        Reply r = send("transitions", adminKey, Map.of("team", TEAM, "agentId", agentId),
                Map.of("limit", Integer.toString(limit)), null);
        if (r.status() != 200) {
            throw new IllegalStateException("GET transitions answered " + r.status() + ": " + r.body());
        }
        List<JsonNode> out = new ArrayList<>();
        r.body().get("transitions").forEach(out::add);
        return out;
    }

    // ---- helpers the tests share -----------------------------------------------------------------------

    /** A fresh id, {@code prefix-xxxxxxxx}: tests that share one stack each work on agents of their own. */
    public static String newId(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Passes {@code r} on after checking it is a 2xx answer. */
    public static Reply ok(Reply r) {
        if (r.status() / 100 != 2) {
            throw new AssertionError("expected a 2xx answer, got " + r.status() + " " + r.body());
        }
        return r;
    }

    /**
     * Moves the clock by {@code d} and runs the state machine steps that came due, as the cloud's scheduler
     * would ({@code clock.advance} alone leaves them waiting).
     */
    public void advanceAndRunDue(Duration d) {
        clock.advance(d);
        stepFunctions.runDue();
    }

    /** The agent as GET agent answers it (which must be a 2xx). */
    public JsonNode agentView(String agentId) {
        return ok(agent("get-agent", agentId, null)).body();
    }

    /** The agent's status as GET agent answers it. */
    public String status(String agentId) {
        return agentView(agentId).get("status").asText();
    }

    /** The state machine executions started for the agent (their input's agentId). */
    public List<Execution> executionsFor(String agentId) {
        return stepFunctions.executions().stream().filter(e -> agentId.equals(e.input().path("agentId").asText()))
                .toList();
    }

    /** The names of the states the execution entered, in order. */
    /**
     * The agent (on host-1) reports a crash; the outbox starts its revive flow, whose first step makes it
     * restarting and asks the host. Answers that flow, which then waits for a wake-up only the test can give.
     */
    public Execution restartingAfterACrash(String agentId) {
        ok(ready(agentId));
        Execution flow = dies(agentId);
        Assertions.assertEquals("restarting", status(agentId));
        return flow;
    }

    /** The agent reports a failure (ready -> dead), the outbox runs: the death starts one revive flow, returned. */
    public Execution dies(String agentId) {
        ok(agent("fail", agentId, "{\"reason\":\"oom\"}"));
        pump.drain();
        List<Execution> flows = executionsFor(agentId);
        Assertions.assertEquals(1, flows.size(), () -> "one revive flow for the death of " + agentId + ": " + flows);
        return flows.get(0);
    }

    public static List<String> statesEntered(Execution e) {
        return e.history().stream().filter(h -> h.type().equals("StateEntered")).map(HistoryEvent::state).toList();
    }

    /** The partition key of an agent's own items on {@link #TEAM} (its transition records, its data). */
    public static String agentPartition(String agentId) {
        return "TEAM#" + TEAM + "#AGENT#" + agentId;
    }

    // ---- direct store access for setup and inspection ------------------------------------------------

    /**
     * An item by its key, from the table that holds it: agent, team and host lease items on the live table, the rest
     * on the ledger.
     */
    public Map<String, AttributeValue> item(String pk, String sk) {
        String table = "AGENT".equals(sk) || "TEAM".equals(sk) || "HOST".equals(sk) || "FLEET".equals(sk) ? tables.live() : tables.ledger();
        return dynamo.getItem(g -> g.tableName(table).consistentRead(true)
                .key(Map.of("pk", AttributeValue.fromS(pk), "sk", AttributeValue.fromS(sk)))).item();
    }

    /** An agent of {@link #TEAM}'s live item. */
    public Map<String, AttributeValue> agentItem(String agentId) {
        return agentItem(TEAM, agentId);
    }

    public Map<String, AttributeValue> agentItem(String team, String agentId) {
        return item("TEAM#" + team + "#AGENT#" + agentId, "AGENT");
    }

    /** Test setup only: puts an agent straight into {@code status}, as if earlier transitions had happened. */
    public void forceStatus(String agentId, String status) {
        dynamo.updateItem(u -> u.tableName(tables.live())
                .key(Map.of("pk", AttributeValue.fromS(agentPartition(agentId)), "sk", AttributeValue.fromS("AGENT")))
                .updateExpression("SET #s = :s")
                .expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(status))));
    }

    /**
     * The transition records the outbox has written for the agent, oldest first, read straight from the
     * table (unlike GET transitions, which also shows the item's newest stamp before the outbox catches up).
     */
    public List<Map<String, AttributeValue>> recordedTransitions(String agentId) {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        dynamo.queryPaginator(q -> q.tableName(tables.ledger()).consistentRead(true)
                .keyConditionExpression("pk = :pk AND begins_with(sk, :t)")
                .expressionAttributeValues(Map.of(":pk", AttributeValue.fromS(agentPartition(agentId)),
                        ":t", AttributeValue.fromS("T#"))))
                .items().forEach(items::add);
        return items;
    }

    /** The ARN of this stack's live table stream, for a second {@link StreamPump} over the same records. */
    public String streamArn() {
        return localTables.streamArn(admin);
    }

    /** Every item in this stack's two tables; for tests that check nothing was written. */
    public List<Map<String, AttributeValue>> allItems() {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        for (String table : List.of(tables.live(), tables.ledger())) {
            dynamo.scanPaginator(s -> s.tableName(table).consistentRead(true)).items().forEach(items::add);
        }
        return items;
    }

    /**
     * Runs a request that must be refused and checks that it changed no item of the table (a
     * rejected request writes nothing). Call it with the outbox drained or not, but do not
     * drain inside {@code request}.
     */
    public Reply writesNothing(Supplier<Reply> request) {
        Set<Map<String, AttributeValue>> before = new HashSet<>(allItems());
        Reply reply = request.get();
        Set<Map<String, AttributeValue>> after = new HashSet<>(allItems());
        if (!before.equals(after)) {
            Set<Map<String, AttributeValue>> added = new HashSet<>(after);
            added.removeAll(before);
            Set<Map<String, AttributeValue>> removed = new HashSet<>(before);
            removed.removeAll(after);
            throw new AssertionError("a refused request (" + reply.status() + " " + reply.body()
                    + ") changed the table; now there: " + added + "; gone: " + removed);
        }
        return reply;
    }

    @Override
    public void close() {
        runtime.close();
        localTables.delete(admin);
        if (dynamo != admin) {
            dynamo.close();
        }
        admin.close();
        streams.close();
        if (!allowDenials) {
            List<PolicyGuard.Call> denied = hosts.stream().flatMap(h -> h.policies().denied().stream()).toList();
            if (!denied.isEmpty()) {
                throw new AssertionError("calls that the functions' policies in template.yaml do not allow "
                        + "(AWS would refuse them): " + denied);
            }
        }
    }

    private boolean allowDenials;

    /** For tests that provoke a denial on purpose: {@link #close} then does not fail on it. */
    public TestStack expectingDenials() {
        allowDenials = true;
        return this;
    }
}
