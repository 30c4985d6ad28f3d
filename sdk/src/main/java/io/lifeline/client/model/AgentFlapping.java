package io.lifeline.client.model;

import java.time.Instant;

/**
 * The agent is flagged flapping (it went between alive and down more than the service's threshold within its
 * window), and since when: its deaths and recoveries reach people as one notice until it is stable again.
 */
public record AgentFlapping(Instant since) {
}
