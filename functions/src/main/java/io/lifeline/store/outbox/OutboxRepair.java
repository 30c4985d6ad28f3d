package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
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
 * Finds what a lost stream record would have done: agents whose newest transition the outbox never finished
 * (its seq above the published watermark {@code ps}), and stamps a replay of it on the live item, with the outbox
 * mark, so the stream carries it to the publisher again (its record, hand-back, leader's notice and events; events
 * already in the event log are not sent twice). Reads the live table with a filtered Scan.
 */
public final class OutboxRepair {
    /** A transition the outbox has not finished. */
    public record Unpublished(String team, String agentId, long seq, Instant at, Instant replayedAt) {
    }

    /** An agent that has been offline or dead_failed_revive, unchanged, since before the retention's cut-off. */
    public record Retired(String team, String agentId) {
    }

    /** What one Scan of the live table found: unfinished transitions, and agents past the offline retention. */
    public record Found(List<Unpublished> unpublished, List<Retired> retired) {
    }

    private final DynamoDbClient dynamo;
    private final String table;

    public OutboxRepair(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    /**
     * One filtered Scan of the live table (it reads every item either way): agents whose newest transition is not
     * marked published, and, when {@code retiredBefore} is given, agents offline or dead_failed_revive whose last
     * change (or registration, if they never changed) is older than it.
     */
    public Found scan(Instant retiredBefore) {
        Map<String, String> names = new HashMap<>(Map.of("#pk", Keys.PK, "#sk", Keys.SK,
                "#tseq", AgentItems.T_SEQ, "#ps", AgentItems.PUBLISHED_SEQ, "#tAt", AgentItems.T_AT,
                "#rpAt", AgentItems.REPLAY_AT));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":agent", s(Keys.AGENT_SK), ":zero", n(0)));
        String unpublished = "(#tseq > :zero AND (attribute_not_exists(#ps) OR #ps < #tseq))";
        String filter = "#sk = :agent AND " + unpublished;
        String projection = "#pk, #sk, #tseq, #ps, #tAt, #rpAt";
        if (retiredBefore != null) {
            names.put("#status", AgentItems.STATUS);
            names.put("#regAt", AgentItems.REGISTERED_AT);
            values.put(":offline", s(AgentStatus.OFFLINE.wire()));
            values.put(":gaveUp", s(AgentStatus.DEAD_FAILED_REVIVE.wire()));
            values.put(":cutoff", ms(retiredBefore));
            filter = "#sk = :agent AND (" + unpublished + " OR (#status IN (:offline, :gaveUp) AND (#tAt < :cutoff"
                    + " OR (attribute_not_exists(#tAt) AND #regAt < :cutoff))))";
            projection += ", #status, #regAt";
        }
        String f = filter;
        String p = projection;
        List<Unpublished> out = new ArrayList<>();
        List<Retired> retired = new ArrayList<>();
        StoreFailures.call("scan the live table for the outbox repair", () -> {
            dynamo.scanPaginator(r -> r.tableName(table).filterExpression(f).projectionExpression(p)
                    .expressionAttributeNames(names).expressionAttributeValues(values))
                    .items().forEach(item -> {
                        long tseq = Items.num(item, AgentItems.T_SEQ, 0);
                        if (tseq > 0 && Items.num(item, AgentItems.PUBLISHED_SEQ, 0) < tseq) {
                            out.add(new Unpublished(AgentItems.team(item), AgentItems.agentId(item), tseq,
                                    Items.instant(item, AgentItems.T_AT), Items.instant(item, AgentItems.REPLAY_AT)));
                        } else if (retiredBefore != null) {
                            retired.add(new Retired(AgentItems.team(item), AgentItems.agentId(item)));
                        }
                    });
            return null;
        });
        return new Found(out, retired);
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
