package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * Finds what a lost stream record would have done: agents whose newest transition the outbox never finished
 * (its seq above the published watermark {@code ps}), and stamps a replay of it on the live item, with the outbox
 * mark, so the stream carries it to the publisher again (its record, hand-back, leader's notice and events; events
 * already in the event log are not sent twice). Reads the live table with a filtered Scan.
 */
public final class OutboxRepair {
    /** A transition the outbox has not finished. */
    public record Unpublished(String team, String agentId, long seq, Instant at, Instant replayedAt) {
    }

    private final DynamoDbClient dynamo;
    private final String table;

    public OutboxRepair(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    /** Every agent whose newest transition is not marked published. */
    public List<Unpublished> unpublished() {
        List<Unpublished> out = new ArrayList<>();
        StoreFailures.call("scan for unpublished transitions", () -> {
            dynamo.scanPaginator(r -> r.tableName(table)
                    .filterExpression("#sk = :agent AND #tseq > :zero AND (attribute_not_exists(#ps) OR #ps < #tseq)")
                    .projectionExpression("#pk, #sk, #tseq, #tAt, #rpAt")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK, "#tseq", AgentItems.T_SEQ,
                            "#ps", AgentItems.PUBLISHED_SEQ, "#tAt", AgentItems.T_AT, "#rpAt", AgentItems.REPLAY_AT))
                    .expressionAttributeValues(Map.of(":agent", s(Keys.AGENT_SK), ":zero", n(0))))
                    .items().forEach(item -> out.add(new Unpublished(AgentItems.team(item), AgentItems.agentId(item),
                            Items.num(item, AgentItems.T_SEQ, 0), Items.instant(item, AgentItems.T_AT),
                            Items.instant(item, AgentItems.REPLAY_AT))));
            return null;
        });
        return out;
    }

    /**
     * Stamps a replay of transition {@code seq}; true when written. Conditional on it still being the agent's
     * newest and unpublished, and on no replay of it younger than {@code spacing} (a replay whose record is still
     * on its way is not doubled).
     */
    public boolean replay(Unpublished u, Instant now, Duration spacing) {
        Update w = new Update(table, AgentItems.key(u.team(), u.agentId()));
        w.condition(w.name(AgentItems.T_SEQ) + " = " + w.value(n(u.seq())));
        String ps = w.name(AgentItems.PUBLISHED_SEQ);
        w.condition("attribute_not_exists(" + ps + ") OR " + ps + " < " + w.value(n(u.seq())));
        String rpAt = w.name(AgentItems.REPLAY_AT);
        w.condition("attribute_not_exists(" + rpAt + ") OR " + rpAt + " <= " + w.value(ms(now.minus(spacing))));
        w.set(AgentItems.REPLAY_SEQ, n(u.seq())).set(AgentItems.REPLAY_AT, ms(now))
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        try {
            StoreFailures.call("stamp an outbox replay", () -> dynamo.updateItem(w.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }
}
