package io.lifeline.events;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;

/**
 * One event for the bus: source {@code lifeline}, {@code type} as the detail-type, a deterministic
 * {@code eventId} (also inside the detail) so consumers can drop a duplicate delivery. {@code alsoLoggedFor}: teams
 * whose event log records it besides {@code team}'s (a fleet-level event names the teams it concerns); sent once.
 */
public record LifelineEvent(String team, String type, String eventId, Instant at, ObjectNode detail,
                            List<String> alsoLoggedFor) {
    public static final String SOURCE = "lifeline";

    /** An event of one team: logged in that team's event log only. */
    public LifelineEvent(String team, String type, String eventId, Instant at, ObjectNode detail) {
        this(team, type, eventId, at, detail, List.of());
    }

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
