package io.lifeline.client.model;

import java.time.Instant;

/**
 * The answer to a heartbeat; in a batch, one per entry, where a refused entry has {@code success=false}
 * and the server's {@code code}, {@code error}, and {@code rejoinRequired}. An accepted one carries
 * {@code heartbeatIntervalSeconds}, the interval that keeps the agent alive (null from a server that predates
 * it); {@code nextDeadline} 9999-12-31T23:59:59Z means no further heartbeat is expected (an {@code at:} slot
 * served).
 */
public record HeartbeatResult(String agentId, boolean success, Instant heartbeatTs, Instant nextDeadline,
        String agentStatus, String code, String error, Boolean rejoinRequired, Long heartbeatIntervalSeconds) {

    public boolean needsRejoin() {
        return Boolean.TRUE.equals(rejoinRequired);
    }
}
