package io.lifeline.client.model;

import java.time.Instant;
import java.util.List;

/**
 * The team's agents whose status changed after a time ({@code GET .../agents?changedSince=}), newest change first;
 * {@code truncated} when more changed than the answer holds (read the list again), and {@code nextChangedSince}, the
 * time to ask from next (a few seconds before the answer's own, so no change the outbox indexes late is missed).
 */
public record AgentChanges(int count, List<AgentView> agents, boolean truncated, Instant nextChangedSince) {
}
