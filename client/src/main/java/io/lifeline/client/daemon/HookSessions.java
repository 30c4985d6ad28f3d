package io.lifeline.client.daemon;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.hooks.HookSignal;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * What the daemon does when a runtime's hook arrives (told by the local channel after its 200): status, waiting and
 * inTurn wait for the next batch ({@link BeatRound}); a new session is recorded and told; a session's end (the agent
 * leaves), a new session after it (it joins again) and a failure (the errors route, with its category only) are sent
 * from the daemon's exit thread at once, under the daemon's lock, unless the hook came from a process that has been
 * replaced since (one the daemon was stopping).
 */
final class HookSessions {
    private final LifelineClient client;
    private final AgentProcesses processes;
    private final AgentActions actions;
    private final Map<String, AgentSlot> slots;
    /** The daemon's exit thread. */
    private final Executor exitThread;
    /** The daemon's lock: what a hook makes the daemon do does not run into a round. */
    private final Object lock;
    private final Consumer<TickReport> tell;

    HookSessions(LifelineClient client, AgentProcesses processes, AgentActions actions, Map<String, AgentSlot> slots,
            Executor exitThread, Object lock, Consumer<TickReport> tell) {
        this.client = client;
        this.processes = processes;
        this.actions = actions;
        this.slots = slots;
        this.exitThread = exitThread;
        this.lock = lock;
        this.tell = tell;
    }

    /** A hook arrived. */
    void hooked(LocalBeats.Hook h) {
        AgentSlot s = slots.get(h.agentId());
        if (s == null) {
            return; // not this daemon's agent: the channel answered 404
        }
        String a = s.id();
        long generation = processes.generation(a);
        if (h.session() != null && s.namedSession(h.session())) {
            processes.session(a, h.session());
            RoundLog log = new RoundLog();
            log.hooks.add(a + ": its " + h.runtime().wire() + " session is " + h.session());
            run(() -> tell.accept(log.report()));
        }
        if (h.rollout() != null) {
            s.rollout(h.rollout());
        }
        if ("SubagentStart".equals(h.event())) {
            s.subagentStarted(h.at(), h.subagentId(), h.subagentType());
        } else if ("SubagentStop".equals(h.event())) {
            s.subagentStopped(h.subagentId());
        }
        if (h.limitUntil() != null) {
            s.park(h.limitUntil());
            RoundLog log = new RoundLog();
            log.hooks.add(a + ": its runtime reported a usage limit; parked until " + h.limitUntil());
            run(() -> tell.accept(log.report()));
        } else if ((h.signal() == HookSignal.ACTIVE || h.signal() == HookSignal.TOOL) && s.unpark()) {
            RoundLog log = new RoundLog();
            log.hooks.add(a + ": active again; no longer parked");
            run(() -> tell.accept(log.report()));
        }
        Runnable action = switch (h.signal()) {
            case SESSION_ENDED -> () -> sessionEnded(s, generation);
            case SESSION_STARTED -> () -> sessionStarted(s, generation);
            case FAILED, TOOL_FAILED -> h.errorCategory() == null ? null
                    : () -> runtimeFailed(s, generation, h);
            default -> null;
        };
        if (action != null) {
            run(action);
        }
    }

    private void run(Runnable r) {
        try {
            exitThread.execute(r);
        } catch (RejectedExecutionException closed) {
            // stopping: nothing more is sent
        }
    }

    private void sessionEnded(AgentSlot s, long generation) {
        String agentId = s.id();
        RoundLog log = new RoundLog();
        synchronized (lock) {
            if (generation != processes.generation(agentId) || s.givenUp() != null || s.stall() != null
                    || s.parkedUntil() != null) {
                // Being stopped for a stall: its session ends because the daemon stops it, a death. Parked at a
                // usage limit: its runtime gave up until the reset, when the daemon resumes it.
                return;
            }
            s.sessionLeft(true);
            try {
                client.leave(agentId, "its runtime's session ended");
                log.hooks.add(agentId + ": its runtime's session ended; it left (offline)");
            } catch (LifelineException e) {
                log.problems.add(agentId + ": leave after its session ended: " + e.getMessage());
            }
            tell.accept(log.report());
        }
    }

    private void sessionStarted(AgentSlot s, long generation) {
        String agentId = s.id();
        RoundLog log = new RoundLog();
        synchronized (lock) {
            if (generation != processes.generation(agentId) || !s.sessionLeft()) {
                return;
            }
            s.sessionLeft(false);
            s.hookSent(null);
            if (actions.join(s, log.problems)) {
                log.rejoined.add(agentId);
                log.hooks.add(agentId + ": a new session of its runtime started; it joined again");
            }
            tell.accept(log.report());
        }
    }

    private void runtimeFailed(AgentSlot s, long generation, LocalBeats.Hook h) {
        String agentId = s.id();
        RoundLog log = new RoundLog();
        synchronized (lock) {
            if (generation != processes.generation(agentId)) {
                return;
            }
            String category = h.errorCategory() == null ? HookSignals.UNKNOWN : h.errorCategory();
            try {
                client.reportError(agentId, HookSignals.errorMessage(h.runtime(), h.event(), category));
                log.hooks.add(agentId + ": its runtime reported a failure (" + category
                        + "); sent to the errors route");
            } catch (LifelineException e) {
                log.problems.add(agentId + ": error report failed: " + e.getMessage());
            }
            tell.accept(log.report());
        }
    }
}
