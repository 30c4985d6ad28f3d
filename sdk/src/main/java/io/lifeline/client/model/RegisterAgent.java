package io.lifeline.client.model;

/**
 * Registration of an agent ({@code POST /v1/teams/{team}/agents}). Optional fields are null.
 * {@code staleAfterSeconds}: seconds of silence before the agent counts as stale; {@code stallAfterSeconds}: seconds
 * in a turn without progress before it is stalled; {@code onStall}: {@code alert} or {@code restart}.
 */
public record RegisterAgent(String agentId, String name, String role, String hostId, Long staleAfterSeconds,
        Integer graceMisses, String schedule, String timeZone, Long stallAfterSeconds, String onStall) {

    /** A registration under the team's or the deployment's stall rule. */
    public RegisterAgent(String agentId, String name, String role, String hostId, Long staleAfterSeconds,
                         Integer graceMisses, String schedule, String timeZone) {
        this(agentId, name, role, hostId, staleAfterSeconds, graceMisses, schedule, timeZone, null, null);
    }

    public static RegisterAgent of(String agentId, String name, String role) {
        return new RegisterAgent(agentId, name, role, null, null, null, null, null);
    }

    public RegisterAgent withHost(String host) {
        return new RegisterAgent(agentId, name, role, host, staleAfterSeconds, graceMisses, schedule, timeZone,
                stallAfterSeconds, onStall);
    }

    public RegisterAgent withStaleAfterSeconds(long seconds) {
        return new RegisterAgent(agentId, name, role, hostId, seconds, graceMisses, schedule, timeZone,
                stallAfterSeconds, onStall);
    }

    public RegisterAgent withGraceMisses(int misses) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, misses, schedule, timeZone,
                stallAfterSeconds, onStall);
    }

    public RegisterAgent withSchedule(String expression, String zone) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, graceMisses, expression, zone,
                stallAfterSeconds, onStall);
    }

    /** This agent stalled after {@code seconds} in a turn without progress (its own threshold). */
    public RegisterAgent withStallAfterSeconds(long seconds) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, graceMisses, schedule, timeZone,
                seconds, onStall);
    }

    /** What follows this agent's stall: {@code alert} or {@code restart}. */
    public RegisterAgent withOnStall(String action) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, graceMisses, schedule, timeZone,
                stallAfterSeconds, action);
    }
}
