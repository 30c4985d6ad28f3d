package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class CostModelTest {
    private static final CostModel.Prices PRICES = new CostModel.Prices(1.0, 0.2, 0.0000133334, 0.625, 0.125, 1.0,
            0.025, 0.40, 1.0, 0.10, 0.30, 0.50, 0.03, 5.0, 0.25, 0.20, 0.09, 0.10,
            0.023);
    private static final CostModel.Deployment DEPLOYMENT = new CostModel.Deployment(8, 8, 4, 9, 4, 4, 1.0, 0.5, 300,
            true, 0, false);
    private static final CostModel.Assumptions ASSUMED = CostModel.Assumptions.defaults();

    private static CostModel.Workload fleet(int agents, int perRequest, double tasks, double historyBytes,
                                            double units) {
        return new CostModel.Workload("test", agents, 30, perRequest, tasks, historyBytes, 361, units, 1, 0, 0);
    }

    private static Map<String, Double> byItem(CostModel.Bill b) {
        return b.lines().stream().collect(Collectors.toMap(CostModel.Line::item, CostModel.Line::usd));
    }

    @Test
    void idleDeployment_paysOnlyTheFixedLines_eachCountedFromItsUnits() {
        CostModel.Bill idle = CostModel.bill(fleet(0, 1, 0, 0, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        Map<String, Double> lines = byItem(idle);
        double sweeps = 4 * 43_200;
        assertEquals(0.80, lines.get("CloudWatch alarms (8, watching 8 metrics)"), 1e-12);
        assertEquals(1.20, lines.get("custom metrics emitted with no agents (4)"), 1e-12);
        assertEquals(43_200 * 1.0 / 1e6, lines.get("sweep clock: the schedule (1 a minute)"), 1e-12);
        assertEquals((15 * 43_200 + 43_200 + 2 * 3 * 43_200) * 0.40 / 1e6,
                lines.get("sweep clock: SQS (delayed messages for the minute's other sweeps)"), 1e-12);
        assertEquals(sweeps * 0.2 / 1e6, lines.get("sweep clock: Lambda requests (4 sweeps a minute)"), 1e-12);
        assertEquals(sweeps * 5.0 / 1e6, lines.get("sweep: X-Ray traces"), 1e-12);
        CostModel.Deployment untraced = new CostModel.Deployment(8, 8, 4, 9, 4, 4, 1.0, 0.5, 300, false, 0,
                false);
        assertEquals(0, byItem(CostModel.bill(fleet(0, 1, 0, 0, 0.05), untraced, ASSUMED, PRICES))
                .get("sweep: X-Ray traces"));
        // An empty live table still costs the minimum per segment: 4 x 0.5 RRU a sweep.
        assertEquals(sweeps * 2 * 0.125 / 1e6, lines.get("sweep: DynamoDB reads (Scan of the live table)"), 1e-12);
        assertTrue(idle.group(CostModel.BEATS) == 0 && idle.group(CostModel.WORK) == 0);
        assertEquals(idle.lines().stream().mapToDouble(CostModel.Line::usd).sum(), idle.total(), 1e-12);
    }

    @Test
    void history_addsItsStorage_andNothingToLiveness_whenTheSweepReadsTheSame() {
        CostModel.Bill with = CostModel.bill(fleet(1_000, 1, 20, 681_207, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        CostModel.Bill without = CostModel.bill(fleet(1_000, 1, 20, 0, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        assertEquals(without.liveness(), with.liveness(), 1e-12);
        double history = 1_000 * 681_207 / 1e9 * (0.25 + 0.20);
        assertEquals(history, with.total() - without.total(), 1e-9);
    }

    @Test
    void sweepReads_growWithAgents_atTheMeasuredUnitsPerAgent() {
        CostModel.Bill b = CostModel.bill(fleet(100_000, 1, 0, 0, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        assertEquals(4.0 * 43_200 * 100_000 * 0.05 * 0.125 / 1e6,
                byItem(b).get("sweep: DynamoDB reads (Scan of the live table)"), 1e-9);
    }

    @Test
    void batchOfTen_dividesRequestsAndKeys_butNotWrites() {
        CostModel.Bill one = CostModel.bill(fleet(1_000, 1, 0, 0, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        CostModel.Bill ten = CostModel.bill(fleet(1_000, 10, 0, 0, 0.05), DEPLOYMENT, ASSUMED, PRICES);
        Map<String, Double> a = byItem(one);
        Map<String, Double> b = byItem(ten);
        assertEquals(1_000 * 86_400 / 1e6, a.get("API Gateway requests (heartbeats)"), 1e-9);
        assertEquals(a.get("API Gateway requests (heartbeats)") / 10, b.get("API Gateway requests (heartbeats)"),
                1e-9);
        String writes = "DynamoDB writes (1 WRU a beat, live item 361 B)";
        assertEquals(1_000 * 86_400 * 0.625 / 1e6, a.get(writes), 1e-9);
        assertEquals(a.get(writes), b.get(writes), 1e-12);
        assertTrue(ten.livenessPerAgent() < one.livenessPerAgent());
    }

    @Test
    void deployment_readFromTheTemplate_countsItsAlarms_theUntracedSweep_andTheRepairRuns() throws Exception {
        CostModel.Deployment d = CostModel.Deployment.fromTemplate();
        String template = new String(TestStackTemplate.bytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(template.split("Type: AWS::CloudWatch::Alarm", -1).length - 1, d.alarms());
        assertTrue(d.alarmMetrics() >= d.alarms(), "a metric-math alarm watches several");
        assertEquals(!template.contains("Tracing: PassThrough"), d.sweepTraced());
        assertEquals(template.contains("OutboxRepairFunction:") ? 2_880 : 0, d.repairsPerMonth(), 1e-9);
    }

    /** The template bundled into Lifeline Local's jar, as the bench reads it. */
    private static final class TestStackTemplate {
        static byte[] bytes() throws Exception {
            try (var in = CostModel.class.getResourceAsStream("/template.yaml")) {
                return in.readAllBytes();
            }
        }
    }

    @Test
    void xrayTraces_takeTheReservoirThenFivePercent() {
        assertEquals(0.5 * CostModel.SECONDS_PER_MONTH, CostModel.tracesPerMonth(0.5, ASSUMED), 1e-6);
        assertEquals((1 + 0.05 * 32.3) * CostModel.SECONDS_PER_MONTH, CostModel.tracesPerMonth(33.3, ASSUMED), 1e-3);
    }

    @Test
    void bill_hostLeaseOfTenAnd25_writesOneUnitPerHostBeat_costsLessThanBatching() {
        CostModel.Bill batched = CostModel.bill(fleet(1_000, 10, 20, 0, 0.045), DEPLOYMENT, ASSUMED, PRICES);
        CostModel.Bill ten = CostModel.bill(CostModel.Workload.hosted("ten", 1_000, 10, 0.1, 361, 0.045), DEPLOYMENT,
                ASSUMED, PRICES);
        CostModel.Bill many = CostModel.bill(CostModel.Workload.hosted("many", 1_000, 25, 0.04, 361, 0.045),
                DEPLOYMENT, ASSUMED, PRICES);
        double beats = 1_000 * 86_400;
        assertEquals(beats / 10 * 0.625 / 1e6, ten.lines().stream().filter(l -> l.item().startsWith("DynamoDB writes"))
                .mapToDouble(CostModel.Line::usd).sum(), 1e-12);
        assertEquals(beats / 25 * 0.625 / 1e6, many.lines().stream().filter(l -> l.item().startsWith("DynamoDB writes"))
                .mapToDouble(CostModel.Line::usd).sum(), 1e-12);
        assertTrue(ten.livenessPerAgent() < batched.livenessPerAgent(), ten.livenessPerAgent() + " vs "
                + batched.livenessPerAgent());
        assertTrue(many.livenessPerAgent() < ten.livenessPerAgent(), "host of 25: " + many.livenessPerAgent());
    }
}
