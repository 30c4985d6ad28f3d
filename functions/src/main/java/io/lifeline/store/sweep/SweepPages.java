package io.lifeline.store.sweep;

import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.team.FleetStore;
import io.lifeline.store.team.TeamItems;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The sweep's Scan request and the reading of its pages: each page is parsed to the few facts the sweep needs (records
 * of a few fields, {@link SweepStore.Page}) as it arrives, and its items are let go; the store reads, it judges
 * nothing.
 */
final class SweepPages {
    private static final String PROJECTION = String.join(", ", "#pk", "#sk", "#status", "#hbAt", "#deadline",
            "#misses", "#grace", "#beats", "#paused", "#leader", "#spT", "#spM", "#massStale", "#tseq", "#tAt",
            "#lease", "#schedule", "#staleMs", "#lastMiss", "#at", "#a", "#s", "#exp", "#since", "#wPs", "#wAl", "#src",
            "#msHeld", "#msWhy", "#msRel", "#msAlive", "#msStale", "#fd", "#fhSince", "#fhAlive", "#fhStale", "#fhRel",
            "#fRel", "#prAt", "#tl", "#prWhy", "#stMs", "#onSt", "#stS", "#wIn", "#pkU");
    private static final String FILTER = "(#sk = :agent AND (#status IN (:ready, :working, :restarting)"
            + " OR attribute_exists(#lease) OR attribute_exists(#wAl) OR attribute_exists(#stS)))"
            + " OR #sk = :team OR #sk = :host OR #sk = :fleet";
    private static final Map<String, String> NAMES = names();
    private static final Map<String, AttributeValue> VALUES = Map.of(":agent", s(Keys.AGENT_SK),
            ":team", s(Keys.TEAM_SK), ":host", s(HostLeaseStore.SK), ":fleet", s(Keys.FLEET),
            ":ready", s(AgentStatus.READY.wire()), ":working", s(AgentStatus.WORKING.wire()),
            ":restarting", s(AgentStatus.RESTARTING.wire()));

    private SweepPages() {
    }

    private static Map<String, String> names() {
        Map<String, String> names = new HashMap<>();
        names.put("#pk", Keys.PK);
        names.put("#sk", Keys.SK);
        names.put("#status", AgentItems.STATUS);
        names.put("#hbAt", AgentItems.HEARTBEAT_AT);
        names.put("#deadline", AgentItems.DEADLINE);
        names.put("#misses", AgentItems.MISSES);
        names.put("#grace", AgentItems.GRACE);
        names.put("#beats", AgentItems.BEATS);
        names.put("#paused", AgentItems.PAUSED_UNTIL);
        names.put("#leader", TeamItems.LEADER);
        names.put("#spT", TeamItems.SP_THRESHOLD);
        names.put("#spM", TeamItems.SP_MIN_ALIVE);
        names.put("#massStale", TeamItems.MASS_STALE_SINCE);
        names.put("#tseq", AgentItems.T_SEQ);
        names.put("#tAt", AgentItems.T_AT);
        names.put("#lease", AgentItems.LEASE);
        names.put("#schedule", AgentItems.SCHEDULE);
        names.put("#staleMs", AgentItems.STALE_AFTER_MS);
        names.put("#lastMiss", AgentItems.LAST_MISS_AT);
        names.put("#at", HostLeaseStore.RENEWED_AT);
        names.put("#a", HostLeaseStore.BEATS);
        names.put("#s", HostLeaseStore.ANSWERS);
        names.put("#exp", HostLeaseStore.EXPIRED_AT);
        names.put("#since", FleetStore.SINCE);
        names.put("#wPs", AgentItems.WAIT_PERSON);
        names.put("#wAl", AgentItems.WAIT_ALERTED);
        names.put("#src", AgentItems.SOURCE);
        names.put("#msHeld", TeamItems.MASS_STALE_HELD);
        names.put("#msWhy", TeamItems.MASS_STALE_WHY);
        names.put("#msRel", TeamItems.MASS_STALE_RELEASED);
        names.put("#msAlive", TeamItems.MASS_STALE_ALIVE);
        names.put("#msStale", TeamItems.MASS_STALE_STALE);
        names.put("#fd", TeamItems.FAILURE_DOMAINS);
        names.put("#fhSince", TeamItems.FLEET_HOLD_SINCE);
        names.put("#fhAlive", TeamItems.FLEET_HOLD_ALIVE);
        names.put("#fhStale", TeamItems.FLEET_HOLD_STALE);
        names.put("#fhRel", TeamItems.FLEET_HOLD_RELEASED);
        names.put("#fRel", FleetStore.RELEASED_AT);
        names.put("#prAt", AgentItems.PROGRESS_AT);
        names.put("#pkU", AgentItems.PARKED_UNTIL);
        names.put("#tl", AgentItems.TOOL_IN_FLIGHT);
        names.put("#prWhy", AgentItems.PROGRESS_WHY);
        names.put("#stMs", AgentItems.STALL_AFTER_MS);
        names.put("#onSt", AgentItems.ON_STALL);
        names.put("#stS", AgentItems.STALLED_SINCE);
        names.put("#wIn", AgentItems.WAIT_INPUT);
        return Map.copyOf(names);
    }

