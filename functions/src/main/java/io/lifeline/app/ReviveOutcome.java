package io.lifeline.app;

import java.util.Locale;

/**
 * The words of the revive flow, in one place: a step's outcome is the word the state machine's Choice states
 * branch on (infra/statemachine/revive.asl.json), the {@code outcome} of the step's console line and metric, and
 * the step's {@code outcome} in {@code GET .../revivals}; each maps to the execution's outcome there.
 */
public enum ReviveOutcome {
    /** initiate: the agent is restarting and its host was asked for attempt 1. */
    RESTART_REQUESTED(Execution.IN_PROGRESS),
    /**
     * initiate: the host daemon that reported the death restarts the agent itself and holds the restart; the flow
     * waits ({@code waitSeconds}, to the claim's end) and tries again, asking nothing of the host meanwhile.
     */
    HOST_RESTARTING(Execution.IN_PROGRESS),
    /** check: the agent did not rejoin after this attempt; the host was asked for the next one. */
    RETRY(Execution.IN_PROGRESS),
    /** check: the agent did not rejoin after the last attempt; the flow gives up next. */
    EXHAUSTED(Execution.IN_PROGRESS),
    /** The agent is alive again (it joined; at initiate: before any restart was asked). */
    REVIVED(Execution.REVIVED),
    /** giveUp: restarting -> dead_failed_revive. */
    FAILED(Execution.FAILED),
    /** The agent left the state this execution acts on (another execution, a cleanup, the sweep). */
    SUPERSEDED(Execution.SUPERSEDED),
    /** initiate: the agent has no host to ask. */
    NO_HOST(Execution.NO_HOST),
    /** recordError: an unexpected error ended the flow; it is the agent's last error. */
    ERROR(Execution.ERROR);

    /** What an execution came to, as {@code GET .../revivals} tells it. */
    public enum Execution {
        IN_PROGRESS, REVIVED, FAILED, SUPERSEDED, NO_HOST, ERROR;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Execution execution;

    ReviveOutcome(Execution execution) {
        this.execution = execution;
    }

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The execution's outcome once this step is its latest. */
    public Execution execution() {
        return execution;
    }
}
