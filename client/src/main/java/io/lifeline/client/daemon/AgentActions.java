package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.AgentView;
import java.time.Clock;
import java.util.List;

/**
 * The two things the daemon does to an agent from more than one place (the crash loop, the beat round, the command
 * inbox, the hook sessions): start its command again, and join it. Each keeps the agent's slot true to what it did.
 */
final class AgentActions {
    private final LifelineClient client;
    private final AgentProcesses processes;
    /** The local beat channel, or null. */
    private final LocalBeats localBeats;
    private final Clock clock;

    AgentActions(LifelineClient client, AgentProcesses processes, LocalBeats localBeats, Clock clock) {
        this.client = client;
        this.processes = processes;
        this.localBeats = localBeats;
        this.clock = clock;
    }

    /** Joins the agent and takes the server's advice; its status is ready again, so the hooks are sent anew. */
    void joinAndAdvise(AgentSlot slot) {
        AgentView joined = client.join(slot.id());
        slot.hookSent(null);
        slot.advise(joined == null ? null : joined.heartbeatIntervalSeconds());
    }

    /** Joins the agent: false, with a problem unless it was already alive, when it did not. */
    boolean join(AgentSlot slot, List<String> problems) {
        String agentId = slot.id();
        try {
            joinAndAdvise(slot);
            return true;
        } catch (LifelineApiException e) {
            if ("INVALID_TRANSITION".equals(e.code()) && ("ready".equals(e.agentStatus())
                    || "working".equals(e.agentStatus()))) {
                return false; // already alive
            }
            problems.add(agentId + ": join refused: " + e.code());
            return false;
        } catch (LifelineException e) {
            problems.add(agentId + ": join failed: " + e.getMessage());
            return false;
        }
    }

    /** Restarts the agent's command; {@code own}: of the daemon's accord (counted as its restart), not asked for. */
    boolean restart(AgentSlot slot, String reason, List<String> problems, boolean own) {
        String agentId = slot.id();
        try {
            processes.restart(agentId, reason);
            slot.sessionLeft(false);
            slot.hookSent(null);
            if (localBeats != null) {
                localBeats.reset(agentId);
            }
            slot.started(clock.instant(), own);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problems.add(agentId + ": restart interrupted");
            return false;
        } catch (Exception e) {
            problems.add(agentId + ": restart failed: " + e.getMessage());
            return false;
        }
    }
}
