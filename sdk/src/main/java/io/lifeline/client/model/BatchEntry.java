package io.lifeline.client.model;

import java.time.Instant;
import java.util.List;

/**
 * One agent's heartbeat in a daemon's batch. {@code waiting} ("input", "person", "none" when a wait ended, or null:
 * unchanged) or {@code inTurn} (true while a tool call or model turn is under way, or null) are what the agent's
 * runtime hooks said last; never both. {@code parked}: a park at a provider's usage limit, or its end, when that
 * changed (null: unchanged). {@code subagents}: the agent's running subagents, the whole set, when it changed (null:
 * unchanged; a host's batch only).
 */
public record BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn, Park parked,
                         Subagents subagents) {
    public BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn, Park parked) {
        this(agentId, heartbeat, waiting, inTurn, parked, null);
    }

    public BatchEntry(String agentId, Heartbeat heartbeat, String waiting, Boolean inTurn) {
        this(agentId, heartbeat, waiting, inTurn, null);
    }

    public BatchEntry(String agentId, Heartbeat heartbeat) {
        this(agentId, heartbeat, null, null);
    }

    /** This entry saying {@code p} of parking. */
    public BatchEntry withParked(Park p) {
        return new BatchEntry(agentId, heartbeat, waiting, inTurn, p, subagents);
    }

    /** This entry carrying the agent's running subagents {@code s} (null: unchanged). */
    public BatchEntry withSubagents(Subagents s) {
        return new BatchEntry(agentId, heartbeat, waiting, inTurn, parked, s);
    }

    /** Running subagents: at most eight by id (its runtime's agent_id and agent_type, and since when), the rest counted. */
    public record Subagents(List<Running> running, int more) {
        public static final Subagents NONE = new Subagents(List.of(), 0);

        public Subagents {
            running = List.copyOf(running);
        }
    }

    /** One running subagent. */
    public record Running(String id, String type, Instant since) {
    }

    /**
     * Parked until {@code until} (null: the server's default) for {@code reason}, sent as {@code "parked": {...}}; or
     * {@link #RESUMED}, sent as {@code "parked": false}.
     */
    public record Park(boolean parked, Instant until, String reason) {
        public static final Park RESUMED = new Park(false, null, null);
    }
}
