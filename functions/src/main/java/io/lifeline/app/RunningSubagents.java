package io.lifeline.app;

import io.lifeline.agent.Subagents;
import io.lifeline.store.agent.AgentDataStore;
import java.util.function.UnaryOperator;

/**
 * An agent's running subagents, kept on its side-data item (read by GET agent, never by the sweep): a change (a
 * subagent's start or stop, a life's end) is one conditional write on the version it was computed from; a change
 * that changes nothing (a repeated start, an unknown stop, clearing an empty set) writes nothing. A refused write
 * (another environment changed the set meanwhile) is computed again from a fresh read, a few times at most.
 */
public final class RunningSubagents {
    /** The most attempts of one change against concurrent writers. */
    static final int ATTEMPTS = 3;

    private final AgentDataStore data;

    public RunningSubagents(AgentDataStore data) {
        this.data = data;
    }

    /** {@code e} started; answers whether anything was written. */
    public boolean started(String team, String agentId, Subagents.Entry e) {
        return change(team, agentId, s -> s.started(e));
    }

    /** The subagent {@code id} stopped; answers whether anything was written. */
    public boolean stopped(String team, String agentId, String id) {
        return change(team, agentId, s -> s.stopped(id));
    }

    /** The agent's life ended or a new one began: none runs; answers whether anything was written. */
    public boolean clear(String team, String agentId) {
        return change(team, agentId, s -> Subagents.NONE);
    }

    /** The set its host's daemon reports, replacing what was kept; answers whether anything was written. */
    public boolean replace(String team, String agentId, Subagents reported) {
        return change(team, agentId, s -> reported);
    }

    private boolean change(String team, String agentId, UnaryOperator<Subagents> how) {
        for (int i = 0; i < ATTEMPTS; i++) {
            AgentDataStore.AgentData d = data.get(team, agentId);
            Subagents next = how.apply(d.subagents());
            if (next.equals(d.subagents())) {
                return false;
            }
            if (data.saveSubagents(team, agentId, next, d.subagentsVersion())) {
                return true;
            }
        }
        return false; // changed by others each time: theirs is the newer set
    }
}
