package io.lifeline.bench;

import static io.lifeline.bench.CostUnits.SECONDS_PER_MONTH;
import static io.lifeline.bench.HookSession.HOOKS;

/**
 * A month of one workload. {@code agentsPerRequest}: 1 single, N a daemon's batch (or host lease) of N;
 * {@code viaUrl}: heartbeats through the heartbeat Function URL, else through API Gateway's HTTP API;
 * {@code tasksPerAgentDay}: the busy agents' work (0: beats only); {@code historyBytesPerAgent}: what 30 days
 * leave on the ledger; {@code liveItemBytes}: one agent item; {@code sweepUnitsPerAgent}: read units per alive
 * agent per sweep (measured in section 2); {@code dashboardHours}: hours a month one person keeps the dashboard
 * open on a team of {@code dashboardTeamAgents}; {@code writeUnitsPerAgentBeat}: 1, or 1/N through a host lease.
 */
public record Workload(String name, int agents, double beatSeconds, int agentsPerRequest, boolean viaUrl,
                       double tasksPerAgentDay, double historyBytesPerAgent, double liveItemBytes,
                       double sweepUnitsPerAgent, double deathsPerAgentMonth, double dashboardHours,
                       int dashboardTeamAgents, double writeUnitsPerAgentBeat, double changesPerAgentMonth,
                       boolean hookEvents) {
    public Workload(String name, int agents, double beatSeconds, int agentsPerRequest, boolean viaUrl,
                    double tasksPerAgentDay, double historyBytesPerAgent, double liveItemBytes,
                    double sweepUnitsPerAgent, double deathsPerAgentMonth, double dashboardHours,
                    int dashboardTeamAgents, double writeUnitsPerAgentBeat) {
        this(name, agents, beatSeconds, agentsPerRequest, viaUrl, tasksPerAgentDay, historyBytesPerAgent,
                liveItemBytes, sweepUnitsPerAgent, deathsPerAgentMonth, dashboardHours, dashboardTeamAgents,
                writeUnitsPerAgentBeat, 0, false);
    }

    public boolean hosted() {
        return writeUnitsPerAgentBeat != 1.0;
    }

    /**
     * 1,000 hook-driven agents ({@link HookSession#HOOKS}'s session), each hook event one request to the heartbeat function
     * through the Function URL: {@code beatSeconds} is the month's seconds per event, and a coalesced event writes
     * nothing ({@code writeUnitsPerAgentBeat}: writes per event, as HookCostTest counts them).
     */
    static Workload hooksDirect(String name, Sweep s) {
        return new Workload(name, 1_000, SECONDS_PER_MONTH / HOOKS.eventsPerAgentMonth(), 1, true, 0, 0,
                s.itemBytes(), s.unitsWithoutHistory(), 1, 0, 0, HOOKS.writesPerAgentMonth()
                / HOOKS.eventsPerAgentMonth(), HOOKS.changesPerAgentMonth(), true);
    }

    /**
     * The same agents under `lifeline daemon`: their hooks go to the daemon on loopback (no request), the daemon
     * renews a host lease of {@code perHost} agents every 30 s, and each status change still writes the agent's
     * item and goes through the outbox.
     */
    static Workload hooksViaDaemon(String name, int perHost, double writeUnitsPerAgentBeat, Sweep s) {
        return new Workload(name, 1_000, 30, perHost, true, 0, 0, s.itemBytes(), s.unitsWithoutHistory(), 1, 0,
                0, writeUnitsPerAgentBeat, HOOKS.changesPerAgentMonth(), false);
    }

    /** Beats only (1 death per agent-month), 30 s. */
    static Workload beats(String name, int agents, int perRequest, boolean viaUrl, Sweep s) {
        return new Workload(name, agents, 30, perRequest, viaUrl, 0, 0, s.itemBytes(), s.unitsWithHistory(),
                agents == 0 ? 0 : 1, agents >= 1_000 ? 176 : 0, agents >= 1_000 ? 100 : 0, 1.0);
    }

    /** 1,000 busy agents: 20 tasks a day, a dashboard open 176 h on a team of 100; with or without history. */
    static Workload busy(String name, int perRequest, boolean viaUrl, boolean history, Sweep s) {
        return new Workload(name, 1_000, 30, perRequest, viaUrl, 20, history ? s.historyBytesPerAgent() : 0,
                s.itemBytes(), history ? s.unitsWithHistory() : s.unitsWithoutHistory(), 1, 176, 100, 1.0);
    }

    /** 1,000 busy agents without history, whose daemons renew a host lease of {@code perHost} agents. */
    static Workload hosted(String name, int perHost, boolean viaUrl, double writeUnitsPerAgentBeat, Sweep s) {
        return new Workload(name, 1_000, 30, perHost, viaUrl, 20, 0, s.itemBytes(), s.unitsWithoutHistory(), 1,
                176, 100, writeUnitsPerAgentBeat);
    }
}
