package io.lifeline.store.team;

import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.FailureDomains;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TeamFleetHold;
import io.lifeline.agent.TeamHold;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The team item on the live table ({@code TEAM#<team> / TEAM}): settings, pause, the mass-stale flag, minted keys. */
public final class TeamItems {
    public static final String LEADER = "leaderAgentId";
    static final String PAUSED_UNTIL = "pausedUntil";
    static final String PAUSE_REASON = "pauseReason";
    public static final String SP_THRESHOLD = "spThreshold";
    public static final String SP_MIN_ALIVE = "spMinAlive";
    /** Set while a mass-stale hold lasts; its appearance in the stream is the MassStaleSuspected event. */
    public static final String MASS_STALE_SINCE = "massStaleSince";
    public static final String MASS_STALE_ALIVE = "massStaleAlive";
    public static final String MASS_STALE_STALE = "massStaleStale";
    public static final String MASS_STALE_THRESHOLD = "massStaleThreshold";
    /** Whether the flag holds the team's dead-marking (absent: held, as flags raised before domains were weighed). */
    public static final String MASS_STALE_HELD = "massStaleHeld";
    /** Why, in words a person can act on (held, or which failure domain explained the silence). */
    public static final String MASS_STALE_WHY = "massStaleWhy";
    /** When an admin released the hold (ms); removed with the flag. */
    public static final String MASS_STALE_RELEASED = "massStaleReleasedAt";
    /**
     * The deployment-wide hold as this team sees it ({@link TeamFleetHold}): the fleet hold's start (ms), the team's
     * own watched and held counts, and when its admin released the team from it. Written by the sweep while the
     * fleet holds (only when the counts change), removed by the sweep that finds the fleet hold over.
     */
    public static final String FLEET_HOLD_SINCE = "fleetHoldSince";
    public static final String FLEET_HOLD_ALIVE = "fleetHoldAlive";
    public static final String FLEET_HOLD_STALE = "fleetHoldStale";
    public static final String FLEET_HOLD_RELEASED = "fleetHoldReleasedAt";
    /** The team's failure-domain rule ({@code host}, {@code source}, {@code none}); absent: the default. */
    public static final String FAILURE_DOMAINS = "failureDomains";
    /** The newest admin key an operator minted for the team (a map), stamped by the write that mints it. */
    public static final String MINTED = "minted";
    /** The allowances (ms) the team's agents get at registration when they give none (as on agent items). */
    static final String ALLOW_WORKING = AgentItems.ALLOW_WORKING;
    static final String ALLOW_INPUT = AgentItems.ALLOW_INPUT;
    static final String ALLOW_PERSON = AgentItems.ALLOW_PERSON;
    /** The stall rule (ms, and alert or restart) the team's agents get at registration when they give none. */
    static final String STALL_AFTER_MS = AgentItems.STALL_AFTER_MS;
    static final String ON_STALL = AgentItems.ON_STALL;
    /** The outbox mark, as on agent items ({@link AgentItems#OUTBOX}). */
    static final String OUTBOX = AgentItems.OUTBOX;

    private TeamItems() {
    }

    static Map<String, AttributeValue> key(String team) {
        return Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.TEAM_SK));
    }

    /** A write that carries no fact for the bus: its stream record is filtered out before the publisher. */
    static void quiet(Update u) {
        u.remove(OUTBOX);
    }

    public static boolean isTeam(Map<String, AttributeValue> item) {
        return Keys.TEAM_SK.equals(Items.str(item, Keys.SK));
    }

    public static TeamSettings toSettings(Map<String, AttributeValue> item) {
        String threshold = item.containsKey(SP_THRESHOLD) ? item.get(SP_THRESHOLD).n() : null;
        Long minAlive = Items.num(item, SP_MIN_ALIVE);
        return new TeamSettings(Keys.idAfter("TEAM#", Items.str(item, Keys.PK)), Items.str(item, LEADER),
                Items.instant(item, PAUSED_UNTIL), Items.str(item, PAUSE_REASON),
                threshold == null ? null : Double.valueOf(threshold), minAlive == null ? null : minAlive.intValue(),
                millis(item, ALLOW_WORKING), millis(item, ALLOW_INPUT), millis(item, ALLOW_PERSON),
                FailureDomains.fromWire(Items.str(item, FAILURE_DOMAINS)).orElse(null), hold(item), fleetHold(item),
                millis(item, STALL_AFTER_MS), Liveness.OnStall.fromWire(Items.str(item, ON_STALL)).orElse(null));
    }

    /** The team's share of a fleet-wide hold on a team item, or null when none is written. */
    static TeamFleetHold fleetHold(Map<String, AttributeValue> item) {
        Instant since = Items.instant(item, FLEET_HOLD_SINCE);
        return since == null ? null : new TeamFleetHold(since, (int) Items.num(item, FLEET_HOLD_ALIVE, 0),
                (int) Items.num(item, FLEET_HOLD_STALE, 0), Items.instant(item, FLEET_HOLD_RELEASED));
    }

    /** The mass-silence flag on a team item, or null when none stands. */
    public static TeamHold hold(Map<String, AttributeValue> item) {
        Instant since = Items.instant(item, MASS_STALE_SINCE);
        if (since == null) {
            return null;
        }
        AttributeValue held = item.get(MASS_STALE_HELD);
        return new TeamHold(since, (int) Items.num(item, MASS_STALE_ALIVE, 0), (int) Items.num(item, MASS_STALE_STALE,
                0), held == null || held.bool() == null || held.bool(), Items.str(item, MASS_STALE_WHY),
                Items.instant(item, MASS_STALE_RELEASED));
    }

    private static Duration millis(Map<String, AttributeValue> item, String name) {
        Long ms = Items.num(item, name);
        return ms == null ? null : Duration.ofMillis(ms);
    }
}
