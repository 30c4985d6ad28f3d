package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamSettings;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The sweep's read and writes. The read: one parallel, eventually consistent Scan that returns only alive and
 * restarting agents and team items, projected to the few attributes the sweep needs. A stale read is safe:
 * every write the sweep makes is conditional on what it saw (the heartbeat count of an alive agent, the
 * transition stamp of a restarting one).
 */
public final class SweepStore {
    private static final String PROJECTION = String.join(", ", "#pk", "#sk", "#status", "#hbAt", "#deadline",
            "#misses", "#grace", "#beats", "#paused", "#leader", "#spT", "#spM", "#massStale", "#tseq", "#tAt",
            "#lease", "#schedule", "#staleMs", "#lastMiss", "#at", "#a", "#s", "#exp", "#since", "#wPs", "#wAl", "#src",
            "#msHeld", "#msWhy", "#msRel", "#msAlive", "#msStale", "#fd", "#fhSince", "#fhAlive", "#fhStale", "#fhRel",
            "#fRel", "#prAt", "#tl", "#prWhy", "#stMs", "#onSt", "#stS", "#wIn", "#pkU");

    /**
     * What one scan saw. {@code consumedReadUnits} is as DynamoDB reported it (0 where it does not). Host leases
     * ({@code leases}) and the agents that name one ({@code linked}, of any status) are read by the same Scan; an
     * alive agent with a lease is in {@code agents} as read, with its lease entry on its link, for the sweep to judge
     * ({@link io.lifeline.agent.Liveness#judged}).
     * {@code fleetHeldSince}: when the deployment-wide hold that stands began ({@link FleetStore}), or null.
     * {@code personWaits}: the agents waiting for a person, or whose wait's alert is still raised.
     * {@code fleetReleasedAt}: when the operator released the deployment-wide hold that stands, or null.
     * {@code progress}: the agents that reported progress, or whose stall is still raised.
     */
    public record Snapshot(List<SweepPlan.Observed> agents, List<SweepPlan.Restarting> restarting,
                           Map<String, TeamSettings> teams, Set<String> teamsWithMassStaleFlag, int itemsScanned,
                           double consumedReadUnits, List<HostLease.Seen> leases, List<HostLease.Linked> linked,
                           Instant fleetHeldSince, List<Liveness.PersonWait> personWaits, Instant fleetReleasedAt,
                           List<Liveness.ProgressSeen> progress) {
    }

    /** One segment's part: agents with a lease are judged once every lease is read. */
    private record Part(Snapshot snapshot, List<Map<String, AttributeValue>> hostedItems) {
    }

    /** How a sweep's conditional write ended. */
    public enum Write {
        /** Written. */
        DONE,
        /** Refused: the agent beat, joined or changed status since the sweep read it; it wins. */
        RACE_LOST,
        /** Refused: the agent's last miss is younger than the spacing; this sweep's miss is not counted. */
        TOO_SOON
    }

    /**
     * Items per Scan segment the sweep aims at: a segment reads about this many small live items (~400 bytes
     * each, so ~2 MB, two 1 MB pages) before the parallel Scan adds a segment.
     */
    static final int ITEMS_PER_SEGMENT = 5_000;
    /** The most segments one sweep scans with (DynamoDB allows 1,000,000; one Lambda's threads are the bound). */
    static final int MAX_SEGMENTS = 64;

    private final DynamoDbClient dynamo;
    private final String table;
    private final HostLeaseStore leases;
    private final int minSegments;
    private final ExecutorService pool;
    /** The segments the next scan uses: grown with the live table, from the item count the last scan saw. */
    private volatile int segments;

