package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Liveness;
import io.lifeline.store.agent.AgentRoster;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.List;

/**
 * The team's agents a page at a time, and those whose status changed since a time (the dashboard's refresh), each
 * judged as {@link AgentQueries} judges one ({@link Liveness#shown}, through its host lease when it has one).
 */
public final class AgentPages {
    private final AgentRoster roster;

    public AgentPages(AgentRoster roster) {
        this.roster = roster;
    }

    /** A page of at most {@code limit} agents from {@code cursor} (null: the first), only those in {@code status}. */
    public Page<Agent> page(String team, AgentStatus status, int limit, String cursor) {
        Page<AgentStore.Read> read = roster.page(team, status, limit, cursor);
        return new Page<>(read.items().stream().map(AgentQueries::shown).toList(), read.cursor());
    }

    /** The agents whose status changed after {@code since}, newest change first, at most {@code limit}. */
    public Changed changedSince(String team, Instant since, int limit) {
        AgentRoster.Changes c = roster.changedSince(team, since, limit);
        return new Changed(c.agents().stream().map(AgentQueries::shown).toList(), c.truncated());
    }

    /** The changed agents as shown; {@code truncated} when more changed than were answered. */
    public record Changed(List<Agent> agents, boolean truncated) {
        public Changed {
            agents = List.copyOf(agents);
        }
    }
}
