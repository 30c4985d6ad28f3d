package io.lifeline.store.dynamo;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The key layout of the agent, team, task and key items of both tables ({@link Tables}). Live: an agent item is its own
 * partition {@code TEAM#<team>#AGENT#<id> / AGENT}, so no partition key gathers a team's heartbeats; the team item is
 * {@code TEAM#<team> / TEAM}. Ledger: a team's tasks, key references and roster ({@code AGENT#<id>}, keys only,
 * written once when the agent is registered: how a team's agents are listed) share {@code TEAM#<team>}; an agent's
 * history and side data live in {@code TEAM#<team>#AGENT#<id>}; API keys are found by their hash. Not here: a
 * host's lease ({@code TEAM#<team>#HOST#<hostId> / HOST} on the live table,
 * {@link io.lifeline.store.agent.HostLeaseStore}) and its restart commands ({@code TEAM#<team>#HOST#<hostId> / CMD#<id>},
 * {@link io.lifeline.store.agent.HostCommandStore}) build their own keys.
 */
public final class Keys {
    public static final String PK = "pk";
    public static final String SK = "sk";
    /** The dropped assignee index's keys, still on tasks claimed before 2026-11-27 (removed when they end). */
    public static final String GSI1_PK = "gsi1pk";
    public static final String GSI1_SK = "gsi1sk";
    /** TTL attribute (epoch seconds), as named in template.yaml. */
    public static final String EXPIRES_AT = "expiresAt";

    /** The sort key of a live agent item. */
    public static final String AGENT_SK = "AGENT";
    public static final String AGENT_PREFIX = "AGENT#";
    public static final String TASK_PREFIX = "TASK#";
    public static final String KEY_REF_PREFIX = "KEY#";
    public static final String TRANSITION_PREFIX = "T#";
    public static final String TEAM_SK = "TEAM";
    public static final String DATA_SK = "DATA";
    public static final String KEY_SK = "KEY";
    /** The fleet item on the live table ({@code FLEET / FLEET}): the deployment-wide self-preservation flag. */
    public static final String FLEET = "FLEET";
    /** The partition holding operator keys' references (operator keys belong to no team). */
    public static final String OPERATOR_PK = "OPERATOR";

    private Keys() {
    }

    public static String team(String team) {
        return "TEAM#" + team;
    }

    public static String agentSk(String agentId) {
        return AGENT_PREFIX + agentId;
    }

    /** The agent's entry in its team's roster on the ledger: {@code TEAM#<team> / AGENT#<id>}. */
    public static Map<String, AttributeValue> rosterKey(String team,
                                                                                                       String agentId) {
        return Map.of(PK, Items.s(team(team)), SK, Items.s(agentSk(agentId)));
    }

    public static String agentScope(String team, String agentId) {
        return team(team) + "#AGENT#" + agentId;
    }

    public static String transitionSk(long seq) {
        return TRANSITION_PREFIX + String.format("%012d", seq);
    }

    public static String taskSk(String taskId) {
        return TASK_PREFIX + taskId;
    }

    public static String apiKey(String hash) {
        return "KEY#" + hash;
    }

    /** The team of a live agent item's partition key {@code TEAM#<team>#AGENT#<id>}. */
    public static String teamOfAgentPk(String pk) {
        return pk.substring("TEAM#".length(), pk.indexOf("#AGENT#"));
    }

    /** The agent id of a live agent item's partition key. */
    public static String agentOfAgentPk(String pk) {
        return pk.substring(pk.indexOf("#AGENT#") + "#AGENT#".length());
    }

    public static String idAfter(String prefix, String sk) {
        return sk.substring(prefix.length());
    }
}
