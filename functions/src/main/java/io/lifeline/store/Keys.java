package io.lifeline.store;

/**
 * The key layout of both tables ({@link Tables}). Live: an agent item is its own partition
 * {@code TEAM#<team>#AGENT#<id> / AGENT}, so no partition key gathers a team's heartbeats; the team item is
 * {@code TEAM#<team> / TEAM}; the sparse, keys-only index {@link Tables#TEAM_INDEX} ({@code tpk = TEAM#<team>},
 * {@code tsk = <id>}) lists a team's agents and is written only when an agent is registered. Ledger: a team's
 * tasks and key references share {@code TEAM#<team>}; an agent's history and side data live in
 * {@code TEAM#<team>#AGENT#<id>}; API keys are found by their hash.
 */
final class Keys {
    static final String PK = "pk";
    static final String SK = "sk";
    static final String GSI1 = "gsi1";
    static final String GSI1_PK = "gsi1pk";
    static final String GSI1_SK = "gsi1sk";
    /** TTL attribute (epoch seconds), as named in template.yaml. */
    static final String EXPIRES_AT = "expiresAt";

    /** The team index's key attributes on a live agent item (set once, at registration). */
    static final String TEAM_INDEX_PK = "tpk";
    static final String TEAM_INDEX_SK = "tsk";

    /** The sort key of a live agent item. */
    static final String AGENT_SK = "AGENT";
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

    /** The team of a live agent item's partition key {@code TEAM#<team>#AGENT#<id>}. */
    static String teamOfAgentPk(String pk) {
        return pk.substring("TEAM#".length(), pk.indexOf("#AGENT#"));
    }

    /** The agent id of a live agent item's partition key. */
    static String agentOfAgentPk(String pk) {
        return pk.substring(pk.indexOf("#AGENT#") + "#AGENT#".length());
    }

    static String idAfter(String prefix, String sk) {
        return sk.substring(prefix.length());
    }
}
