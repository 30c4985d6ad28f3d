package io.lifeline.app;

import io.lifeline.agent.Subagents;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.SubagentStore;

/**
 * An agent's running subagents, kept on its side-data item (read by GET agent, never by the sweep): each change (a
 * subagent's start or stop, a host's report, a life's end) is one conditional write of that change, never a read
 * first ({@link SubagentStore}); a change that changes nothing (a repeated start, an unknown stop, clearing an empty
 * set) is refused by its condition and writes nothing.
 */
public final class RunningSubagents {
    private final SubagentStore store;

    public RunningSubagents(AgentDataStore data) {
        this.store = data.subagents();
    }

    /** {@code e} started; answers whether anything was written. */
    public boolean started(String team, String agentId, Subagents.Entry e) {
        return store.started(team, agentId, e);
    }

    /** The subagent {@code id} stopped; answers whether anything was written. */
    public boolean stopped(String team, String agentId, String id) {
        return store.stopped(team, agentId, id);
    }

    /** The agent's life ended or a new one began: none runs; answers whether anything was written. */
    public boolean clear(String team, String agentId) {
        return store.replace(team, agentId, Subagents.NONE);
    }

    /** The set its host's daemon reports, replacing what was kept; answers whether anything was written. */
    public boolean replace(String team, String agentId, Subagents reported) {
        return store.replace(team, agentId, reported);
    }
}
