package io.lifeline.store.team;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.SweepPlan;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * The fleet item on the live table ({@code FLEET / FLEET}): present only once the deployment-wide guard has held
 * a sweep. Its flag ({@link #SINCE}) is set by the sweep that first holds and removed by the first that no longer
 * does; each of the two writes carries the outbox mark, so the stream turns the raise into one
 * {@code FleetMassStaleSuspected} and the removal into one {@code FleetMassStaleResolved}, however many sweeps the
 * hold lasts. The sweep's Scan reads the item with the rest (a few bytes), so knowing the flag costs no read.
 */
public final class FleetStore {
    /** When the hold began (ms); absent when no hold stands. */
    public static final String SINCE = "since";
    public static final String ALIVE = "alive";
    public static final String STALE = "stale";
    public static final String THRESHOLD = "threshold";
    /** The teams with stale agents when the hold began, at most {@link #MAX_TEAMS_LISTED}; and how many in all. */
    public static final String TEAMS = "teams";
    public static final String TEAM_COUNT = "teamCount";
    /** When the operator released the hold that stands (ms); removed with the flag. */
    public static final String RELEASED_AT = "releasedAt";
    /** When the last hold ended (ms), and when it had begun: the resolve's identity. */
    public static final String RESOLVED_AT = "resolvedAt";
    public static final String RESOLVED_SINCE = "resolvedSince";
    /** Teams named on the item and its events: enough to find the incident, small enough for the live item. */
    static final int MAX_TEAMS_LISTED = 25;

    private final DynamoDbClient dynamo;
    private final String table;

    /** The hold the operator released: its start, the release, and its counts when it began (the whole fleet's). */
    public record Released(Instant since, Instant releasedAt, int alive, int stale, int teamCount) {
    }

    public FleetStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
    }

    static Map<String, AttributeValue> key() {
        return Map.of(Keys.PK, s(Keys.FLEET), Keys.SK, s(Keys.FLEET));
    }

    public static boolean isFleet(Map<String, AttributeValue> item) {
        return Keys.FLEET.equals(Items.str(item, Keys.SK)) && Keys.FLEET.equals(Items.str(item, Keys.PK));
    }

    /** The hold's start on a fleet item, or null when none stands. */
    public static Instant heldSince(Map<String, AttributeValue> item) {
        return Items.instant(item, SINCE);
    }

    /**
     * When the deployment-wide hold that stands began, or null: one consistent point read of the fleet item (a team's
     * release asks it, to release the team from that very hold and no earlier one).
     */
    public Instant standingSince() {
        Map<String, AttributeValue> item = StoreFailures.call("read the fleet's hold", () -> dynamo.getItem(g -> g
                .tableName(table).key(key()).consistentRead(true))).item();
        return item == null || item.isEmpty() ? null : heldSince(item);
    }

    /** Raises the flag with the counts; true only for the write that raised it (one event per hold). */
    public boolean raise(SweepPlan.FleetOutcome outcome, Instant now) {
        Update u = new Update(table, key());
        u.condition("attribute_not_exists(" + u.name(SINCE) + ")");
        List<String> listed = outcome.staleTeams().subList(0, Math.min(MAX_TEAMS_LISTED, outcome.staleTeams().size()));
        u.set(SINCE, ms(now)).set(ALIVE, n(outcome.alive())).set(STALE, n(outcome.stale()))
                .set(THRESHOLD, AttributeValue.fromN(Double.toString(outcome.threshold())))
                .set(TEAM_COUNT, n(outcome.staleTeams().size()))
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true)).remove(RELEASED_AT);
        if (listed.isEmpty()) {
            u.remove(TEAMS);
        } else {
            u.set(TEAMS, AttributeValue.fromL(listed.stream().map(Items::s).toList()));
        }
        return u.writeIf(dynamo, "raise the fleet's mass-stale flag");
    }

    /**
     * The operator releases the hold that stands: the sweep then judges every team as if no fleet-wide hold stood
     * (each team's own guard still weighs its own silence), while the flag stays up until the silence ends, so the
     * hold's one resolve still comes. Quiet: the raise and the resolve are the hold's events. Conditional on a hold
     * standing and not released yet; null when none was.
     */
    public Released release(Instant now) {
        Update u = new Update(table, key());
        u.condition("attribute_exists(" + u.name(SINCE) + ")");
        u.condition("attribute_not_exists(" + u.name(RELEASED_AT) + ")");
        u.set(RELEASED_AT, ms(now)).remove(AgentItems.OUTBOX);
        try {
            Map<String, AttributeValue> item = StoreFailures.call("release the fleet's hold",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
            return new Released(heldSince(item), Items.instant(item, RELEASED_AT), (int) Items.num(item, ALIVE, 0),
                    (int) Items.num(item, STALE, 0), (int) Items.num(item, TEAM_COUNT, 0));
        } catch (ConditionalCheckFailedException e) {
            return null;
        }
    }

    /** Lowers the flag once a sweep no longer holds; true for the write that lowered it (one resolve per hold). */
    public boolean clear(Instant since, Instant now) {
        Update u = new Update(table, key());
        u.condition(u.name(SINCE) + " = " + u.value(ms(since)));
        u.remove(SINCE).remove(RELEASED_AT).set(RESOLVED_SINCE, ms(since)).set(RESOLVED_AT, ms(now))
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "clear the fleet's mass-stale flag");
    }

}
