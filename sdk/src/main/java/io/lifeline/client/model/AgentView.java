package io.lifeline.client.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/**
 * An agent as the server shows it. Fields that a route does not send are null: {@code heartbeatIntervalSeconds}
 * (the interval that keeps the agent alive) only on join, {@code metadata}, {@code lastError}, {@code checkpointAt} only on a single-agent read,
 * {@code tasksHandedBack} only on leave. {@code waiting}: what the alive agent waits for (its next prompt, or a
 * person at a permission prompt) and since when, or null. {@code flapping}: since when the agent is flagged
 * flapping, or null. {@code lastProgressAt}: the agent's last sign of progress, or null when it never reported one;
 * {@code stalled}: since when and why it is stalled (in a turn with no progress past its threshold), or null;
 * {@code parked}: until when it is parked at its provider's usage limit, or null; {@code subagents}: its running
 * subagents (eight at most, oldest first) and {@code subagentsMore} the rest, or null when none runs (a single-agent
 * read only).
 */
public record AgentView(String agentId, String teamName, String name, String role, String hostId, String status,
        Boolean alive, Instant heartbeatTs, Instant deadline, Integer consecutiveMisses, Long staleAfterSeconds,
        Integer graceMisses, String currentTaskId, Stats stats, String schedule, String timeZone,
        Instant pausedUntil, String pauseReason, Instant registeredAt, TransitionView lastTransition,
        Long heartbeatIntervalSeconds, JsonNode metadata, Instant metadataAt, Instant checkpointAt,
        JsonNode lastError, Integer errorsReported, Integer sessionRotations, List<String> tasksHandedBack,
        AgentWaiting waiting, AgentFlapping flapping, Instant lastProgressAt, AgentStalled stalled,
        AgentParked parked, List<AgentSubagent> subagents, Integer subagentsMore) {

    /**
     * "ready", or "ready (input)" / "working (person)" while the agent waits, "working (stalled)" while it is
     * stalled, "ready (input) (parked)" while it is parked at a usage limit, and "dead (flapping)" while it is flagged flapping: its status as people read it.
     */
    public String statusWithWait() {
        String shown = waiting == null || waiting.kind() == null ? status : status + " (" + waiting.kind() + ")";
        shown = stalled == null ? shown : shown + " (stalled)";
        shown = parked == null ? shown : shown + " (parked)";
        return flapping == null ? shown : shown + " (flapping)";
    }
}