    /** One page of {@code segment} of {@code segments}, from {@code start} (null: the segment's first). */
    static ScanRequest request(String table, int segment, int segments, Map<String, AttributeValue> start) {
        return ScanRequest.builder().tableName(table).segment(segment).totalSegments(segments)
                .filterExpression(FILTER).projectionExpression(PROJECTION)
                .expressionAttributeNames(NAMES).expressionAttributeValues(VALUES)
                .returnConsumedCapacity("TOTAL")
                .exclusiveStartKey(start).build();
    }

    /** The page's facts; its items are not kept. */
    static SweepStore.Page read(ScanResponse page) {
        return read(page.items(), page.scannedCount(), units(page));
    }

    private static double units(ScanResponse page) {
        return page.consumedCapacity() != null && page.consumedCapacity().capacityUnits() != null
                ? page.consumedCapacity().capacityUnits() : 0;
    }

    /**
     * A part's page: the plain alive agents (no lease, wait, progress or revive) that {@code countHere} accepts are
     * its facts; every other item it read goes to {@code ship} as read (projected), for the round's merge to read
     * again with {@link #read(List, int, double)}.
     */
    static SweepStore.Page readPart(ScanResponse page, Predicate<SweepPlan.Observed> countHere,
                                    List<Map<String, AttributeValue>> ship) {
        List<Map<String, AttributeValue>> counted = new ArrayList<>();
        for (Map<String, AttributeValue> item : page.items()) {
            if (plain(item) && countHere.test(observed(item, status(item), null))) {
                counted.add(item);
            } else {
                ship.add(item);
            }
        }
        return read(counted, page.scannedCount(), units(page));
    }

    /** An alive agent of no lease, no wait for a person and no progress: a census's counters say all of it. */
    private static boolean plain(Map<String, AttributeValue> item) {
        if (!AgentItems.isAgent(item) || item.containsKey(AgentItems.LEASE)
                || item.containsKey(AgentItems.WAIT_PERSON) || item.containsKey(AgentItems.WAIT_ALERTED)) {
            return false;
        }
        AgentStatus status = status(item);
        return status.isAlive() && AgentItems.progressSeen(item, status) == null;
    }

    private static AgentStatus status(Map<String, AttributeValue> item) {
        return AgentStatus.fromWire(Items.str(item, AgentItems.STATUS)).orElseThrow();
    }

