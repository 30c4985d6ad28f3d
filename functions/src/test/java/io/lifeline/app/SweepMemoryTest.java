package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.HostLease;
import io.lifeline.store.StoreTables;
import io.lifeline.store.sweep.SweepStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * What one sweep keeps while it reads the live table, per agent, at 8,000, 32,000 and 128,000 agents on the real
 * store (the engine, in process): teams of 100, every fourth team hosted in leases of 25 (sizes of whole groups of
 * four teams, so each size has the same share), one agent in 20 stale. It is measured twice: as the intake's own count of the facts it keeps, and as retained heap (the heap after a
 * full collection with the intake reachable, less the heap after one without it). Both per agent must not grow with
 * the fleet: a heard agent costs a counter, a hosted one its lease entry and its link, a stale one its record.
 */
@Tag("store")
class SweepMemoryTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final int TEAM_SIZE = 100;
    private static final int LEASE_SIZE = 25;
    private static final long STALE_AFTER_MS = 60_000;
    /** How far apart two reads of the heap after collections can be with nothing changed between them. */
    private static final long HEAP_NOISE_BYTES = 512 * 1024;
    /** Keeps the intake reachable while the heap is read with it. */
    private static volatile SweepIntake held;

    private record Kept(int agents, long facts, long bytes) {
        double factsPerAgent() {
            return (double) facts / agents;
        }

        double bytesPerAgent() {
            return (double) bytes / agents;
        }
    }

    @Test
    void whatTheSweepKeepsPerAgent_doesNotGrowWithTheFleet() {
        List<Kept> kept = new ArrayList<>();
        for (int n : new int[] {8_000, 32_000, 128_000}) {
            kept.add(keptAt(n));
        }
        Kept small = kept.get(0);
        for (Kept k : kept) {
            System.out.printf("sweep intake at %,d agents: %,d facts (%.3f per agent), %,d bytes retained"
                    + " (%.1f per agent)%n", k.agents(), k.facts(), k.factsPerAgent(), k.bytes(), k.bytesPerAgent());
        }
        for (int i = 1; i < kept.size(); i++) {
            Kept k = kept.get(i);
            Kept before = kept.get(i - 1);
            // The intake's own count is exact: the same facts per agent at every size.
            assertEquals(small.factsPerAgent(), k.factsPerAgent(), 0.01,
                    "facts kept per agent at " + k.agents() + " against " + small.agents());
            // Keeping every alive agent's record (about 270 bytes: its ids, two instants, its source) would be over.
            assertTrue(k.bytesPerAgent() < 150, "bytes retained per agent at " + k.agents() + ": " + k.bytesPerAgent());
            // Retained heap is read after collections, which leave a few hundred KB either way: that much, spread
            // over the smaller fleet's agents, is allowed on top of a quarter's growth (at 8,000 agents it is 65 bytes
            // an agent, at 32,000 16), so a size's figure is held to the one before it, not to the noise.
            assertTrue(k.bytesPerAgent() <= before.bytesPerAgent() * 1.25 + (double) HEAP_NOISE_BYTES / before.agents(),
                    "bytes retained per agent at " + k.agents() + " (" + k.bytesPerAgent() + ") against "
                            + before.agents() + " (" + before.bytesPerAgent() + ")");
        }
    }

    /** One sweep's read of a fleet of {@code n} agents: the facts its intake keeps, and their heap. */
    private static Kept keptAt(int n) {
        try (StoreTables tables = StoreTables.create()) {
            seed(tables.dynamo, tables.tables.live(), n);
            SweepStore store = new SweepStore(tables.dynamo, tables.tables, 4);
            long facts = read(store, n);
            long with = heapAfterCollection();
            held = null;
            long without = heapAfterCollection();
            return new Kept(n, facts, with - without);
        }
    }

    /**
     * One sweep's read into an intake only {@link #held} keeps (no local of the caller's frame holds it, so dropping
     * that field frees it); answers the facts it keeps.
     */
    private static long read(SweepStore store, int n) {
        SweepIntake intake = new SweepIntake(NOW, null);
        store.scan(intake);
        held = intake.finish();
        assertEquals(n, intake.census().alive(), "every agent counted");
        assertEquals(n / 20, intake.census().kept(), "the stale ones kept, one in 20");
        return intake.retainedFacts();
    }

    private static long heapAfterCollection() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            memory.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /**
     * Agents {@code agent-<i>} in teams of 100; every fourth team beats through leases of 25 (its items name the
     * lease; their beats are on it), the others directly from four source addresses; every twentieth agent stale.
     */
    private static void seed(DynamoDbClient dynamo, String table, int n) {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        Map<String, Map<String, AttributeValue>> leaseBeats = new LinkedHashMap<>();
        long fresh = NOW.toEpochMilli() - 5_000;
        long silent = NOW.toEpochMilli() - 120_000;
        for (int i = 0; i < n; i++) {
            int t = i / TEAM_SIZE;
            String team = "mem" + t;
            String id = "agent-" + i;
            boolean stale = i % 20 == 0;
            boolean hosted = t % 4 == 0;
            if (i % TEAM_SIZE == 0) {
                items.add(Map.of("pk", s("TEAM#" + team), "sk", s("TEAM")));
            }
            long beat = stale ? silent : fresh;
            Map<String, AttributeValue> item = new HashMap<>();
            item.put("pk", s("TEAM#" + team + "#AGENT#" + id));
            item.put("sk", s("AGENT"));
            item.put("status", s("ready"));
            item.put("beats", num(3));
            item.put("grace", num(2));
            item.put("staleMs", num(STALE_AFTER_MS));
            if (hosted) {
                String host = "host-" + (i % TEAM_SIZE) / LEASE_SIZE;
                item.put("lease", s(host));
                item.put("hbAt", num(silent));
                item.put("deadline", num(silent + STALE_AFTER_MS));
                leaseBeats.computeIfAbsent(team + "#HOST#" + host, k -> new HashMap<>())
                        .put(HostLease.key(id), num(beat));
            } else {
                item.put("ip", s("10.0." + t % 250 + "." + i % 4));
                item.put("hbAt", num(beat));
                item.put("deadline", num(beat + STALE_AFTER_MS));
            }
            items.add(item);
        }
        leaseBeats.forEach((key, beats) -> items.add(Map.of("pk", s("TEAM#" + key), "sk", s("HOST"),
                "at", num(fresh), "a", AttributeValue.fromM(beats))));
        for (int from = 0; from < items.size(); from += 25) {
            List<WriteRequest> chunk = items.subList(from, Math.min(items.size(), from + 25)).stream()
                    .map(it -> WriteRequest.builder().putRequest(PutRequest.builder().item(it).build()).build())
                    .toList();
            Map<String, List<WriteRequest>> pending = Map.of(table, chunk);
            while (!pending.isEmpty()) {
                Map<String, List<WriteRequest>> request = pending;
                var answer = dynamo.batchWriteItem(b -> b.requestItems(request));
                pending = answer.hasUnprocessedItems() ? answer.unprocessedItems() : Map.of();
            }
        }
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    private static AttributeValue num(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }
}
