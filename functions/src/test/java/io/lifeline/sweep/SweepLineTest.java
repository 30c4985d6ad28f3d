package io.lifeline.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.app.Sweeper;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The sweep's one log line names what it did, host leases included, and what it publishes: nothing for an
 * idle deployment or a healthy fleet, its faults in one metric.
 */
@Tag("unit")
class SweepLineTest {
    private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");
    private final List<String> lines = new ArrayList<>();

    @AfterEach
    void restore() {
        Log.sink(null);
    }

    private static Sweeper.Report report(int alive, List<String> dead, int skipped, List<String> revivesEnded) {
        return new Sweeper.Report(AT, new Sweeper.Scanned(alive, alive, 2.0), new Sweeper.Written(dead, 0, 0, 0,
                skipped, revivesEnded, List.of()), new Sweeper.Held(List.of(), null), new Sweeper.Hosts(List.of(), 0),
                Duration.ofMillis(12));
    }

    private JsonNode emitted(Sweeper.Report r) throws Exception {
        Log.sink(lines::add);
        SweepHandler.emit(SweepHandler.line(r), r, AT);
        return Json.parse(lines.get(lines.size() - 1));
    }

    @Test
    void emit_ofAnIdleDeploymentsSweep_publishesNoCustomMetric_andKeepsItsCountsOnTheLine() throws Exception {
        JsonNode line = emitted(report(0, List.of(), 0, List.of()));
        assertFalse(line.has("_aws"), "0 agents: no metric is published, so none is billed: " + line);
        assertEquals(0, line.get("itemsScanned").asInt());
        assertEquals(12, line.get("durationMs").asInt(), "the sweep's time stays on its line");
        assertEquals("idle", line.get("outcome").asText());
    }

    @Test
    void emit_ofAHealthyFleetsSweep_publishesNoCustomMetric_andSaysWhatItSawOnItsLine() throws Exception {
        JsonNode line = emitted(report(20, List.of(), 0, List.of()));
        assertFalse(line.has("_aws"), line.toString());
        assertEquals(20, line.get("aliveSeen").asInt());
        assertEquals(20, line.get("itemsScanned").asInt());
    }

    @Test
    void emit_ofSkippedWritesAndEndedRevives_countsThemAsFaults() throws Exception {
        JsonNode line = emitted(report(20, List.of("t/a1"), 2, List.of("t/a2")));
        assertEquals(2, line.get(Metrics.SWEEP_WRITE_ERRORS).asInt());
        assertEquals(1, line.get(Metrics.AGENTS_MARKED_DEAD).asInt());
        assertEquals(3, line.get(Metrics.FAULTS).asInt(), "2 skipped writes and a revive the sweep had to end");
        assertTrue(line.at("/_aws/CloudWatchMetrics").toString().contains("\"Dimensions\":[[]]"), line.toString());
    }

    private static Sweeper.Report withHosts(List<String> hostsExpired) {
        return new Sweeper.Report(Instant.parse("2026-03-01T12:00:00Z"), new Sweeper.Scanned(12, 10, 1.5),
                new Sweeper.Written(List.of("acme/a-1"), 2, 0, 0, 0, List.of(), List.of()),
                new Sweeper.Held(List.of(), null), new Sweeper.Hosts(hostsExpired, 0), Duration.ofMillis(40));
    }

    @Test
    void line_ofASweepThatFoundSilentHosts_namesEachHostAsTeamSlashHost() {
        ObjectNode line = SweepHandler.line(withHosts(List.of("acme/host-1", "beta/host-9")));
        assertEquals(List.of("acme/host-1", "beta/host-9"),
                Json.MAPPER.convertValue(line.get("hostsExpired"), List.class));
        assertEquals("acted", line.get("outcome").asText());
    }

