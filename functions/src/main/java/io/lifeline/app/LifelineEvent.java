package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Map;

/**
 * One event for the bus: source {@code lifeline}, {@code type} as the detail-type, a deterministic
 * {@code eventId} (also inside the detail) so consumers can drop a duplicate delivery. {@code teamViews}: for an event
 * of the whole fleet (team {@code *}, sent once, to the operator's destinations), what the event log of each team it
 * concerns records instead: that team's own view, which names no other team, agent or host (docs/events.md).
 */
public record LifelineEvent(String team, String type, String eventId, Instant at, ObjectNode detail,
                            Map<String, ObjectNode> teamViews) {
    public static final String SOURCE = "lifeline";

    /** An event of one team: logged in that team's event log only. */
    public LifelineEvent(String team, String type, String eventId, Instant at, ObjectNode detail) {
        this(team, type, eventId, at, detail, Map.of());
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
