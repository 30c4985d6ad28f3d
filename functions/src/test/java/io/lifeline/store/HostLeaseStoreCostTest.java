package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.dynamo.Items;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What a host lease renewal costs, as the engine reports it ({@code ReturnConsumedCapacity}): one UpdateItem on
 * the live table and no read, within one write unit (1 KB) for the largest batch a daemon sends, {@value
 * Limits#MAX_BATCH_HEARTBEATS} agents with the longest ids and a cached answer each. Lifeline Local's end-to-end
 * version through the batch route is HostLeaseTest, in infra/local.
 */
@Tag("store")
class HostLeaseStoreCostTest {
    private static final String LONGEST_TEAM = "T".repeat(64);
    private static final String LONGEST_HOST = "H".repeat(64);
    /** One table pair for the class, closed after its last test. */
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    private static List<String> longestIds(String prefix, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(prefix.repeat(60) + String.format("%04d", i));
        }
        return ids;
    }

    private static List<HostLeaseStore.Beat> beats(List<String> ids) {
        return ids.stream().map(id -> new HostLeaseStore.Beat(id, f.clock.instant())).toList();
    }

    /** A lease as large as {@code ids} make it: every agent beating, every one with the longest cached answer. */
    private static void fullLease(String team, String host, List<String> ids) {
        f.leases.renew(team, host, beats(ids), f.tick());
        Map<String, HostLease.Cached> answers = new HashMap<>();
        ids.forEach(id -> answers.put(id, new HostLease.Cached(AgentStatus.WORKING,
                Duration.ofSeconds(Limits.MAX_STALE_AFTER_SECONDS))));
        f.leases.settle(team, host, answers, List.of(), Map.of());
    }

    @Test
    void renew_ofTheLargestBatchWithLongestIds_isOneWriteOfOneUnitOnTheLiveTableAndNoRead() {
        List<String> ids = longestIds("A", Limits.MAX_BATCH_HEARTBEATS);
        fullLease(LONGEST_TEAM, LONGEST_HOST, ids);
        f.tick();
        f.dynamo.reset();

        HostLeaseStore.Renewed renewed = f.leases.renew(LONGEST_TEAM, LONGEST_HOST, beats(ids), f.clock.instant());

        List<MeteredDynamo.Call> calls = f.dynamo.calls();
        assertEquals(1, calls.size(), calls::toString);
        MeteredDynamo.Call renewal = calls.get(0);
        assertEquals("UpdateItem", renewal.operation());
        assertEquals(f.tables.tables.live(), renewal.table());
        assertEquals(false, renewal.refused());
        assertEquals(1.0, renewal.units(), 0.0, "at most 1 KB before and after: one write unit");
        assertEquals(List.of(), f.reads());
        assertEquals(ids.size(), renewed.cached().size(), "the cached answers come back from the same write");
    }

    @Test
    void renew_ofMoreAgentsThanALeaseCarries_isRefusedLeaseFull_writingNothing() {
        String team = StoreFixture.team("T".repeat(40));
        List<String> ids = longestIds("B", 2 * HostLeaseStore.MAX_AGENTS);
        fullLease(team, LONGEST_HOST, ids.subList(0, HostLeaseStore.MAX_AGENTS));
        f.tick();
        f.dynamo.reset();

        // 50 at once: refused before any call. 25 others under the full lease: its condition refuses the write, one
        // strongly consistent read tells why, nothing is written.
        LifelineException all = assertThrows(LifelineException.class,
                () -> f.leases.renew(team, LONGEST_HOST, beats(ids), f.clock.instant()));
        assertEquals("LEASE_FULL", all.code());
        assertEquals(List.of(), f.dynamo.calls());
        LifelineException others = assertThrows(LifelineException.class, () -> f.leases.renew(team, LONGEST_HOST,
                beats(ids.subList(HostLeaseStore.MAX_AGENTS, ids.size())), f.clock.instant()));
        assertEquals("LEASE_FULL", others.code());
        List<MeteredDynamo.Call> calls = f.dynamo.calls();
        assertEquals(List.of("UpdateItem", "GetItem"), calls.stream().map(MeteredDynamo.Call::operation).toList());
        assertTrue(calls.get(0).refused(), calls::toString);
    }

    @Test
    void theMeterMeansSomething_aLeaseLargerThanTheServerAllows_costsMoreThanOneUnitToRenew() {
        // Written straight to the table (the server never makes one): 75 agents with the longest ids.
        String team = StoreFixture.team("T".repeat(40));
        List<String> ids = longestIds("C", 3 * HostLeaseStore.MAX_AGENTS);
        Map<String, AttributeValue> beats = new HashMap<>();
        ids.forEach(id -> beats.put(HostLease.key(id), Items.ms(f.clock.instant())));
        Map<String, AttributeValue> item =
                new HashMap<>(HostLeaseStore.key(team, LONGEST_HOST));
        item.put(HostLeaseStore.BEATS, AttributeValue.fromM(beats));
        item.put(HostLeaseStore.RENEWED_AT, Items.ms(f.clock.instant()));
        f.dynamo.putItem(p -> p.tableName(f.tables.tables.live()).item(item));
        f.tick();
        f.dynamo.reset();

        f.leases.renew(team, LONGEST_HOST, beats(ids.subList(0, HostLeaseStore.MAX_AGENTS)), f.clock.instant());

        List<MeteredDynamo.Call> calls = f.dynamo.calls();
        assertEquals(1, calls.size(), calls::toString);
        assertTrue(calls.get(0).units() > 1.0, calls::toString);
    }
}
