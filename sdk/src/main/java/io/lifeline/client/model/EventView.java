package io.lifeline.client.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** An event as delivered to the bus; {@code type} is the detail-type, e.g. AgentStatusChanged. */
public record EventView(String eventId, String type, Instant at, JsonNode detail) {
}
