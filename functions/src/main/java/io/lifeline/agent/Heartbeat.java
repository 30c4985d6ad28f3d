package io.lifeline.agent;

import java.time.Duration;

/**
 * A validated heartbeat. {@code reported} is the status the agent says it is in (from {@code status} or
 * implied by an SDK {@code source}), or null to keep the current one. {@code nextWithin} overrides the
 * agent's stale-after for this one deadline. {@code metadataJson}/{@code checkpointJson} are null when
 * absent.
 */
public record Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                        AgentStats stats, String metadataJson, String checkpointJson) {
}
