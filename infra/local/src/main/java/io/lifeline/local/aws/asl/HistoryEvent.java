package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** One entry of an execution's history; {@code state} is null for execution-level events. */
public record HistoryEvent(Instant at, String type, String state, JsonNode detail) {
}
