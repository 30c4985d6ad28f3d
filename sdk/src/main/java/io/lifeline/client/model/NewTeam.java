package io.lifeline.client.model;

/**
 * A team just created ({@code POST /v1/teams}, operator key): its settings and its first admin key, whose
 * secret ({@code adminKey.key()}) is shown only in this answer.
 */
public record NewTeam(String team, String leaderAgentId, Double selfPreservationThreshold,
        Integer selfPreservationMinAlive, ApiKey adminKey, String note) {
}
