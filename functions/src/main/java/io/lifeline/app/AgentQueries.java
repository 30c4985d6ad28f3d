package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.store.agent.AgentStore;

/**
 * Agents as the API shows them (GET agent; the team's list, a page at a time, is {@link AgentPages}'s): the store
 * reads each item and what its host lease holds of it; {@link Liveness#shown} judges it, so a hosted agent is shown
 * with the sign of life, deadline and misses the sweep judges it by.
 */
public final class AgentQueries {
    private final AgentStore agents;

    public AgentQueries(AgentStore agents) {
        this.agents = agents;
    }

    /** The agent as shown, with its last change whole; refused 404 when there is none. */
    public Agent require(String team, String agentId) {
        AgentStore.Read read = agents.read(team, agentId).orElseThrow(() -> LifelineException.agentNotFound(agentId));
        return shown(read);
    }

    /**
     * The agent as shown, as its live item has it (its last change whole only until the outbox has published it),
     * for answers that do not show that change (recovery); refused 404 when there is none.
     */
    public Agent requireCurrent(String team, String agentId) {
        AgentStore.Read read = agents.readCurrent(team, agentId)
                .orElseThrow(() -> LifelineException.agentNotFound(agentId));
        return shown(read);
    }

    /** An agent as the store read it (or answered a write of it), as shown: {@link Liveness#shown}. */
    static Agent shown(AgentStore.Read read) {
        return Liveness.shown(read.agent(), read.leaseBeat(), read.lastMissAt());
    }
}
