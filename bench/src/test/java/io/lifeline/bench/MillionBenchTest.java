package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Section 9 at a tiny size: every row is there and its counts add up (never its times). */
@Tag("unit")
class MillionBenchTest {
    @Test
    void run_atATinySize_seedsSweepsBeatsAndReadsTheDashboard() throws Exception {
        Report report = new Report();
        MillionBench.run(report, new int[] {200}, 300, 400);
        List<Report.Row> rows = report.rows();
        // 200 agents, their roster entries, 2 teams and 2 leases.
        assertEquals(404, value(rows, "200 agents: items written"));
        assertEquals(200, value(rows, "200 agents, healthy: agents seen alive"));
        assertEquals(0, value(rows, "200 agents, healthy: sweep writes"));
        // Every 20th agent stale: 10, 4 of them hosted (agents 0, 20, 100 and 120): one miss each.
        assertEquals(10, value(rows, "200 agents, 5 % stale (10): sweep writes (a miss each)"));
        assertTrue(value(rows, "200 agents: heartbeats/s through the in-process handler (4 threads)") > 0);
        // The list is paged: the dashboard's first read is one page, the route's default 100 of the 300.
        assertEquals(100, value(rows, "dashboard refresh, team of 300: agents listed"));
        // A page reads its 100 agents (half a unit each: BatchGetItem rounds each item up to 4 KB) and its roster
        // entries, not the team.
        double units = value(rows, "dashboard refresh, team of 300: GET agents read units");
        assertTrue(units >= 50 && units < 150, report.table());
        // The roster's Query and the page's BatchGetItem, the events' Query, the settings.
        assertTrue(value(rows, "dashboard refresh, team of 300: store requests") >= 4, report.table());
    }

    private static double value(List<Report.Row> rows, String figure) {
        return rows.stream().filter(r -> r.figure().equals(figure)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + figure)).value();
    }
}
