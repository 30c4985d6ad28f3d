package io.lifeline.client.daemon;

import io.lifeline.client.model.HeartbeatResult;
import java.util.List;

/**
 * What one daemon round did: how many batch calls it made, the heartbeat results, the crashes it reported,
 * the agents it restarted and joined again, the commands it acknowledged, anything that went wrong, the agents
 * it gave up on in this round (a crash loop: reported {@code dead_failed_revive}), and the agents waiting out a
 * crash backoff ("ID restarts in N s ..."), and each exit it reported with how long after the exit it did ("ID: killed by
 * signal 9 (KILL); reported dead 40 ms after the exit"), and what its agents' runtime hooks made it do ("ID: its
 * runtime's session ended; it left (offline)", never a hook's content). A report with no batch call comes from
 * between rounds: an exit pass (an exit reported the moment it happened) or a hook's consequence.
 */
public record TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
        List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems,
        List<String> gaveUp, List<String> backingOff, List<String> exits, List<String> hooks) {

    public TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
            List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems) {
        this(batchCalls, results, crashesReported, restarted, rejoined, commandsAcked, problems, List.of(), List.of(),
                List.of(), List.of());
    }

    public TickReport(int batchCalls, List<HeartbeatResult> results, List<String> crashesReported,
            List<String> restarted, List<String> rejoined, List<String> commandsAcked, List<String> problems,
            List<String> gaveUp, List<String> backingOff) {
        this(batchCalls, results, crashesReported, restarted, rejoined, commandsAcked, problems, gaveUp, backingOff,
                List.of(), List.of());
    }
}
