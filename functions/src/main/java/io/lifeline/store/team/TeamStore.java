package io.lifeline.store.team;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.FailureDomains;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/** A team's settings, its pause, and its self-preservation alert flag. */
public final class TeamStore {
    private final DynamoDbClient dynamo;
    private final String table;
    private final FleetStore fleet;

    public TeamStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.fleet = new FleetStore(dynamo, tables);
    }

    /** The deployment-wide guard's flag, on the same table. */
    public FleetStore fleet() {
        return fleet;
    }

    public TeamSettings get(String team) {
        Map<String, AttributeValue> item = StoreFailures.call("read the team", () -> dynamo.getItem(g -> g
                .tableName(table).key(TeamItems.key(team)).consistentRead(true))).item();
        if (item == null || item.isEmpty()) {
            throw new LifelineException(LifelineException.Kind.NOT_FOUND, "TEAM_NOT_FOUND",
                    "Team '" + team + "' not found");
        }
        return TeamItems.toSettings(item);
    }

    /** The team item's attributes for settings given at creation (nulls left out). */
    public static Map<String, AttributeValue> settingsAttributes(String leaderAgentId, Double threshold,
                                                                 Integer minAlive) {
        Map<String, AttributeValue> item = new HashMap<>();
        if (leaderAgentId != null) {
            item.put(TeamItems.LEADER, s(leaderAgentId));
        }
        if (threshold != null) {
            item.put(TeamItems.SP_THRESHOLD, AttributeValue.fromN(threshold.toString()));
        }
        if (minAlive != null) {
            item.put(TeamItems.SP_MIN_ALIVE, n(minAlive));
        }
        return item;
    }

    /**
     * Changes the given settings; a null argument leaves that setting as it is, and {@code clearLeader}
     * removes the leader.
     */
    public TeamSettings update(String team, String leaderAgentId, boolean clearLeader, Double threshold,
                               Integer minAlive) {
        return update(team, leaderAgentId, clearLeader, threshold, minAlive, null, null, null);
    }

    /** As above, and the allowances the team's agents get at registration when they give none (null: unchanged). */
    public TeamSettings update(String team, String leaderAgentId, boolean clearLeader, Double threshold,
                               Integer minAlive, Duration working, Duration input,
                               Duration person) {
        return update(team, leaderAgentId, clearLeader, threshold, minAlive, working, input, person, null);
    }

    /** As above, and the team's failure-domain rule ({@code domains}, null: unchanged). */
    public TeamSettings update(String team, String leaderAgentId, boolean clearLeader, Double threshold,
                               Integer minAlive, Duration working, Duration input,
                               Duration person, FailureDomains domains) {
        return update(team, leaderAgentId, clearLeader, threshold, minAlive, working, input, person, domains, null,
                null);
    }

    /** As above, and the stall rule the team's agents get at registration ({@code stallAfter}, {@code onStall}). */
    public TeamSettings update(String team, String leaderAgentId, boolean clearLeader, Double threshold,
                               Integer minAlive, Duration working, Duration input,
                               Duration person, FailureDomains domains, Duration stallAfter,
                               Liveness.OnStall onStall) {
        Update u = new Update(table, TeamItems.key(team));
        if (stallAfter != null) {
            u.set(TeamItems.STALL_AFTER_MS, n(stallAfter.toMillis()));
        }
        if (onStall != null) {
            u.set(TeamItems.ON_STALL, s(onStall.wire()));
        }
        if (domains != null) {
            u.set(TeamItems.FAILURE_DOMAINS, s(domains.wire()));
        }
        if (working != null) {
            u.set(TeamItems.ALLOW_WORKING, n(working.toMillis()));
        }
        if (input != null) {
            u.set(TeamItems.ALLOW_INPUT, n(input.toMillis()));
        }
        if (person != null) {
            u.set(TeamItems.ALLOW_PERSON, n(person.toMillis()));
        }
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        TeamItems.quiet(u);
        if (clearLeader) {
            u.remove(TeamItems.LEADER);
        } else if (leaderAgentId != null) {
            u.set(TeamItems.LEADER, s(leaderAgentId));
        }
        if (threshold != null) {
            u.set(TeamItems.SP_THRESHOLD, AttributeValue
                    .fromN(threshold.toString()));
        }
        if (minAlive != null) {
            u.set(TeamItems.SP_MIN_ALIVE, n(minAlive));
        }
        return TeamItems.toSettings(write("update team settings", team, u));
    }

    /** Holds back all of the team's dead-marking until {@code until}. */
    public TeamSettings pause(String team, Instant until, String reason) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.set(TeamItems.PAUSED_UNTIL, ms(until));
        TeamItems.quiet(u);
        if (reason != null) {
            u.set(TeamItems.PAUSE_REASON, s(Limits.cut(reason, Limits.MAX_REASON_CHARS)));
        } else {
            u.remove(TeamItems.PAUSE_REASON);
        }
        return TeamItems.toSettings(write("pause the team", team, u));
    }

    public TeamSettings resume(String team) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.remove(TeamItems.PAUSED_UNTIL).remove(TeamItems.PAUSE_REASON);
        TeamItems.quiet(u);
        return TeamItems.toSettings(write("resume the team", team, u));
    }

    private Map<String, AttributeValue> write(String what, String team, Update u) {
        try {
            return StoreFailures.call(what, () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
        } catch (ConditionalCheckFailedException e) {
            throw new LifelineException(LifelineException.Kind.NOT_FOUND, "TEAM_NOT_FOUND",
                    "Team '" + team + "' not found");
        }
    }

    /**
     * Raises the team's mass-stale flag with the counts; true only for the write that raised it, so one
     * hold produces one MassStaleSuspected event however many sweeps it lasts.
     */
    public boolean raiseMassStale(String team, int alive, int stale, double threshold, Instant now) {
        return raiseMassStale(team, new Flag(alive, stale, threshold, true, null), null, now);
    }

    /**
     * A mass-silence flag to raise: the counts, whether it holds the team's dead-marking ({@code held}) or one failure
     * domain explained the silence (its agents die; the flag is that incident's page), and why.
     */
    public record Flag(int alive, int stale, double threshold, boolean held, String why) {
    }

    /**
     * Raises the team's flag: when none stands ({@code replacing} null), or in place of the one raised at
     * {@code replacing} (a hold the sweep now finds explained, or the reverse: a new incident, a new event). True
     * only for the write that raised it; its stream record is the one {@code MassStaleSuspected}.
     */
    public boolean raiseMassStale(String team, Flag flag, Instant replacing, Instant now) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition(replacing == null ? "attribute_not_exists(" + u.name(TeamItems.MASS_STALE_SINCE) + ")"
                : u.name(TeamItems.MASS_STALE_SINCE) + " = " + u.value(ms(replacing)));
        u.set(TeamItems.MASS_STALE_SINCE, ms(now)).set(TeamItems.MASS_STALE_ALIVE, n(flag.alive()))
                .set(TeamItems.MASS_STALE_STALE, n(flag.stale()))
                .set(TeamItems.MASS_STALE_THRESHOLD, AttributeValue.fromN(Double.toString(flag.threshold())))
                .set(TeamItems.MASS_STALE_HELD, AttributeValue.fromBool(flag.held()))
                .set(TeamItems.OUTBOX, AttributeValue.fromBool(true)).remove(TeamItems.MASS_STALE_RELEASED);
        if (flag.why() != null) {
            u.set(TeamItems.MASS_STALE_WHY, s(Limits.cut(flag.why(), Limits.MAX_REASON_CHARS)));
        } else {
            u.remove(TeamItems.MASS_STALE_WHY);
        }
        return u.writeIf(dynamo, "raise the mass-stale flag");
    }

    /**
     * An admin releases the team's hold, whichever guard holds it: the sweep then marks its silent agents dead as
     * judged. Its own flag (until the silence ends and the flag comes down), and its share of the deployment-wide
     * hold that stands (until that hold ends: a later one holds the team again); one release covers both, each its
     * own conditional write. 409 {@code NO_HOLD} when neither stands unreleased, 404 when the team does not exist.
     */
    public TeamSettings releaseHold(String team, Instant now) {
        Instant fleetSince = fleet.standingSince();
        Map<String, AttributeValue> share = fleetSince == null ? null : releaseFleetShare(team, fleetSince, now);
        Map<String, AttributeValue> own = releaseOwn(team, now, share != null);
        Map<String, AttributeValue> after = own != null ? own : share;
        if (after == null) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "NO_HOLD", "No hold stands for team '"
                    + team + "' (or it was released already): nothing to release");
        }
        return TeamItems.toSettings(after);
    }

    /** The team's own flag released: its item after the write, or null when no unreleased hold stood. */
    private Map<String, AttributeValue> releaseOwn(String team, Instant now, boolean exists) {
        Update u = new Update(table, TeamItems.key(team));
        String held = u.name(TeamItems.MASS_STALE_HELD);
        u.condition("attribute_exists(" + u.name(TeamItems.MASS_STALE_SINCE) + ")");
        u.condition("attribute_not_exists(" + held + ") OR " + held + " = " + u.value(AttributeValue.fromBool(true)));
        u.condition("attribute_not_exists(" + u.name(TeamItems.MASS_STALE_RELEASED) + ")");
        u.set(TeamItems.MASS_STALE_RELEASED, ms(now));
        TeamItems.quiet(u);
        return updated("release the hold", team, u, exists);
    }

    /**
     * The team released from the deployment-wide hold that began at {@code fleetSince}: conditional on the sweep
     * having written the team's share of that very hold, not released yet. Null when refused.
     */
    private Map<String, AttributeValue> releaseFleetShare(String team, Instant fleetSince, Instant now) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition(u.name(TeamItems.FLEET_HOLD_SINCE) + " = " + u.value(ms(fleetSince)));
        u.condition("attribute_not_exists(" + u.name(TeamItems.FLEET_HOLD_RELEASED) + ")");
        u.set(TeamItems.FLEET_HOLD_RELEASED, ms(now));
        TeamItems.quiet(u);
        return updated("release the team from the fleet's hold", team, u, true);
    }

    /** The item after {@code u}; null when its condition refused it; 404 when the item is missing, unless it {@code exists}. */
    private Map<String, AttributeValue> updated(String what, String team, Update u, boolean exists) {
        try {
            return StoreFailures.call(what, () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
        } catch (ConditionalCheckFailedException e) {
            if (!exists && (e.item() == null || e.item().isEmpty())) {
                throw new LifelineException(LifelineException.Kind.NOT_FOUND, "TEAM_NOT_FOUND",
                        "Team '" + team + "' not found");
            }
            return null;
        }
    }

    /**
     * Writes the team's share of the deployment-wide hold that began at {@code fleetSince}: its own {@code alive} and
     * {@code stale} counts. Conditional on the share the sweep read ({@code read}, null when none): the same hold's
     * counts are updated and its release kept; an earlier hold's share (or none) is replaced, its release dropped.
     * Quiet (no event: the fleet's own is the page). True when written.
     */
    public boolean shareFleetHold(String team, Instant fleetSince, int alive, int stale, Instant read) {
        Update u = new Update(table, TeamItems.key(team));
        String since = u.name(TeamItems.FLEET_HOLD_SINCE);
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition(read == null ? "attribute_not_exists(" + since + ")" : since + " = " + u.value(ms(read)));
        u.set(TeamItems.FLEET_HOLD_ALIVE, n(alive)).set(TeamItems.FLEET_HOLD_STALE, n(stale));
        if (!fleetSince.equals(read)) {
            u.set(TeamItems.FLEET_HOLD_SINCE, ms(fleetSince)).remove(TeamItems.FLEET_HOLD_RELEASED);
        }
        TeamItems.quiet(u);
        return u.writeIf(dynamo, "write the team's share of the fleet's hold");
    }

    /** Removes the team's share of the deployment-wide hold that began at {@code since} (that hold is over). */
    public boolean clearFleetShare(String team, Instant since) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition(u.name(TeamItems.FLEET_HOLD_SINCE) + " = " + u.value(ms(since)));
        u.remove(TeamItems.FLEET_HOLD_SINCE).remove(TeamItems.FLEET_HOLD_ALIVE).remove(TeamItems.FLEET_HOLD_STALE)
                .remove(TeamItems.FLEET_HOLD_RELEASED);
        TeamItems.quiet(u);
        return u.writeIf(dynamo, "clear the team's share of the fleet's hold");
    }

    /** Lowers the flag once the condition has cleared; true for the write that lowered it. */
    public boolean clearMassStale(String team) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(TeamItems.MASS_STALE_SINCE) + ")");
        u.remove(TeamItems.MASS_STALE_SINCE).remove(TeamItems.MASS_STALE_ALIVE).remove(TeamItems.MASS_STALE_STALE)
                .remove(TeamItems.MASS_STALE_THRESHOLD).remove(TeamItems.MASS_STALE_HELD)
                .remove(TeamItems.MASS_STALE_WHY).remove(TeamItems.MASS_STALE_RELEASED);
        TeamItems.quiet(u);
        return u.writeIf(dynamo, "clear the mass-stale flag");
    }

}
