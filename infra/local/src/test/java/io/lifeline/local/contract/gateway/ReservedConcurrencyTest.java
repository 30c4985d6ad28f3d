package io.lifeline.local.contract.gateway;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifeline Local runs each function under its template reservation, as Lambda does: an
 * invocation past it is throttled. Through the gateway a throttled function answers 500 (API Gateway's answer to a
 * Lambda 429) and writes nothing; in the revive flow a throttled step fails with {@code Lambda.TooManyRequestsException},
 * which revive.asl.json retries, so the flow still starts.
 */
@Tag("contract")
class ReservedConcurrencyTest {

    @Test
    void heartbeat_pastTheHeartbeatCap_isAnswered500_andTheNextOneIsTaken() throws Exception {
        try (TestStack stack = TestStack.builder().parameter("HeartbeatMaxConcurrency", "1").build()) {
            ok(stack.ready("capped"));
            long beatsBefore = stack.agentItem("capped").get("beats") == null ? 0
                    : Long.parseLong(stack.agentItem("capped").get("beats").n());
            // One invocation holds the function's only permit while a second beat arrives.
            TestStack.Reply throttled = stack.host.invoke("HeartbeatFunction", () -> stack.heartbeat("capped", "{}"));
            assertEquals(500, throttled.status(), throttled.body().toString());
            assertEquals(1, stack.host.throttles("HeartbeatFunction"));
            assertEquals(beatsBefore, stack.agentItem("capped").get("beats") == null ? 0
                    : Long.parseLong(stack.agentItem("capped").get("beats").n()), "the throttled beat wrote nothing");
            ok(stack.heartbeat("capped", "{}"));
            assertEquals(1, stack.host.throttles("HeartbeatFunction"));
        }
    }

    @Test
    void reviveStep_throttled_isRetriedByTheFlow_andTheAgentIsRestarting() throws Exception {
        try (TestStack stack = TestStack.builder().parameter("ReviveReservedConcurrency", "1").build()) {
            ok(stack.ready("r-1"));
            stack.clock.advance(Duration.ofSeconds(1));
            ok(stack.agent("fail", "r-1", "{\"reason\":\"oom\"}"));
            // The test holds the revive function's only permit while the flow's first step runs.
            stack.host.invoke("ReviveFunction", () -> {
                stack.pump.drain();
                stack.stepFunctions.runDue();
                return null;
            });
            assertEquals("dead", stack.status("r-1"), "the first step was throttled");
            assertTrue(stack.host.throttles("ReviveFunction") >= 1);

            stack.clock.advance(Duration.ofSeconds(3)); // the Retry's first wait is 2 s
            stack.stepFunctions.runDue();
            assertEquals("restarting", stack.status("r-1"));
            List<String> failed = stack.executionsFor("r-1").get(0).history().stream()
                    .filter(e -> e.type().equals("TaskFailed")).map(e -> e.detail().toString()).toList();
            assertTrue(failed.stream().anyMatch(d -> d.contains("Lambda.TooManyRequestsException")), failed.toString());
        }
    }
}
