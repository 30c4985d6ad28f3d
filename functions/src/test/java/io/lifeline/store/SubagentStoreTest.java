package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Subagents;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.SubagentStore;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * An agent's running subagents in the store ({@link SubagentStore}) on the engine: the same set as the domain's rules
 * ({@link Subagents}: eight by id, the rest counted) after any sequence of starts and stops, and what each change costs.
 * Before, every change was a read of the side-data item and a write on the version read (two requests), and a change
 * that changed nothing was the read alone; now no change reads: one conditional UpdateItem, a second only where the
 * refused first one's old image shows another write applies (an agent's first start makes the map, a start past
 * eight or the stop of a counted one changes the count), and a change that changes nothing is one refused write.
 */
@Tag("store")
class SubagentStoreTest {
    @AutoClose
    static final StoreFixture f = new StoreFixture();
    static final AgentDataStore data = new AgentDataStore(f.dynamo, f.tables.tables);
    static final SubagentStore store = data.subagents();

    private static Subagents.Entry entry(String id) {
        return new Subagents.Entry(id, id.startsWith("g") ? null : "Explore", f.tick());
    }

    /** The requests {@code change} made: every one an UpdateItem, none a read; answers [accepted, refused]. */
    private static List<Long> cost(BooleanSupplier change, boolean written) {
        f.dynamo.reset();
        assertEquals(written, change.getAsBoolean());
        List<MeteredDynamo.Call> calls = f.dynamo.calls();
        assertTrue(calls.stream().allMatch(c -> c.operation().equals("UpdateItem")), calls::toString);
        assertEquals(List.of(), f.reads());
        return List.of(calls.stream().filter(c -> !c.refused()).count(), calls.stream().filter(c -> c.refused()).count());
    }

    @Test
    void eachChangeIsOneConditionalWrite_noRead_twoWhereTheRefusalShowsAnotherWriteApplies() {
        String team = StoreFixture.team("subs-cost");
        assertEquals(List.of(1L, 1L), cost(() -> store.started(team, "p", entry("a0")), true),
                "the agent's first start: refused on no map, then the map made whole");
        assertEquals(List.of(1L, 0L), cost(() -> store.started(team, "p", entry("a1")), true), "a start: one write");
        assertEquals(List.of(0L, 1L), cost(() -> store.started(team, "p", entry("a1")), false),
                "a repeated start: one refused write");
        for (int i = 2; i < Subagents.MAX; i++) {
            store.started(team, "p", entry("a" + i));
        }
        assertEquals(List.of(1L, 1L), cost(() -> store.started(team, "p", entry("a8")), true),
                "a ninth start: refused on a full map, then counted");
        assertEquals(List.of(1L, 1L), cost(() -> store.stopped(team, "p", "a8"), true),
                "the stop of a counted one: refused on no such id, then one fewer counted");
        assertEquals(List.of(0L, 1L), cost(() -> store.stopped(team, "p", "unknown"), false),
                "an unknown stop with none counted: one refused write");
        assertEquals(List.of(1L, 0L), cost(() -> store.stopped(team, "p", "a3"), true), "a stop: one write");
        assertEquals(List.of(1L, 0L), cost(() -> store.replace(team, "p", Subagents.NONE), true),
                "a life's end: one write");
        assertEquals(List.of(0L, 1L), cost(() -> store.replace(team, "p", Subagents.NONE), false),
                "clearing an empty set: one refused write");
        assertEquals(List.of(1L, 0L), cost(() -> store.started(team, "p", entry("n1")), true),
                "the next life's first start: one write (the end left the map empty)");
        assertEquals(List.of(0L, 1L), cost(() -> store.replace(team, "never", Subagents.NONE), false),
                "a life's end of an agent that never ran one: one refused write, no map made");
        Subagents reported = new Subagents(List.of(entry("r1"), entry("g2")), 3);
        assertEquals(List.of(1L, 0L), cost(() -> store.replace(team, "p", reported), true), "a host's report");
        assertEquals(List.of(0L, 1L), cost(() -> store.replace(team, "p", reported), false),
                "the same report again: one refused write");
        assertEquals(reported, data.get(team, "p").subagents());
    }

    /**
     * Why the set's first start is two writes: making the map and setting one of its keys in one expression is
     * refused as overlapping paths, by AWS ("Two document paths overlap with each other") and by the engine.
     */
    @Test
    void theMapAndOneOfItsKeysInOneExpression_areRefusedAsOverlappingPaths() {
        Map<String, AttributeValue> key = Map.of("pk", AttributeValue.fromS("AGENT#overlap"),
                "sk", AttributeValue.fromS("DATA"));
        DynamoDbException e = assertThrows(DynamoDbException.class, () -> f.dynamo.updateItem(r -> r
                .tableName(f.tables.tables.ledger()).key(key)
                .updateExpression("SET #s = if_not_exists(#s, :empty), #s.#id = :v")
                .expressionAttributeNames(Map.of("#s", "subs", "#id", "a1"))
                .expressionAttributeValues(Map.of(":empty", AttributeValue.fromM(Map.of()),
                        ":v", AttributeValue.fromN("1")))));
        assertTrue(e.getMessage().contains("Two document paths overlap"), e.getMessage());
    }

    @Test
    void anySequenceOfStartsAndStops_leavesTheSetTheDomainsRulesGive() {
        String team = StoreFixture.team("subs-model");
        Random random = new Random(7);
        Subagents expected = Subagents.NONE;
        for (int step = 0; step < 300; step++) {
            String id = (random.nextBoolean() ? "a" : "g") + random.nextInt(7);
            Subagents next;
            boolean written;
            int what = random.nextInt(20);
            if (what == 0) {
                next = Subagents.NONE;
                written = store.replace(team, "m", next);
            } else if (what < 12) {
                Subagents.Entry e = entry(id);
                next = expected.started(e);
                written = store.started(team, "m", e);
            } else {
                next = expected.stopped(id);
                written = store.stopped(team, "m", id);
            }
            assertEquals(!next.equals(expected), written, "step " + step + ": written only on a change");
            expected = next;
            assertEquals(expected, data.get(team, "m").subagents(), "step " + step);
        }
    }
}
