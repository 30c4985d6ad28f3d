package io.lifeline.client.model;

/**
 * The crash-recovery protocol's counters, sent with a heartbeat. {@code uptime} is in seconds; {@code restartsLastHour}
 * is how often the agent's host restarted it in the hour before the beat (a {@code HostDaemon} sends it).
 */
public record Stats(Long messagesProcessed, Long toolCallsExecuted, Long errorsEncountered, Long uptime,
        Long restartsLastHour) {

    public Stats(Long messagesProcessed, Long toolCallsExecuted, Long errorsEncountered, Long uptime) {
        this(messagesProcessed, toolCallsExecuted, errorsEncountered, uptime, null);
    }

    /** Only the host's count of restarts in the last hour. */
    public static Stats restarts(long lastHour) {
        return new Stats(null, null, null, null, lastHour);
    }
}
