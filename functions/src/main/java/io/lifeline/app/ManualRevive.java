package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.auth.ApiKeys;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.support.Json;

/**
 * An operator asks for a revive of a dead or dead_failed_revive agent: a new execution of the revive state machine,
 * named after the agent and its current transition ({@link #executionName}), so asking twice starts it once. The
 * start itself goes through the {@link ReviveStarts} port (Step Functions on AWS).
 */
public final class ManualRevive {
    /** A started execution: its ARN, its name, and the transition seq it revives from. */
    public record Started(String executionArn, String executionName, long startSeq) {
    }

    private static final int MAX_NAME = 80;

    private final AgentStore agents;
    private final ReviveStarts starts;

    public ManualRevive(AgentStore agents, ReviveStarts starts) {
        this.agents = agents;
        this.starts = starts;
    }

    /**
     * Starts the revive flow for the agent: refused when its status allows no restart, 409 NO_HOST when no host can
     * be asked, 409 ALREADY_REVIVING when this state's execution exists, 503 when Step Functions cannot be reached.
     */
    public Started start(String team, String agentId) {
        Agent agent = agents.require(team, agentId);
        if (!TransitionTable.rule(Trigger.RESTART_INITIATED).allows(agent.status())) {
            throw LifelineException.notAllowed(Trigger.RESTART_INITIATED, agent.status());
        }
        if (agent.hostId() == null) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "NO_HOST",
                    "Agent '" + agentId + "' has no hostId, so no host can be asked to restart it");
        }
        long seq = agent.lastTransition() == null ? 0 : agent.lastTransition().seq();
        String input = Json.write(Json.object().put("team", team).put("agentId", agentId).put("startSeq", seq)
                .put("hostId", agent.hostId()).put("manual", true));
        String name = executionName(team, agentId, seq);
        try {
            return new Started(starts.start(name, input), name, seq);
        } catch (ReviveStarts.AlreadyStarted e) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "ALREADY_REVIVING",
                    "A revive of agent '" + agentId + "' for this state is already under way (" + name + ")");
        } catch (ReviveStarts.Unavailable e) {
            throw new LifelineException(LifelineException.Kind.UNAVAILABLE, "REVIVE_UNAVAILABLE",
                    "The revive flow could not be started; retry", null, e);
        }
    }

    /** The execution's name: derived from the agent and its transition, at most 80 characters. */
    static String executionName(String team, String agentId, long seq) {
        String plain = "revive-" + team + "-" + agentId + "-" + seq;
        if (plain.length() <= MAX_NAME) {
            return plain;
        }
        // Long ids: keep the name unique and stable by hashing the team and agent.
        return "revive-" + ApiKeys.hash(team + "/" + agentId).substring(0, 40) + "-" + seq;
    }
}
