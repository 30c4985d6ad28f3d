package io.lifeline.client.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** The server's crash-recovery answer: the checkpoint is present when {@code available}. */
public record RecoveryAnswer(boolean available, String reason, JsonNode checkpoint, Instant savedAt,
        String agentStatus, Instant heartbeatTs) {
}
