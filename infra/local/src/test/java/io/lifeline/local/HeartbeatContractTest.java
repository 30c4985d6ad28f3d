package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Limits;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The heartbeat route and the batch route, through the gateway, against DynamoDB Local. */
class HeartbeatContractTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void heartbeat_whenReady_answersSeedContractExactly() {
        stack.ready("hb-1");
        stack.clock.advance(Duration.ofSeconds(5));
        TestStack.Reply r = stack.heartbeat("hb-1", "{}");
        assertEquals(200, r.status());
        assertEquals(List.of("success", "heartbeatTs", "nextDeadline", "agentStatus"),
                iterable(r.body().fieldNames()));
        assertTrue(r.body().get("success").asBoolean());
        assertEquals(stack.clock.instant().toString(), r.text("heartbeatTs"));
        assertEquals(stack.clock.instant().plusSeconds(60).toString(), r.text("nextDeadline"));
        assertEquals("ready", r.text("agentStatus"));
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
