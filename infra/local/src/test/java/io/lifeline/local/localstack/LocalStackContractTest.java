package io.lifeline.local.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The core contract (lifecycle, heartbeat, refusals, the outbox's history, a sweep death) against
 * LocalStack's DynamoDB instead of the engine, where a Docker engine exists. Without one it is skipped;
 * the same behaviour is covered against the engine by the other contract tests, never only here.
 */
@Tag("localstack")
@Testcontainers(disabledWithoutDocker = true)
class LocalStackContractTest {
    @Container
    static final LocalStackContainer LOCALSTACK = new LocalStackContainer(
            DockerImageName.parse("localstack/localstack:4.4")).withServices("dynamodb");

    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().dynamoEndpoint(LOCALSTACK.getEndpoint()).build();
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void lifecycle_againstLocalStack_behavesAsAgainstTheEngine() {
        assertEquals(201, stack.register("ls-1").status());
        assertEquals(409, stack.register("ls-1").status());
        assertEquals(200, stack.agent("join", "ls-1", null).status());
        TestStack.Reply beat = stack.heartbeat("ls-1", "{\"status\":\"working\"}");
        assertEquals(200, beat.status(), beat.body()::toString);
        assertEquals("working", beat.text("agentStatus"));
        assertEquals(200, stack.agent("leave", "ls-1", null).status());
        TestStack.Reply refused = stack.heartbeat("ls-1", "{}");
        assertEquals(409, refused.status());
        assertTrue(refused.body().get("rejoinRequired").asBoolean());
        stack.pump.drain();
        JsonNode history = stack.agent("transitions", "ls-1", null).body().get("transitions");
        assertEquals(3, history.size(), history::toString);
        assertEquals("leave", history.get(0).get("trigger").asText());
    }

    @Test
    void sweep_againstLocalStack_marksTheSilentAgentDead() {
        stack.ready("ls-silent");
        stack.clock.advance(Duration.ofSeconds(61));
        stack.sweep();
        stack.sweep();
        assertEquals("dead", stack.agentItem("ls-silent").get("status").s());
    }
}
