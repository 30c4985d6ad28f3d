package io.lifeline.store.ledger;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * An agent's inbox (the team leader's notices, the heartbeat and error-handling protocols). A notice is keyed by the
 * transition that caused it, so writing it again changes nothing; it expires with the event retention.
 */
public final class InboxStore {
    static final String INBOX_PREFIX = "INBOX#";
    static final String ABOUT = "aboutAgentId";
    static final String MESSAGE = "message";
    static final String AT = "at";
    static final String TASKS = "tasksHandedBack";

    /** One notice. */
    public record Notice(String noticeId, String aboutAgentId, String message, List<String> tasksHandedBack,
                         Instant at) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public InboxStore(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    /**
     * Writes the notice unless it exists, and returns it either way: its key is made of its cause (the agent, the
     * transition's seq and time), so a replay writes nothing new and returns the same notice, which the outbox
     * tells on the bus.
     */
    public Notice notify(String team, String leaderAgentId, String aboutAgentId, long transitionSeq, String message,
                         List<String> tasks, Instant causeAt) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(Keys.agentScope(team, leaderAgentId)));
        item.put(Keys.SK, s(INBOX_PREFIX + String.format("%013d", causeAt.toEpochMilli()) + "#" + aboutAgentId + "#"
                + transitionSeq));
        item.put(ABOUT, s(aboutAgentId));
        item.put(MESSAGE, s(message));
        item.put(AT, ms(causeAt));
        if (!tasks.isEmpty()) {
            item.put(TASKS, AttributeValue.fromSs(tasks));
        }
        item.put(Keys.EXPIRES_AT, n(causeAt.plus(retention).getEpochSecond()));
        try {
            StoreFailures.call("write the inbox notice", () -> dynamo.putItem(p -> p.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException e) {
            // written by an earlier pass over the same death
        }
        return toNotice(item);
    }

    public List<Notice> list(String team, String agentId, int limit) {
        List<Notice> out = new ArrayList<>();
        StoreFailures.call("read the inbox", () -> dynamo.query(q -> q.tableName(table)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                .expressionAttributeValues(Map.of(":pk", s(Keys.agentScope(team, agentId)),
                        ":prefix", s(INBOX_PREFIX)))
                .scanIndexForward(false).limit(limit))).items().forEach(item -> out.add(toNotice(item)));
        return out;
    }

    static Notice toNotice(Map<String, AttributeValue> item) {
        AttributeValue tasks = item.get(TASKS);
        return new Notice(Items.str(item, Keys.SK).substring(INBOX_PREFIX.length()), Items.str(item, ABOUT),
                Items.str(item, MESSAGE), tasks == null ? List.of() : List.copyOf(tasks.ss()), Items.instant(item, AT));
    }
}
