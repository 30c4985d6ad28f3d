package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Subagents;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * An agent's running subagents on its side-data item: a map {@code subs} from a subagent's id to its type and start
 * ({@code {t, s}}), at most {@link Subagents#MAX} entries, and {@code subsMore}, the count of the rest. Every change
 * is one conditional UpdateItem on the path of that id, with no read first: the condition says what the change needs
 * (the id not kept and room in the map; the id kept; a count to lower), and a refused write's old image
 * ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}) says which other write applies (the map made whole with
 * its first entry, the rest counted, or nothing to change). A map and one of its keys cannot be written in one
 * expression (DynamoDB refuses overlapping paths), hence the second write when the map does not exist yet (an
 * agent's first subagent; a life's end leaves the map empty). Absent, an empty map and a zero count are the same:
 * none runs. Only ids, types and start times are written.
 */
public final class SubagentStore {
    /** The running subagents kept by id: a map of id to {t: type, s: since ms}. */
    static final String SUBAGENTS = "subs";
    /** Running subagents beyond those kept by id, counted. */
    static final String SUBAGENTS_MORE = "subsMore";
    /** The most writes of one change against concurrent writers (each refusal shows what changed meanwhile). */
    static final int ATTEMPTS = 3;

    private final DynamoDbClient dynamo;
    private final String table;

