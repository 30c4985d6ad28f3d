package io.lifeline.client.model;

import java.time.Instant;
import java.util.List;

/** One revive execution and its recorded steps. */
public record Revival(long startSeq, String executionId, Instant startedAt, String outcome, int attempts,
        List<Step> steps) {

    public record Step(String step, int attempt, String outcome, Instant at) {
    }
}
