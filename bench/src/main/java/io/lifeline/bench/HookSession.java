package io.lifeline.bench;

/**
 * A hook-driven agent's month, from the real runs' event counts: it works {@code busyHours} a month in turns of
 * {@code toolCallsPerTurn} tool calls every {@code turnMinutes}; Claude Code sends 2n + 3 events a turn of n tool
 * calls inside a session (UserPromptSubmit, PreToolUse and PostToolUse per call, PostToolBatch, Stop; Codex one
 * more, its notify; Gemini CLI 3n + 5) and 2 a session (SessionStart, SessionEnd); {@code sessionsPerDay} on
 * {@code busyDays}. A turn writes at most {@code writesPerTurn} times (HookCostTest counts it with the default
 * 60 s coalescing window) and changes status twice (working, then ready: each a transition the outbox
 * publishes); a session's join and leave are two more of each.
 */
public record HookSession(double busyHours, double turnMinutes, int toolCallsPerTurn, double sessionsPerDay,
                          double busyDays, int writesPerTurn) {
    double turnsPerAgentMonth() {
        return busyHours * 60 / turnMinutes;
    }

    double sessionsPerAgentMonth() {
        return sessionsPerDay * busyDays;
    }

    double eventsPerAgentMonth() {
        return turnsPerAgentMonth() * (2.0 * toolCallsPerTurn + 3) + 2 * sessionsPerAgentMonth();
    }

    double writesPerAgentMonth() {
        return turnsPerAgentMonth() * writesPerTurn + 2 * sessionsPerAgentMonth();
    }

    double changesPerAgentMonth() {
        return turnsPerAgentMonth() * 2 + 2 * sessionsPerAgentMonth();
    }

    /** 176 busy hours (8 h on 22 days), a turn of 10 tool calls every 5 minutes, 4 sessions a day. */
    static final HookSession HOOKS = new HookSession(176, 5, 10, 4, 22, 5);
}
