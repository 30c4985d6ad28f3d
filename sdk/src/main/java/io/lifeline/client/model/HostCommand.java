package io.lifeline.client.model;

import java.time.Instant;

/** A command for a host (a restart request); {@code state} pending|acked. */
public record HostCommand(String commandId, String hostId, String type, String agentId, int attempt,
        String reason, String state, Instant createdAt, Instant expiresAt, Instant ackedAt) {
}
