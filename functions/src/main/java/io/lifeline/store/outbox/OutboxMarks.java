package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * What the outbox writes on an agent's item once a change is on the bus: the published watermark, the published
 * change's details dropped, the stopped life's task cleared, the flapping mark set or removed. Each is a quiet write
 * (no outbox mark: the stream's filter passes it by) and conditional, so a replay or a newer change wins.
 */
public final class OutboxMarks {
    private final DynamoDbClient dynamo;
    private final String table;

    public OutboxMarks(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    /**
     * Finishes a published change on the agent item in one quiet write: the published watermark moves to {@code seq};
     * when {@code seq} is still the newest transition, its details and the bus-only stamps
     * ({@link AgentItems#PUBLISHED_DETAILS}) go, since its record on the ledger has them; and when {@code taskId} is
     * given, the task the stopped life was on is cleared (as
     * {@link io.lifeline.store.agent.AgentWrites#clearTask}). A part whose condition no longer holds (a newer
     * transition, a new claim) is left out of a second write, decided from the refused write's image.
     */
    public void finishChange(String team, String agentId, long seq, String taskId) {
        finishChange(team, agentId, seq, taskId, false, null);
    }

    /**
     * {@link #finishChange(String, String, long, String)}, and when {@code flapKnown}, the agent's flapping mark set
     * to {@code flappingSince} (null: removed; docs/alerts-noise.md).
     */
    public void finishChange(String team, String agentId, long seq, String taskId, boolean flapKnown,
                             Instant flappingSince) {
        boolean details = true;
        boolean task = taskId != null;
        for (int attempt = 0; attempt < 3; attempt++) {
            Update u = publishedWrite(team, agentId, seq);
            u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
            if (!flapKnown) {
                // leave the mark as it is
            } else if (flappingSince != null) {
                u.set(AgentItems.FLAPPING, n(flappingSince.toEpochMilli()));
            } else {
                u.remove(AgentItems.FLAPPING);
            }
            if (details) {
                u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(seq)));
                AgentItems.PUBLISHED_DETAILS.forEach(u::remove);
            }
            if (task) {
                u.remove(AgentItems.TASK);
                u.condition(u.name(AgentItems.TASK) + " = " + u.value(s(taskId)));
                u.condition("attribute_not_exists(" + u.name(AgentItems.HOLD) + ")");
            }
            try {
                StoreFailures.call("finish the change", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
                return;
            } catch (ConditionalCheckFailedException e) {
                Map<String, AttributeValue> old = e.item();
                if (old == null || old.isEmpty() || Items.num(old, AgentItems.PUBLISHED_SEQ, 0) >= seq) {
                    return; // the agent is gone, or a later transition is published already
                }
                details = details && Items.num(old, AgentItems.T_SEQ, 0) == seq;
                task = task && taskId.equals(Items.str(old, AgentItems.TASK)) && !old.containsKey(AgentItems.HOLD);
            }
        }
    }

    /**
     * Sets the agent's flapping mark to the flag of {@code since} where a change with no finishing write of its own
     * (a stall's start or end) is held by it: a quiet conditional write; nothing if the agent is gone or carries it.
     */
    public void markFlapping(String team, String agentId, Instant since) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.set(AgentItems.FLAPPING, n(since.toEpochMilli()));
        AgentItems.quiet(u);
        String fp = u.name(AgentItems.FLAPPING);
        u.condition("attribute_exists(" + u.name(Keys.PK) + ") AND (attribute_not_exists(" + fp + ") OR " + fp
                + " <> " + u.value(n(since.toEpochMilli())) + ")");
        try {
            StoreFailures.call("set the flapping mark", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException goneOrMarked) {
            // gone, or marked with this flag already
        }
    }

    /**
     * Removes the agent's flapping mark if it is still the flag of {@code since} (the flapping resolve; docs/
     * alerts-noise.md): a quiet conditional write; nothing if the agent is gone or carries another mark.
     */
    public void clearFlapping(String team, String agentId, Instant since) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.remove(AgentItems.FLAPPING);
        AgentItems.quiet(u);
        u.condition(u.name(AgentItems.FLAPPING) + " = " + u.value(n(since.toEpochMilli())));
        try {
            StoreFailures.call("clear the flapping mark", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException notThisFlag) {
            // gone, or marked by another flag
        }
    }

    /** The quiet write that moves the published watermark to {@code seq}, unless a later one is there. */
    private Update publishedWrite(String team, String agentId, long seq) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.set(AgentItems.PUBLISHED_SEQ, n(seq));
        AgentItems.quiet(u);
        String ps = u.name(AgentItems.PUBLISHED_SEQ);
        u.condition("attribute_not_exists(" + ps + ") OR " + ps + " < " + u.value(n(seq)));
        return u;
    }}
