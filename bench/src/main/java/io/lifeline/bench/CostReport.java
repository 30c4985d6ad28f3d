package io.lifeline.bench;

import static io.lifeline.bench.CostModel.bill;
import static io.lifeline.bench.CostModel.find;
import static io.lifeline.bench.CostModel.workloads;
import static io.lifeline.bench.CostUnits.MINUTES_PER_MONTH;
import static io.lifeline.bench.CostUnits.fmt;
import static io.lifeline.bench.CostUnits.fmt4;
import static io.lifeline.bench.CostUnits.money;
import static io.lifeline.bench.FleetCaps.shortfalls;
import static io.lifeline.bench.FleetCaps.sizedFor;
import static io.lifeline.bench.HookSession.HOOKS;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Section 6 as the bench prints it: the model's inputs (measured now, or the last published figures), every
 * workload's bill as a table and as JSON, the headline figures with their targets, and the 1,000,000 agents refused
 * and priced.
 */
final class CostReport {
    private CostReport() {
    }

    static void run(Report report, Measured measured) throws Exception {
        Prices p = Prices.load();
        Deployment d = Deployment.fromTemplate(false);
        Deployment full = Deployment.fromTemplate(true);
        Assumptions a = Assumptions.defaults();
        List<String> assumed = new ArrayList<>();
        Sweep s = Sweep.PUBLISHED;
        if (!Double.isNaN(measured.sweepReadUnitsPerAgent)) {
            s = new Sweep(measured.sweepReadUnitsPerAgent, measured.sweepReadUnitsPerAgentNoHistory,
                    measured.liveAgentItemBytes, Sweep.PUBLISHED.historyBytesPerAgent());
        } else {
            assumed.add("sweep units per agent and live item size: Sweep.PUBLISHED (section 2 not run now)");
        }
        if (!Double.isNaN(measured.heartbeatWriteUnits) && measured.heartbeatWriteUnits != 1.0) {
            assumed.add("a heartbeat measured " + measured.heartbeatWriteUnits + " WRU; the model prices 1");
        }
        double heartbeatMillis = measured.handlerWarmMillis;
        if (Double.isNaN(heartbeatMillis)) {
            heartbeatMillis = Measures.published().heartbeatMillis();
            assumed.add("heartbeat handler time " + heartbeatMillis + " ms: section 3's last published in-process p50 "
                    + "(section 3 not run now)");
        }
        System.out.println("  measuring log bytes a beat (ObservabilityBench) and the idle sweep's line ...");
        Measures m = ObservabilityBench.measures(heartbeatMillis, 1_000);
        double hosted10 = Double.isNaN(measured.hosted10WriteUnitsPerAgent) ? 0.1 : measured.hosted10WriteUnitsPerAgent;
        double hosted25 = Double.isNaN(measured.hosted25WriteUnitsPerAgent) ? 0.04 : measured.hosted25WriteUnitsPerAgent;

        ObjectNode details = report.details().putObject("costModel");
        details.set("prices", Json.MAPPER.valueToTree(p));
        details.set("deployment", Json.MAPPER.valueToTree(d));
        details.set("deploymentFullAlarms", Json.MAPPER.valueToTree(full));
        details.set("measures", Json.MAPPER.valueToTree(m));
        details.set("sweepInputs", Json.MAPPER.valueToTree(s));
        details.set("assumptions", Json.MAPPER.valueToTree(a));
        ArrayNode json = details.putArray("bills");
        List<Bill> bills = new ArrayList<>();
        List<Workload> workloads = new ArrayList<>(workloads(s, hosted10, hosted25));
        for (Workload w : workloads) {
            bills.add(bill(w, d, m, a, p));
        }
        Bill idleFull = bill(workloads.get(0), full, m, a, p);
        for (Bill b : bills) {
            ObjectNode o = json.addObject();
            o.set("workload", Json.MAPPER.valueToTree(b.workload()));
            o.set("lines", Json.MAPPER.valueToTree(b.lines()));
            o.put("total", b.total()).put("liveness", b.liveness()).put("observability", b.observability());
        }
        json.addObject().put("name", "idle, AlarmSet full").put("total", idleFull.total())
                .set("lines", Json.MAPPER.valueToTree(idleFull.lines()));

        // The itemised table: one column per workload, one row per line.
        printTable(bills, idleFull);

        headlines(report, bills, idleFull, workloads, d, full, m, a, p);
        million(report, d, m, a, p, s);
        assumed.forEach(report::note);
    }

