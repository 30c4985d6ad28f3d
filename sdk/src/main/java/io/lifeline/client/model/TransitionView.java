package io.lifeline.client.model;

import java.time.Instant;

/** One status change of an agent. */
public record TransitionView(long seq, String from, String to, String trigger, String reason, Instant at) {
}
