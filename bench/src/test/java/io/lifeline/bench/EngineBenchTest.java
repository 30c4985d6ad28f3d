package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The store engine's section at a tiny size: every row is there and its counts add up (never its times). */
@Tag("store")
class EngineBenchTest {
    @Test
    void run_atATinySize_scansSweepsAndSeedsEveryItem() throws Exception {
        Report report = new Report();
        EngineBench.run(report, new EngineBench.Sizes(250, 2, 500, 640));
        List<Report.Row> rows = report.rows();
        // 250 agents and their 3 teams' items.
        assertEquals(253, value(rows, "Scan of the live table, 250 agents: items scanned"));
        assertEquals(250, value(rows, "sweep of 250 healthy agents (second run): agents seen alive"));
        assertEquals(0, value(rows, "sweep of 250 healthy agents (first run): writes (dead, misses)"));
        double written = value(rows, "history, 2 agents x 30 days, into a data dir: items written");
        assertTrue(written > 2 * 30, "30 days of history for 2 agents: " + written);
        assertEquals(written, value(rows, "history, 2 agents x 30 days, into a data dir: items counted back (Scan COUNT)"));
        for (String threads : new String[] {"1 thread(s)", "16 thread(s)", "64 thread(s)"}) {
            assertTrue(value(rows, "conditional UpdateItem, data dir (group commit), " + threads) > 0);
        }
        assertTrue(value(rows, "conditional UpdateItem, in memory, 1 thread") > 0);
        assertTrue(report.rows().stream().filter(r -> "8".equals(r.section())).allMatch(
                r -> r.met() == null || r.met() || r.figure().endsWith("wall time")), report.table());
    }

    private static double value(List<Report.Row> rows, String figure) {
        return rows.stream().filter(r -> r.figure().equals(figure)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + figure)).value();
    }
}
