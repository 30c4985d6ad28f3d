package io.lifeline.store.sweep;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamSettings;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.Predicate;
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
 * restarting agents and team items, projected to the few attributes the sweep needs, each page handed on as facts as
 * it arrives ({@link Sink}), so the store keeps no item and no agent of a scan. A stale read is safe:
 * every write the sweep makes is conditional on what it saw (the heartbeat count of an alive agent, the
 * transition stamp of a restarting one).
 */
public final class SweepStore {
    /**
     * Where a scan hands each page it read, parsed to facts ({@link Page}): called from the segments' threads as
     * their pages arrive, so it must be safe across threads; what it keeps is all the scan keeps.
     */
    @FunctionalInterface
    public interface Sink {
        void page(Page page);
    }

    /**
     * One page of one segment, as facts (no item is kept). {@code agents}: the alive agents as read; one that beats
     * through a host lease carries its link with no lease beat yet, to be joined with its lease
     * ({@link SweepPlan.Hosted#through}), which may come in another page or segment. Host leases ({@code leases})
     * and the agents that name one ({@code linked}, of any status). {@code fleetSeen}: the page held the fleet item,
     * whose hold began at {@code fleetHeldSince} (null: none) and was released at {@code fleetReleasedAt}.
     * {@code personWaits}: the agents waiting for a person, or whose wait's alert is still raised. {@code progress}:
     * the agents that reported progress, or whose stall is still raised. {@code consumedReadUnits} as DynamoDB
     * reported it (0 where it does not).
     */
    public record Page(List<SweepPlan.Observed> agents, List<SweepPlan.Restarting> restarting,
                       List<TeamSettings> teams, Set<String> teamsWithMassStaleFlag, List<HostLease.Seen> leases,
                       List<HostLease.Linked> linked, boolean fleetSeen, Instant fleetHeldSince,
                       Instant fleetReleasedAt, List<Liveness.PersonWait> personWaits,
                       List<Liveness.ProgressSeen> progress, int itemsScanned, double consumedReadUnits) {
    }

    /** What a scan read in all: items, and read units as DynamoDB reported them. */
    public record Totals(int itemsScanned, double consumedReadUnits) {
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

    /**
     * One parallel Scan of the whole live table in {@link #segments()} segments, each page handed to {@code sink} as
     * it arrives; the next scan's segments follow the items this one saw.
     */
    public Totals scan(Sink sink) {
        int segments = this.segments;
        Totals totals = scan(sink, 0, segments, segments);
        this.segments = segmentsFor(totals.itemsScanned(), minSegments);
        return totals;
    }

    /**
     * Segments {@code first} to {@code first + count - 1} of a parallel Scan in {@code total} segments, side by side,
     * each page handed to {@code sink} as it arrives: one part of a sweep fanned out over several invocations.
     */
    public Totals scan(Sink sink, int first, int count, int total) {
        List<Future<Totals>> parts = new ArrayList<>();
        for (int segment = first; segment < first + count; segment++) {
            int seg = segment;
            parts.add(pool.submit(() -> scanSegment(seg, total, sink)));
        }
        return sum(parts);
    }

    private static Totals sum(List<Future<Totals>> parts) {
        int scanned = 0;
        double units = 0;
        for (Future<Totals> part : parts) {
            try {
                Totals t = part.get();
                scanned += t.itemsScanned();
                units += t.consumedReadUnits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("sweep scan interrupted", e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
        }
        return new Totals(scanned, units);
    }

    /**
     * One part of a round ({@code first} to {@code first + count - 1} of {@code total} segments): the plain alive
     * agents {@code countHere} accepts reach {@code sink}; every other item read is added to {@code ship} as read.
     */
    public Totals scanPart(Sink sink, Predicate<SweepPlan.Observed> countHere, SweepRounds.Shipment ship,
                           int first, int count, int total) {
        List<Future<Totals>> parts = new ArrayList<>();
        for (int segment = first; segment < first + count; segment++) {
            int seg = segment;
            parts.add(pool.submit(() -> scanSegment(seg, total, response -> {
                List<Map<String, AttributeValue>> mine = new ArrayList<>();
                Page page = SweepPages.readPart(response, countHere, mine);
                ship.addAll(mine);
                return page;
            }, sink)));
        }
        return sum(parts);
    }

    private Totals scanSegment(int segment, int segments, Sink sink) {
        return scanSegment(segment, segments, SweepPages::read, sink);
    }

    private Totals scanSegment(int segment, int segments, Function<ScanResponse, Page> reader, Sink sink) {
        int scanned = 0;
        double units = 0;
        Map<String, AttributeValue> start = null;
        do {
            ScanRequest request = SweepPages.request(table, segment, segments, start);
            ScanResponse response = StoreFailures.call("scan for the sweep", () -> dynamo.scan(request));
            Page page = reader.apply(response);
            scanned += page.itemsScanned();
            units += page.consumedReadUnits();
            sink.page(page);
            start = response.hasLastEvaluatedKey() && !response.lastEvaluatedKey().isEmpty()
                    ? response.lastEvaluatedKey() : null;
        } while (start != null);
        return new Totals(scanned, units);
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