    /** The section's figures, each with what it is held to. */
    private static void headlines(Report report, List<Bill> bills, Bill idleFull, List<Workload> workloads,
                                  Deployment d, Deployment full, Measures m, Assumptions a, Prices p)
            throws Exception {
        Bill idle = bills.get(0);
        report.add("6", "idle deployment (0 agents), ConcurrencyProfile reserved (with the heartbeat URL), AlarmSet "
                + "essential: $ a month, list prices", idle.total(), "USD",
                "AlarmSet full", idleFull.total(), "<= 1.70", idle.total() <= 1.70);
        // The default profile, unreserved, deploys no heartbeat URL: the same idle bill less the URL's alarm metrics.
        Bill idleUnreserved = bill(workloads.get(0), Deployment.fromTemplate(false, false), m, a, p);
        Bill idleFullUnreserved = bill(workloads.get(0), Deployment.fromTemplate(true, false), m, a, p);
        report.add("6", "idle deployment, ConcurrencyProfile unreserved (the default; no heartbeat URL), AlarmSet "
                + "essential: $ a month, list prices", idleUnreserved.total(), "USD", "AlarmSet full",
                idleFullUnreserved.total(), "<= 1.70", idleUnreserved.total() <= 1.70);
        report.add("6", "idle deployment, AlarmSet essential, after the always-free tier", idleAfterFreeTier(d, p),
                "USD", "AlarmSet full, after the free tier", idleAfterFreeTier(full, p), "<= 1",
                idleAfterFreeTier(d, p) <= 1);
        Bill url = find(bills, "1,000 busy + history, single, URL");
        Bill api = find(bills, "1,000 busy + history, single, API");
        report.add("6", "single agent, 30 s, via the Function URL: liveness $ per agent-month (1,000 agents, logs and "
                + "traces included)", url.livenessPerAgent(), "USD", "via API Gateway", api.livenessPerAgent(),
                "<= 0.10", url.livenessPerAgent() <= 0.10);
        Bill twenty = find(bills, "20 agents, single, URL");
        double beatObs = twenty.beatObservability() / 20;
        report.add("6", "20 agents via the URL: the beats' observability lines (logs, traces, the fleet's metrics) per "
                + "agent-month", beatObs, "USD", "total per agent-month", twenty.totalPerAgent(), "<= 0.1x",
                beatObs <= 0.1 * twenty.totalPerAgent());
        report.add("6", "20 agents via the URL: every observability line (with the alarms and the sweep's line) per "
                + "agent-month", twenty.observability() / 20, "USD", "total per agent-month", twenty.totalPerAgent(),
                null, null);
        for (String mode : List.of("single, URL", "batched 10, URL")) {
            Bill with = find(bills, "1,000 busy + history, " + mode);
            Bill without = find(bills, "1,000 busy, no history, " + mode);
            report.add("6", "1,000 busy agents, " + mode + ": liveness $ per agent-month, with / without history",
                    with.livenessPerAgent(), "USD", "without history", without.livenessPerAgent(), "no more",
                    with.livenessPerAgent() <= without.livenessPerAgent() + 1e-12);
        }
        Bill batched = find(bills, "1,000 busy + history, batched 10, URL");
        report.add("6", "1,000 agents, batched 10, via the URL: liveness $ per agent-month", batched.livenessPerAgent(),
                "USD", "via API Gateway", find(bills, "1,000 busy + history, batched 10, API").livenessPerAgent(),
                "<= 0.06", batched.livenessPerAgent() <= 0.06);
        Bill ten = find(bills, "1,000 busy, host lease of 10, URL");
        report.add("6", "1,000 agents, host lease of 10, via the URL: liveness $ per agent-month", ten.livenessPerAgent(),
                "USD", "via API Gateway", find(bills, "1,000 busy, host lease of 10, API").livenessPerAgent(), "<= 0.02",
                ten.livenessPerAgent() <= 0.02);
        report.add("6", "1,000 agents, host lease of 25, via the URL: liveness $ per agent-month",
                find(bills, "1,000 busy, host lease of 25, URL").livenessPerAgent(), "USD", "host lease of 10",
                ten.livenessPerAgent(), null, null);
        Bill hooks = find(bills, "1,000 hook-driven agents, direct, URL");
        Bill hooksDaemon = find(bills, "1,000 hook-driven agents, daemon, lease of 10");
        report.add("6", "hook-driven agent-month (" + fmt(HOOKS.eventsPerAgentMonth()) + " events, "
                + fmt(HOOKS.changesPerAgentMonth()) + " status changes), direct via the URL: total $ (liveness + the "
                + "status changes' outbox)", hooks.totalPerAgent(), "USD", "liveness alone", hooks.livenessPerAgent(),
                "<= 0.15", hooks.totalPerAgent() <= 0.15);
        report.add("6", "hook-driven agent-month through the daemon (host lease of 10): liveness $",
                hooksDaemon.livenessPerAgent(), "USD", "with the status changes' outbox", hooksDaemon.totalPerAgent(),
                "<= 0.02", hooksDaemon.livenessPerAgent() <= 0.02);
        report.add("6", "100,000 agents, single / batched 10, via the URL: total $ per agent-month",
                find(bills, "100,000 agents, single, URL").totalPerAgent(), "USD", "batched 10",
                find(bills, "100,000 agents, batched 10, URL").totalPerAgent(), null, null);
    }

