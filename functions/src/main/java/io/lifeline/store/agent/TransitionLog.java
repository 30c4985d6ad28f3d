package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Each agent's transition history. Records are written from the table's stream (the outbox), one per new
 * transition seq stamped on the agent item, idempotently: a record replayed by the stream finds its key
 * taken and changes nothing. They expire after the configured retention.
 */
public final class TransitionLog {
    private static final String FROM = "from";
    private static final String TO = "to";
    private static final String TRIGGER = "trigger";
    private static final String REASON = "reason";
    private static final String AT = "at";
    private static final String SEQ = "seq";

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public TransitionLog(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    /** A status change found in the stream, with the agent it belongs to. */
    public record Change(String team, String agentId, Transition transition) {
    }

    /**
     * The status change a stream record carries, if it is one: its new image is an agent whose transition
     * seq moved past the old image's.
     */
    public static Optional<Change> carriedBy(Map<String, AttributeValue> oldImage,
                                             Map<String, AttributeValue> newImage) {
        if (newImage == null || newImage.isEmpty() || !AgentItems.isAgent(newImage)) {
            return Optional.empty();
        }
        long before = oldImage == null ? 0 : Items.num(oldImage, AgentItems.T_SEQ, 0);
        Transition t = AgentItems.lastTransition(newImage);
        if (!AgentItems.isComplete(t) || t.seq() <= before) {
            return Optional.empty();
        }
        return Optional.of(new Change(AgentItems.team(newImage), AgentItems.agentId(newImage), t));
    }

    /**
     * Stores the change, and moves the agent's roster entry to the status it entered ({@link RosterIndex#moved}: how
     * the team's list by status finds it); true when this call wrote the record, false when it was already there.
     */
    public boolean record(Change change) {
        String team = change.team();
        String agentId = change.agentId();
        Transition t = change.transition();
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(Keys.agentScope(team, agentId)));
        item.put(Keys.SK, s(Keys.transitionSk(t.seq())));
        item.put(SEQ, n(t.seq()));
        item.put(FROM, s(t.from().wire()));
        item.put(TO, s(t.to().wire()));
        item.put(TRIGGER, s(t.trigger().wire()));
        if (t.reason() != null) {
            item.put(REASON, s(t.reason()));
        }
        item.put(AT, ms(t.at()));
        item.put(Keys.EXPIRES_AT, n(t.at().plus(retention).getEpochSecond()));
        boolean written;
        try {
            StoreFailures.call("record a transition", () -> dynamo.putItem(r -> r.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
            written = true;
        } catch (ConditionalCheckFailedException e) {
            written = false;
        }
        // The roster entry follows, also when the record was there already (a retried pass that failed in between).
        RosterIndex.moved(dynamo, table, team, agentId, t);
        return written;
    }

    /**
     * The record of the agent's transition {@code seq}, or null when there is none (not recorded yet, or past the
     * history's retention). A strongly consistent read: the outbox writes the record before it finishes the change.
     */
    static Transition recorded(DynamoDbClient dynamo, String ledger, String team, String agentId, long seq) {
        Map<String, AttributeValue> item = StoreFailures.call("read a transition", () -> dynamo.getItem(g -> g
                .tableName(ledger).consistentRead(true)
                .key(Map.of(Keys.PK, s(Keys.agentScope(team, agentId)), Keys.SK, s(Keys.transitionSk(seq)))))).item();
        return item == null || item.isEmpty() ? null : fromRecord(item);
    }

    private static Transition fromRecord(Map<String, AttributeValue> item) {
        return new Transition(Items.num(item, SEQ, 0),
                AgentStatus.fromWire(Items.str(item, FROM)).orElseThrow(),
                AgentStatus.fromWire(Items.str(item, TO)).orElseThrow(),
                Trigger.fromWire(Items.str(item, TRIGGER)).orElseThrow(),
                Items.str(item, REASON), Items.instant(item, AT));
    }

    /** One page of an agent's history: newest first; {@code nextBeforeSeq} is where the next page starts, or null. */
    public record Page(List<Transition> transitions, Long nextBeforeSeq) {
    }

    /**
     * Newest first, at most {@code limit}. The agent's own stamp is merged in, so the newest change shows
     * even before the outbox has recorded it.
     */
    public List<Transition> list(Agent agent, int limit) {
        return page(agent, limit, null).transitions();
    }

    /**
     * Newest first, at most {@code limit}, only those with a seq below {@code beforeSeq} when it is given (the
     * next page of an earlier answer). One Query of {@code limit + 1} records: the one past the page says
     * whether there is a next page, so a last page never points at an empty one. The agent's own stamp is
     * merged into the first page when the outbox has not recorded it yet.
     */
    public Page page(Agent agent, int limit, Long beforeSeq) {
        String pk = Keys.agentScope(agent.team(), agent.agentId());
        var page = StoreFailures.call("read transitions", () -> dynamo.query(q -> q.tableName(table)
                .keyConditionExpression("#pk = :pk AND #sk BETWEEN :from AND :to")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                .expressionAttributeValues(Map.of(":pk", s(pk), ":from", s(Keys.TRANSITION_PREFIX),
                        ":to", s(beforeSeq == null ? Keys.TRANSITION_PREFIX + "~" : Keys.transitionSk(beforeSeq - 1))))
                .scanIndexForward(false)
                .limit(limit + 1)));
        List<Transition> all = new ArrayList<>();
        Transition stamped = agent.lastTransition();
        long newestRecorded = page.items().isEmpty() ? 0 : Items.num(page.items().get(0), SEQ, 0);
        if (AgentItems.isComplete(stamped) && stamped.seq() > newestRecorded
                && (beforeSeq == null || stamped.seq() < beforeSeq)) {
            all.add(stamped);
        }
        for (Map<String, AttributeValue> item : page.items()) {
            all.add(fromRecord(item));
        }
        if (all.size() <= limit) {
            return new Page(all, null);
        }
        List<Transition> out = List.copyOf(all.subList(0, limit));
        return new Page(out, out.get(limit - 1).seq());
    }
}
