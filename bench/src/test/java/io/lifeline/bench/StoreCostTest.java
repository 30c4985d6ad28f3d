package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.engine.Engine;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bench's store-cost figures, as counts: requests and units per operation on the engine (AWS's rules). */
@Tag("store")
class StoreCostTest {
    static MeteredStack stack;
    static Map<String, StoreCost.OpCost> costs;

    @BeforeAll
    static void measure() throws Exception {
        stack = new MeteredStack(new Engine(Clock.systemUTC()).client(), "store-cost-test", Map.of(),
                Clock.systemUTC());
        costs = new StoreCost(stack).measure(1, 3);
    }

    @AfterAll
    static void stop() throws Exception {
        stack.close();
    }

    @Test
    void plainHeartbeat_isOneUpdateItem_oneWriteUnit_noReads() {
        StoreCost.OpCost c = costs.get("heartbeat (plain)");
        assertEquals(Map.of("UpdateItem", 1), c.requestsByOperation());
        assertEquals(1.0, c.writeUnits());
        assertEquals(0.0, c.readUnits());
        assertEquals(0.0, c.gsiWriteUnits());
    }

    @Test
    void batchedHeartbeat_isOneUpdateItemAndOneWriteUnitPerAgent() {
        StoreCost.OpCost c = costs.get("batched heartbeat (per agent, batch of 3)");
        assertEquals(Map.of("UpdateItem", 3), c.requestsByOperation());
        assertEquals(1.0, c.requests());
        assertEquals(1.0, c.writeUnits());
        assertEquals(0.0, c.readUnits());
    }

    @Test
    void join_isOneUpdateItem_noReads() {
        StoreCost.OpCost c = costs.get("join");
        assertEquals(Map.of("UpdateItem", 1), c.requestsByOperation());
        assertEquals(0.0, c.readUnits());
    }

    @Test
    void claim_isOneTransaction_andWritesNoIndex() {
        StoreCost.OpCost c = costs.get("task claim");
        assertEquals(Map.of("TransactWriteItems", 1), c.requestsByOperation());
        assertEquals(0.0, c.readUnits());
        // Two items under 1 KB, each written twice (prepare and commit), as AWS's transaction page prices it
        // (docs/engine.md; DynamoDB Local reported 8); the ledger has no index since the unread assignee index was
        // dropped (docs/design/storage/decisions.md).
        assertEquals(4.0, c.writeUnits());
        assertEquals(0.0, c.gsiWriteUnits());
    }

    @Test
    void heartbeatWithStatusChange_isTwoUpdateItems_theFirstRefused() {
        StoreCost.OpCost c = costs.get("heartbeat (status change ready->working)");
        assertEquals(Map.of("UpdateItem", 2), c.requestsByOperation());
        assertEquals(1, c.unreportedCalls());
    }
}
