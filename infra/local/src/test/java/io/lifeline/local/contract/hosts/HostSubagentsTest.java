package io.lifeline.local.contract.hosts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.contract.heartbeats.HeartbeatCostTest;
import io.lifeline.local.stack.TestStack;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A host daemon's report of an agent's running subagents, in its batch entry's {@code subagents} (sent only when the
 * set changes): one write of the agent's side-data item per change, none for a plain hosted beat; GET agent shows
 * them with since when while the agent is alive; a bad report is a 400 that writes nothing.
 */
@Timeout(60)
@Tag("contract")
class HostSubagentsTest {
    static final HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().interceptor(counter).build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static String batch(String agentId, String subagents) {
        return "{\"hostId\":\"host-s\",\"heartbeats\":[{\"agentId\":\"" + agentId + "\",\"localBeatAgeMs\":100"
                + (subagents == null ? "" : ",\"subagents\":" + subagents) + "}]}";
    }

    private static long sideWrites() {
        return counter.updatedSortKeys.stream().filter("DATA"::equals).count();
    }

    @Test
    void aChangedSetIsOneWrite_aPlainBeatNone_andTheViewShowsItWhileAlive() {
        ok(stack.register("hosted-1"));
        ok(stack.ready("hosted-1"));
        Instant since = stack.clock.instant();
        counter.reset();
        ok(stack.team("batch-heartbeats", batch("hosted-1", "{\"running\":[{\"id\":\"a1\",\"type\":\"Explore\","
                + "\"since\":\"" + since + "\"},{\"id\":\"a2\",\"since\":\"" + since + "\"}],\"more\":1}")));
        assertEquals(1, sideWrites(), "one write for the changed set");
        JsonNode view = stack.agentView("hosted-1");
        assertEquals(2, view.get("subagents").size());
        assertEquals("a1", view.get("subagents").get(0).get("id").asText());
        assertEquals("Explore", view.get("subagents").get(0).get("type").asText());
        assertEquals(since.toString(), view.get("subagents").get(0).get("since").asText());
        assertTrue(view.get("subagents").get(1).path("type").isMissingNode());
        assertEquals(1, view.get("subagentsMore").asInt());

        counter.reset();
        for (int i = 0; i < 5; i++) {
            ok(stack.team("batch-heartbeats", batch("hosted-1", null)));
        }
        assertEquals(0, sideWrites(), "no write of the set for plain beats");

        ok(stack.team("batch-heartbeats", batch("hosted-1", "{\"running\":[{\"id\":\"a2\",\"since\":\""
                + since + "\"}],\"more\":0}")));
        assertEquals(1, sideWrites(), "one write for the stop");
        assertEquals(1, stack.agentView("hosted-1").get("subagents").size());

        ok(stack.agent("fail", "hosted-1", "{\"reason\":\"oom\"}"));
        assertTrue(stack.agentView("hosted-1").path("subagents").isMissingNode(), "a dead agent runs none");
    }

    @Test
    void aBadReportIs400_andWritesNothing() {
        ok(stack.register("hosted-2"));
        ok(stack.ready("hosted-2"));
        counter.reset();
        StringBuilder nine = new StringBuilder("{\"running\":[");
        for (int i = 0; i < 9; i++) {
            nine.append(i == 0 ? "" : ",").append("{\"id\":\"s").append(i).append("\",\"since\":\"")
                    .append(stack.clock.instant()).append("\"}");
        }
        nine.append("]}");
        for (String bad : new String[] {nine.toString(),
                "{\"running\":[{\"id\":\"" + "x".repeat(129) + "\",\"since\":\"" + stack.clock.instant() + "\"}]}",
                "{\"running\":[{\"id\":7,\"since\":\"" + stack.clock.instant() + "\"}]}",
                "{\"running\":[{\"id\":\"a\",\"since\":\"yesterday\"}]}",
                "{\"running\":[{\"id\":\"a\",\"since\":\"" + stack.clock.instant() + "\",\"prompt\":\"p\"}]}",
                "[\"a\"]"}) {
            TestStack.Reply r = stack.team("batch-heartbeats", batch("hosted-2", bad));
            assertEquals(400, r.status(), bad + " -> " + r.body());
            assertEquals("INVALID_FIELD", r.body().path("code").asText(r.body().toString()), r.body().toString());
        }
        assertEquals(0, counter.operations.stream().filter("UpdateItem"::equals).count(), "nothing written");
    }
}
