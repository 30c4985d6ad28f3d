package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.agent.TeamSettings;
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
        Update u = new Update(table, TeamItems.key(team));
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
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.condition("attribute_not_exists(" + u.name(TeamItems.MASS_STALE_SINCE) + ")");
        u.set(TeamItems.MASS_STALE_SINCE, ms(now)).set(TeamItems.MASS_STALE_ALIVE, n(alive))
                .set(TeamItems.MASS_STALE_STALE, n(stale))
                .set(TeamItems.MASS_STALE_THRESHOLD, AttributeValue.fromN(Double.toString(threshold)))
                .set(TeamItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "raise the mass-stale flag");
    }

    /** Lowers the flag once the condition has cleared; true for the write that lowered it. */
    public boolean clearMassStale(String team) {
        Update u = new Update(table, TeamItems.key(team));
        u.condition("attribute_exists(" + u.name(TeamItems.MASS_STALE_SINCE) + ")");
        u.remove(TeamItems.MASS_STALE_SINCE).remove(TeamItems.MASS_STALE_ALIVE).remove(TeamItems.MASS_STALE_STALE)
                .remove(TeamItems.MASS_STALE_THRESHOLD);
        TeamItems.quiet(u);
        return u.writeIf(dynamo, "clear the mass-stale flag");
    }

}
