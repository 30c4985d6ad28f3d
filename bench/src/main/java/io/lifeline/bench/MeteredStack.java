package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LocalRuntime;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.support.Json;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The template's functions behind Local's gateway (authorizer and its cache included), over a fresh table in the
 * store the caller gives (its client, which stays the caller's), with every request the functions make going
 * through a {@link CapacityMeter}.
 */
public final class MeteredStack implements AutoCloseable {
    public static final String TEAM = "bench";

    /** The store's client, unmetered: set-up and seeding. */
    public final DynamoDbClient plain;
    /** The client the functions use: every request counted by {@link #meter}. */
    public final DynamoDbClient metered;
    public final CapacityMeter meter = new CapacityMeter();
    public final Tables tables;
    private final LocalTables localTables;
    public final LocalGateway gateway;
    public final String adminKey;
    public final SamTemplate template;
    private final LocalRuntime runtime;
    /** The live table's stream feeding the template's stream functions (the outbox), when asked for; else null. */
    public final StreamPump pump;

    /** An answer with its parsed body. */
    public record Reply(int status, JsonNode body) {
        public String text(String field) {
            JsonNode v = body == null ? null : body.get(field);
            return v == null || v.isNull() ? null : v.asText();
        }
    }

    /** Without the outbox: nothing reads the live table's stream. */
    public MeteredStack(DynamoDbClient store, String table, Map<String, String> parameters, Clock clock)
            throws Exception {
        this(store, null, table, parameters, clock);
    }

    /**
     * With {@code streams} (the store's streams client), the live table's stream feeds the publisher through
     * {@link #pump} (no Step Functions: a death's revive rule has nowhere to go, so callers make none).
     */
    public MeteredStack(DynamoDbClient store, DynamoDbStreamsClient streams, String table,
                        Map<String, String> parameters, Clock clock) throws Exception {
        this.template = SamTemplate.bundled();
        this.localTables = LocalTables.named(template, table);
        this.tables = localTables.tables();
        this.plain = store;
        localTables.ensure(plain, template);
        this.metered = meter.around(plain);
        // The bench's figures were measured without Local's late-sweep rule: every sweep judges, as in AWS.
        LocalRuntime.Builder builder = LocalRuntime.builder().template(template).tables(metered, localTables)
                .busName("bench-bus").clock(clock).parameters(parameters).withoutStepFunctions()
                .skipLateSweeps(false);
        if (streams != null) {
            builder.streams(streams, localTables.streamArn(plain), null);
        }
        this.runtime = builder.build();
        this.pump = runtime.pump;
        this.gateway = runtime.gateway;
        this.adminKey = new KeyStore(plain, tables).createTeam(TEAM, clock.instant()).key();
    }

    /** A request through the gateway, as the HTTP front door would make it. */
    public Reply send(String method, String path, String body) {
        LocalGateway.Response r = gateway.handle(method, path, null,
                Map.of("Authorization", List.of("Bearer " + adminKey), "Content-Type", List.of("application/json")),
                body);
        try {
            return new Reply(r.status(), r.body() == null || r.body().isEmpty() ? null : Json.parse(r.body()));
        } catch (Exception e) {
            throw new IllegalStateException("not JSON: " + r.body(), e);
        }
    }

    public Reply expect(int status, String method, String path, String body) {
        Reply r = send(method, path, body);
        if (r.status() != status) {
            throw new IllegalStateException(method + " " + path + " answered " + r.status() + ": " + r.body());
        }
        return r;
    }

    public String agentPath(String agentId) {
        return "/v1/teams/" + TEAM + "/agents/" + agentId;
    }

    /** Registers and joins an agent (not metered). */
    public void readyAgent(String agentId) {
        meter.enabled(false);
        try {
            expect(201, "POST", "/v1/teams/" + TEAM + "/agents", "{\"agentId\":\"" + agentId + "\",\"name\":\""
                    + agentId + "\",\"role\":\"worker\",\"hostId\":\"host-1\"}");
            expect(200, "POST", agentPath(agentId) + "/join", null);
        } finally {
            meter.enabled(true);
        }
    }

    /** Makes sure the gateway has cached the authorizer's answer for the key, so it is not counted. */
    public void warmAuthorizer() {
        meter.enabled(false);
        try {
            send("GET", agentPath("warm-up"), null);
        } finally {
            meter.enabled(true);
        }
    }

    /** A function of the template as Local hosts it (the same handler class Lambda would run). */
    public <I, O> RequestHandler<I, O> handler(String logicalId) {
        return runtime.host.handler(logicalId);
    }

    @Override
    public void close() {
        runtime.close();
    }
}
