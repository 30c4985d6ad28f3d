package io.lifeline.events;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * One event for the bus: source {@code lifeline}, {@code type} as the detail-type, a deterministic
 * {@code eventId} (also inside the detail) so consumers can drop a duplicate delivery.
 */
public record LifelineEvent(String team, String type, String eventId, Instant at, ObjectNode detail) {
    public static final String SOURCE = "lifeline";

    /** The agent this event is about (its subject, the one whose task moved, the one a notice tells of); null if none. */
    public String agentId() {
        for (String field : new String[] {"agentId", "fromAgentId", "aboutAgentId"}) {
            if (detail.hasNonNull(field)) {
                return detail.get(field).asText();
            }
        }
        return null;
    }
}
