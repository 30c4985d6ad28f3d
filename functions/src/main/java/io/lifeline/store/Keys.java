package io.lifeline.store;

/**
 * The single table's key layout. A team's agents, tasks and key references share the partition
 * {@code TEAM#<team>}; an agent's history and side data live in {@code TEAM#<team>#AGENT#<id>} so that
 * listing agents never reads them; API keys are found by their hash.
 */
final class Keys {
    static final String PK = "pk";
    static final String SK = "sk";
    static final String GSI1 = "gsi1";
    static final String GSI1_PK = "gsi1pk";
    static final String GSI1_SK = "gsi1sk";
    /** TTL attribute (epoch seconds), as named in template.yaml. */
    static final String EXPIRES_AT = "expiresAt";

    static final String AGENT_PREFIX = "AGENT#";
    static final String TASK_PREFIX = "TASK#";
    static final String KEY_REF_PREFIX = "KEY#";
    static final String TRANSITION_PREFIX = "T#";
    static final String TEAM_SK = "TEAM";
    static final String DATA_SK = "DATA";
    static final String KEY_SK = "KEY";
    /** The partition holding operator keys' references (operator keys belong to no team). */
    static final String OPERATOR_PK = "OPERATOR";

    private Keys() {
    }

    static String team(String team) {
        return "TEAM#" + team;
    }

    static String agentSk(String agentId) {
        return AGENT_PREFIX + agentId;
    }

    static String agentScope(String team, String agentId) {
        return team(team) + "#AGENT#" + agentId;
    }

    static String transitionSk(long seq) {
        return TRANSITION_PREFIX + String.format("%012d", seq);
    }

    static String taskSk(String taskId) {
        return TASK_PREFIX + taskId;
    }

    static String assignee(String team, String agentId) {
        return team(team) + "#ASSIGNEE#" + agentId;
    }

    static String apiKey(String hash) {
        return "KEY#" + hash;
    }

    static String idAfter(String prefix, String sk) {
        return sk.substring(prefix.length());
    }
}
