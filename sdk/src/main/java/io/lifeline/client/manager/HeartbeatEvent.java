package io.lifeline.client.manager;

import io.lifeline.client.LifelineException;
import io.lifeline.client.model.HeartbeatResult;
import java.time.Instant;

/**
 * One heartbeat as the manager saw it: sent at {@code timestamp} with {@code state} and {@code stats};
 * {@code result} when the server took it, else {@code failure}. {@code rejoined} when the server had
 * answered rejoinRequired and the manager joined again before this beat.
 */
public record HeartbeatEvent(String agentId, Instant timestamp, ActivityState state, HeartbeatStats stats,
        HeartbeatResult result, LifelineException failure, boolean rejoined) {

    public boolean ok() {
        return result != null;
    }
}
