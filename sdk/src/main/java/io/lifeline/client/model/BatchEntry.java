package io.lifeline.client.model;

/**
 * One agent's heartbeat in a daemon's batch. {@code waiting} ("input", "person", "none" when a wait ended, or null:
 * unchanged) or {@code inTurn} (true while a tool call or model turn is under way, or null) are what the agent's
 * runtime hooks said last; never both.
 */
public record BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn) {
    public BatchEntry(String agentId, Heartbeat heartbeat) {
        this(agentId, heartbeat, null, null);
    }
}