    /**
     * 1,000,000 agents: refused under the default FleetSize's caps and under the caps the template set before
     * FleetSize, naming the cap that binds; priced under FleetSize 1000000's.
     */
    private static void million(Report report, Deployment d, Measures m, Assumptions a, Prices p, Sweep s) {
        Workload url = Workload.beats("1,000,000 agents, single, URL", 1_000_000, 1, true, s);
        Workload api = Workload.beats("1,000,000 agents, single, API", 1_000_000, 1, false, s);
        FleetSizing.Caps sized = sizedFor(url);
        for (Workload w : List.of(url, api)) {
            for (FleetSizing.Caps caps : List.of(FleetSizing.Caps.BEFORE_FLEET_SIZE,
                    FleetSizing.caps(10_000, FleetSizing.Inputs.defaults()))) {
                List<Shortfall> binds = shortfalls(w, d, m, a, caps);
                report.note(w.name() + (caps == FleetSizing.Caps.BEFORE_FLEET_SIZE ? ", the caps before FleetSize"
                        : ", FleetSize 10000 (the default)") + ": refused; binds first: " + (binds.isEmpty()
                        ? "nothing" : binds.get(0)) + " (" + binds.size() + " caps short)");
            }
        }
        Bill priced = bill(url, d, m, a, p, sized);
        report.add("6", "1,000,000 agents, single, via the URL, FleetSize 1000000 (URL function " + sized.heartbeatUrl()
                + "): total $ per agent-month", priced.totalPerAgent(), "USD", "liveness",
                priced.livenessPerAgent(), null, null);
    }

