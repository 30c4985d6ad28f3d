package io.lifeline.client.model;

import java.util.List;

/**
 * A page of the team's agents ({@code GET /v1/teams/{team}/agents}); {@code nextCursor} reads the page after it (null:
 * this page is the last). {@link io.lifeline.client.LifelineClient#agents(String)} answers every page as one list, with
 * no cursor.
 */
public record AgentList(int count, List<AgentView> agents, String nextCursor) {
    public AgentList(int count, List<AgentView> agents) {
        this(count, agents, null);
    }
}
