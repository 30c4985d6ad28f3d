package io.lifeline.client.daemon;

import io.lifeline.client.model.HeartbeatResult;
import java.util.List;

/**
 * What one daemon round did: how many batch calls it made, the heartbeat results, the crashes it reported,
 * the agents it restarted and joined again, the commands it acknowledged, and anything that went wrong.
 */
public record TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
        List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems) {
}