    private static void printTable(List<Bill> bills, Bill idleFull) {
        List<Bill> columns = new ArrayList<>();
        columns.add(bills.get(0));
        columns.add(idleFull);
        columns.addAll(bills.subList(1, bills.size()));
        List<String> items = new ArrayList<>();
        for (Bill b : columns) {
            for (Line l : b.lines()) {
                String key = l.group() + " | " + label(l.item());
                if (!items.contains(key)) {
                    items.add(key);
                }
            }
        }
        StringBuilder head = new StringBuilder("| group | line |");
        StringBuilder rule = new StringBuilder("|---|---|");
        for (Bill b : columns) {
            head.append(' ').append(b == idleFull ? "idle, AlarmSet full" : b.workload().name()).append(" |");
            rule.append("---|");
        }
        System.out.println(head);
        System.out.println(rule);
        for (String key : items) {
            StringBuilder row = new StringBuilder("| ").append(key).append(" |");
            for (Bill b : columns) {
                double sum = 0;
                boolean any = false;
                for (Line l : b.lines()) {
                    if ((l.group() + " | " + label(l.item())).equals(key)) {
                        sum += l.usd();
                        any = true;
                    }
                }
                row.append(' ').append(any ? money(sum) : "").append(" |");
            }
            System.out.println(row);
        }
        for (String total : List.of("**total $ a month**", "liveness (fixed + sweep + beats)",
                "observability (alarms, metrics, traces, logs)", "**total $ per agent-month**",
                "liveness $ per agent-month")) {
            StringBuilder row = new StringBuilder("| | ").append(total).append(" |");
            for (Bill b : columns) {
                double v = switch (total) {
                    case "**total $ a month**" -> b.total();
                    case "liveness (fixed + sweep + beats)" -> b.liveness();
                    case "observability (alarms, metrics, traces, logs)" -> b.observability();
                    case "**total $ per agent-month**" -> b.totalPerAgent();
                    default -> b.livenessPerAgent();
                };
                row.append(' ').append(Double.isNaN(v) ? "" : total.contains("per agent") ? fmt4(v) : money(v))
                        .append(" |");
            }
            System.out.println(row);
        }
        System.out.println();
        for (Bill b : columns) {
            System.out.printf(Locale.ROOT, "  %s: $%.4f a month (liveness $%.4f)%n",
                    b == idleFull ? "idle, AlarmSet full" : b.workload().name(), b.total(), b.liveness());
            for (Line l : b.lines()) {
                System.out.printf(Locale.ROOT, "    %-9s %-78s %11.5f  %s%n", l.group(), l.item(), l.usd(), l.basis());
            }
        }
    }

    /** A line's label without the figures that differ between workloads (alarm counts, metric-months). */
    static String label(String item) {
        return item.replaceAll(" \\((essential|full) set: [^)]*\\)", "").replaceAll(" \\([0-9.,]+ metric-months\\)", "")
                .replaceAll(", measured [0-9.]+ WRU an agent-beat", "").replaceAll(" for [0-9]+ agents", "")
                .replaceAll(", live item [0-9.]+ B", "");
    }

    /**
     * The idle bill less the allowances every account has each month, whatever its age: 10 alarm metrics, 10 custom
     * metrics, 5 GB of logs, 1 M Lambda requests and 400,000 GB-s, 1 M SQS requests, 100,000 X-Ray traces. What is
     * left: alarm metrics past 10, traces past 100,000, and the sweep's and the repair's reads (on-demand reads have
     * no free allowance).
     */
    static double idleAfterFreeTier(Deployment d, Prices p) {
        double sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;
        double traces = Math.max(0, (d.sweepTraced() ? sweeps : 0) + (d.repairTraced() ? d.repairsPerMonth() : 0)
                - 100_000) * p.xrayPerMillionTraces() / 1e6;
        double reads = (sweeps * d.minSegments() * 0.5 + d.repairsPerMonth()) * p.rruPerMillion() / 1e6;
        double alarms = Math.max(0, d.alarmMetrics() - 10) * p.alarmPerMonth();
        double metrics = Math.max(0, d.idleMetrics() - 10) * p.metricPerMonth();
        return traces + reads + alarms + metrics;
    }
}
