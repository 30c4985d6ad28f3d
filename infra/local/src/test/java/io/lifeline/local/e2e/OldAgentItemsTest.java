package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Agent items written before 2026-11-25 are read whole, on AWS as on Local: a published transition's details still
 * on the item (later writes keep them on the ledger only) show as the agent's last change, and a task fence written
 * as the task's id (later writes make it a boolean mark) still lets the life that claimed the task complete it.
 * The items are written as they were, keys and all, into a fresh stack's tables.
 */
@Timeout(60)
@Tag("e2e")
class OldAgentItemsTest {
    private static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void anOldItem_showsItsLastChange_andItsFenceAsTheTaskIdStillLetsItsLifeComplete() {
        String agent = TestStack.newId("busy");
        String task = TestStack.newId("t");
        long now = stack.clock.millis();
        String team = "TEAM#" + TestStack.TEAM;
        put(stack.tables.live(), oldAgent(agent, now, task));
        put(stack.tables.ledger(), Map.of("pk", s(team), "sk", s("AGENT#" + agent)));
        put(stack.tables.ledger(), Map.of("pk", s(team), "sk", s("TASK#" + task), "title", s("a task"),
                "status", s("in_progress"), "assignee", s(agent), "createdAt", n(now), "claimedAt", n(now)));

        TestStack.Reply got = stack.agent("get-agent", agent, null);
        assertEquals(200, got.status(), got.body().toString());
        JsonNode last = got.body().get("lastTransition");
        assertEquals("claim_task", last.get("trigger").asText(), got.body().toString());
        assertEquals(task, got.text("currentTaskId"));

        TestStack.Reply done = stack.task("complete", task, "{\"agentId\":\"" + agent + "\"}");
        assertEquals(200, done.status(), done.body().toString());
        assertEquals("ready", done.text("agentStatus"), done.body().toString());
    }

    /** As register, claim and the outbox left an agent then: the details on the item, the fence holding the id. */
    private static Map<String, AttributeValue> oldAgent(String id, long now, String task) {
        Map<String, AttributeValue> item = new HashMap<>(Map.of("pk", s("TEAM#" + TestStack.TEAM + "#AGENT#" + id),
                "sk", s("AGENT"), "status", s("working"), "name", s(id), "role", s("worker"),
                "staleMs", n(3_600_000), "grace", n(2), "misses", n(0), "beats", n(3), "regAt", n(now)));
        item.putAll(Map.of("hbAt", n(now), "deadline", n(now + 3_600_000), "tseq", n(2), "ps", n(2),
                "tFrom", s("ready"), "tTrigger", s("claim_task"), "tAt", n(now), "taskId", s(task), "hold", s(task)));
        return item;
    }

    private static void put(String table, Map<String, AttributeValue> item) {
        stack.dynamo.putItem(p -> p.tableName(table).item(item));
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    private static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }
}
