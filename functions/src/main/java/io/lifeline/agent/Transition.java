package io.lifeline.agent;

import java.time.Instant;

/** One recorded status change ("flip"). {@code seq} counts an agent's transitions from 1. */
public record Transition(long seq, AgentStatus from, AgentStatus to, Trigger trigger, String reason, Instant at) {
}
