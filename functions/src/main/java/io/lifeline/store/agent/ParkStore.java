package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Liveness;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A park at a provider's usage limit and its end, on the agent's item: each one conditional UpdateItem with the
 * outbox mark, so its stream record is the one {@code AgentParked} or {@code AgentResumed}. The store judges nothing:
 * the deadline a park writes is the one the application layer had {@code Liveness} give it.
 */
public final class ParkStore {
    private final DynamoDbClient dynamo;
    private final String table;

    public ParkStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    /**
     * Parks the agent: until {@code parked.until()}, its deadline moved to {@code deadline}; conditional on it alive,
     * on the beat count read ({@code beats}: a beat that landed since wins, and the caller reads again), and on no
     * park to the same reset (a repeated report writes nothing). True when written.
     */
    public boolean park(String team, String agentId, Liveness.Parked parked, Instant deadline, long beats) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition(u.in(AgentItems.STATUS, List.of(s(AgentStatus.READY.wire()), s(AgentStatus.WORKING.wire()))));
        u.condition(u.name(AgentItems.BEATS) + " = " + u.value(n(beats)));
        u.condition("(attribute_not_exists(" + u.name(AgentItems.PARKED_UNTIL) + ") OR "
                + u.name(AgentItems.PARKED_UNTIL) + " <> " + u.value(ms(parked.until())) + ")");
        u.set(AgentItems.PARKED_UNTIL, ms(parked.until())).set(AgentItems.PARK_REASON, s(parked.reason()))
                .set(AgentItems.PARKED_AT, ms(parked.since())).set(AgentItems.DEADLINE, ms(deadline))
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "park an agent");
    }

    /** Ends the agent's park: conditional on one standing, with the outbox mark. True when written. */
    public boolean resume(String team, String agentId, Instant now) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition("attribute_exists(" + u.name(AgentItems.PARKED_UNTIL) + ")");
        u.remove(AgentItems.PARKED_UNTIL).remove(AgentItems.PARK_REASON).remove(AgentItems.PARKED_AT)
                .set(AgentItems.RESUMED_AT, ms(now)).set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "resume a parked agent");
    }
}