    /** The facts of {@code items} (a page, or what a part shipped); the items are not kept. */
    static SweepStore.Page read(List<Map<String, AttributeValue>> items, int scanned, double units) {
        Builder b = new Builder();
        for (Map<String, AttributeValue> item : items) {
            if (TeamItems.isTeam(item)) {
                TeamSettings settings = TeamItems.toSettings(item);
                b.teams.add(settings);
                if (item.containsKey(TeamItems.MASS_STALE_SINCE)) {
                    b.flagged.add(settings.team());
                }
            } else if (FleetStore.isFleet(item)) {
                b.fleetSeen = true;
                b.fleetHeldSince = FleetStore.heldSince(item);
                b.fleetReleasedAt = b.fleetHeldSince == null ? null : Items.instant(item, FleetStore.RELEASED_AT);
            } else if (HostLeaseStore.isLease(item)) {
                b.leases.add(HostLeaseStore.seen(item));
            } else if (AgentItems.isAgent(item)) {
                agent(item, b);
            }
        }
        return new SweepStore.Page(b.agents, b.restarting, b.teams, b.flagged, b.leases, b.linked,
                b.fleetSeen, b.fleetHeldSince, b.fleetReleasedAt, b.personWaits, b.progress, scanned, units);
    }

    /** A page's facts as they are read. */
    private static final class Builder {
        final List<SweepPlan.Observed> agents = new ArrayList<>();
        final List<SweepPlan.Restarting> restarting = new ArrayList<>();
        final List<TeamSettings> teams = new ArrayList<>();
        final Set<String> flagged = new HashSet<>();
        final List<HostLease.Seen> leases = new ArrayList<>();
        final List<HostLease.Linked> linked = new ArrayList<>();
        final List<Liveness.PersonWait> personWaits = new ArrayList<>();
        final List<Liveness.ProgressSeen> progress = new ArrayList<>();
        boolean fleetSeen;
        Instant fleetHeldSince;
        Instant fleetReleasedAt;
    }

    private static void agent(Map<String, AttributeValue> item, Builder b) {
        AgentStatus status = status(item);
        Instant waitingForPerson = Items.instant(item, AgentItems.WAIT_PERSON);
        Instant alerted = Items.instant(item, AgentItems.WAIT_ALERTED);
        if (waitingForPerson != null || alerted != null) {
            b.personWaits.add(new Liveness.PersonWait(AgentItems.team(item), AgentItems.agentId(item), status,
                    waitingForPerson, alerted));
        }
        Liveness.ProgressSeen seen = AgentItems.progressSeen(item, status);
        if (seen != null) {
            b.progress.add(seen);
        }
        String hostId = Items.str(item, AgentItems.LEASE);
        if (hostId != null) {
            b.linked.add(new HostLease.Linked(AgentItems.team(item), AgentItems.agentId(item), hostId, status,
                    Duration.ofMillis(Items.num(item, AgentItems.STALE_AFTER_MS, 0)),
                    Items.str(item, AgentItems.SCHEDULE)));
        }
        if (status == AgentStatus.RESTARTING) {
            b.restarting.add(new SweepPlan.Restarting(AgentItems.team(item), AgentItems.agentId(item),
                    Items.num(item, AgentItems.T_SEQ, 0), Items.instant(item, AgentItems.T_AT)));
        } else if (status.isAlive()) {
            b.agents.add(observed(item, status, hostId));
        }
    }

    /**
     * An alive agent as read. One that names a lease carries its link with no lease beat yet: the sweep joins it
     * with its lease's entry ({@link SweepPlan.Hosted#through}), which another page may hold. A scheduled agent's
     * every beat is written to its item: it is judged from there alone, with no link.
     */
    private static SweepPlan.Observed observed(Map<String, AttributeValue> item, AgentStatus status, String hostId) {
        SweepPlan.Hosted hosted = hostId == null || item.containsKey(AgentItems.SCHEDULE) ? null
                : new SweepPlan.Hosted(hostId, HostLease.key(AgentItems.agentId(item)), null,
                Duration.ofMillis(Items.num(item, AgentItems.STALE_AFTER_MS, 0)), null,
                Items.instant(item, AgentItems.LAST_MISS_AT));
        return new SweepPlan.Observed(AgentItems.team(item), AgentItems.agentId(item), status,
                Items.instant(item, AgentItems.HEARTBEAT_AT), Items.instant(item, AgentItems.DEADLINE),
                (int) Items.num(item, AgentItems.MISSES, 0), (int) Items.num(item, AgentItems.GRACE, 1),
                Items.num(item, AgentItems.BEATS, 0), Items.instant(item, AgentItems.PAUSED_UNTIL), hosted,
                AgentItems.addressOf(item));
    }
}
