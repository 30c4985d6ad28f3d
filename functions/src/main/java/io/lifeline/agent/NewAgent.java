package io.lifeline.agent;

import java.time.Duration;

/**
 * A validated registration. {@code schedule} (canonical text) and {@code timeZone} (a zone id) are null for
 * an agent that simply heartbeats within {@code staleAfter}; with a schedule, {@code staleAfter} is the grace
 * after each expected heartbeat. The allowances ({@link Liveness}) are the agent's own, or null for the deployment's;
 * so are its stall threshold ({@code stallAfter}) and what it does on a stall ({@code onStall}, null: the default).
 */
public record NewAgent(String team, String agentId, String name, String role, String hostId,
                       Duration staleAfter, int graceMisses, String schedule, String timeZone,
                       Duration workingAllowance, Duration inputAllowance, Duration personAllowance,
                       Duration stallAfter, Liveness.OnStall onStall) {
    /** An agent under the deployment's stall rule. */
    public NewAgent(String team, String agentId, String name, String role, String hostId, Duration staleAfter,
                    int graceMisses, String schedule, String timeZone, Duration workingAllowance,
                    Duration inputAllowance, Duration personAllowance) {
        this(team, agentId, name, role, hostId, staleAfter, graceMisses, schedule, timeZone, workingAllowance,
                inputAllowance, personAllowance, null, null);
    }

    /** An agent under the deployment's allowances. */
    public NewAgent(String team, String agentId, String name, String role, String hostId, Duration staleAfter,
                    int graceMisses, String schedule, String timeZone) {
        this(team, agentId, name, role, hostId, staleAfter, graceMisses, schedule, timeZone, null, null, null);
    }
}
