package io.lifeline.client.model;

import java.util.Map;

/**
 * A heartbeat body. Every field is optional: {@code status} is ready|working|idle|active,
 * {@code source} tool|sdk_session_idle|sdk_session_updated|sdk_tool_execute, {@code nextHeartbeatWithinSeconds}
 * tells the server when to expect the next one. {@code progressAgeMs}: how long ago the agent's work last progressed
 * (the server judges a working agent stalled when it grows past its threshold; a beat from a side thread carries it,
 * so it cannot hide a wedged work loop); {@code stallReason}: what a silence would mean (a short phrase), with it.
 */
public record Heartbeat(String status, String source, Map<String, Object> metadata, Stats stats,
        Map<String, Object> checkpoint, Long nextHeartbeatWithinSeconds, Long progressAgeMs, String stallReason) {

    /** A heartbeat that says nothing of progress. */
    public Heartbeat(String status, String source, Map<String, Object> metadata, Stats stats,
                     Map<String, Object> checkpoint, Long nextHeartbeatWithinSeconds) {
        this(status, source, metadata, stats, checkpoint, nextHeartbeatWithinSeconds, null, null);
    }

    public static Heartbeat empty() {
        return new Heartbeat(null, null, null, null, null, null);
    }

    public static Heartbeat status(String status) {
        return new Heartbeat(status, null, null, null, null, null);
    }

    public Heartbeat withStats(Stats s) {
        return new Heartbeat(status, source, metadata, s, checkpoint, nextHeartbeatWithinSeconds, progressAgeMs,
                stallReason);
    }

    public Heartbeat withMetadata(Map<String, Object> m) {
        return new Heartbeat(status, source, m, stats, checkpoint, nextHeartbeatWithinSeconds, progressAgeMs,
                stallReason);
    }

    public Heartbeat withCheckpoint(Map<String, Object> c) {
        return new Heartbeat(status, source, metadata, stats, c, nextHeartbeatWithinSeconds, progressAgeMs,
                stallReason);
    }

    public Heartbeat withNextHeartbeatWithinSeconds(Long seconds) {
        return new Heartbeat(status, source, metadata, stats, checkpoint, seconds, progressAgeMs, stallReason);
    }

    /** This beat saying the agent's work last progressed {@code ageMs} ago (0: now; null: says nothing of it). */
    public Heartbeat withProgressAgeMs(Long ageMs) {
        return new Heartbeat(status, source, metadata, stats, checkpoint, nextHeartbeatWithinSeconds, ageMs,
                stallReason);
    }

    /** This beat naming what a silence of its progress would mean ({@code model stream silent}); with a progress age. */
    public Heartbeat withStallReason(String reason) {
        return new Heartbeat(status, source, metadata, stats, checkpoint, nextHeartbeatWithinSeconds, progressAgeMs,
                reason);
    }
}
