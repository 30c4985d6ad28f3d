package io.lifeline.client.model;

import java.time.Instant;

/**
 * The agent is parked at its provider's usage limit: alive, neither stale nor stalled, until {@code until} (the
 * limit's reset), since {@code since}, for {@code reason}. Cleared when it resumes.
 */
public record AgentParked(Instant until, String reason, Instant since) {
}
