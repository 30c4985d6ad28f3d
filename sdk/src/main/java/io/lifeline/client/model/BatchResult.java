package io.lifeline.client.model;

import java.util.List;

/** The batch answer: a result per entry, in order. */
public record BatchResult(List<HeartbeatResult> results) {
}
