package io.lifeline.client.model;

import java.time.Instant;

/**
 * One agent's heartbeat in a daemon's batch. {@code waiting} ("input", "person", "none" when a wait ended, or null:
 * unchanged) or {@code inTurn} (true while a tool call or model turn is under way, or null) are what the agent's
 * runtime hooks said last; never both. {@code parked}: a park at a provider's usage limit, or its end, when that
 * changed (null: unchanged).
 */
public record BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn, Park parked) {
    public BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn) {
        this(agentId, heartbeat, waiting, inTurn, null);
    }

    public BatchEntry(String agentId, Heartbeat heartbeat) {
        this(agentId, heartbeat, null, null);
    }

    /** This entry saying {@code p} of parking. */
    public BatchEntry withParked(Park p) {
        return new BatchEntry(agentId, heartbeat, waiting, inTurn, p);
    }

    /**
     * Parked until {@code until} (null: the server's default) for {@code reason}, sent as {@code "parked": {...}}; or
     * {@link #RESUMED}, sent as {@code "parked": false}.
     */
    public record Park(boolean parked, Instant until, String reason) {
        public static final Park RESUMED = new Park(false, null, null);
    }
}
