package io.lifeline.client.daemon;

import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

/**
 * A round's handling of agents parked at their provider's usage limit (docs/daemon.md, "Parked at a usage limit"):
 * a parked agent is alive (it is beaten, its park sent once), its runtime's exit after the limit is no crash, and at
 * the reset the daemon starts it again on its session (the resume command, with {@code LIFELINE_RESUME_PROMPT} set to
 * {@value #CONTINUE}) and ends the park. Runs under the daemon's lock, from {@link CrashLoop}.
 */
final class ParkedAgents {
    /** The prompt a resumed command is offered in {@code LIFELINE_RESUME_PROMPT}. */
    static final String CONTINUE = "continue";

    private final AgentActions actions;
    private final AgentProcesses processes;

    ParkedAgents(AgentActions actions, AgentProcesses processes) {
        this.actions = actions;
        this.processes = processes;
    }

    /** True when {@code s} is parked and this pass handled it (the crash loop leaves it alone). */
    boolean pass(AgentSlot s, Instant now, RoundLog log, List<AgentSlot> running) {
        Instant until = s.parkedUntil() != null ? s.parkedUntil() : exitedAtLimit(s, now, log);
        if (until == null) {
            return false;
        }
        if (now.isBefore(until)) {
            if (!processes.isRunning(s.id())) {
                s.takeExitSeen(); // its runtime gave up on the limit and ended: parked, not a crash
                s.countExit();
            }
            s.restartDue(until); // the round wakes at the reset
            running.add(s);
            return true;
        }
        s.restartDue(null);
        if (actions.restart(s, "usage limit reset", log.problems, false)) {
            s.unpark();
            log.restarted.add(s.id());
            log.hooks.add(s.id() + ": its usage limit reset at " + until + "; resumed on its session");
            if (actions.join(s, log.problems)) {
                log.rejoined.add(s.id());
            }
            running.add(s);
        }
        return true;
    }

    /**
     * A Codex agent whose process exited before its {@code SessionEnd} hook parked it (or with no such hook): parked
     * now when its session's rollout file says its last turn ended at a usage limit ({@link CodexLimit}), as the hook
     * would have; null otherwise. The file is read once per exit, then forgotten until a hook of a new life names it.
     */
    private Instant exitedAtLimit(AgentSlot s, Instant now, RoundLog log) {
        Path rollout = s.rollout();
        if (rollout == null || s.exitCounted() || s.sessionLeft() || processes.isRunning(s.id())) {
            return null;
        }
        s.rollout(null);
        Instant until = CodexLimit.limitUntil(rollout, now, ZoneId.systemDefault()).orElse(null);
        if (until != null) {
            s.park(until);
            log.hooks.add(s.id() + ": its Codex session ended at a usage limit; parked until " + until);
        }
        return until;
    }
}
