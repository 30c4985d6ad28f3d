package io.lifeline.agent;

/** Counters an agent reports with its heartbeats (seed 002). Null fields were never reported. */
public record AgentStats(Long messagesProcessed, Long toolCallsExecuted, Long errorsEncountered, Long uptimeSeconds) {
    public static final AgentStats NONE = new AgentStats(null, null, null, null);

    public boolean isEmpty() {
        return messagesProcessed == null && toolCallsExecuted == null && errorsEncountered == null
                && uptimeSeconds == null;
    }
}
