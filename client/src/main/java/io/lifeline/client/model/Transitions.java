package io.lifeline.client.model;

import java.util.List;

/** An agent's flip history, newest first. */
public record Transitions(String agentId, List<TransitionView> transitions) {
}
