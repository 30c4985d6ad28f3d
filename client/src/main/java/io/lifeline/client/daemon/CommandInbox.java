package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.HostCommand;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The host's pending commands ({@code GET .../hosts/{hostId}/commands}), handled once a round: a restart request is
 * acknowledged first, then the agent is restarted and joined. An acknowledgement refused with
 * {@code COMMAND_SUPERSEDED} means the revive flow that asked has ended: the agent is left alone. A request for an
 * agent this daemon (re)started within the dedup window is acknowledged without a second restart; one for an agent
 * waiting out its crash backoff is acknowledged and the agent restarted when the backoff ends; one after a give-up
 * is a new revive (an operator's) and starts the crash loop afresh. Runs under the daemon's lock.
 */
final class CommandInbox {
    private final LifelineClient client;
    private final String hostId;
    private final AgentProcesses processes;
    private final AgentActions actions;
    private final Clock clock;
    private final Map<String, AgentSlot> slots;
    /** The window in which a request for an agent just (re)started is the flow answering a crash already handled. */
    private final Supplier<Duration> dedupWindow;

    CommandInbox(LifelineClient client, String hostId, AgentProcesses processes, AgentActions actions, Clock clock,
            Map<String, AgentSlot> slots, Supplier<Duration> dedupWindow) {
        this.client = client;
        this.hostId = hostId;
        this.processes = processes;
        this.actions = actions;
        this.clock = clock;
        this.slots = slots;
        this.dedupWindow = dedupWindow;
    }

    /** Reads the host's commands and handles each. */
    void handle(RoundLog log) {
        List<HostCommand> commands;
        try {
            commands = client.hostCommands(hostId).commands();
            if (commands == null) {
                commands = List.of();
            }
        } catch (LifelineException e) {
            log.problems.add("cannot read the host's commands: " + e.getMessage());
            return;
        }
        for (HostCommand c : commands) {
            AgentSlot s = slots.get(c.agentId());
            if (s == null) {
                log.problems.add("command " + c.commandId() + " is for agent " + c.agentId()
                        + ", which this daemon does not run");
                continue;
            }
            if (acknowledged(c, log) && mayRestart(s, log)) {
                restartAndJoin(s, c, log);
            }
        }
    }

    /**
     * Acknowledged first: the server accepts it only while the flow that asked still stands, so a restart is never
     * made for an agent that is already back or whose flow has ended.
     */
    private boolean acknowledged(HostCommand c, RoundLog log) {
        try {
            client.ackCommand(hostId, c.commandId());
            log.acked.add(c.commandId());
            return true;
        } catch (LifelineApiException e) {
            if (!"ALREADY_ACKNOWLEDGED".equals(e.code()) && !"COMMAND_SUPERSEDED".equals(e.code())) {
                log.problems.add("ack of " + c.commandId() + " refused: " + e.code());
            }
            return false;
        } catch (LifelineException e) {
            log.problems.add("ack of " + c.commandId() + " failed: " + e.getMessage());
            return false; // still pending; the next round tries again
        }
    }

    /** Whether the request restarts the agent now, rather than leaving it to the crash loop. */
    private boolean mayRestart(AgentSlot s, RoundLog log) {
        String agentId = s.id();
        if (s.givenUp() != null) {
            // The give-up ended every flow before it, so this is a new revive (an operator's): start afresh.
            s.forgetGiveUp();
        } else if (s.restartDue() != null) {
            log.backingOff.add(agentId + " was asked for by the revive flow; it restarts when its crash backoff "
                    + "ends, at " + s.restartDue());
            return false;
        } else if (s.restartPolicy() != RestartPolicy.NO && !processes.isRunning(agentId) && !s.exitCounted()) {
            // It exited again since this round looked: the next round counts the crash and restarts it after its
            // backoff, so a revive flow's request never bypasses the crash loop's accounting.
            log.backingOff.add(agentId + " exited again; the next round restarts it (crash backoff applies)");
            return false;
        }
        return true;
    }

    private void restartAndJoin(AgentSlot s, HostCommand c, RoundLog log) {
        Instant started = s.startedAt();
        boolean fresh = started != null && processes.isRunning(s.id())
                && Duration.between(started, clock.instant()).compareTo(dedupWindow.get()) < 0;
        if (!fresh) {
            String reason = "restart requested" + (c.reason() == null ? "" : ": " + c.reason());
            if (!actions.restart(s, reason, log.problems, false)) {
                return; // the flow's next attempt asks again
            }
            log.restarted.add(s.id());
        }
        if (actions.join(s, log.problems)) {
            log.rejoined.add(s.id());
        }
    }
}
