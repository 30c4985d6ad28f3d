package io.lifeline.client.model;

/**
 * Registration of an agent ({@code POST /v1/teams/{team}/agents}). Optional fields are null.
 * {@code staleAfterSeconds}: seconds of silence before the agent counts as stale.
 */
public record RegisterAgent(String agentId, String name, String role, String hostId, Long staleAfterSeconds,
        Integer graceMisses, String schedule, String timeZone) {

    public static RegisterAgent of(String agentId, String name, String role) {
        return new RegisterAgent(agentId, name, role, null, null, null, null, null);
    }

    public RegisterAgent withHost(String host) {
        return new RegisterAgent(agentId, name, role, host, staleAfterSeconds, graceMisses, schedule, timeZone);
    }

    public RegisterAgent withStaleAfterSeconds(long seconds) {
        return new RegisterAgent(agentId, name, role, hostId, seconds, graceMisses, schedule, timeZone);
    }

    public RegisterAgent withGraceMisses(int misses) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, misses, schedule, timeZone);
    }

    public RegisterAgent withSchedule(String expression, String zone) {
        return new RegisterAgent(agentId, name, role, hostId, staleAfterSeconds, graceMisses, expression, zone);
    }
}
