package io.lifeline.agent;

/**
 * Counters an agent reports with its heartbeats. Null fields were never reported.
 * {@code restartsLastHour} is how often the agent's host restarted it in the hour before the report (a daemon's
 * crash loop shows here).
 */
public record AgentStats(Long messagesProcessed, Long toolCallsExecuted, Long errorsEncountered, Long uptimeSeconds,
                         Long restartsLastHour) {
    public static final AgentStats NONE = new AgentStats(null, null, null, null, null);

    /** Only the host's restarts in the last hour (null: none told, so nothing is written). */
    public static AgentStats restarts(Long restartsLastHour) {
        return restartsLastHour == null ? null : new AgentStats(null, null, null, null, restartsLastHour);
    }

    public boolean isEmpty() {
        return messagesProcessed == null && toolCallsExecuted == null && errorsEncountered == null
                && uptimeSeconds == null && restartsLastHour == null;
    }
}
