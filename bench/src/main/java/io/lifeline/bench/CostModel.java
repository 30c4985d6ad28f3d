package io.lifeline.bench;

import java.util.List;

/**
 * Figure 6: what a deployment costs a month, itemised: every function (the sweep clock, the sweep, heartbeats,
 * the authorizer, task routes, the publisher per change, the revive flow, the dashboard), every read (the
 * sweep's Scan of the live table, the key look-ups, the dashboard's list), what a deployment pays to watch itself
 * (alarms, custom metrics, X-Ray traces, log lines, the logs kept) and storage, for an idle deployment, 20 agents,
 * 1,000 busy agents with 30 days of history, 100,000 and 1,000,000 agents, single and batched, through the heartbeat
 * Function URL and through API Gateway, and for host leases of 10 and 25. A fleet is priced only under caps that can
 * serve it ({@link FleetCaps#shortfalls}: Lambda's 10 requests a second per unit of concurrency, the stage's route throttle,
 * the authorizer), by default the smallest {@link FleetSizing} size that fits; past them it is refused
 * ({@link Unservable}), naming the cap that binds. Pure arithmetic from the prices in
 * bench/prices.json, the template's resources and parameter defaults, and what the bench measured (or the stated
 * assumptions where it did not), so the unit tests check it. List prices, no free tier (the account's free tier is
 * shared by everything else in it).
 */
public final class CostModel {
    private CostModel() {
    }

    /** The bill with the caps of the FleetSize the workload needs ({@link FleetCaps#sizedFor}). */
    public static Bill bill(Workload w, Deployment d, Measures m, Assumptions a, Prices p) {
        return bill(w, d, m, a, p, FleetCaps.sizedFor(w));
    }

    /** The bill under {@code caps}; refused ({@link Unservable}) when they cannot serve the fleet. */
    public static Bill bill(Workload w, Deployment d, Measures m, Assumptions a, Prices p, FleetSizing.Caps caps) {
        List<Shortfall> refused = FleetCaps.shortfalls(w, d, m, a, caps);
        if (!refused.isEmpty()) {
            throw new Unservable(w, refused);
        }
        return LineItems.bill(w, d, m, a, p);
    }

    /** The workloads the section prices, in the order it prints them. */
    static List<Workload> workloads(Sweep s, double hosted10, double hosted25) {
        return List.of(
                Workload.beats("idle (0 agents)", 0, 1, true, s),
                Workload.beats("20 agents, single, URL", 20, 1, true, s),
                Workload.beats("20 agents, single, API", 20, 1, false, s),
                Workload.busy("1,000 busy + history, single, URL", 1, true, true, s),
                Workload.busy("1,000 busy, no history, single, URL", 1, true, false, s),
                Workload.busy("1,000 busy + history, single, API", 1, false, true, s),
                Workload.busy("1,000 busy + history, batched 10, URL", 10, true, true, s),
                Workload.busy("1,000 busy, no history, batched 10, URL", 10, true, false, s),
                Workload.busy("1,000 busy + history, batched 10, API", 10, false, true, s),
                Workload.hosted("1,000 busy, host lease of 10, URL", 10, true, hosted10, s),
                Workload.hosted("1,000 busy, host lease of 25, URL", 25, true, hosted25, s),
                Workload.hosted("1,000 busy, host lease of 10, API", 10, false, hosted10, s),
                Workload.beats("100,000 agents, single, URL", 100_000, 1, true, s),
                Workload.beats("100,000 agents, batched 10, URL", 100_000, 10, true, s),
                Workload.beats("100,000 agents, single, API", 100_000, 1, false, s),
                Workload.beats("1,000,000 agents, single, URL", 1_000_000, 1, true, s),
                Workload.beats("1,000,000 agents, batched 10, URL", 1_000_000, 10, true, s),
                Workload.beats("1,000,000 agents, single, API", 1_000_000, 1, false, s),
                Workload.hooksDirect("1,000 hook-driven agents, direct, URL", s),
                Workload.hooksViaDaemon("1,000 hook-driven agents, daemon, lease of 10", 10, hosted10, s));
    }

    static Bill find(List<Bill> bills, String name) {
        return bills.stream().filter(b -> b.workload().name().equals(name)).findFirst().orElseThrow();
    }
}
