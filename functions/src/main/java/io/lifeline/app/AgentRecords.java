package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Recovery;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.ledger.RevivalStore;
import io.lifeline.store.agent.TransitionLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What is kept about an agent beside its live item, as the agent routes read it: its side data (metadata,
 * checkpoint, last error, pause reason), its transitions a page at a time, its inbox, its revivals, and the
 * recovery answer its checkpoint gives. Each read of an agent's records is refused 404 when the agent is not there,
 * so a deleted agent's history is not read through a route of the agent.
 */
public final class AgentRecords {
    /** A page of the agent's transitions, newest first, and the agent they belong to. */
    public record Transitions(Agent agent, TransitionLog.Page page) {
    }

    /** The recovery answer for the agent as shown ({@link AgentQueries#requireCurrent}). */
    public record Recovered(Agent agent, Recovery.Answer answer) {
    }

    private final AgentStore agents;
    private final AgentQueries queries;
    private final AgentDataStore data;
    private final TransitionLog transitions;
    private final InboxStore inbox;
    private final RevivalStore revivals;

    public AgentRecords(AgentStore agents, AgentDataStore data, TransitionLog transitions, InboxStore inbox,
                        RevivalStore revivals) {
        this.agents = agents;
        this.queries = new AgentQueries(agents);
        this.data = data;
        this.transitions = transitions;
        this.inbox = inbox;
        this.revivals = revivals;
    }

    /** The agent's side data (empty fields when it has none). */
    public AgentDataStore.AgentData data(String team, String agentId) {
        return data.get(team, agentId);
    }

    /** Up to {@code limit} transitions before {@code beforeSeq} (null: the newest). */
    public Transitions transitions(String team, String agentId, int limit, Long beforeSeq) {
        Agent agent = agents.requireCurrent(team, agentId);
        return new Transitions(agent, transitions.page(agent, limit, beforeSeq));
    }

    /** The agent's inbox, newest first. */
    public List<InboxStore.Notice> inbox(String team, String agentId, int limit) {
        agents.requireCurrent(team, agentId);
        return inbox.list(team, agentId, limit);
    }

    /** The revive flows of the agent, newest first. */
    public List<RevivalStore.Revival> revivals(String team, String agentId, int limit) {
        agents.requireCurrent(team, agentId);
        return revivals.list(team, agentId, limit);
    }

    /** Whether the agent's checkpoint, at most {@code maxAge} old, is there to recover from ({@link Recovery}). */
    public Recovered recovery(String team, String agentId, Duration maxAge, Instant now) {
        Agent agent = queries.requireCurrent(team, agentId);
        AgentDataStore.AgentData d = data.get(team, agentId);
        return new Recovered(agent, Recovery.decide(agent, d.checkpointJson(), d.checkpointAt(), maxAge, now));
    }
}