    /** {@code n} ids as long as ids can be: a 64-character team and a 64-character agent. */
    private static List<String> longIds(String kind, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String team = ("team-" + (i % 997) + "-").repeat(20).substring(0, 64);
            String id = (kind + "-" + i + "-").repeat(20);
            ids.add(team + "/" + id.substring(id.length() - 64));
        }
        return ids;
    }

    /**
     * One mass death: 50,000 agents marked dead in one sweep, 5,000 teams held, 5,000 hosts silent, 5,000 restarts
     * ended and 5,000 waits raised. The line (the sweep's EMF document) names the first 20 of each and counts them
     * all: it stays far under CloudWatch Logs' 256 KB event limit, and its counts and metrics are whole.
     */
    @Test
    void emit_ofAMassDeath_namesTheFirstFewOfEachList_countsThemAll_andStaysUnderTheEventLimit() throws Exception {
        List<String> dead = longIds("dead", 50_000);
        List<String> held = longIds("held", 5_000);
        List<String> hosts = longIds("host", 5_000);
        List<String> ended = longIds("ended", 5_000);
        List<String> awaiting = longIds("wait", 5_000);
        Sweeper.Report r = new Sweeper.Report(AT, new Sweeper.Scanned(60_000, 60_000, 900.0),
                new Sweeper.Written(dead, 0, 0, 0, 3, ended, awaiting),
                new Sweeper.Held(held, null), new Sweeper.Hosts(hosts, 0), Duration.ofMillis(9_000));
        Log.sink(lines::add);
        SweepHandler.emit(SweepHandler.line(r), r, AT);
        String text = lines.get(lines.size() - 1);
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        assertTrue(bytes < 256 * 1024, bytes + " bytes");
        assertTrue(bytes < 16 * 1024, "five lists of 20 long ids and the counts: " + bytes + " bytes");
        JsonNode line = Json.parse(text);
        Map<String, List<String>> lists = Map.of("markedDead", dead, "teamsHeld", held, "hostsExpired", hosts,
                "revivesEnded", ended, "awaitingInput", awaiting);
        lists.forEach((field, all) -> {
            assertEquals(all.subList(0, SweepHandler.NAMED), Json.MAPPER.convertValue(line.get(field), List.class),
                    field);
            assertEquals(all.size(), line.get(field + "Count").asInt(), field + "Count");
        });
        assertEquals(50_000, line.get(Metrics.AGENTS_MARKED_DEAD).asInt());
        assertEquals(5_000, line.get(Metrics.SELF_PRESERVATION_HOLDS).asInt());
        assertEquals(3, line.get(Metrics.SWEEP_WRITE_ERRORS).asInt());
        assertEquals(5_003, line.get(Metrics.FAULTS).asInt(), "3 skipped writes and 5,000 restarts ended");
        assertTrue(line.at("/_aws/CloudWatchMetrics").toString().contains(Metrics.AGENTS_MARKED_DEAD), text);
        System.out.println("a mass death's sweep line: " + bytes + " bytes for 50,000 deaths, 5,000 teams held, "
                + "5,000 hosts expired, 5,000 restarts ended, 5,000 waits raised");
    }

    @Test
    void line_ofAFewDeaths_namesEachAndCountsThem_andAnIdleLineCarriesNoCount() {
        ObjectNode line = SweepHandler.line(withHosts(List.of()));
        assertEquals(List.of("acme/a-1"), Json.MAPPER.convertValue(line.get("markedDead"), List.class));
        assertEquals(1, line.get("markedDeadCount").asInt());
        assertFalse(line.has("hostsExpiredCount"), line.toString());
        assertFalse(line.has("teamsHeldCount"), line.toString());
    }

    @Test
    void line_ofASweepWithNoSilentHost_hasAnEmptyHostsExpired() {
        ObjectNode line = SweepHandler.line(withHosts(List.of()));
        assertEquals(0, line.get("hostsExpired").size());
        assertEquals(true, line.get("hostsExpired").isArray());
    }

    @Test
    void line_ofASweepThatDroppedLeaseAnswers_countsThem_andOneThatDroppedNoneLeavesTheFieldOut() {
        Sweeper.Report dropped = new Sweeper.Report(Instant.parse("2026-03-01T12:00:00Z"),
                new Sweeper.Scanned(12, 10, 1.5), new Sweeper.Written(List.of(), 0, 0, 0, 0, List.of(), List.of()),
                new Sweeper.Held(List.of(), null), new Sweeper.Hosts(List.of(), 3), Duration.ofMillis(40));
        assertEquals(3, SweepHandler.line(dropped).get("leaseAnswersDropped").asInt());
        assertFalse(SweepHandler.line(withHosts(List.of())).has("leaseAnswersDropped"));
    }
}
