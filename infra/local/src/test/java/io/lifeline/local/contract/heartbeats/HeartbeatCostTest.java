package io.lifeline.local.contract.heartbeats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.TestStack;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * What a heartbeat costs in DynamoDB: requests by operation (counted by an SDK interceptor on the functions'
 * client) and the size of the agent item, which must stay within one write unit (1 KB).
 */
@Tag("contract")
public class HeartbeatCostTest {
    /** Counts requests by operation name; optionally asks UpdateItem for its consumed capacity. */
    public static final class Counter implements ExecutionInterceptor {
        public final List<String> operations = Collections.synchronizedList(new ArrayList<>());
        /** Sort key of each UpdateItem, in order. */
        public final List<String> updatedSortKeys = Collections.synchronizedList(new ArrayList<>());
        public final List<ConsumedCapacity> capacities = Collections.synchronizedList(new ArrayList<>());
        public volatile boolean measureCapacity;

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            operations.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
            if (context.request() instanceof UpdateItemRequest u) {
                updatedSortKeys.add(u.key().get("sk").s());
            }
        }

        @Override
        public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
            if (measureCapacity && context.request() instanceof UpdateItemRequest u) {
                return u.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
            }
            return context.request();
        }

        @Override
        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            if (context.response() instanceof UpdateItemResponse r && r.consumedCapacity() != null) {
                capacities.add(r.consumedCapacity());
            }
        }

        public void reset() {
            operations.clear();
            updatedSortKeys.clear();
            capacities.clear();
        }
    }

    static final Counter counter = new Counter();
    static TestStack stack;
    private static int nextId;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(counter).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @BeforeEach
    void plainCounting() {
        counter.measureCapacity = false;
        counter.reset();
    }

    /**
     * Starts counting. The gateway caches the authorizer's answer per key for 300 s (template.yaml); a request
     * first makes sure that answer is cached, so its key lookup (a GetItem, the gateway's cost, paid once per
     * key and cache period) is not counted as the heartbeat's.
     */
    private static void startCounting(String key, String team) {
        stack.send("get-agent", key, Map.of("team", team, "agentId", "warm-up"), null, null);
        counter.reset();
    }

    private static void startCounting() {
        startCounting(stack.adminKey, TestStack.TEAM);
    }

    @Test
    void heartbeat_plain_isExactlyOneUpdateItem() {
        String id = readyAgent();
        stack.clock.advance(Duration.ofSeconds(30));
        startCounting();

        assertEquals(200, stack.heartbeat(id, "{}").status());

        assertEquals(List.of("UpdateItem"), counter.operations);
        assertEquals(List.of("AGENT"), counter.updatedSortKeys);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"status\":\"ready\"}",
            "{\"status\":\"idle\",\"source\":\"sdk_session_idle\"}",
            "{\"stats\":{\"messagesProcessed\":1,\"toolCallsExecuted\":2,\"errorsEncountered\":3,\"uptime\":4}}",
            "{\"nextHeartbeatWithinSeconds\":300}",
            "{\"status\":\"ready\",\"progressAgeMs\":1500}",
            "{\"progress\":true,\"toolInFlight\":true,\"stallReason\":\"model stream silent\"}",
    })
    void heartbeat_withoutStatusChangeOrData_isExactlyOneUpdateItem(String body) {
        String id = readyAgent();
        startCounting();

        assertEquals(200, stack.heartbeat(id, body).status());

        assertEquals(List.of("UpdateItem"), counter.operations);
    }

    @Test
    void heartbeat_withMetadata_isAgentUpdateThenSideItemUpdate() {
        String id = readyAgent();
        startCounting();

        assertEquals(200, stack.heartbeat(id, "{\"metadata\":{\"task\":\"t-1\"}}").status());

        assertEquals(List.of("UpdateItem", "UpdateItem"), counter.operations);
        assertEquals(List.of("AGENT", "DATA"), counter.updatedSortKeys);
    }

    @Test
    void heartbeat_withMetadataAndCheckpoint_isStillTwoUpdateItems() {
        String id = readyAgent();
        startCounting();

        assertEquals(200, stack.heartbeat(id, "{\"metadata\":{\"a\":1},\"checkpoint\":{\"b\":2}}").status());

        assertEquals(List.of("UpdateItem", "UpdateItem"), counter.operations);
        assertEquals(List.of("AGENT", "DATA"), counter.updatedSortKeys);
    }

    @Test
    void heartbeat_withStatusChange_isTwoUpdateItemsOnTheAgent() {
        String id = readyAgent();
        startCounting();

        assertEquals("working", stack.heartbeat(id, "{\"status\":\"working\"}").text("agentStatus"));

        // The first write assumes the reported status and is refused (ALL_OLD says ready); the second changes it.
        assertEquals(List.of("UpdateItem", "UpdateItem"), counter.operations);
        assertEquals(List.of("AGENT", "AGENT"), counter.updatedSortKeys);
    }

    @Test
    void heartbeat_forUnknownAgent_isOneRefusedUpdateItemAndNoRead() {
        startCounting();
        assertEquals(404, stack.heartbeat("nobody-here", "{\"metadata\":{\"a\":1}}").status());
        assertEquals(List.of("UpdateItem"), counter.operations);
    }

    @Test
    void heartbeat_withInvalidInput_makesNoRequest() {
        String id = readyAgent();
        startCounting();
        assertEquals(400, stack.heartbeat(id, "{\"status\":\"busy\"}").status());
        assertEquals(413, stack.heartbeat(id, "{\"metadata\":" + HeartbeatContractTest.objectOfBytes(
                Limits.MAX_METADATA_BYTES + 1, "x") + "}").status());
        assertEquals(List.of(), counter.operations);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 5, Limits.MAX_BATCH_HEARTBEATS})
    void batch_ofPlainHeartbeats_isOneUpdateItemEach(int n) {
        List<String> ids = new ArrayList<>();
        StringBuilder body = new StringBuilder("{\"heartbeats\":[");
        for (int i = 0; i < n; i++) {
            String id = readyAgent();
            ids.add(id);
            body.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(id).append("\"}");
        }
        body.append("]}");
        startCounting();

        TestStack.Reply r = stack.team("batch-heartbeats", body.toString());

        assertEquals(200, r.status(), r.body()::toString);
        assertEquals(Collections.nCopies(n, "UpdateItem"), counter.operations);
        assertEquals(ids.stream().map(id -> "AGENT").toList(), counter.updatedSortKeys);
    }

    @Test
    void heartbeat_onMaximalAgentItem_staysWithinOneWriteUnit() {
        // The largest agent item the API lets anyone create: every id 64 characters, name and role at their
        // limits in three-byte characters (the most UTF-8 bytes per Java char), the largest timing values,
        // all stats at their maximum, and a claimed task with a 64-character id.
        String team = "T".repeat(64);
        String agentId = "A".repeat(64);
        String taskId = "K".repeat(64);
        String key = stack.key(team, Scope.ADMIN);
        Map<String, String> teamPath = Map.of("team", team);
        Map<String, String> agentPath = Map.of("team", team, "agentId", agentId);
        String name = "名".repeat(Limits.MAX_NAME_BYTES / 3) + "n".repeat(Limits.MAX_NAME_BYTES % 3);
        String role = "役".repeat(Limits.MAX_ROLE_BYTES / 3) + "r".repeat(Limits.MAX_ROLE_BYTES % 3);
        TestStack.Reply reg = stack.send("register", key, teamPath, null, "{\"agentId\":\"" + agentId
                + "\",\"name\":\"" + name + "\",\"role\":\"" + role + "\",\"hostId\":\"" + "H".repeat(64)
                + "\",\"staleAfterSeconds\":" + Limits.MAX_STALE_AFTER_SECONDS
                + ",\"graceMisses\":" + Limits.MAX_GRACE_MISSES + ",\"stallAfterSeconds\":"
                + Limits.MAX_STALE_AFTER_SECONDS + ",\"onStall\":\"restart\"}");
        assertEquals(201, reg.status(), reg.body()::toString);
        assertEquals(200, stack.send("join", key, agentPath, null, null).status());
        long max = Long.MAX_VALUE / 2;
        // Every stat at its maximum, and the longest report of progress: its oldest age, a tool in flight and the
        // longest stall reason (the beat's own write carries it).
        String allStats = "{\"stats\":{\"messagesProcessed\":" + max + ",\"toolCallsExecuted\":" + max
                + ",\"errorsEncountered\":" + max + ",\"uptime\":" + max + "},\"progressAgeMs\":"
                + (Limits.MAX_STALE_AFTER_SECONDS * 1000L) + ",\"toolInFlight\":true,\"stallReason\":\""
                + "s".repeat(32) + "\"}";
        assertEquals(200, stack.send("heartbeat", key, agentPath, null, allStats).status());
        assertEquals(201, stack.send("create-task", key, teamPath, null,
                "{\"taskId\":\"" + taskId + "\",\"title\":\"t\"}").status());
        TestStack.Reply claim = stack.send("claim", key, Map.of("team", team, "taskId", taskId), null,
                "{\"agentId\":\"" + agentId + "\"}");
        assertEquals(200, claim.status(), claim.body()::toString);
        stack.clock.advance(Duration.ofDays(3650));
        // A long-lived agent: a billion heartbeats (30 years at one a second) and ten million status changes.
        stack.dynamo.updateItem(u -> u.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS("TEAM#" + team + "#AGENT#" + agentId), "sk", AttributeValue.fromS("AGENT")))
                .updateExpression("SET beats = :b, tseq = :t, st = :st")
                .expressionAttributeValues(Map.of(":b", AttributeValue.fromN("999999999"),
                        ":t", AttributeValue.fromN("9999999"),
                        // a stall the sweep raised (its mark stays until the sweep resolves it)
                        ":st", AttributeValue.fromN(Long.toString(stack.clock.millis())))));

        startCounting(key, team);
        counter.measureCapacity = true;
        // From the longest address (IPv6: its 16 bytes are kept on the item for self-preservation's failure domains).
        TestStack.Reply beat = stack.sendFrom("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "heartbeat", key, agentPath,
                allStats);
        counter.measureCapacity = false;
        assertEquals(200, beat.status(), beat.body()::toString);
        assertEquals("working", beat.text("agentStatus"));
        List<String> operations = List.copyOf(counter.operations);
        List<ConsumedCapacity> capacities = List.copyOf(counter.capacities);

        Map<String, AttributeValue> item = stack.agentItem(team, agentId);
        assertEquals(16, item.get("ip").b().asByteArray().length);
        assertEquals(taskId, item.get("taskId").s());
        assertEquals(name, item.get("name").s());
        assertEquals("s".repeat(32), item.get("prW").s(), "the longest stall reason is on the item");
        assertTrue(item.containsKey("pr") && item.containsKey("tl") && item.containsKey("st")
                && item.containsKey("stM") && item.containsKey("onS"), item::toString);
        int size = itemSizeUpperBound(item);
        System.out.println("maximal agent item: " + item.size() + " attributes, at most " + size + " bytes");
        assertTrue(size <= 1024, "agent item is up to " + size + " bytes, more than one write unit: " + item);

        // The engine reports capacity too, by AWS's published rules: the heartbeat's one UpdateItem cost one write
        // unit.
        assertEquals(List.of("UpdateItem"), operations);
        assertEquals(1, capacities.size(), "the store returned no ConsumedCapacity");
        ConsumedCapacity c = capacities.get(0);
        assertNotNull(c.capacityUnits());
        assertEquals(1.0, c.capacityUnits(), 0.0, c::toString);
    }

    @Test
    void consumedCapacity_ofLargeSideItem_countsOneUnitPerKilobyte() {
        // Shows that the store's ConsumedCapacity follows item size, so the 1.0 above means something.
        String id = readyAgent();
        String metadata = HeartbeatContractTest.objectOfBytes(Limits.MAX_METADATA_BYTES, "x");
        startCounting();
        counter.measureCapacity = true;
        assertEquals(200, stack.heartbeat(id, "{\"metadata\":" + metadata + "}").status());
        counter.measureCapacity = false;
        assertEquals(List.of("AGENT", "DATA"), counter.updatedSortKeys);
        assertEquals(List.of(1.0, 5.0), counter.capacities.stream().map(ConsumedCapacity::capacityUnits).toList());
    }

    @Test
    void itemSizeUpperBound_followsPublishedRules() {
        // name "ab" (2) + "xyz" (3); name "n" (1) + 12345 (5 digits: published ~4, bound 5).
        Map<String, AttributeValue> item = Map.of("ab", AttributeValue.fromS("xyz"), "n", AttributeValue.fromN("12345"));
        assertEquals(2 + 3 + 1 + 5, itemSizeUpperBound(item));
        assertEquals(1 + 3, itemSizeUpperBound(Map.of("s", AttributeValue.fromS("é."))));
        assertEquals(1 + 3, itemSizeUpperBound(Map.of("n", AttributeValue.fromN("0"))));
        assertEquals(1 + 19, itemSizeUpperBound(Map.of("n", AttributeValue.fromN(Long.toString(Long.MAX_VALUE / 2)))));
    }

    /**
     * An upper bound of an item's size by DynamoDB's published rules: each attribute's UTF-8 name length plus
     * its value's size; a string is its UTF-8 length; a number is "about one byte per two significant digits,
     * plus one", bounded here by the length of its plain decimal string, and never less than
     * ceil(digits / 2) + 2 bytes (what DynamoDB Local charged short numbers, more than the published rule).
     */
    public static int itemSizeUpperBound(Map<String, AttributeValue> item) {
        int total = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            total += utf8(e.getKey());
            AttributeValue v = e.getValue();
            if (v.s() != null) {
                total += utf8(v.s());
            } else if (v.n() != null) {
                String digits = new BigDecimal(v.n()).abs().toPlainString().replace(".", "");
                total += Math.max(digits.length() + (v.n().startsWith("-") ? 1 : 0), (digits.length() + 1) / 2 + 2);
            } else if (v.bool() != null) {
                total += 1;
            } else if (v.b() != null) {
                total += v.b().asByteArray().length;
            } else {
                throw new IllegalArgumentException("no size rule here for " + e);
            }
        }
        return total;
    }

    private static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * A parked hosted agent adds no write per beat: its park is one read and one conditional write (with the batch
     * that sends it), and its plain beats after it are the host lease's one UpdateItem each, as before the park.
     */
    @Test
    void parkedHostedAgent_costsOneParkWrite_thenItsBeatsAreTheLeasesOnly() {
        String id = readyAgent();
        String batch = "{\"hostId\":\"cost-park-host\",\"heartbeats\":[{\"agentId\":\"" + id + "\"%s}]}";
        Map<String, String> team = Map.of("team", TestStack.TEAM);
        assertEquals(200, stack.send("batch-heartbeats", stack.adminKey, team, null, batch.formatted("")).status());
        assertEquals(200, stack.send("batch-heartbeats", stack.adminKey, team, null, batch.formatted("")).status());
        startCounting();
        String until = stack.clock.instant().plus(Duration.ofHours(1)).toString();
        assertEquals(200, stack.send("batch-heartbeats", stack.adminKey, team, null, batch.formatted(
                ",\"parked\":{\"until\":\"" + until + "\",\"reason\":\"usage limit\"}")).status());
        assertEquals(1, counter.updatedSortKeys.stream().filter("AGENT"::equals).count(),
                "the park: one write of the agent's item " + counter.operations + " " + counter.updatedSortKeys);
        for (int i = 0; i < 3; i++) {
            stack.clock.advance(Duration.ofSeconds(30));
            counter.reset();
            assertEquals(200, stack.send("batch-heartbeats", stack.adminKey, team, null, batch.formatted(""))
                    .status());
            assertEquals(List.of("UpdateItem"), counter.operations, "a parked agent's plain beat: the lease's write");
            assertTrue(counter.updatedSortKeys.stream().noneMatch("AGENT"::equals), counter.updatedSortKeys.toString());
        }
    }

    private static String readyAgent() {
        String id = "cost-" + (++nextId);
        assertEquals(200, stack.ready(id).status());
        return id;
    }
}
