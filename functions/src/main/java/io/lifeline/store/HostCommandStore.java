package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.LifelineException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Commands for the daemons that host agents (the restart channel's pull side, for hosts behind NAT):
 * {@code TEAM#<team>#HOST#<host> / CMD#<id>}. A command is issued once per (agent, revive, attempt), so a
 * retried task issues nothing new; it is acknowledged once; it expires with DynamoDB TTL and is hidden
 * once past its expiry even before TTL removes it.
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
    static final String PENDING = "pending";
    static final String ACKED = "acked";

    /** A command as a host sees it. */
    public record Command(String commandId, String hostId, String type, String agentId, int attempt, String reason,
                          String state, Instant createdAt, Instant expiresAt, Instant ackedAt) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration ttl;

    public HostCommandStore(DynamoDbClient dynamo, String table, Duration ttl) {
        this.dynamo = dynamo;
        this.table = table;
        this.ttl = ttl;
    }

    static String hostScope(String team, String hostId) {
        return Keys.team(team) + "#HOST#" + hostId;
    }

    /** Issues a restart command; true when this call issued it (a replay finds it there). */
    public boolean issueRestart(String team, String hostId, String agentId, long reviveSeq, int attempt, String reason,
                                Instant now) {
        String commandId = commandId(agentId, reviveSeq, attempt);
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(hostScope(team, hostId)));
        item.put(Keys.SK, s(CMD_PREFIX + commandId));
        item.put(TYPE, s("restart"));
        item.put(AGENT, s(agentId));
        item.put(ATTEMPT, n(attempt));
        item.put(REASON, s(reason));
        item.put(STATE, s(PENDING));
        item.put(CREATED_AT, ms(now));
        item.put(Keys.EXPIRES_AT, n(now.plus(ttl).getEpochSecond()));
        try {
            StoreFailures.call("issue the restart command", () -> dynamo.putItem(p -> p.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    /** Readable when it fits an id (64 characters), else a stable hash of the same parts. */
    static String commandId(String agentId, long reviveSeq, int attempt) {
        String plain = "restart-" + agentId + "-" + reviveSeq + "-" + attempt;
        return plain.length() <= 64 ? plain
                : "restart-" + io.lifeline.auth.ApiKeys.hash(agentId + "/" + reviveSeq + "/" + attempt).substring(0, 40);
    }

    /** Pending, unexpired commands for one host, oldest first. */
    public List<Command> pending(String team, String hostId, Instant now) {
        List<Command> out = new ArrayList<>();
        StoreFailures.call("read commands", () -> dynamo.queryPaginator(q -> q.tableName(table).consistentRead(true)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .filterExpression("#state = :pending AND #exp > :now")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK, "#state", STATE,
                        "#exp", Keys.EXPIRES_AT))
                .expressionAttributeValues(Map.of(":pk", s(hostScope(team, hostId)), ":prefix", s(CMD_PREFIX),
                        ":pending", s(PENDING), ":now", n(now.getEpochSecond())))))
                .items().forEach(item -> out.add(toCommand(item)));
        return out;
    }

    /** Acknowledges a pending command once; 404 when unknown or expired, 409 when already acknowledged. */
    public Command ack(String team, String hostId, String commandId, Instant now) {
        Update u = new Update(table, Map.of(Keys.PK, s(hostScope(team, hostId)), Keys.SK, s(CMD_PREFIX + commandId)));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition(u.name(STATE) + " = " + u.value(s(PENDING)));
        u.condition(u.name(Keys.EXPIRES_AT) + " > " + u.value(n(now.getEpochSecond())));
        u.set(STATE, s(ACKED)).set(ACKED_AT, ms(now));
        try {
            return toCommand(StoreFailures.call("acknowledge the command",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException e) {
            Map<String, AttributeValue> old = e.item();
            if (old == null || old.isEmpty() || Items.num(old, Keys.EXPIRES_AT, 0) <= now.getEpochSecond()) {
                throw new LifelineException(LifelineException.Kind.NOT_FOUND, "COMMAND_NOT_FOUND",
                        "Command '" + commandId + "' not found for host '" + hostId + "' (or it expired)");
            }
            throw new LifelineException(LifelineException.Kind.CONFLICT, "ALREADY_ACKNOWLEDGED",
                    "Command '" + commandId + "' was already acknowledged at " + Items.instant(old, ACKED_AT));
        }
    }

    static boolean isCommand(Map<String, AttributeValue> item) {
        String pk = Items.str(item, Keys.PK);
        String sk = Items.str(item, Keys.SK);
        return pk != null && pk.contains("#HOST#") && sk != null && sk.startsWith(CMD_PREFIX);
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
