package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Liveness;
import io.lifeline.store.AgentStore;
import java.time.Duration;
import java.time.Instant;

/**
 * The changes of an agent whose answer shows it (join, pause, resume), answered as {@code GET} shows it: the store
 * writes and answers the item with its host lease's beat of it, and {@link Liveness#shown} judges it
 * ({@link AgentQueries}), so a hosted agent's answer never differs from the {@code GET} that follows. A sign of life
 * of an agent on a schedule is followed by the deadline {@link Liveness#scheduled} gives it ({@link #followSchedule}).
 */
public final class AgentChanges {
    private final AgentStore agents;

    public AgentChanges(AgentStore agents) {
        this.agents = agents;
    }

    /** The agent joins (a new life), due again as its schedule or its stale-after says; answered as shown. */
    public Agent join(String team, String agentId, Instant now) {
        AgentStore.Read read = agents.joinAndRead(team, agentId, now);
        Agent after = followSchedule(agents, read.agent(), null);
        return AgentQueries.shown(new AgentStore.Read(after, read.leaseBeat(), read.lastMissAt()));
    }

    /** Holds back the sweep's dead-marking of the agent until {@code until}; answered as shown. */
    public Agent pause(String team, String agentId, Instant until) {
        return AgentQueries.shown(agents.pause(team, agentId, until));
    }

    /** Ends the agent's pause; answered as shown. */
    public Agent resume(String team, String agentId) {
        return AgentQueries.shown(agents.resume(team, agentId));
    }

    /**
     * {@code written}, a sign of life just written (its deadline its stale-after's or an allowance's, as the write
     * cannot read a schedule), with the deadline {@link Liveness#scheduled} gives it when it is on a schedule and the
     * beat sent no {@code nextWithin} of its own: the store writes it (a second conditional write, scheduled agents
     * only; none when the item holds it already).
     */
    static Agent followSchedule(AgentStore agents, Agent written, Duration nextWithin) {
        return Liveness.followsSchedule(written, nextWithin)
                ? agents.writeDeadline(written, Liveness.scheduled(written)) : written;
    }
}
