package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.store.dynamo.BatchReads;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Commands for the daemons that host agents (the restart channel's pull side, for hosts behind NAT):
 * {@code TEAM#<team>#HOST#<host> / CMD#<id>}. A command is issued once per (agent, revive, attempt), so a
 * retried task issues nothing new; it is acknowledged once; it expires with DynamoDB TTL and is hidden
 * once past its expiry even before TTL removes it.
 *
 * <p>A restart command records the agent's transition seq of the {@code restarting} state it was issued for
 * ({@code tseq}). It stands only while the agent is still {@code restarting} at that seq: any write that ends
 * the flow (a join, the give-up, a cleanup, the sweep, a newer flow's restart) moves the agent's seq on, and so
 * supersedes every command of the flow in that same write, with nothing to find or rewrite. The list leaves
 * superseded commands out, and an ack is one transaction with a ConditionCheck on the agent item, answering
 * 409 {@code COMMAND_SUPERSEDED} when the flow has ended.
 */
public final class HostCommandStore {
    static final String CMD_PREFIX = "CMD#";
    static final String TYPE = "type";
    static final String AGENT = "agentId";
    static final String ATTEMPT = "attempt";
    static final String REASON = "reason";
    static final String STATE = "state";
    static final String CREATED_AT = "createdAt";
    static final String ACKED_AT = "ackedAt";
    /** The agent's transition seq (its {@code restarting} state) the command was issued for. */
    static final String FOR_SEQ = "tseq";
    static final String PENDING = "pending";
    static final String ACKED = "acked";

    /** A command as a host sees it. */
    public record Command(String commandId, String hostId, String type, String agentId, int attempt, String reason,
                          String state, Instant createdAt, Instant expiresAt, Instant ackedAt) {
    }

    private final DynamoDbClient dynamo;
    private final Tables tables;
    private final String table;
    private final Duration ttl;

    public HostCommandStore(DynamoDbClient dynamo, Tables tables, Duration ttl) {
        this.dynamo = dynamo;
        this.tables = tables;
        this.table = tables.ledger();
        this.ttl = ttl;
    }

    static String hostScope(String team, String hostId) {
        return Keys.team(team) + "#HOST#" + hostId;
    }

    /**
     * Issues a restart command of the revive started for the death at {@code reviveSeq}, for the agent's
     * {@code restarting} state at transition seq {@code restartingSeq}; true when this call issued it (a replay
     * finds it there). The command reaches the bus through the agent's live item (the ledger has no stream): the
     * same transaction stamps it there with the outbox mark, unless {@code stampedAlready} (the write that moved the
     * agent to restarting stamped it: {@link ReviveTransitions#restartInitiated}), when only the command is put.
     */
    public boolean issueRestart(String team, String hostId, String agentId, long reviveSeq, long restartingSeq,
                                int attempt, String reason, Instant now, boolean stampedAlready) {
        String commandId = commandId(agentId, reviveSeq, attempt);
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(hostScope(team, hostId)));
        item.put(Keys.SK, s(CMD_PREFIX + commandId));
        item.put(TYPE, s("restart"));
        item.put(AGENT, s(agentId));
        item.put(ATTEMPT, n(attempt));
        item.put(FOR_SEQ, n(restartingSeq));
        item.put(REASON, s(reason));
        item.put(STATE, s(PENDING));
        item.put(CREATED_AT, ms(now));
        item.put(Keys.EXPIRES_AT, n(expiry(now)));
        TransactWriteItem put = TransactWriteItem.builder().put(p -> p.tableName(table).item(item)
                .conditionExpression("attribute_not_exists(#pk)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK))).build();
        Update stamp = new Update(tables.live(), AgentItems.key(team, agentId));
        stamp.condition("attribute_exists(" + stamp.name(Keys.PK) + ")");
        stamp.set(AgentItems.RESTART_COMMAND, commandStamp(commandId, hostId, attempt, reason, now, expiry(now)));
        stamp.set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        List<TransactWriteItem> writes = stampedAlready ? List.of(put) : List.of(put, stamp.transactItem());
        try {
            StoreFailures.call("issue the restart command",
                    () -> dynamo.transactWriteItems(t -> t.transactItems(writes)));
            return true;
        } catch (TransactionCanceledException e) {
            if (e.cancellationReasons().stream().anyMatch(Transactions::failedCondition)) {
                return false; // issued before (a replayed task), or the agent is gone
            }
            throw Transactions.failure("issue the restart command", e);
        }
    }

    /** When a command issued at {@code now} expires (epoch seconds). */
    public long expiry(Instant now) {
        return now.plus(ttl).getEpochSecond();
    }

    /** The restart command as stamped on the agent's live item ({@link AgentItems#RESTART_COMMAND}). */
    static AttributeValue commandStamp(String commandId, String hostId, int attempt, String reason, Instant at,
                                       long expiresAtSeconds) {
        return AttributeValue.fromM(Map.of("id", s(commandId), "host", s(hostId), "attempt", n(attempt),
                "reason", s(reason), "at", ms(at), "exp", n(expiresAtSeconds)));
    }

    /** The restart command an agent image carries ({@link AgentItems#RESTART_COMMAND}), or null. */
    public static Command stampedCommand(Map<String, AttributeValue> agent) {
        AttributeValue rc = agent.get(AgentItems.RESTART_COMMAND);
        if (rc == null || !rc.hasM()) {
            return null;
        }
        Map<String, AttributeValue> m = rc.m();
        return new Command(Items.str(m, "id"), Items.str(m, "host"), "restart", AgentItems.agentId(agent),
                (int) Items.num(m, "attempt", 0), Items.str(m, "reason"), PENDING, Items.instant(m, "at"),
                Instant.ofEpochSecond(Items.num(m, "exp", 0)), null);
    }

    /** Readable when it fits an id (64 characters), else a stable hash of the same parts. */
    static String commandId(String agentId, long reviveSeq, int attempt) {
        String plain = "restart-" + agentId + "-" + reviveSeq + "-" + attempt;
        return plain.length() <= 64 ? plain
                : "restart-" + ApiKeys.hash(agentId + "/" + reviveSeq + "/" + attempt).substring(0, 40);
    }

    /**
     * Pending, unexpired commands for one host whose revive flow still stands (the agent is {@code restarting}
     * at the command's seq), oldest first. Two reads: the host's commands, then the agents they name
     * (BatchGetItem, consistent).
     */
    public List<Command> pending(String team, String hostId, Instant now) {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        StoreFailures.call("read commands", () -> dynamo.queryPaginator(q -> q.tableName(table).consistentRead(true)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .filterExpression("#state = :pending AND #exp > :now")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK, "#state", STATE,
                        "#exp", Keys.EXPIRES_AT))
                .expressionAttributeValues(Map.of(":pk", s(hostScope(team, hostId)), ":prefix", s(CMD_PREFIX),
                        ":pending", s(PENDING), ":now", n(now.getEpochSecond())))))
                .items().forEach(items::add);
        Set<String> agentIds = new LinkedHashSet<>();
        items.forEach(item -> agentIds.add(Items.str(item, AGENT)));
        Map<String, Map<String, AttributeValue>> agents = agentItems(team, agentIds);
        List<Command> out = new ArrayList<>();
        for (Map<String, AttributeValue> item : items) {
            if (stands(item, agents.get(Items.str(item, AGENT)))) {
                out.add(toCommand(item));
            }
        }
        return out;
    }

    /** Whether the command's flow still stands: its agent is {@code restarting} at the seq it was issued for. */
    static boolean stands(Map<String, AttributeValue> command, Map<String, AttributeValue> agent) {
        // A command written before commands recorded their seq cannot be tied to a flow: it stands for none.
        return agent != null && command.containsKey(FOR_SEQ)
                && AgentStatus.RESTARTING.wire().equals(Items.str(agent, AgentItems.STATUS))
                && Items.num(agent, AgentItems.T_SEQ, 0) == Items.num(command, FOR_SEQ, -1);
    }

    /** Each named agent's status and seq, by agent id (absent: no such agent), read consistently. */
    private Map<String, Map<String, AttributeValue>> agentItems(String team, Set<String> agentIds) {
        Map<String, Map<String, AttributeValue>> out = new HashMap<>();
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        agentIds.forEach(id -> keys.add(AgentItems.key(team, id)));
        BatchReads.get(dynamo, tables.live(), keys, k -> k.consistentRead(true)
                .projectionExpression("#pk, #status, #tseq")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#status", AgentItems.STATUS,
                        "#tseq", AgentItems.T_SEQ)), "read the commands' agents")
                .forEach(item -> out.put(AgentItems.agentId(item), item));
        return out;
    }

    /**
     * Acknowledges a pending command once, while its flow stands: one transaction of the command's update and a
     * ConditionCheck that the agent is still {@code restarting} at the command's seq. 404 when unknown or expired,
     * 409 {@code ALREADY_ACKNOWLEDGED} when acknowledged before, 409 {@code COMMAND_SUPERSEDED} when the flow that
     * asked for it has ended (the agent is back, gave up, was cleaned up, or a newer flow revives it).
     */
    public Command ack(String team, String hostId, String commandId, Instant now) {
        Map<String, AttributeValue> key = Map.of(Keys.PK, s(hostScope(team, hostId)), Keys.SK, s(CMD_PREFIX + commandId));
        // The command's agent and seq never change once written; every condition that decides is in the write.
        Map<String, AttributeValue> command = StoreFailures.call("read the command",
                () -> dynamo.getItem(g -> g.tableName(table).key(key).consistentRead(true))).item();
        refuseUnlessPending(command, hostId, commandId, now);
        String agentId = Items.str(command, AGENT);
        if (!command.containsKey(FOR_SEQ)) {
            throw superseded(commandId, agentId, null, "it was issued before commands named their revive flow");
        }
        long forSeq = Items.num(command, FOR_SEQ, 0);
        Update u = new Update(table, key);
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition(u.name(STATE) + " = " + u.value(s(PENDING)));
        u.condition(u.name(Keys.EXPIRES_AT) + " > " + u.value(n(now.getEpochSecond())));
        u.set(STATE, s(ACKED)).set(ACKED_AT, ms(now));
        TransactWriteItem flowStands = TransactWriteItem.builder().conditionCheck(c -> c.tableName(tables.live())
                .key(AgentItems.key(team, agentId))
                .conditionExpression("#status = :restarting AND #tseq = :seq")
                .expressionAttributeNames(Map.of("#status", AgentItems.STATUS, "#tseq", AgentItems.T_SEQ))
                .expressionAttributeValues(Map.of(":restarting", s(AgentStatus.RESTARTING.wire()), ":seq", n(forSeq)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)).build();
        try {
            StoreFailures.call("acknowledge the command",
                    () -> dynamo.transactWriteItems(t -> t.transactItems(u.transactItem(), flowStands)));
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.cancellationReasons();
            if (Transactions.failedCondition(reasons.get(0))) {
                refuseUnlessPending(reasons.get(0).item(), hostId, commandId, now);
            }
            if (Transactions.failedCondition(reasons.get(1))) {
                Map<String, AttributeValue> agent = reasons.get(1).item();
                throw superseded(commandId, agentId, agent, null);
            }
            throw Transactions.failure("acknowledge the command", e);
        }
        Map<String, AttributeValue> acked = new HashMap<>(command);
        acked.put(STATE, s(ACKED));
        acked.put(ACKED_AT, ms(now));
        return toCommand(acked);
    }

    /** 404 for a missing or expired command, 409 for an acknowledged one; returns for a pending one. */
    private static void refuseUnlessPending(Map<String, AttributeValue> command, String hostId, String commandId,
                                            Instant now) {
        if (command == null || command.isEmpty() || Items.num(command, Keys.EXPIRES_AT, 0) <= now.getEpochSecond()) {
            throw new LifelineException(LifelineException.Kind.NOT_FOUND, "COMMAND_NOT_FOUND",
                    "Command '" + commandId + "' not found for host '" + hostId + "' (or it expired)");
        }
        if (!PENDING.equals(Items.str(command, STATE))) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "ALREADY_ACKNOWLEDGED",
                    "Command '" + commandId + "' was already acknowledged at " + Items.instant(command, ACKED_AT));
        }
    }

    /** 409 COMMAND_SUPERSEDED, saying why from the agent's item as the check found it (null: no such agent). */
    private static LifelineException superseded(String commandId, String agentId, Map<String, AttributeValue> agent,
                                                String why) {
        AgentStatus status = agent == null || agent.isEmpty() ? null
                : AgentStatus.fromWire(Items.str(agent, AgentItems.STATUS)).orElse(null);
        if (why == null) {
            if (status == null) {
                why = "agent '" + agentId + "' no longer exists";
            } else if (status.isAlive()) {
                why = "agent '" + agentId + "' is " + status.wire() + " again; do not restart it";
            } else if (status == AgentStatus.RESTARTING) {
                why = "a newer revive of agent '" + agentId + "' asks with commands of its own";
            } else {
                why = "agent '" + agentId + "' is " + status.wire() + " and the revive that asked for it has ended";
            }
        }
        return new LifelineException(LifelineException.Kind.CONFLICT, "COMMAND_SUPERSEDED",
                "Command '" + commandId + "' is superseded: " + why, status, null);
    }

    static Command toCommand(Map<String, AttributeValue> item) {
        String pk = Items.str(item, Keys.PK);
        return new Command(Items.str(item, Keys.SK).substring(CMD_PREFIX.length()),
                pk.substring(pk.indexOf("#HOST#") + "#HOST#".length()), Items.str(item, TYPE),
                Items.str(item, AGENT), (int) Items.num(item, ATTEMPT, 0), Items.str(item, REASON),
                Items.str(item, STATE), Items.instant(item, CREATED_AT),
                Instant.ofEpochSecond(Items.num(item, Keys.EXPIRES_AT, 0)), Items.instant(item, ACKED_AT));
    }
}
