package io.lifeline.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * What an alive agent waits for: {@code input} (its turn ended; it waits for its next prompt) or {@code person} (a
 * permission prompt), and since when. Lifeline does not judge it silent while it waits, within its allowance.
 */
public record AgentWaiting(@JsonProperty("for") String kind, Instant since) {
}