    public SweepStore(DynamoDbClient dynamo, Tables tables, int minSegments) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.leases = new HostLeaseStore(dynamo, tables);
        this.minSegments = Math.max(1, Math.min(MAX_SEGMENTS, minSegments));
        this.segments = this.minSegments;
        this.pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sweep-scan");
            t.setDaemon(true);
            return t;
        });
    }

    /** How many segments a scan of a live table of {@code items} items uses, at least {@code min}. */
    static int segmentsFor(int items, int min) {
        int wanted = (items + ITEMS_PER_SEGMENT - 1) / ITEMS_PER_SEGMENT;
        return Math.max(min, Math.min(MAX_SEGMENTS, wanted));
    }

    /** The segments the next scan will use. */
    public int segments() {
        return segments;
    }

    public Snapshot scan() {
        int segments = this.segments;
        List<Future<Part>> parts = new ArrayList<>();
        for (int segment = 0; segment < segments; segment++) {
            int seg = segment;
            parts.add(pool.submit(() -> scanSegment(seg, segments)));
        }
        List<HostLease.Seen> leases = new ArrayList<>();
        List<HostLease.Linked> linked = new ArrayList<>();
        List<Map<String, AttributeValue>> hostedItems = new ArrayList<>();
        List<SweepPlan.Observed> agents = new ArrayList<>();
        List<SweepPlan.Restarting> restarting = new ArrayList<>();
        Map<String, TeamSettings> teams = new HashMap<>();
        Set<String> flagged = new HashSet<>();
        int scanned = 0;
        double units = 0;
        Instant fleetHeldSince = null;
        Instant fleetReleasedAt = null;
        List<Liveness.PersonWait> personWaits = new ArrayList<>();
        List<Liveness.ProgressSeen> progress = new ArrayList<>();
        for (Future<Part> part : parts) {
            Snapshot s;
            try {
                Part p = part.get();
                s = p.snapshot();
                hostedItems.addAll(p.hostedItems());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("sweep scan interrupted", e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
            agents.addAll(s.agents());
            restarting.addAll(s.restarting());
            teams.putAll(s.teams());
            flagged.addAll(s.teamsWithMassStaleFlag());
            fleetHeldSince = s.fleetHeldSince() != null ? s.fleetHeldSince() : fleetHeldSince;
            fleetReleasedAt = s.fleetReleasedAt() != null ? s.fleetReleasedAt() : fleetReleasedAt;
            personWaits.addAll(s.personWaits());
            progress.addAll(s.progress());
            scanned += s.itemsScanned();
            units += s.consumedReadUnits();
            leases.addAll(s.leases());
            linked.addAll(s.linked());
        }
        Map<String, HostLease.Seen> byHost = new HashMap<>();
        leases.forEach(l -> byHost.put(l.team() + "/" + l.hostId(), l));
        for (Map<String, AttributeValue> item : hostedItems) {
            agents.add(hostedObserved(item, byHost));
        }
        this.segments = segmentsFor(scanned, minSegments);
        return new Snapshot(agents, restarting, teams, flagged, scanned, units, leases, linked, fleetHeldSince,
                personWaits, fleetReleasedAt, progress);
    }

    /**
     * An alive agent that names a lease, as read: its item, and its lease entry and last miss on its link, for
     * {@link io.lifeline.agent.Liveness#judged} (the store reads; it does not judge).
     */
    private static SweepPlan.Observed hostedObserved(Map<String, AttributeValue> item,
                                                     Map<String, HostLease.Seen> byHost) {
        String hostId = Items.str(item, AgentItems.LEASE);
        String key = HostLease.key(AgentItems.agentId(item));
        HostLease.Seen lease = byHost.get(AgentItems.team(item) + "/" + hostId);
        Long beat = lease == null ? null : lease.beats().get(key);
        SweepPlan.Observed direct = observed(item);
        if (item.containsKey(AgentItems.SCHEDULE)) {
            return direct; // every beat of a scheduled agent is written to its item: judged from there alone
        }
        Duration staleAfter = Duration.ofMillis(Items.num(item, AgentItems.STALE_AFTER_MS, 0));
        return new SweepPlan.Observed(direct.team(), direct.agentId(), direct.status(),
                direct.heartbeatAt(), direct.deadline(), direct.misses(), direct.graceMisses(), direct.beats(),
                direct.pausedUntil(), new SweepPlan.Hosted(hostId, key, beat, staleAfter,
                lease == null ? null : lease.answers().get(key), Items.instant(item, AgentItems.LAST_MISS_AT)),
                direct.source());
    }

    private Part scanSegment(int segment, int segments) {
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
        Map<String, AttributeValue> values = Map.of(":agent", s(Keys.AGENT_SK), ":team", s(Keys.TEAM_SK),
                ":host", s(HostLeaseStore.SK), ":fleet", s(Keys.FLEET),
                ":ready", s(AgentStatus.READY.wire()), ":working", s(AgentStatus.WORKING.wire()),
                ":restarting", s(AgentStatus.RESTARTING.wire()));
        List<HostLease.Seen> leases = new ArrayList<>();
        List<HostLease.Linked> linked = new ArrayList<>();
        List<Map<String, AttributeValue>> hostedItems = new ArrayList<>();
        List<SweepPlan.Observed> agents = new ArrayList<>();
        List<SweepPlan.Restarting> restarting = new ArrayList<>();
        Map<String, TeamSettings> teams = new HashMap<>();
        Set<String> flagged = new HashSet<>();
        int scanned = 0;
        double units = 0;
        Instant fleetHeldSince = null;
        Instant fleetReleasedAt = null;
        List<Liveness.PersonWait> personWaits = new ArrayList<>();
        List<Liveness.ProgressSeen> progress = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            ScanRequest request = ScanRequest.builder().tableName(table).segment(segment).totalSegments(segments)
                    .filterExpression("(#sk = :agent AND (#status IN (:ready, :working, :restarting)"
                            + " OR attribute_exists(#lease) OR attribute_exists(#wAl) OR attribute_exists(#stS)))"
                            + " OR #sk = :team OR #sk = :host"
                            + " OR #sk = :fleet")
                    .projectionExpression(PROJECTION)
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .returnConsumedCapacity("TOTAL")
                    .exclusiveStartKey(start).build();
            ScanResponse page = StoreFailures.call("scan for the sweep", () -> dynamo.scan(request));
            scanned += page.scannedCount();
            if (page.consumedCapacity() != null && page.consumedCapacity().capacityUnits() != null) {
                units += page.consumedCapacity().capacityUnits();
            }
            for (Map<String, AttributeValue> item : page.items()) {
                if (TeamItems.isTeam(item)) {
                    TeamSettings settings = TeamItems.toSettings(item);
                    teams.put(settings.team(), settings);
                    if (item.containsKey(TeamItems.MASS_STALE_SINCE)) {
                        flagged.add(settings.team());
                    }
                } else if (FleetStore.isFleet(item)) {
                    fleetHeldSince = FleetStore.heldSince(item);
                    fleetReleasedAt = fleetHeldSince == null ? null : Items.instant(item, FleetStore.RELEASED_AT);
                } else if (HostLeaseStore.isLease(item)) {
                    leases.add(HostLeaseStore.seen(item));
                } else if (AgentItems.isAgent(item)) {
                    AgentStatus status = AgentStatus.fromWire(Items.str(item, AgentItems.STATUS)).orElseThrow();
                    Instant waitingForPerson = Items.instant(item, AgentItems.WAIT_PERSON);
                    Instant alerted = Items.instant(item, AgentItems.WAIT_ALERTED);
                    if (waitingForPerson != null || alerted != null) {
                        personWaits.add(new Liveness.PersonWait(AgentItems.team(item), AgentItems.agentId(item), status,
                                waitingForPerson, alerted));
                    }
                    Liveness.ProgressSeen seen = AgentItems.progressSeen(item, status);
                    if (seen != null) {
                        progress.add(seen);
                    }
                    String hostId = Items.str(item, AgentItems.LEASE);
                    if (hostId != null) {
                        linked.add(new HostLease.Linked(AgentItems.team(item), AgentItems.agentId(item), hostId,
                                status, Duration.ofMillis(Items.num(item, AgentItems.STALE_AFTER_MS, 0)),
                                Items.str(item, AgentItems.SCHEDULE)));
                    }
                    if (status == AgentStatus.RESTARTING) {
                        restarting.add(new SweepPlan.Restarting(AgentItems.team(item), AgentItems.agentId(item),
                                Items.num(item, AgentItems.T_SEQ, 0), Items.instant(item, AgentItems.T_AT)));
                    } else if (status.isAlive()) {
                        if (hostId != null) {
                            hostedItems.add(item);
                        } else {
                            agents.add(observed(item));
                        }
                    }
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return new Part(new Snapshot(agents, restarting, teams, flagged, scanned, units, leases, linked,
                fleetHeldSince, personWaits, fleetReleasedAt, progress), hostedItems);
    }

    /**
     * Raises the one alert of a wait for a person that began at {@code w.since()}: conditional on the agent still
     * waiting for that person and no alert raised, with the outbox mark (its stream record is the
     * {@code AgentAwaitingInput}). True when written.
     */
    public boolean raiseAwaiting(Liveness.PersonWait w, Instant now) {
        Update u = new Update(table, AgentItems.key(w.team(), w.agentId()));
        u.condition(u.name(AgentItems.WAIT_PERSON) + " = " + u.value(ms(w.since())));
        u.condition("attribute_not_exists(" + u.name(AgentItems.WAIT_ALERTED) + ")");
        u.set(AgentItems.WAIT_ALERTED, ms(w.since())).set(AgentItems.WAIT_ALERTED_AT, ms(now))
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "raise an awaiting-input alert");
    }

    /**
     * Resolves the alert of a wait that is over: conditional on that alert still standing, with the outbox mark
     * (its stream record is the {@code AgentInputResumed}). True when written.
     */
    public boolean resolveAwaiting(Liveness.PersonWait w) {
        Update u = new Update(table, AgentItems.key(w.team(), w.agentId()));
        u.condition(u.name(AgentItems.WAIT_ALERTED) + " = " + u.value(ms(w.alerted())));
        u.remove(AgentItems.WAIT_ALERTED).remove(AgentItems.WAIT_ALERTED_AT)
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "resolve an awaiting-input alert");
    }

    /**
     * Raises the one stall of an agent that made no progress since {@code seen}'s last: conditional on it still
     * {@code working}, its last progress unchanged, no tool call in flight, no wait and no stall raised, with the
     * outbox mark (its stream record is the {@code AgentStalled}). With {@code restart}, the same write marks it
     * dead with trigger {@code stalled} (a death like any other: the revive flow, flapping and bursts count it).
     * True when written.
     */
    public boolean raiseStall(Liveness.ProgressSeen seen, String reason, boolean restart, Instant now) {
        Update u = new Update(table, AgentItems.key(seen.team(), seen.agentId()));
        u.condition(u.name(AgentItems.STATUS) + " = " + u.value(s(AgentStatus.WORKING.wire())));
        u.condition(u.name(AgentItems.PROGRESS_AT) + " = " + u.value(ms(seen.progress().lastProgressAt())));
        u.condition("attribute_not_exists(" + u.name(AgentItems.TOOL_IN_FLIGHT) + ")");
        u.condition("attribute_not_exists(" + u.name(AgentItems.WAIT_INPUT) + ")");
        u.condition("attribute_not_exists(" + u.name(AgentItems.WAIT_PERSON) + ")");
        u.condition("attribute_not_exists(" + u.name(AgentItems.STALLED_SINCE) + ")");
        u.set(AgentItems.STALLED_SINCE, ms(now));
        if (restart) {
            AgentItems.stampTransition(u, Trigger.STALLED, AgentStatus.DEAD,
                    "stalled: " + reason + ", no progress since " + seen.progress().lastProgressAt(), now);
        } else {
            u.set(AgentItems.OUTBOX, AttributeValue.fromBool(true)); // the transition's stamp sets it otherwise
        }
        return u.writeIf(dynamo, "raise a stall");
    }

    /**
     * Resolves a stall that is over (progress came, the turn ended, a tool started, the agent left or died):
     * conditional on that stall still standing, with the outbox mark (its stream record is the
     * {@code AgentProgressResumed}). True when written.
     */
    public boolean resolveStall(Liveness.ProgressSeen seen) {
        Update u = new Update(table, AgentItems.key(seen.team(), seen.agentId()));
        u.condition(u.name(AgentItems.STALLED_SINCE) + " = " + u.value(ms(seen.stalledSince())));
        u.remove(AgentItems.STALLED_SINCE)
                .set(AgentItems.OUTBOX, AttributeValue.fromBool(true));
        return u.writeIf(dynamo, "resolve a stall");
    }

    private static SweepPlan.Observed observed(Map<String, AttributeValue> item) {
        return new SweepPlan.Observed(AgentItems.team(item), AgentItems.agentId(item),
                AgentStatus.fromWire(Items.str(item, AgentItems.STATUS)).orElseThrow(),
                Items.instant(item, AgentItems.HEARTBEAT_AT), Items.instant(item, AgentItems.DEADLINE),
                (int) Items.num(item, AgentItems.MISSES, 0), (int) Items.num(item, AgentItems.GRACE, 1),
                Items.num(item, AgentItems.BEATS, 0), Items.instant(item, AgentItems.PAUSED_UNTIL), null,
                AgentItems.addressOf(item));
    }

    /**
     * Counts one more missed sweep ({@code misses}), only if the agent is still alive, has not sent a heartbeat
     * since the sweep read it ({@code beats} unchanged), and its last recorded miss is at least {@code spacing}
     * old (or it has none since its last sign of life: a heartbeat or join sets misses to 0). So two sweeps
     * closer together than the spacing count one miss between them.
     */
    public Write recordMiss(SweepPlan.Observed a, int misses, Instant now, Duration spacing) {
        Update u = missWrite(a, misses, now, spacing);
        AgentItems.quiet(u);
        u.condition(u.in(AgentItems.STATUS, List.of(s(AgentStatus.READY.wire()), s(AgentStatus.WORKING.wire()))));
        if (a.hosted() != null) {
            try {
                return withLease("record a missed sweep", a, false, u, now);
            } catch (ConditionalCheckFailedException e) {
                return refused(a, e);
            }
        }
        return write("record a missed sweep", a, u);
    }

    /**
     * The write {@code u} on a hosted agent's item, in one transaction with its lease: the lease entry must still
     * be the one the sweep judged from, so a renewal that lands meanwhile wins as a heartbeat does. A death
     * ({@code death}) also removes the lease's answer for the agent, so its next beat through the lease is written
     * to its item and answered {@code rejoinRequired}. A refusal of the item's own condition is thrown as a
     * ConditionalCheckFailedException carrying the item.
     */
    private Write withLease(String what, SweepPlan.Observed a, boolean death, Update u, Instant now) {
        SweepPlan.Hosted h = a.hosted();
        Update lease = new Update(table, HostLeaseStore.key(a.team(), h.hostId()));
        String entry = lease.mapPath(HostLeaseStore.BEATS, h.key());
        // Still stale at `now` through the lease: no lease beat, or one before the bound Liveness gives (at the
        // deadline itself the agent is alive; LivenessExpressionTest holds the two together at the boundary). A
        // renewal that re-reports the same silence (its beat recomputed a few ms apart) does not cancel the write.
        lease.condition("attribute_not_exists(" + entry + ") OR " + entry + " < "
                + lease.value(ms(Liveness.staleBefore(now, h.staleAfter()))));
        TransactWriteItem leaseItem;
        if (death && h.answer() != null) {
            String answer = lease.mapPath(HostLeaseStore.ANSWERS, h.key());
            lease.condition(answer + " = " + lease.value(s(h.answer())));
            lease.removePath(answer);
            AgentItems.quiet(lease);
            leaseItem = lease.transactItem();
        } else {
            leaseItem = lease.conditionCheckItem();
        }
        try {
            StoreFailures.call(what, () -> dynamo.transactWriteItems(t -> t.transactItems(leaseItem,
                    u.transactItem())));
            return Write.DONE;
        } catch (TransactionCanceledException e) {
            var reasons = e.cancellationReasons();
            if (Transactions.failedCondition(reasons.get(0))) {
                return Write.RACE_LOST; // the host renewed the agent's lease beat after the scan
            }
            if (Transactions.failedCondition(reasons.get(1))) {
                throw ConditionalCheckFailedException.builder().message(what + " refused")
                        .item(reasons.get(1).item()).build();
            }
            throw Transactions.failure(what, e);
        }
    }

    /**
     * Marks the agent dead by {@code heartbeat_expired}: allowed by the transition table, and under the same
     * conditions as {@link #recordMiss} (this is its last miss), so a heartbeat that lands between the sweep's
     * read and this write always wins, and a sweep right after the one that counted the previous miss cannot
     * turn it into a death.
     */
    public Write markDead(SweepPlan.Observed a, int misses, String reason, Instant now, Duration spacing) {
        return markDead(a, misses, reason, now, spacing, null);
    }

    /**
     * As {@link #markDead(SweepPlan.Observed, int, String, Instant, Duration)}, the death stamped with the host
     * silence it follows from ({@code cause}, or null: none), which its event carries.
     */
    public Write markDead(SweepPlan.Observed a, int misses, String reason, Instant now, Duration spacing,
                          HostIncidents.Cause cause) {
        Instant at = now;
        for (int attempt = 1; ; attempt++) {
            Update u = missWrite(a, misses, now, spacing);
            u.condition(u.in(AgentItems.STATUS, from(Trigger.HEARTBEAT_EXPIRED)));
            AgentItems.stampTransition(u, Trigger.HEARTBEAT_EXPIRED,
                    TransitionTable.rule(Trigger.HEARTBEAT_EXPIRED).to(), reason, at);
            if (cause != null) {
                AgentItems.stampHostCause(u, cause);
            }
            try {
                if (a.hosted() != null) {
                    return withLease("mark the agent dead", a, true, u, now);
                }
                StoreFailures.call("mark the agent dead", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
                return Write.DONE;
            } catch (ConditionalCheckFailedException e) {
                // A transition that committed after the scan, stamped later than this sweep's reading (a claim,
                // which moves no heartbeat count): the death is stamped at its time, never before it.
                Instant later = AgentItems.laterStamp(e.item(), at);
                if (later == null || attempt >= 3) {
                    return refused(a, e);
                }
                at = later;
            }
        }
    }

    /**
     * Ends a revive no flow is left to end: restarting -> dead_failed_revive ({@code restart_exhausted}),
     * conditional on the transition stamp the sweep read (the seq and time the agent entered restarting), so a
     * join, a flow's own give-up or a new revive that moved the agent meanwhile wins.
     */
    public Write endRevive(SweepPlan.EndRevive end, Instant now) {
        SweepPlan.Restarting r = end.agent();
        Update u = new Update(table, AgentItems.key(r.team(), r.agentId()));
        u.condition(u.in(AgentItems.STATUS, from(Trigger.RESTART_EXHAUSTED)));
        u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(r.seq())));
        u.condition(r.since() == null ? "attribute_not_exists(" + u.name(AgentItems.T_AT) + ")"
                : u.name(AgentItems.T_AT) + " = " + u.value(ms(r.since())));
        // The stamp read is pinned by the condition, so the end is stamped at the later of now and that stamp.
        Instant at = r.since() != null && r.since().isAfter(now) ? r.since() : now;
        AgentItems.stampTransition(u, Trigger.RESTART_EXHAUSTED, TransitionTable.rule(Trigger.RESTART_EXHAUSTED).to(),
                end.reason(), at);
        try {
            StoreFailures.call("end an orphaned revive", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return Write.DONE;
        } catch (ConditionalCheckFailedException e) {
            return Write.RACE_LOST;
        }
    }

    /** Flags a host lease that went silent (one {@code HostLeaseExpired}); false when it was renewed meanwhile. */
    public boolean flagLeaseExpired(HostLease.Expired expired, Instant now) {
        return leases.flagExpired(expired, now);
    }

    /** Flags a lease as the lead of its host's incident or part of it (docs/alerts-noise.md). */
    public boolean flagLeaseExpired(HostIncidents.Flag flag, Instant now) {
        return leases.flagExpired(flag, now);
    }

    /** Removes the flag of a lease renewed since (one {@code HostLeaseRestored}); false when it was already. */
    public boolean restoreLease(HostLease.Seen lease, Instant now) {
        return leases.restore(lease.team(), lease.hostId(), lease.expiredAt(), now);
    }

    /** Removes an answer a lease must no longer give; false when it changed meanwhile. */
    public boolean dropLeaseAnswer(HostLease.StaleAnswer stale) {
        return leases.dropAnswer(stale);
    }

    private static List<AttributeValue> from(Trigger trigger) {
        List<AttributeValue> from = new ArrayList<>();
        TransitionTable.rule(trigger).from().forEach(status -> from.add(s(status.wire())));
        return from;
    }

    /** The part a miss and a death share: beats unchanged, the spacing kept, the misses and their time set. */
    private Update missWrite(SweepPlan.Observed a, int misses, Instant now, Duration spacing) {
        Update u = new Update(table, AgentItems.key(a.team(), a.agentId()));
        u.condition(u.name(AgentItems.BEATS) + " = " + u.value(n(a.beats())));
        String missesName = u.name(AgentItems.MISSES);
        String last = u.name(AgentItems.LAST_MISS_AT);
        String voided = "";
        SweepPlan.Hosted h = a.hosted();
        if (h != null && h.leaseBeatMs() != null) {
            // Misses counted before the lease beat no longer count (see Liveness.throughLease): no spacing to keep.
            voided = " OR " + last + " < " + u.value(n(h.leaseBeatMs()));
        }
        u.condition("attribute_not_exists(" + missesName + ") OR " + missesName + " = " + u.value(n(0))
                + " OR attribute_not_exists(" + last + ") OR " + last + " <= " + u.value(ms(now.minus(spacing)))
                + voided);
        u.set(AgentItems.MISSES, n(misses));
        u.set(AgentItems.LAST_MISS_AT, ms(now));
        return u;
    }

    private Write write(String what, SweepPlan.Observed a, Update u) {
        try {
            StoreFailures.call(what, () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return Write.DONE;
        } catch (ConditionalCheckFailedException e) {
            return refused(a, e);
        }
    }

    private static Write refused(SweepPlan.Observed a, ConditionalCheckFailedException e) {
        Map<String, AttributeValue> old = e.item();
        boolean unchanged = old != null && Items.num(old, AgentItems.BEATS, 0) == a.beats()
                && AgentStatus.fromWire(Items.str(old, AgentItems.STATUS)).map(AgentStatus::isAlive).orElse(false);
        return unchanged ? Write.TOO_SOON : Write.RACE_LOST;
    }
}
