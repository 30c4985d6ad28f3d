package io.lifeline.client.daemon;

import io.lifeline.client.model.HeartbeatResult;
import java.util.List;

/**
 * What one daemon round did: how many batch calls it made, the heartbeat results, the crashes it reported,
 * the agents it restarted and joined again, the commands it acknowledged, anything that went wrong, the agents
 * it gave up on in this round (a crash loop: reported {@code dead_failed_revive}), and the agents waiting out a
 * crash backoff ("ID restarts in N s ...").
 */
public record TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
        List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems,
        List<String> gaveUp, List<String> backingOff) {

    public TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
            List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems) {
        this(batchCalls, results, crashesReported, restarted, rejoined, commandsAcked, problems, List.of(), List.of());
    }
}
