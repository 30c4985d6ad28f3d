package io.lifeline.api;

import io.lifeline.auth.ApiKeys;

/** Names of manual revive executions: derived from the agent and its transition, at most 80 characters. */
final class ReviveExecutions {
    private static final int MAX_NAME = 80;

    private ReviveExecutions() {
    }

    static String name(String team, String agentId, long seq) {
        String plain = "revive-" + team + "-" + agentId + "-" + seq;
        if (plain.length() <= MAX_NAME) {
            return plain;
        }
        // Long ids: keep the name unique and stable by hashing the team and agent.
        return "revive-" + ApiKeys.hash(team + "/" + agentId).substring(0, 40) + "-" + seq;
    }
}
