package io.lifeline.bench;

import io.lifeline.support.Json;
import java.util.Map;
import java.util.Set;

/** Turns section 1's measurements into report rows. */
final class Figures {
    private Figures() {
    }

    static void storeCost(Report report, Map<String, StoreCost.OpCost> costs, Measured measured) {
        var details = report.details().putObject("storeCost");
        for (StoreCost.OpCost c : costs.values()) {
            details.set(c.operation(), Json.MAPPER.valueToTree(c));
        }
        StoreCost.OpCost plain = costs.get("heartbeat (plain)");
        measured.heartbeatRequests = plain.requests();
        measured.heartbeatWriteUnits = plain.writeUnits() + plain.gsiWriteUnits();
        report.add("1", "plain heartbeat: DynamoDB requests", plain.requests(), "req", "1 (one UpdateItem)", 1,
                "1", plain.requests() == 1 && plain.requestsByOperation().keySet().equals(Set.of("UpdateItem")));
        report.add("1", "plain heartbeat: write units (table+GSI)", plain.writeUnits() + plain.gsiWriteUnits(), "WCU",
                "1 WCU (item <= 1 KB)", 1, "<= 1", plain.writeUnits() + plain.gsiWriteUnits() <= 1.0);
        report.add("1", "plain heartbeat: read units", plain.readUnits(), "RCU", "0", 0, "0", plain.readUnits() == 0);
        report.add("1", "plain heartbeat: GSI write units", plain.gsiWriteUnits(), "WCU", "0", 0, "0",
                plain.gsiWriteUnits() == 0);
        for (StoreCost.OpCost c : costs.values()) {
            if (c == plain) {
                continue;
            }
            if (c.operation().startsWith("hosted batch of ")) {
                boolean ten = c.operation().startsWith("hosted batch of 10");
                if (ten) {
                    measured.hosted10WriteUnitsPerAgent = c.writeUnits() + c.gsiWriteUnits();
                } else {
                    measured.hosted25WriteUnitsPerAgent = c.writeUnits() + c.gsiWriteUnits();
                }
                measured.hostedReadUnitsPerAgent = c.readUnits();
                int n = ten ? 10 : 25;
                report.add("1", c.operation() + ": write units per agent", c.writeUnits() + c.gsiWriteUnits(), "WCU",
                        "1/N (one lease write)", 1.0 / n, "<= 1/" + n, c.writeUnits() + c.gsiWriteUnits() <= 1.0 / n + 1e-9);
                report.add("1", c.operation() + ": read units", c.readUnits(), "RCU", "0", 0, "0", c.readUnits() == 0);
            }
            if (c.operation().startsWith("batched")) {
                measured.batchedWriteUnitsPerAgent = c.writeUnits() + c.gsiWriteUnits();
                measured.batchSize = 10;
            }
            report.add("1", c.operation() + ": req / RCU / WCU / GSI WCU",
                    c.requests(), "req", null, Double.NaN, null, null);
            report.add("1", "  " + c.operation() + ": WCU (table) / GSI WCU / RCU = " + Report.num(c.writeUnits())
                    + " / " + Report.num(c.gsiWriteUnits()) + " / " + Report.num(c.readUnits()),
                    c.writeUnits() + c.gsiWriteUnits() + c.readUnits(), "units", null, Double.NaN, null, null);
        }
    }
}
