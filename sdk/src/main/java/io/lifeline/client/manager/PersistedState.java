package io.lifeline.client.manager;

import java.time.Instant;
import java.util.Map;

/**
 * The small state file (the crash-recovery protocol's PersistedState): who, what it was doing, its stats, its last
 * checkpoint, when its last heartbeat went out ({@code heartbeatAt}) and when the file was written ({@code savedAt}).
 */
public record PersistedState(String agentId, String team, String state, Instant heartbeatAt,
        HeartbeatStats stats, Map<String, Object> checkpoint, String cwd, Instant savedAt) {
}
