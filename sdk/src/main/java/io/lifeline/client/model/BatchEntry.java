package io.lifeline.client.model;

/** One agent's heartbeat in a daemon's batch. */
public record BatchEntry(String agentId, Heartbeat heartbeat) {
}
