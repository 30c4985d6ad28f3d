package io.lifeline.client.model;

import java.time.Instant;

/** One of an agent's running subagents: its runtime's id and type (may be null), and since when it runs. */
public record AgentSubagent(String id, String type, Instant since) {
}
