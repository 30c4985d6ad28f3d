package io.lifeline.client.model;

import java.util.Map;

/**
 * A heartbeat body. Every field is optional: {@code status} is ready|working|idle|active,
 * {@code source} tool|sdk_session_idle|sdk_session_updated|sdk_tool_execute, {@code nextHeartbeatWithinSeconds}
 * tells the server when to expect the next one.
 */
public record Heartbeat(String status, String source, Map<String, Object> metadata, Stats stats,
        Map<String, Object> checkpoint, Long nextHeartbeatWithinSeconds) {

    public static Heartbeat empty() {
        return new Heartbeat(null, null, null, null, null, null);
    }

    public static Heartbeat status(String status) {
        return new Heartbeat(status, null, null, null, null, null);
    }

    public Heartbeat withStats(Stats s) {
        return new Heartbeat(status, source, metadata, s, checkpoint, nextHeartbeatWithinSeconds);
    }

    public Heartbeat withMetadata(Map<String, Object> m) {
        return new Heartbeat(status, source, m, stats, checkpoint, nextHeartbeatWithinSeconds);
    }

    public Heartbeat withCheckpoint(Map<String, Object> c) {
        return new Heartbeat(status, source, metadata, stats, c, nextHeartbeatWithinSeconds);
    }

    public Heartbeat withNextHeartbeatWithinSeconds(Long seconds) {
        return new Heartbeat(status, source, metadata, stats, checkpoint, seconds);
    }
}
