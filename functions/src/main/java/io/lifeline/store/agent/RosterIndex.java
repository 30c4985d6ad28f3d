package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The status an agent's roster entry carries ({@link Keys#rosterKey}, on the ledger), the keys of the ledger's sparse
 * {@code TeamStatus} index: {@code TEAM#<team>#<status>} and when the agent entered that status (ms), with the seq of
 * the transition that put it there. The registration writes the entry {@code offline}; the outbox moves it with each
 * transition it records ({@link #moved}), conditional on a newer seq, so a replayed or late record never moves it
 * back. Nothing on the live table carries it: the sweep reads every byte of a live item, and a beat writes nothing
 * here. {@link AgentRoster} reads the index: a status's agents, and those changed since a time.
 */
final class RosterIndex {
    /** The ledger's index of a team's roster by status (template.yaml, LedgerTable). */
    static final String NAME = "TeamStatus";
    static final String STATUS_KEY = "stk";
    static final String STATUS_SINCE = "stAt";
    static final String STATUS_SEQ = "stSeq";

    private RosterIndex() {
    }

    /** The index's partition of {@code team}'s agents in {@code status}. */
    static AttributeValue statusKey(String team, AgentStatus status) {
        return s(Keys.team(team) + "#" + status.wire());
    }

    /** A registered agent's roster entry: its keys, and {@code offline} since {@code at} at transition seq {@code seq}. */
    static Map<String, AttributeValue> entry(String team, String agentId, Instant at, long seq) {
        Map<String, AttributeValue> item = new HashMap<>(Keys.rosterKey(team, agentId));
        item.put(STATUS_KEY, statusKey(team, AgentStatus.OFFLINE));
        item.put(STATUS_SINCE, ms(at));
        item.put(STATUS_SEQ, n(seq));
        return item;
    }

    /**
     * Moves the agent's roster entry to the status {@code t} entered, unless it already holds that transition or a newer
     * one, or the entry is gone or a deleted agent's tombstone: one conditional UpdateItem on the ledger.
     */
    static void moved(DynamoDbClient dynamo, String ledger, String team, String agentId, Transition t) {
        Update u = new Update(ledger, Keys.rosterKey(team, agentId));
        u.set(STATUS_KEY, statusKey(team, t.to())).set(STATUS_SINCE, ms(t.at())).set(STATUS_SEQ, n(t.seq()));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition("attribute_not_exists(" + u.name(AgentStore.RETIRED_AT) + ")");
        String seq = u.name(STATUS_SEQ);
        u.condition("attribute_not_exists(" + seq + ") OR " + seq + " < " + u.value(n(t.seq())));
        u.writeIf(dynamo, "move the roster entry's status"); // refused: a newer transition is there, or it was deleted
    }
}
