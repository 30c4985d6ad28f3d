package io.lifeline.client.model;

import java.util.List;

/** An agent's revive executions, newest first. */
public record Revivals(String agentId, List<Revival> revivals) {
}
