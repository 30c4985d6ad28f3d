package io.lifeline.client.model;

/** Seed 002's counters, sent with a heartbeat. {@code uptime} is in seconds. */
public record Stats(Long messagesProcessed, Long toolCallsExecuted, Long errorsEncountered, Long uptime) {
}
