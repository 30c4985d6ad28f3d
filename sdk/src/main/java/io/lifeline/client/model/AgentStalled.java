package io.lifeline.client.model;

import java.time.Instant;

/**
 * The agent is stalled: in a turn, it showed no progress past its {@code stallAfterSeconds}, since when the server
 * raised it, and why ({@code no progress reported}, {@code model stream silent}, ...). Cleared when progress resumes.
 */
public record AgentStalled(Instant since, String reason) {
}
