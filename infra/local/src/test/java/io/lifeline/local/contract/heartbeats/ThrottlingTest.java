package io.lifeline.local.contract.heartbeats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.StoreSnapshot;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The store refusing or failing a heartbeat's write: the caller gets a JSON 503 with Retry-After and no
 * internals, nothing is written, and the next heartbeat after the store recovers works.
 */
@Tag("contract")
class ThrottlingTest {
    /** Fails the UpdateItems it matches, while armed, before they reach the store (so no SDK retries). */
    static final class StoreFault implements ExecutionInterceptor {
        volatile Predicate<UpdateItemRequest> matches;
        volatile Supplier<RuntimeException> failure;

        void arm(Predicate<UpdateItemRequest> which, Supplier<RuntimeException> with) {
            failure = with;
            matches = which;
        }

        void disarm() {
            matches = null;
        }

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            Predicate<UpdateItemRequest> m = matches;
            if (m != null && context.request() instanceof UpdateItemRequest u && m.test(u)) {
                throw failure.get();
            }
        }
    }

    static final StoreFault fault = new StoreFault();
    static TestStack stack;
    private static int nextId;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(fault).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @AfterEach
    void disarm() {
        fault.disarm();
    }

    static RuntimeException provisionedThroughputExceeded() {
        return ProvisionedThroughputExceededException.builder()
                .statusCode(400)
                .message("The level of configured provisioned throughput for the table was exceeded.")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ProvisionedThroughputExceededException")
                        .errorMessage("The level of configured provisioned throughput for the table was exceeded.")
                        .serviceName("DynamoDb").build())
                .build();
    }

    @Test
    void heartbeat_whenUpdateThrottled_answers503ThrottledWithRetryAfterAndWritesNothing() {
        String id = readyAgent();
        stack.clock.advance(Duration.ofSeconds(20));
        Map<String, AttributeValue> before = stack.agentItem(id);
        StoreSnapshot all = StoreSnapshot.of(stack);
        fault.arm(u -> true, ThrottlingTest::provisionedThroughputExceeded);

        TestStack.Reply r = stack.heartbeat(id, "{\"status\":\"working\",\"metadata\":{\"a\":1}}");

        assertUnavailable(r, "THROTTLED");
        fault.disarm();
        assertEquals(before, stack.agentItem(id));
        all.assertUnchanged("a throttled request");
    }

    @Test
    void heartbeat_afterThrottlingEnds_isAcceptedAgain() {
        String id = readyAgent();
        fault.arm(u -> true, ThrottlingTest::provisionedThroughputExceeded);
        assertEquals(503, stack.heartbeat(id, "{}").status());
        assertEquals(503, stack.heartbeat(id, "{}").status());
        fault.disarm();
        stack.clock.advance(Duration.ofSeconds(1));

        TestStack.Reply r = stack.heartbeat(id, "{}");

        assertEquals(200, r.status(), r.body()::toString);
        assertEquals(stack.clock.instant().toString(), r.text("heartbeatTs"));
        assertEquals(Long.toString(stack.clock.instant().toEpochMilli()), stack.agentItem(id).get("hbAt").n());
    }

    @Test
    void heartbeat_whenRequestLimitExceeded_answers503Throttled() {
        String id = readyAgent();
        Map<String, AttributeValue> before = stack.agentItem(id);
        fault.arm(u -> true, () -> RequestLimitExceededException.builder().statusCode(400)
                .message("Throughput exceeds the current throughput limit for your account.")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("RequestLimitExceeded").build()).build());

        assertUnavailable(stack.heartbeat(id, "{}"), "THROTTLED");
        fault.disarm();
        assertEquals(before, stack.agentItem(id));
    }

    @Test
    void heartbeat_whenGenericThrottlingException_answers503Throttled() {
        String id = readyAgent();
        Map<String, AttributeValue> before = stack.agentItem(id);
        fault.arm(u -> true, () -> DynamoDbException.builder().statusCode(400).message("Rate exceeded")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ThrottlingException").build()).build());

        assertUnavailable(stack.heartbeat(id, "{}"), "THROTTLED");
        fault.disarm();
        assertEquals(before, stack.agentItem(id));
    }

    @Test
    void heartbeat_whenStoreAnswers500_answers503StoreUnavailable() {
        String id = readyAgent();
        Map<String, AttributeValue> before = stack.agentItem(id);
        fault.arm(u -> true, () -> DynamoDbException.builder().statusCode(500).message("Internal server error")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("InternalServerError").build()).build());

        assertUnavailable(stack.heartbeat(id, "{}"), "STORE_UNAVAILABLE");
        fault.disarm();
        assertEquals(before, stack.agentItem(id));
    }

    @Test
    void heartbeat_whenStoreUnreachable_answers503StoreUnavailable() {
        String id = readyAgent();
        Map<String, AttributeValue> before = stack.agentItem(id);
        fault.arm(u -> true, () -> SdkClientException.create("Unable to execute HTTP request: Connection refused"));

        TestStack.Reply r = stack.heartbeat(id, "{}");

        assertUnavailable(r, "STORE_UNAVAILABLE");
        assertFalse(r.text("error").contains("Connection refused"), r.text("error"));
        fault.disarm();
        assertEquals(before, stack.agentItem(id));
    }

    @Test
    void heartbeat_whenOnlySideItemWriteThrottled_answers503Throttled() {
        String id = readyAgent();
        fault.arm(u -> "DATA".equals(u.key().get("sk").s()), ThrottlingTest::provisionedThroughputExceeded);

        TestStack.Reply r = stack.heartbeat(id, "{\"metadata\":{\"a\":1}}");

        assertUnavailable(r, "THROTTLED");
        fault.disarm();
        assertTrue(stack.item(TestStack.agentPartition(id), "DATA").isEmpty());
        // Retrying, as Retry-After asks, stores the metadata.
        assertEquals(200, stack.heartbeat(id, "{\"metadata\":{\"a\":1}}").status());
        assertEquals("{\"a\":1}", stack.item(TestStack.agentPartition(id), "DATA").get("metadata").s());
    }

    @Test
    void batch_whenThrottled_answersThrottledPerEntryAndWritesNothing() {
        String a = readyAgent();
        String b = readyAgent();
        StoreSnapshot all = StoreSnapshot.of(stack);
        fault.arm(u -> true, ThrottlingTest::provisionedThroughputExceeded);

        TestStack.Reply r = stack.team("batch-heartbeats",
                "{\"heartbeats\":[{\"agentId\":\"" + a + "\"},{\"agentId\":\"" + b + "\"}]}");

        fault.disarm();
        assertEquals(200, r.status(), r.body()::toString);
        JsonNode results = r.body().get("results");
        assertEquals(2, results.size());
        assertEquals(a, results.get(0).get("agentId").asText());
        assertEquals("THROTTLED", results.get(0).get("code").asText());
        assertFalse(results.get(0).get("success").asBoolean());
        assertEquals(b, results.get(1).get("agentId").asText());
        assertEquals("THROTTLED", results.get(1).get("code").asText());
        all.assertUnchanged("a throttled request");
    }

    private static void assertUnavailable(TestStack.Reply r, String code) {
        assertEquals(503, r.status(), r.body()::toString);
        assertEquals("1", r.headers().get("retry-after"));
        assertEquals("application/json", r.headers().get("content-type"));
        assertEquals(List.of("success", "error", "code"), HeartbeatContractTest.iterable(r.body().fieldNames()));
        assertFalse(r.body().get("success").asBoolean());
        assertEquals(code, r.code());
        String text = r.body().toString();
        assertFalse(text.contains("Exception"), text);
        assertFalse(text.contains("at software.amazon"), text);
        assertFalse(text.contains("io.lifeline"), text);
        assertFalse(text.contains("Status Code"), text);
    }

    private static String readyAgent() {
        String id = "thr-" + (++nextId);
        assertEquals(200, stack.ready(id).status());
        return id;
    }
}
