package io.lifeline.local.contract.agents;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A transition's {@code at} is one clock reading in whole milliseconds, and never earlier
 * than the agent's previous transition's, whichever writer stamps it. A request whose clock reading is
 * older than the agent's newest transition (it read the clock, then another change committed first) is
 * modelled by moving the test clock back before it.
 */
@Tag("contract")
class TransitionTimeTest {
    private static final Instant T0 = TestStack.START;

    @Test
    void transitions_whoseReadingIsOlderThanThePreviousOne_areStampedAtThePreviousTime() throws Exception {
        try (TestStack s = TestStack.start()) {
            String agent = "mono-1";
            s.clock.set(T0);
            ok(s.ready(agent));
            ok(s.team("create-task", "{\"taskId\":\"mono-task\",\"title\":\"T\"}"));
            Instant newest = at(10);
            s.clock.set(newest);
            ok(s.heartbeat(agent, "{\"status\":\"working\"}"));
            s.clock.set(at(5));
            ok(s.heartbeat(agent, "{\"status\":\"ready\"}"));
            s.clock.set(at(4));
            ok(s.task("claim", "mono-task", "{\"agentId\":\"" + agent + "\"}"));
            s.clock.set(at(3));
            ok(s.task("complete", "mono-task", "{\"agentId\":\"" + agent + "\"}"));
            s.clock.set(at(2));
            ok(s.agent("fail", agent, null));
            s.clock.set(at(1));
            ok(s.agent("join", agent, null));
            s.pump.drain();

            List<String> triggers = new ArrayList<>();
            List<Instant> times = new ArrayList<>();
            for (Map<String, AttributeValue> t : s.recordedTransitions(agent)) {
                triggers.add(t.get("trigger").s());
                times.add(Instant.ofEpochMilli(Long.parseLong(t.get("at").n())));
            }
            assertEquals(List.of("join", "report_working", "report_ready", "claim_task", "task_complete",
                    "reported_failure", "join"), triggers);
            assertEquals(List.of(T0, newest, newest, newest, newest, newest, newest), times,
                    "each later transition is stamped at the previous one's time, not its own older reading");
            List<JsonNode> answered = s.transitions(agent, 10);
            for (int i = 0; i + 1 < answered.size(); i++) {
                assertFalse(Instant.parse(answered.get(i).get("at").asText())
                        .isBefore(Instant.parse(answered.get(i + 1).get("at").asText())), answered.toString());
            }
        }
    }

    @Test
    void sweepDeath_afterAClaimStampedLater_isStampedAtTheClaimsTime() throws Exception {
        try (TestStack s = TestStack.start()) {
            String agent = "mono-sweep";
            s.clock.set(T0);
            ok(s.ready(agent));
            ok(s.team("create-task", "{\"taskId\":\"mono-sweep-task\",\"title\":\"T\"}"));
            Instant claimed = at(200); // a claim moves no deadline: the agent stays due at 60 s
            s.clock.set(claimed);
            ok(s.task("claim", "mono-sweep-task", "{\"agentId\":\"" + agent + "\"}"));
            s.clock.set(at(75));
            assertEquals(List.of(), s.sweep());
            s.clock.set(at(90));
            assertEquals(List.of(TestStack.TEAM + "/" + agent), s.sweep());
            JsonNode last = s.agentView(agent).get("lastTransition");
            assertEquals("heartbeat_expired", last.get("trigger").asText());
            assertEquals(claimed.toString(), last.get("at").asText());
        }
    }

    @Test
    void complete_withAClockReadingFinerThanMilliseconds_answersTheStoredTime() throws Exception {
        try (TestStack s = TestStack.start()) {
            String agent = "mono-ms";
            s.clock.set(T0);
            ok(s.ready(agent));
            ok(s.team("create-task", "{\"taskId\":\"mono-ms-task\",\"title\":\"T\"}"));
            ok(s.task("claim", "mono-ms-task", "{\"agentId\":\"" + agent + "\"}"));
            s.clock.set(T0.plus(Duration.ofNanos(1_234_567_891L)));
            TestStack.Reply done = ok(s.task("complete", "mono-ms-task",
                    Json.write(Json.object().put("agentId", agent))));
            long stored = Long.parseLong(s.item("TEAM#" + TestStack.TEAM, "TASK#mono-ms-task").get("completedAt").n());
            assertEquals(T0.plusMillis(1234).toEpochMilli(), stored);
            assertEquals(Instant.ofEpochMilli(stored).toString(), done.body().get("task").get("completedAt").asText());
            assertEquals(Instant.ofEpochMilli(stored).toString(),
                    s.agentView(agent).get("lastTransition").get("at").asText());
        }
    }

    private static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }
}
