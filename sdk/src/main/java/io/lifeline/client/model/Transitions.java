package io.lifeline.client.model;

import java.util.List;

/**
 * One page of an agent's flip history, newest first; {@code nextCursor} (null on the last page) asks for the
 * next one.
 */
public record Transitions(String agentId, List<TransitionView> transitions, String nextCursor) {
}