    SubagentStore(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    /** The set as a read of the side-data item shows it, in the order they started (then by id). */
    static Subagents of(Map<String, AttributeValue> item) {
        AttributeValue kept = item.get(SUBAGENTS);
        long more = Items.num(item, SUBAGENTS_MORE, 0);
        if ((kept == null || kept.m().isEmpty()) && more == 0) {
            return Subagents.NONE;
        }
        List<Subagents.Entry> running = new ArrayList<>();
        if (kept != null) {
            kept.m().forEach((id, v) -> running.add(new Subagents.Entry(id, Items.str(v.m(), "t"),
                    Items.instant(v.m(), "s"))));
        }
        running.sort(Comparator.comparing(Subagents.Entry::since).thenComparing(Subagents.Entry::id));
        return new Subagents(running, (int) more);
    }

    private static AttributeValue entry(String type, Instant since) {
        Map<String, AttributeValue> m = new HashMap<>();
        if (type != null) {
            m.put("t", s(type));
        }
        m.put("s", ms(since));
        return AttributeValue.fromM(m);
    }

    private Update update(String team, String agentId) {
        return new Update(table, AgentDataStore.key(team, agentId));
    }

    /**
     * {@code e} started: kept by id while the map has room ({@code SET subs.id}, on no such id and fewer than
     * {@link Subagents#MAX}), else counted ({@code subsMore + 1}, on a full map without it); a repeated start writes
     * nothing. One write, two for the first of a set (the map is made). Answers whether anything was written.
     */
    public boolean started(String team, String agentId, Subagents.Entry e) {
        for (int i = 0; i < ATTEMPTS; i++) {
            Update add = update(team, agentId);
            String path = add.mapPath(SUBAGENTS, e.id());
            add.setPath(path, entry(e.type(), e.since()));
            add.condition("size(" + add.name(SUBAGENTS) + ") < " + add.value(n(Subagents.MAX))
                    + " AND attribute_not_exists(" + path + ")");
            Optional<Map<String, AttributeValue>> refused = refused(add, "add a running subagent");
            if (refused.isEmpty()) {
                return true;
            }
            AttributeValue kept = refused.get().get(SUBAGENTS);
            if (kept != null && kept.m().containsKey(e.id())) {
                return false; // runs already
            }
            Update other = update(team, agentId);
            String subs = other.name(SUBAGENTS);
            if (kept == null) {
                other.set(SUBAGENTS, AttributeValue.fromM(Map.of(e.id(), entry(e.type(), e.since()))));
                other.condition("attribute_not_exists(" + subs + ")");
            } else {
                String more = other.name(SUBAGENTS_MORE);
                other.setExpression(SUBAGENTS_MORE, "if_not_exists(" + more + ", " + other.value(n(0)) + ") + "
                        + other.value(n(1)));
                other.condition("size(" + subs + ") >= " + other.value(n(Subagents.MAX)) + " AND attribute_not_exists("
                        + other.mapPath(SUBAGENTS, e.id()) + ")");
            }
            if (refused(other, "add a running subagent").isEmpty()) {
                return true;
            }
        }
        return false; // changed by others each time: theirs is the newer set
    }

    /**
     * The subagent {@code id} stopped: removed when kept ({@code REMOVE subs.id}, on the id kept), else one fewer
     * counted (on a count above zero and the id not kept); nothing is written when neither. One write, two for the
     * stop of a counted one. Answers whether anything was written.
     */
    public boolean stopped(String team, String agentId, String id) {
        for (int i = 0; i < ATTEMPTS; i++) {
            Update remove = update(team, agentId);
            String path = remove.mapPath(SUBAGENTS, id);
            remove.removePath(path);
            remove.condition("attribute_exists(" + path + ")");
            Optional<Map<String, AttributeValue>> refused = refused(remove, "remove a running subagent");
            if (refused.isEmpty()) {
                return true;
            }
            AttributeValue kept = refused.get().get(SUBAGENTS);
            if (kept != null && kept.m().containsKey(id)) {
                continue; // started meanwhile: removed on the next attempt
            }
            if (Items.num(refused.get(), SUBAGENTS_MORE, 0) <= 0) {
                return false; // neither kept nor counted
            }
            Update fewer = update(team, agentId);
            String more = fewer.name(SUBAGENTS_MORE);
            fewer.setExpression(SUBAGENTS_MORE, more + " - " + fewer.value(n(1)));
            fewer.condition(more + " > " + fewer.value(n(0)) + " AND attribute_not_exists("
                    + fewer.mapPath(SUBAGENTS, id) + ")");
            if (refused(fewer, "count a stopped subagent").isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Replaces the set with {@code next} (a host's report, or none at a life's end): one write, conditional on the
     * stored set differing, so a set that changes nothing writes nothing (an agent that never ran a subagent gets no
     * map). None running leaves an empty map, so the next start is one write. Answers whether anything was written.
     */
    public boolean replace(String team, String agentId, Subagents next) {
        Update u = update(team, agentId);
        String subs = u.name(SUBAGENTS);
        String more = u.name(SUBAGENTS_MORE);
        String sameRunning;
        if (next.running().isEmpty()) {
            // Emptied, not removed: the next start is then one write (SET of a key needs its map).
            String empty = u.value(AttributeValue.fromM(Map.of()));
            u.setExpression(SUBAGENTS, empty);
            sameRunning = "(attribute_not_exists(" + subs + ") OR " + subs + " = " + empty + ")";
        } else {
            Map<String, AttributeValue> m = new HashMap<>();
            next.running().forEach(e -> m.put(e.id(), entry(e.type(), e.since())));
            String v = u.value(AttributeValue.fromM(m));
            u.setExpression(SUBAGENTS, v);
            sameRunning = subs + " = " + v;
        }
        String sameMore;
        if (next.more() == 0) {
            u.remove(SUBAGENTS_MORE);
            sameMore = "(attribute_not_exists(" + more + ") OR " + more + " = " + u.value(n(0)) + ")";
        } else {
            String v = u.value(n(next.more()));
            u.setExpression(SUBAGENTS_MORE, v);
            sameMore = more + " = " + v;
        }
        u.condition("NOT (" + sameRunning + " AND " + sameMore + ")");
        return refused(u, "replace the running subagents").isEmpty();
    }

    /** Writes {@code u}: empty when written, else the item its condition refused (empty when there is none). */
    private Optional<Map<String, AttributeValue>> refused(Update u, String what) {
        try {
            StoreFailures.call(what, () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return Optional.empty();
        } catch (ConditionalCheckFailedException e) {
            return Optional.of(e.hasItem() ? e.item() : Map.of());
        }
    }
}
