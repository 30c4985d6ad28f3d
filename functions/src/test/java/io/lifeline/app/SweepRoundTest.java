package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.HostLease;
import io.lifeline.agent.SweepPlan;
import io.lifeline.store.StoreTables;
import io.lifeline.store.sweep.SweepRounds;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * A sweep fanned out over parts ({@link SweepRound}) against one invocation's sweep ({@link Sweeper#sweepOnce}), on
 * the real store (the engine, in process), over the same generated fleets: the round of 1, 2 and 4 parts writes the
 * same items and reports the same deaths, misses, holds, silent hosts, waits, stalls and ended revives; a round with a part missing writes nothing
 * and the next round counts it; what a part ships of a healthy fleet does not grow with its agents; what it ships of
 * hosted and stale agents, compressed, stays under a bound of bytes and write units an agent.
 */
@Tag("store")
class SweepRoundTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final long STALE_AFTER_MS = 60_000;
    private static final SweepPlan.Policy POLICY = new SweepPlan.Policy(0.5, 4, 0.5, 20);
    private static final Sweeper.Timing TIMING = new Sweeper.Timing(Duration.ofSeconds(11), Duration.ofMinutes(10));

    /**
     * A team whose last agents are not plain: one waiting for a person past its alert, one working with no progress
     * past its stall, one left restarting past the revive flow's longest run, one paused while silent.
     */
    private static final String MISC = "misc";

    /** One team's agents: {@code size} of them, the first {@code stale} silent; hosted ones in leases of 5. */
    private record TeamSpec(String team, int size, int stale, boolean hosted, boolean silentHost) {
    }

    /** Single and hosted teams, stale agents, one team its own guard holds and one silent host. */
    private static final List<TeamSpec> MIXED = List.of(
            new TeamSpec("alpha", 20, 2, false, false), new TeamSpec("beta", 20, 1, false, false),
            new TeamSpec("gamma", 30, 3, false, false), new TeamSpec("delta", 20, 0, false, false),
            new TeamSpec("held", 10, 8, false, false), new TeamSpec("hosted", 20, 1, true, false),
            new TeamSpec("silent", 10, 5, true, true), new TeamSpec(MISC, 8, 1, false, false));
    /** Most of the fleet silent at once: the fleet-wide guard holds. */
    private static final List<TeamSpec> BROWNOUT = List.of(
            new TeamSpec("one", 20, 3, false, false), new TeamSpec("two", 20, 3, false, false),
            new TeamSpec("three", 20, 3, false, false), new TeamSpec("four", 20, 2, true, false),
            new TeamSpec("five", 20, 20, false, false), new TeamSpec("six", 20, 20, false, false),
            new TeamSpec("seven", 20, 20, false, false));

    @Test
    void roundsOfOneTwoAndFourParts_writeAndReportExactlyWhatOneSweepDoes() {
        for (List<TeamSpec> fleet : List.of(MIXED, BROWNOUT)) {
            try (StoreTables single = StoreTables.create()) {
                seed(single.dynamo, single.tables.live(), fleet);
                Sweeper.Report expected = sweeper(single).sweepOnce(NOW);
                Map<String, Map<String, AttributeValue>> written = items(single);
                if (fleet == MIXED) {
                    assertEquals(List.of("held"), expected.teamsHeld(), "the team its own guard holds");
                    assertEquals(List.of("silent/host-0", "silent/host-1"), sorted(expected.hostsExpired()), "the silent hosts");
                    assertFalse(expected.markedDead().isEmpty(), "the fleet has deaths to make");
                    assertEquals(List.of(MISC + "/misc-7"), expected.awaitingRaised(), "the wait's alert");
                    assertEquals(List.of(MISC + "/misc-6"), expected.stalled(), "the stall");
                    assertEquals(List.of(MISC + "/misc-5"), expected.revivesEnded(), "the orphaned revive");
                    assertTrue(expected.markedDead().contains(MISC + "/misc-0"), "a silent agent of grace 1 dies");
                    assertFalse(expected.markedDead().contains(MISC + "/misc-4"), "a silent paused one does not");
                } else {
                    assertTrue(expected.fleetHeld(), "the fleet-wide guard holds the brownout");
                }
                for (int parts : new int[] {1, 2, 4, -2}) {
                    try (StoreTables fanned = StoreTables.create()) {
                        seed(fanned.dynamo, fanned.tables.live(), fleet);
                        // -2: two parts, each shipped in chunks of 300 bytes compressed (many chunks to a part).
                        Sweeper.Report report = parts > 0 ? round(fanned, parts, NOW, parts)
                                : round(fanned, new SweepRounds(fanned.dynamo, fanned.tables, 300), -parts, NOW);
                        assertNotNull(report, "the part completing the round decides it");
                        if (parts < 0) {
                            long chunks = fanned.dynamo.scanPaginator(r -> r.tableName(fanned.tables.ledger())).items()
                                    .stream().filter(i -> i.get("sk").s().startsWith("PART#")).count();
                            assertTrue(chunks > 8, "two parts in chunks of 300 bytes: " + chunks + " chunks");
                        }
                        assertSame(expected, report, parts);
                        assertEquals(written, items(fanned), "the same items after a round of " + parts);
                    }
                }
            }
        }
    }

    @Test
    void aRoundMissingAPart_writesNothing_andTheNextRoundCountsItAndWrites() {
        try (StoreTables tables = StoreTables.create()) {
            seed(tables.dynamo, tables.tables.live(), MIXED);
            Map<String, Map<String, AttributeValue>> before = items(tables);
            assertNull(round(tables, 4, NOW, 3), "three parts of four: the round is not decided");
            assertEquals(before, items(tables), "nothing written by a round a part of which never came");
            SweepRound next = new SweepRound(sweeper(tables), new SweepRounds(tables.dynamo, tables.tables), 2);
            Instant later = NOW.plusSeconds(15);
            SweepRound.Begun begun = next.begin(later, 4);
            assertEquals(1, begun.previousMissing(), "the round before lacked one part");
            Sweeper.Report report = null;
            for (int p = 0; p < 4; p++) {
                SweepRound.Done done = next.run(new SweepRound.Part(later, p, 4));
                report = done.report() != null ? done.report() : report;
            }
            assertNotNull(report, "the whole round decides");
            assertFalse(report.markedDead().isEmpty() && report.missesRecorded() == 0, "and writes");
            Map<String, Map<String, AttributeValue>> decided = items(tables);
            SweepRound.Done again = next.run(new SweepRound.Part(later, 2, 4));
            assertNull(again.report(), "a part delivered again, its round decided, decides nothing");
            assertEquals(decided, items(tables), "and writes nothing");
            assertEquals(0, next.begin(later.plusSeconds(15), 4).previousMissing(), "a decided round lacks nothing");
        }
    }

    @Test
    void whatAPartShipsOfAHealthyFleet_isTheSameAtFourTimesTheAgents() {
        long[] shipped = new long[2];
        long[] bytes = new long[2];
        long[] itemBytes = new long[2];
        int[] sizes = {40, 160};
        for (int i = 0; i < 2; i++) {
            List<TeamSpec> fleet = new ArrayList<>();
            for (int t = 0; t < 10; t++) {
                fleet.add(new TeamSpec("team" + t, sizes[i], 1, false, false));
            }
            try (StoreTables tables = StoreTables.create()) {
                seed(tables.dynamo, tables.tables.live(), fleet);
                SweepRound round = new SweepRound(sweeper(tables), new SweepRounds(tables.dynamo, tables.tables), 2);
                round.begin(NOW, 2);
                for (int p = 0; p < 2; p++) {
                    SweepRound.Done done = round.run(new SweepRound.Part(NOW, p, 2));
                    shipped[i] += done.itemsShipped();
                    bytes[i] += done.bytesShipped();
                    itemBytes[i] += done.itemBytes();
                }
            }
        }
        System.out.printf("shipped by a round of 2 parts: %d items (%d bytes as attribute maps, %d shipped) at 400"
                + " agents, %d (%d, %d) at 1,600%n", shipped[0], itemBytes[0], bytes[0], shipped[1], itemBytes[1],
                bytes[1]);
        // Ten teams' items and their ten stale agents, at either size: what a part ships is its stale agents and
        // teams, not its heard agents (their counters are one entry per team and source address).
        assertEquals(20, shipped[0]);
        assertEquals(shipped[0], shipped[1]);
    }

    @Test
    void whatAPartShipsOfHostedAgents_isEveryLeaseAndEveryAgentThatNamesOne_compressed() {
        List<TeamSpec> fleet = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            fleet.add(new TeamSpec("hosted" + t, 100, 0, true, false));
        }
        // Agent ids <team>-<i> (what this test measured before the chunks were compressed: 67,092 bytes as attribute
        // maps, 168 a hosted agent, so at least 66 write units), and random UUIDs, which compress less.
        for (boolean uuids : new boolean[] {false, true}) {
            Shipped s = ship(fleet, uuids);
            System.out.printf("a healthy hosted fleet of 400 agents in leases of 5 (%s ids): %d items shipped, %d"
                    + " bytes as attribute maps (%.0f per hosted agent); shipped in %d bytes (%.1f per hosted agent),"
                    + " %d write units (%.3f per hosted agent)%n", uuids ? "UUID" : "sequential", s.items,
                    s.itemBytes, s.itemBytes / 400.0, s.bytes, s.bytes / 400.0, s.units, s.units / 400.0);
            // Not yet fewer: the lease steps join each lease with the agents that name it, which other parts may
            // hold, so every lease (80) and every agent naming one (400) ships, beside the 4 teams.
            assertEquals(4 + 80 + 400, s.items);
            // But gzip'd: the same attribute names and near-identical values over and over.
            long most = 400 * (uuids ? 45 : 20);
            assertTrue(s.bytes <= most, s.bytes + " bytes shipped for 400 hosted agents, at most " + most);
            assertTrue(s.units <= 2 * ((most / 2 + 1023) / 1024), s.units + " write units, two parts' chunks");
        }
    }

    @Test
    void whatAPartShipsOfStaleAgents_isTheirItems_compressed() {
        List<TeamSpec> fleet = new ArrayList<>();
        for (int t = 0; t < 10; t++) {
            fleet.add(new TeamSpec("team" + t, 100, 50, false, false));
        }
        Shipped s = ship(fleet, true);
        System.out.printf("10 teams of 100 agents with UUID ids, 50 stale in each: %d items shipped, %d bytes as"
                + " attribute maps; shipped in %d bytes, %d write units%n", s.items, s.itemBytes, s.bytes, s.units);
        assertEquals(10 + 500, s.items, "the teams and their stale agents");
        assertTrue(s.bytes <= 500 * 35, s.bytes + " bytes shipped for 500 stale agents");
    }

    /** What a round of 2 parts ships of {@code fleet}: items, their size as attribute maps, bytes and units written. */
    private record Shipped(long items, long itemBytes, long bytes, long units) {
    }

    private static Shipped ship(List<TeamSpec> fleet, boolean uuids) {
        try (StoreTables tables = StoreTables.create()) {
            seed(tables.dynamo, tables.tables.live(), fleet, uuids);
            SweepRound round = new SweepRound(sweeper(tables), new SweepRounds(tables.dynamo, tables.tables), 2);
            round.begin(NOW, 2);
            Shipped sum = new Shipped(0, 0, 0, 0);
            for (int p = 0; p < 2; p++) {
                SweepRound.Done d = round.run(new SweepRound.Part(NOW, p, 2));
                sum = new Shipped(sum.items + d.itemsShipped(), sum.itemBytes + d.itemBytes(),
                        sum.bytes + d.bytesShipped(), sum.units + d.writeUnits());
            }
            return sum;
        }
    }

    /** A round of {@code of} parts at {@code at} of which parts {@code 0..run-1} run; the deciding part's report. */
    private static Sweeper.Report round(StoreTables tables, int of, Instant at, int run) {
        return round(tables, new SweepRounds(tables.dynamo, tables.tables), of, at, run);
    }

    private static Sweeper.Report round(StoreTables tables, SweepRounds rounds, int of, Instant at) {
        return round(tables, rounds, of, at, of);
    }

    private static Sweeper.Report round(StoreTables tables, SweepRounds rounds, int of, Instant at, int run) {
        SweepRound round = new SweepRound(sweeper(tables), rounds, 2);
        SweepRound.Begun begun = round.begin(at, of);
        assertEquals(of - 1, begun.toSend().size(), "parts 1.." + (of - 1) + " are sent");
        Sweeper.Report report = null;
        for (int p = 0; p < run; p++) {
            SweepRound.Done done = round.run(new SweepRound.Part(at, p, of));
            assertTrue(report == null || done.report() == null, "one part decides");
            report = done.report() != null ? done.report() : report;
        }
        return report;
    }

    private static void assertSame(Sweeper.Report expected, Sweeper.Report actual, int parts) {
        String of = " in a round of " + parts;
        assertEquals(sorted(expected.markedDead()), sorted(actual.markedDead()), "marked dead" + of);
        assertEquals(expected.missesRecorded(), actual.missesRecorded(), "misses" + of);
        assertEquals(expected.raceLostToHeartbeat(), actual.raceLostToHeartbeat(), "races" + of);
        assertEquals(expected.skippedOnError(), actual.skippedOnError(), "skipped" + of);
        assertEquals(sorted(expected.teamsHeld()), sorted(actual.teamsHeld()), "teams held" + of);
        assertEquals(expected.fleetHeld(), actual.fleetHeld(), "fleet held" + of);
        assertEquals(fleet(expected.fleet()), fleet(actual.fleet()), "the fleet's outcome" + of);
        assertEquals(sorted(expected.hostsExpired()), sorted(actual.hostsExpired()), "silent hosts" + of);
        assertEquals(expected.aliveSeen(), actual.aliveSeen(), "alive seen" + of);
        assertEquals(expected.itemsScanned(), actual.itemsScanned(), "items scanned" + of);
        assertEquals(expected.leaseAnswersDropped(), actual.leaseAnswersDropped(), "answers dropped" + of);
        assertEquals(sorted(expected.awaitingRaised()), sorted(actual.awaitingRaised()), "waits raised" + of);
        assertEquals(sorted(expected.stalled()), sorted(actual.stalled()), "stalls raised" + of);
        assertEquals(sorted(expected.revivesEnded()), sorted(actual.revivesEnded()), "revives ended" + of);
    }

    /** The fleet's outcome, its agents in id order (a single sweep's order follows its pages' arrival). */
    private static String fleet(SweepPlan.FleetOutcome f) {
        if (f == null) {
            return "none";
        }
        String verdict = f.verdict() == null ? "none" : f.verdict().kind() + " " + f.verdict().domain() + " "
                + sorted(f.verdict().agents().stream().map(a -> a.team() + "/" + a.agentId()).toList());
        return f.alive() + " " + f.stale() + " " + f.staleTeams() + " " + f.held() + " " + f.threshold() + " " + verdict;
    }

    private static List<String> sorted(List<String> ids) {
        return ids.stream().sorted().toList();
    }

    private static Sweeper sweeper(StoreTables tables) {
        return new Sweeper(new SweepStore(tables.dynamo, tables.tables, 2), new TeamStore(tables.dynamo, tables.tables),
                POLICY, TIMING, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    /** The live table's items, keyed by pk and sk (a round's own are on the ledger). */
    private static Map<String, Map<String, AttributeValue>> items(StoreTables tables) {
        Map<String, Map<String, AttributeValue>> out = new TreeMap<>();
        tables.dynamo.scanPaginator(s -> s.tableName(tables.tables.live())).items()
                .forEach(item -> out.put(item.get("pk").s() + "|" + item.get("sk").s(), item));
        return out;
    }

    /**
     * Each team's items: its team item, then its agents ({@code <team>-<i>}), the first {@code stale} silent for two
     * minutes; a hosted team's agents beat through leases of 5 ({@code host-<i / 5>}), a silent host's lease renewed
     * two minutes ago. Single agents beat from four source addresses.
     */
    private static void seed(DynamoDbClient dynamo, String table, List<TeamSpec> fleet) {
        seed(dynamo, table, fleet, false);
    }

    /** As {@link #seed(DynamoDbClient, String, List)}; with {@code uuids}, agent ids are random UUIDs (seeded). */
    private static void seed(DynamoDbClient dynamo, String table, List<TeamSpec> fleet, boolean uuids) {
        Random random = new Random(7);
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        long fresh = NOW.toEpochMilli() - 5_000;
        long silent = NOW.toEpochMilli() - 120_000;
        for (TeamSpec spec : fleet) {
            items.add(Map.of("pk", s("TEAM#" + spec.team()), "sk", s("TEAM")));
            Map<String, Map<String, AttributeValue>> leaseBeats = new LinkedHashMap<>();
            for (int i = 0; i < spec.size(); i++) {
                String id = uuids ? new UUID(random.nextLong(), random.nextLong()).toString() : spec.team() + "-" + i;
                long beat = i < spec.stale() ? silent : fresh;
                Map<String, AttributeValue> item = new HashMap<>();
                item.put("pk", s("TEAM#" + spec.team() + "#AGENT#" + id));
                item.put("sk", s("AGENT"));
                item.put("status", s("ready"));
                item.put("beats", num(3));
                item.put("tseq", num(1));
                item.put("grace", num(1));
                item.put("staleMs", num(STALE_AFTER_MS));
                if (spec.hosted()) {
                    String host = "host-" + i / 5;
                    item.put("lease", s(host));
                    item.put("hbAt", num(silent));
                    item.put("deadline", num(silent + STALE_AFTER_MS));
                    leaseBeats.computeIfAbsent(host, k -> new HashMap<>()).put(HostLease.key(id), num(beat));
                } else {
                    item.put("ip", s("10.0.0." + i % 4));
                    item.put("hbAt", num(beat));
                    item.put("deadline", num(beat + STALE_AFTER_MS));
                }
                extras(spec, i, item);
                items.add(item);
            }
            leaseBeats.forEach((host, beats) -> items.add(Map.of("pk", s("TEAM#" + spec.team() + "#HOST#" + host),
                    "sk", s("HOST"), "at", num(spec.silentHost() ? silent : fresh), "a", AttributeValue.fromM(beats))));
        }
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

    /** The {@link #MISC} team's last four agents: a wait, a stall, an orphaned revive, a pause. */
    private static void extras(TeamSpec spec, int i, Map<String, AttributeValue> item) {
        if (!MISC.equals(spec.team())) {
            return;
        }
        long tenMinutesAgo = NOW.toEpochMilli() - 600_000;
        switch (spec.size() - i) {
            case 1 -> item.put("wPs", num(tenMinutesAgo));
            case 2 -> {
                item.put("status", s("working"));
                item.put("pr", num(tenMinutesAgo));
            }
            case 3 -> {
                item.put("status", s("restarting"));
                item.put("tAt", num(NOW.toEpochMilli() - 7_200_000));
            }
            case 4 -> {
                item.put("pausedUntil", num(NOW.toEpochMilli() + 3_600_000));
                item.put("deadline", num(NOW.toEpochMilli() - 60_000));
            }
            default -> {
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
