package io.lifeline.client.model;

import java.time.Instant;

/**
 * The answer to a heartbeat; in a batch, one per entry, where a refused entry has {@code success=false}
 * and the server's {@code code}, {@code error}, and {@code rejoinRequired}.
 */
public record HeartbeatResult(String agentId, boolean success, Instant heartbeatTs, Instant nextDeadline,
        String agentStatus, String code, String error, Boolean rejoinRequired) {

    public boolean needsRejoin() {
        return Boolean.TRUE.equals(rejoinRequired);
    }
}
