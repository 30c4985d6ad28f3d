package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.ErrorClassifier;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Subagents;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * An agent's larger, rarely read data (metadata, checkpoint, last error), kept off the agent item so that a
 * plain heartbeat stays within one write unit. Written only alongside a request that already proved the
 * agent exists, or under a ConditionCheck on it.
 */
public final class AgentDataStore {
    static final String METADATA = "metadata";
    static final String METADATA_AT = "metadataAt";
    static final String CHECKPOINT = "checkpoint";
    static final String CHECKPOINT_AT = "checkpointAt";
    static final String LAST_ERROR = "lastError";
    static final String LAST_ERROR_CATEGORY = "lastErrorCategory";
    static final String LAST_ERROR_AT = "lastErrorAt";
    static final String ERRORS_REPORTED = "errorsReported";
    static final String SESSION_ROTATIONS = "sessionRotations";
    static final String PAUSE_REASON = "pauseReason";
    /** What is kept for an agent; JSON fields are the documents as the agent sent them. */
    public record AgentData(String metadataJson, Instant metadataAt, String checkpointJson, Instant checkpointAt,
                            String lastError, String lastErrorCategory, Instant lastErrorAt, long errorsReported,
                            long sessionRotations, String pauseReason, Subagents subagents) {
        static final AgentData NONE = new AgentData(null, null, null, null, null, null, null, 0, 0, null,
                Subagents.NONE);
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final String live;
    private final SubagentStore subagents;

    public AgentDataStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.live = tables.live();
        this.subagents = new SubagentStore(dynamo, table);
    }

    /** The agent's running subagents, kept on this item: each change one conditional write of its own. */
    public SubagentStore subagents() {
        return subagents;
    }

    static Map<String, AttributeValue> key(String team, String agentId) {
        return Map.of(Keys.PK, s(Keys.agentScope(team, agentId)), Keys.SK, s(Keys.DATA_SK));
    }

    /** Saves what a heartbeat carried beyond liveness; null arguments are left as they were. */
    public void save(String team, String agentId, String metadataJson, String checkpointJson, Instant now) {
        if (metadataJson == null && checkpointJson == null) {
            return;
        }
        Update u = new Update(table, key(team, agentId));
        if (metadataJson != null) {
            u.set(METADATA, s(metadataJson)).set(METADATA_AT, ms(now));
        }
        if (checkpointJson != null) {
            u.set(CHECKPOINT, s(checkpointJson)).set(CHECKPOINT_AT, ms(now));
        }
        StoreFailures.call("save metadata and checkpoint", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
    }

    /** Keeps (or, with null, forgets) why the agent is paused. */
    public void savePauseReason(String team, String agentId, String reason) {
        Update u = new Update(table, key(team, agentId));
        if (reason == null) {
            u.remove(PAUSE_REASON);
        } else {
            u.set(PAUSE_REASON, s(reason));
        }
        StoreFailures.call("save the pause reason", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
    }

    public AgentData get(String team, String agentId) {
        Map<String, AttributeValue> item = StoreFailures.call("read agent data", () -> dynamo.getItem(
                r -> r.tableName(table).key(key(team, agentId)).consistentRead(true))).item();
        if (item == null || item.isEmpty()) {
            return AgentData.NONE;
        }
        return new AgentData(Items.str(item, METADATA), Items.instant(item, METADATA_AT),
                Items.str(item, CHECKPOINT), Items.instant(item, CHECKPOINT_AT),
                Items.str(item, LAST_ERROR), Items.str(item, LAST_ERROR_CATEGORY), Items.instant(item, LAST_ERROR_AT),
                Items.num(item, ERRORS_REPORTED, 0), Items.num(item, SESSION_ROTATIONS, 0),
                Items.str(item, PAUSE_REASON), SubagentStore.of(item));
    }

    /**
     * Records a classified session error, in one transaction with a check that the agent exists (so an
     * error for an unknown agent writes nothing). A context-limit error counts a session rotation.
     */
    public void recordError(String team, String agentId, String message, ErrorClassifier.Category category,
                            Instant now) {
        Update u = new Update(table, key(team, agentId));
        u.set(LAST_ERROR, s(message)).set(LAST_ERROR_CATEGORY, s(category.name().toLowerCase()))
                .set(LAST_ERROR_AT, ms(now));
        u.setExpression(ERRORS_REPORTED, "if_not_exists(" + u.name(ERRORS_REPORTED) + ", " + u.value(n(0)) + ") + "
                + u.value(n(1)));
        if (category == ErrorClassifier.Category.CONTEXT_LIMIT) {
            u.setExpression(SESSION_ROTATIONS, "if_not_exists(" + u.name(SESSION_ROTATIONS) + ", "
                    + u.value(n(0)) + ") + " + u.value(n(1)));
        }
        TransactWriteItem agentExists;
        if (category == ErrorClassifier.Category.CONTEXT_LIMIT) {
            // A rotation is a fact for the bus (SessionRotationRequested): stamped on the agent's live item in the
            // same transaction, with the outbox mark, since the ledger has no stream.
            Update rotation = new Update(live, AgentItems.key(team, agentId));
            rotation.condition("attribute_exists(" + rotation.name(Keys.PK) + ")");
            rotation.setExpression(AgentItems.ROTATIONS, "if_not_exists(" + rotation.name(AgentItems.ROTATIONS) + ", "
                    + rotation.value(n(0)) + ") + " + rotation.value(n(1)));
            rotation.set(AgentItems.ROTATED_AT, ms(now));
            rotation.set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
            agentExists = rotation.transactItem();
        } else {
            agentExists = TransactWriteItem.builder().conditionCheck(c -> c
                    .tableName(live).key(AgentItems.key(team, agentId))
                    .conditionExpression("attribute_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))).build();
        }
        try {
            StoreFailures.call("record the error",
                    () -> dynamo.transactWriteItems(t -> t.transactItems(agentExists, u.transactItem())));
        } catch (TransactionCanceledException e) {
            CancellationReason first = e.cancellationReasons().get(0);
            if (Transactions.failedCondition(first)) {
                throw LifelineException.agentNotFound(agentId);
            }
            throw Transactions.failure("record the error", e);
        }
    }
}
