package io.lifeline.client.daemon;

import io.lifeline.client.model.HeartbeatResult;
import java.util.ArrayList;
import java.util.List;

/**
 * What a round, an exit pass or a hook's consequence did, gathered as it goes and told as one {@link TickReport}:
 * the crash loop, the beat round, the command inbox and the hook sessions each add their lines to it.
 */
final class RoundLog {
    int batchCalls;
    final List<HeartbeatResult> results = new ArrayList<>();
    final List<String> crashesReported = new ArrayList<>();
    final List<String> restarted = new ArrayList<>();
    final List<String> rejoined = new ArrayList<>();
    final List<String> acked = new ArrayList<>();
    final List<String> problems = new ArrayList<>();
    final List<String> gaveUp = new ArrayList<>();
    final List<String> backingOff = new ArrayList<>();
    final List<String> exits = new ArrayList<>();
    final List<String> hooks = new ArrayList<>();

    /** Whether the processes' side did nothing to tell (an exit pass a round got to first). */
    boolean quiet() {
        return crashesReported.isEmpty() && restarted.isEmpty() && gaveUp.isEmpty() && problems.isEmpty()
                && exits.isEmpty();
    }

    TickReport report() {
        return new TickReport(batchCalls, results, crashesReported, restarted, rejoined, acked, problems, gaveUp,
                backingOff, exits, hooks);
    }
}
