package io.lifeline.store;

import static io.lifeline.store.AgentItems.STATUS;
import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.Transition;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Agents in DynamoDB. Every status change is one conditional write whose condition is the transition
 * table's from-states; it stamps the transition on the item, and the table's stream (the outbox) turns the
 * stamp into a history record and an event. Nothing here reads before it writes: a refused condition
 * returns the current item ({@code ALL_OLD}), which says why.
 */
public final class AgentStore {
    /** How often a heartbeat retries after losing a race with another status change. */
    private static final int STATUS_RACE_ATTEMPTS = 5;

    /** A deleted agent's roster entry (a tombstone): when it was deleted, and its id's last transition seq. */
    static final String RETIRED_AT = "retiredAt";
    static final String LAST_SEQ = "lastSeq";

    private final DynamoDbClient dynamo;
    private final String table;
    private final String ledger;
    private final HostLeaseStore leases;

    public AgentStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.ledger = tables.ledger();
        this.leases = new HostLeaseStore(dynamo, tables);
    }

    /**
     * Registers the agent: its live item and its entry in the team's roster on the ledger ({@link Keys#rosterKey}),
     * which lists the team's agents, in one transaction. The roster entry is keys only and written once, so the live
     * item carries no index keys (the sweep reads every byte of it) and no heartbeat writes anything else.
     */
    private static void putIfPresent(Map<String, AttributeValue> item, String attribute, Duration d) {
        if (d != null) {
            item.put(attribute, n(d.toMillis()));
        }
    }

    public Agent register(NewAgent a, Instant now) {
        // A deleted id's entry is a tombstone with the id's last seq: a new registration continues from it, so the
        // id's transition records on the ledger (kept for the history's retention) are never written twice.
        Map<String, AttributeValue> entry = StoreFailures.call("read the roster entry", () -> dynamo.getItem(g -> g
                .tableName(ledger).key(Keys.rosterKey(a.team(), a.agentId())).consistentRead(true))).item();
        boolean retired = entry != null && entry.containsKey(RETIRED_AT);
        long fromSeq = retired ? Items.num(entry, LAST_SEQ, 0) : 0;
        Map<String, AttributeValue> item = new HashMap<>(AgentItems.key(a.team(), a.agentId()));
        item.put(STATUS, s(AgentStatus.OFFLINE.wire()));
        item.put(AgentItems.NAME, s(a.name()));
        item.put(AgentItems.ROLE, s(a.role()));
        if (a.hostId() != null) {
            item.put(AgentItems.HOST, s(a.hostId()));
        }
        item.put(AgentItems.STALE_AFTER_MS, n(a.staleAfter().toMillis()));
        item.put(AgentItems.GRACE, n(a.graceMisses()));
        item.put(AgentItems.BEATS, n(0));
        item.put(AgentItems.T_SEQ, n(fromSeq));
        if (fromSeq > 0) {
            item.put(AgentItems.PUBLISHED_SEQ, n(fromSeq));
        }
        item.put(AgentItems.REGISTERED_AT, ms(now));
        putIfPresent(item, AgentItems.ALLOW_WORKING, a.workingAllowance());
        putIfPresent(item, AgentItems.ALLOW_INPUT, a.inputAllowance());
        putIfPresent(item, AgentItems.ALLOW_PERSON, a.personAllowance());
        putIfPresent(item, AgentItems.STALL_AFTER_MS, a.stallAfter());
        if (a.onStall() != null) {
            item.put(AgentItems.ON_STALL, s(a.onStall().wire()));
        }
        if (a.schedule() != null) {
            item.put(AgentItems.SCHEDULE, s(a.schedule()));
            item.put(AgentItems.TIME_ZONE, s(a.timeZone()));
        }
        TransactWriteItem live = TransactWriteItem.builder().put(p -> p.tableName(table).item(item)
                .conditionExpression("attribute_not_exists(#pk)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK))).build();
        // The entry is the agent's keys; the condition holds it to the tombstone read above (or to none).
        TransactWriteItem roster = TransactWriteItem.builder().put(p -> {
            p.tableName(ledger).item(Keys.rosterKey(a.team(), a.agentId()));
            if (retired) {
                p.conditionExpression("#last = :last").expressionAttributeNames(Map.of("#last", LAST_SEQ))
                        .expressionAttributeValues(Map.of(":last", n(fromSeq)));
            } else {
                p.conditionExpression("attribute_not_exists(#retired)")
                        .expressionAttributeNames(Map.of("#retired", RETIRED_AT));
            }
        }).build();
        try {
            StoreFailures.call("register the agent", () -> dynamo.transactWriteItems(t -> t.transactItems(live, roster)));
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.cancellationReasons();
            if (!reasons.isEmpty() && Transactions.failedCondition(reasons.get(0))) {
                throw new LifelineException(LifelineException.Kind.CONFLICT, "AGENT_EXISTS",
                        "Agent '" + a.agentId() + "' is already registered");
            }
            if (reasons.stream().anyMatch(Transactions::failedCondition)) {
                throw new LifelineException(LifelineException.Kind.CONFLICT, "AGENT_CHANGED",
                        "Agent '" + a.agentId() + "' was deleted or registered while this registration ran; retry");
            }
            throw Transactions.failure("register the agent", e);
        }
        return AgentItems.toAgent(item);
    }

    /**
     * Deletes an agent that has left or that no revive can bring back ({@code offline} or {@code dead_failed_revive},
     * holding no task): its live item, so no sweep reads it again, and its side data (metadata, checkpoint, last
     * error), in one transaction that also turns its roster entry into a tombstone keeping the id's last seq. The
     * delete is conditional on the seq read first, so a change in between (a join) refuses it. Its history, events and
     * inbox stay on the ledger until their retention ends; the id can be registered again and continues its seq.
     */
    public Agent delete(String team, String agentId, Instant now) {
        Map<String, AttributeValue> item = StoreFailures.call("read the agent", () -> dynamo.getItem(
                r -> r.tableName(table).key(AgentItems.key(team, agentId)).consistentRead(true))).item();
        if (item == null || item.isEmpty()) {
            throw LifelineException.agentNotFound(agentId);
        }
        Agent agent = AgentItems.toAgent(item);
        if (agent.status() != AgentStatus.OFFLINE && agent.status() != AgentStatus.DEAD_FAILED_REVIVE) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "AGENT_NOT_RETIRABLE",
                    "Agent '" + agentId + "' is " + agent.status().wire()
                            + "; only an offline or dead_failed_revive agent can be deleted (leave it first)");
        }
        if (agent.currentTaskId() != null) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "AGENT_HOLDS_TASK",
                    "Agent '" + agentId + "' still holds task '" + agent.currentTaskId()
                            + "'; it is handed back within seconds of the change, retry then");
        }
        long seq = Items.num(item, AgentItems.T_SEQ, 0);
        TransactWriteItem live = TransactWriteItem.builder().delete(d -> d.tableName(table)
                .key(AgentItems.key(team, agentId))
                .conditionExpression("#tseq = :seq AND #status = :status AND attribute_not_exists(#task)")
                .expressionAttributeNames(Map.of("#tseq", AgentItems.T_SEQ, "#status", STATUS,
                        "#task", AgentItems.TASK))
                .expressionAttributeValues(Map.of(":seq", n(seq), ":status", s(agent.status().wire())))).build();
        TransactWriteItem data = TransactWriteItem.builder().delete(d -> d.tableName(ledger)
                .key(AgentDataStore.key(team, agentId))).build();
        Map<String, AttributeValue> tombstone = new HashMap<>(Keys.rosterKey(team, agentId));
        tombstone.put(RETIRED_AT, ms(now));
        tombstone.put(LAST_SEQ, n(seq));
        TransactWriteItem roster = TransactWriteItem.builder().put(p -> p.tableName(ledger).item(tombstone)).build();
        try {
            StoreFailures.call("delete the agent", () -> dynamo.transactWriteItems(t -> t.transactItems(live, data,
                    roster)));
        } catch (TransactionCanceledException e) {
            if (e.cancellationReasons().stream().anyMatch(Transactions::failedCondition)) {
                throw new LifelineException(LifelineException.Kind.CONFLICT, "AGENT_CHANGED",
                        "Agent '" + agentId + "' changed while it was being deleted; read it and retry");
            }
            throw Transactions.failure("delete the agent", e);
        }
        return agent;
    }

    /**
     * An agent as read for showing it, with what its host lease holds of it: {@code leaseBeat}, its entry on the
     * lease its item names (read only while it is alive; null when it names none or the lease has no entry), and
     * {@code lastMissAt}, when the sweep last counted a miss of it (null when none counts). The store reads them; how
     * they judge the agent is {@link io.lifeline.agent.Liveness}'s, asked by the application layer.
     */
    public record Read(Agent agent, Instant leaseBeat, Instant lastMissAt) {
    }

    /**
     * The agent, with its last change whole: once the outbox has published it, the item keeps only its seq and time,
     * and the rest is read from its record on the ledger (one more read; none when the record has passed the
     * history's retention, and the answer then has no last change). Its item alone: see {@link #read} for its lease.
     */
    public Optional<Agent> get(String team, String agentId) {
        return read(team, agentId, true, false).map(Read::agent);
    }

    /**
     * The agent as its live item has it, for a caller that does not show its last change: that change's from,
     * trigger and reason are there only until the outbox has published it ({@link AgentItems#lastTransition}).
     */
    public Agent requireCurrent(String team, String agentId) {
        return read(team, agentId, false, false).map(Read::agent)
                .orElseThrow(() -> LifelineException.agentNotFound(agentId));
    }

    /**
     * The agent as {@link #get} reads it, and, when it is alive and its item names a host lease, that lease's beat of
     * it (one more consistent read).
     */
    public Optional<Read> read(String team, String agentId) {
        return read(team, agentId, true, true);
    }

    /** The agent as {@link #requireCurrent} reads it, with its host lease's beat as {@link #read} reads it. */
    public Optional<Read> readCurrent(String team, String agentId) {
        return read(team, agentId, false, true);
    }

    private Optional<Read> read(String team, String agentId, boolean lastChange, boolean withLease) {
        Map<String, AttributeValue> item = StoreFailures.call("read the agent", () -> dynamo.getItem(
                r -> r.tableName(table).key(AgentItems.key(team, agentId)).consistentRead(true))).item();
        if (item == null || item.isEmpty()) {
            return Optional.empty();
        }
        Agent agent = AgentItems.toAgent(item);
        Transition stamped = agent.lastTransition();
        if (lastChange && stamped != null && !AgentItems.isComplete(stamped)) {
            // Published: its from, trigger and reason are on its ledger record (gone after the history's retention).
            Transition recorded = TransitionLog.recorded(dynamo, ledger, team, agentId, stamped.seq());
            agent = withLastTransition(agent, recorded);
        }
        return Optional.of(withLease ? read(team, agentId, item, agent)
                : new Read(agent, null, Items.instant(item, AgentItems.LAST_MISS_AT)));
    }

    /**
     * The agent {@code item} holds ({@code agent}, as read from it), with its host lease's beat of it when it is
     * alive and names a lease (one more consistent read), as {@link #read} answers.
     */
    private Read read(String team, String agentId, Map<String, AttributeValue> item, Agent agent) {
        Instant leaseBeat = null;
        String hostId = Items.str(item, AgentItems.LEASE);
        if (hostId != null && AgentStatus.fromWire(Items.str(item, STATUS)).map(AgentStatus::isAlive).orElse(false)) {
            Map<String, AttributeValue> lease = StoreFailures.call("read the agent's host lease", () -> dynamo.getItem(
                    r -> r.tableName(table).key(HostLeaseStore.key(team, hostId)).consistentRead(true))).item();
            leaseBeat = HostLeaseStore.beatOf(lease, agentId);
        }
        return new Read(agent, leaseBeat, Items.instant(item, AgentItems.LAST_MISS_AT));
    }

    /** The item a write answered ({@code ALL_NEW}), with its host lease's beat as {@link #read} reads it. */
    private Read read(String team, String agentId, Map<String, AttributeValue> item) {
        return read(team, agentId, item, AgentItems.toAgent(item));
    }

    private static Agent withLastTransition(Agent a, Transition t) {
        return new Agent(a.team(), a.agentId(), a.name(), a.role(), a.hostId(), a.status(), a.heartbeatAt(),
                a.deadline(), a.consecutiveMisses(), a.beats(), a.staleAfter(), a.graceMisses(), a.currentTaskId(),
                a.stats(), a.registeredAt(), t == null ? a.lastTransition() : t, a.pausedUntil(), a.schedule(),
                a.timeZone(), a.waiting(), a.flappingSince(), a.progress(), a.stall(), a.parked());
    }

    public Agent require(String team, String agentId) {
        return get(team, agentId).orElseThrow(() -> LifelineException.agentNotFound(agentId));
    }

    /**
     * The team's agents, optionally only those in {@code status}, ordered by id, each with its host lease's beat of
     * it ({@link Read}): their keys from the team's roster on the ledger (written once, at registration), then the
     * items themselves by BatchGetItem, then the leases they name (each once). An agent's {@code lastTransition} is
     * there only until the outbox has published it (GET agent reads it from the ledger).
     */
    public List<Read> list(String team, AgentStatus status) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (Map<String, AttributeValue> entry : Partitions.withPrefix(dynamo, ledger, Keys.team(team),
                Keys.AGENT_PREFIX, null, "list agents")) {
            if (!entry.containsKey(RETIRED_AT)) {
                keys.add(AgentItems.key(team, Keys.idAfter(Keys.AGENT_PREFIX, Items.str(entry, Keys.SK))));
            }
        }
        List<Read> out = new ArrayList<>();
        List<Map<String, AttributeValue>> items = BatchReads.get(dynamo, table, keys, k -> k, "list agents");
        Map<String, Map<String, AttributeValue>> leaseKeys = new HashMap<>();
        for (Map<String, AttributeValue> item : items) {
            String hostId = Items.str(item, AgentItems.LEASE);
            if (hostId != null) {
                leaseKeys.putIfAbsent(hostId, HostLeaseStore.key(team, hostId));
            }
        }
        Map<String, Map<String, AttributeValue>> leases = new HashMap<>();
        if (!leaseKeys.isEmpty()) {
            for (Map<String, AttributeValue> lease : BatchReads.get(dynamo, table, new ArrayList<>(leaseKeys.values()),
                    k -> k, "list agents")) {
                leases.put(HostLeaseStore.hostId(lease), lease);
            }
        }
        for (Map<String, AttributeValue> item : items) {
            String hostId = Items.str(item, AgentItems.LEASE);
            Agent agent = AgentItems.toAgent(item);
            if (status == null || agent.status() == status) {
                Instant leaseBeat = hostId == null ? null : HostLeaseStore.beatOf(leases.get(hostId), agent.agentId());
                out.add(new Read(agent, leaseBeat, Items.instant(item, AgentItems.LAST_MISS_AT)));
            }
        }
        out.sort(Comparator.comparing((Read r) -> r.agent().agentId()));
        return out;
    }

    /**
     * A heartbeat: one conditional UpdateItem when the status does not change (the common case), so it costs
     * one request and no read. When the agent reports the other alive status, the refused first write
     * returns the current item and a second write makes the change, conditional on the status it saw.
     */
    public Agent heartbeat(Heartbeat hb, Instant now) {
        return heartbeat(hb, now, now, null, null);
    }

    /**
     * A heartbeat whose caller knows the status the agent is likely in ({@code likely}, from what it wrote last): when
     * the beat reports another, the first attempt is already the change from {@code likely}, so a change costs one
     * write, not a refused one and a second. A wrong guess costs what an unknown one does.
     */
    public Agent heartbeat(Heartbeat hb, Instant now, AgentStatus likely) {
        return heartbeat(hb, now, now, null, likely);
    }

    /**
     * A beat through a host lease that must be written to the agent's item (its first through this host, a status
     * change, data sent, or no answer cached on the lease): the heartbeat above, with the sign of life at
     * {@code beatAt} (the agent's last local beat as its daemon reported it, never after {@code now}) and the
     * item naming the lease {@code hostId}, so the sweep judges it from there too.
     */
    public Agent hostedBeat(Heartbeat hb, Instant now, Instant beatAt, String hostId) {
        return heartbeat(hb, now, beatAt, hostId, null);
    }

    private Agent heartbeat(Heartbeat hb, Instant now, Instant beatAt, String hostId, AgentStatus likely) {
        AgentStatus expected = hb.reported() != null && likely != null && likely.isAlive() ? likely : hb.reported();
        Instant at = now;
        for (int attempt = 0; attempt < STATUS_RACE_ATTEMPTS; attempt++) {
            Update u = new Update(table, AgentItems.key(hb.team(), hb.agentId()));
            AgentItems.stampLiveness(u, beatAt, Liveness.due(beatAt, hb.nextWithin(), hb.activity(), hb.allowance()),
                    hb.activity());
            AgentItems.stampProgress(u, beatAt, hb.progress()); // in this write: no extra write unit
            if (hostId != null) {
                u.set(AgentItems.LEASE, s(hostId));
                // A local beat reported late never moves the item's sign of life backwards.
                String hbAt = u.name(AgentItems.HEARTBEAT_AT);
                u.condition("attribute_not_exists(" + hbAt + ") OR " + hbAt + " <= " + u.value(Items.ms(beatAt)));
            }
            AgentItems.stampStats(u, hb.stats());
            AttributeValue address = AgentItems.address(hb.address());
            if (address != null) {
                u.set(AgentItems.SOURCE, address); // in this write: no extra write unit (LiveItemSizeTest)
            }
            if (expected == null || expected == hb.reported()) {
                AgentItems.quiet(u);
                u.condition(u.in(STATUS, List.of(s(AgentStatus.READY.wire()), s(AgentStatus.WORKING.wire()))));
                if (expected != null) {
                    u.condition(u.name(STATUS) + " = " + u.value(s(expected.wire())));
                }
            } else if (expected == AgentStatus.WORKING && hb.reported() == AgentStatus.READY) {
                // working -> ready by report only while no task is held; a held task ends by task_complete,
                // so it can never be left in progress behind an agent that says it is idle.
                u.condition(u.name(STATUS) + " = " + u.value(s(AgentStatus.WORKING.wire())));
                u.condition("attribute_not_exists(" + u.name(AgentItems.HOLD) + ")");
                AgentItems.stampTransition(u, Trigger.REPORT_READY, AgentStatus.READY,
                        "reported by heartbeat (" + hb.source() + ")", at);
            } else {
                u.condition(u.name(STATUS) + " = " + u.value(s(expected.wire())));
                AgentItems.stampTransition(u, TransitionTable.reportTrigger(hb.reported()), hb.reported(),
                        "reported by heartbeat (" + hb.source() + ")", at);
            }
            try {
                Agent after = AgentItems.toAgent(StoreFailures.call("update heartbeat",
                        () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
                return after;
            } catch (ConditionalCheckFailedException e) {
                AgentStatus current = currentStatusOrThrow(e, hb.agentId());
                if (!current.isAlive()) {
                    throw rejoinRequired(current);
                }
                Instant later = AgentItems.laterStamp(e.item(), at);
                if (later != null) {
                    at = later; // a transition committed meanwhile at a later time: this one is not stamped earlier
                }
                Instant newer = Items.instant(e.item(), AgentItems.HEARTBEAT_AT);
                if (hostId != null && newer != null && newer.isAfter(beatAt)) {
                    beatAt = newer; // the agent was heard later (directly): keep that
                }
                // Alive in another status than this attempt assumed: the next attempt starts from there. A
                // working agent that holds a task stays working: the heartbeat only renews its liveness.
                boolean holdsTask = e.item().containsKey(AgentItems.HOLD);
                expected = hb.reported() == null // reports no status: refused only for a newer sign of life
                        || current == AgentStatus.WORKING && hb.reported() == AgentStatus.READY && holdsTask
                        ? null : current;
            }
        }
        throw new LifelineException(LifelineException.Kind.UNAVAILABLE, "CONTENDED",
                "The agent's status kept changing under this heartbeat; retry");
    }

    /**
     * Moves the agent by {@code trigger} if the transition table allows it from its current status.
     * {@code extra} may add writes and conditions; a refused condition is reported as not allowed.
     */
    public Agent transition(String team, String agentId, Trigger trigger, String reason, Instant now,
                            Consumer<Update> extra) {
        return transition(team, agentId, trigger, reason, now, extra, refused -> {
            throw LifelineException.notAllowed(trigger, statusOrThrow(refused, agentId));
        });
    }

    /**
     * {@link #transition(String, String, Trigger, String, Instant, Consumer)}, answering {@code refused} applied to
     * the item as the refused write found it ({@code ALL_OLD}; empty when there is no agent) instead of throwing.
     */
    private Agent transition(String team, String agentId, Trigger trigger, String reason, Instant now,
                             Consumer<Update> extra, Function<Map<String, AttributeValue>, Agent> refused) {
        Written w = transitionItem(team, agentId, trigger, reason, now, extra);
        return w.item() != null ? AgentItems.toAgent(w.item()) : refused.apply(w.refused());
    }

    /** A transition's write: the item as written ({@code ALL_NEW}), or the item as it refused it (empty: none). */
    private record Written(Map<String, AttributeValue> item, Map<String, AttributeValue> refused) {
    }

    private Written transitionItem(String team, String agentId, Trigger trigger, String reason, Instant now,
                                   Consumer<Update> extra) {
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        List<AttributeValue> from = new ArrayList<>();
        rule.from().forEach(status -> from.add(s(status.wire())));
        Instant at = now;
        for (int attempt = 1; ; attempt++) {
            Update u = new Update(table, AgentItems.key(team, agentId));
            u.condition(u.in(STATUS, from));
            AgentItems.stampTransition(u, trigger, rule.to(), reason, at);
            extra.accept(u);
            try {
                Map<String, AttributeValue> after = StoreFailures.call(trigger.wire(),
                        () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes();
                String hostId = Items.str(after, AgentItems.LEASE);
                if (hostId != null && !rule.to().isAlive()) {
                    leases.forget(team, hostId, agentId);
                }
                return new Written(after, null);
            } catch (ConditionalCheckFailedException e) {
                Instant later = AgentItems.laterStamp(e.item(), at);
                if (later == null || attempt >= STATUS_RACE_ATTEMPTS) {
                    return new Written(null, e.item() == null ? Map.of() : e.item());
                }
                at = later; // the previous transition is stamped later than this request's reading: not earlier
            }
        }
    }

    /**
     * Moves the agent by {@code trigger} with no writes beyond the transition itself; for callers outside
     * this package (sweep, revive flow), which cannot name {@link Update}.
     */
    public Agent transition(String team, String agentId, Trigger trigger, String reason, Instant now) {
        return transition(team, agentId, trigger, reason, now, u -> { });
    }

    public Agent join(String team, String agentId, Instant now) {
        return AgentItems.toAgent(joinItem(team, agentId, now));
    }

    /** {@link #join}, answered as {@link #read} reads the agent after it: with its host lease's beat of it. */
    public Read joinAndRead(String team, String agentId, Instant now) {
        return read(team, agentId, joinItem(team, agentId, now));
    }

    private Map<String, AttributeValue> joinItem(String team, String agentId, Instant now) {
        // A new life holds nothing: a task an earlier life held is that life's, handed back by the outbox from
        // the record of its end (the item's taskId is only what it was on, shown until then).
        Written w = transitionItem(team, agentId, Trigger.JOIN, "agent joined", now, u -> {
            AgentItems.stampLiveness(u, now);
            u.remove(AgentItems.HOLD).remove(AgentItems.TASK);
        });
        if (w.item() == null) {
            throw LifelineException.notAllowed(Trigger.JOIN, statusOrThrow(w.refused(), agentId));
        }
        return w.item();
    }

    /**
     * Sets the deadline of the sign of life just written ({@code after}) to {@code deadline} (null: none), as
     * {@link io.lifeline.agent.Liveness#scheduled} gives it for an agent on a schedule (the beat's write stored its
     * stale-after's, as it cannot read the schedule). Conditional on the heartbeat count, so a newer heartbeat's
     * deadline is never overwritten; nothing is written when the item already holds it. Costs a second write, for
     * scheduled agents only.
     */
    public Agent writeDeadline(Agent after, Instant deadline) {
        if (Objects.equals(deadline, after.deadline())) {
            return after;
        }
        Update u = new Update(table, AgentItems.key(after.team(), after.agentId()));
        u.condition(u.name(AgentItems.BEATS) + " = " + u.value(n(after.beats())));
        AgentItems.quiet(u);
        if (deadline == null) {
            u.remove(AgentItems.DEADLINE);
        } else {
            u.set(AgentItems.DEADLINE, ms(deadline));
        }
        try {
            return AgentItems.toAgent(StoreFailures.call("set the scheduled deadline",
                    () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException newerBeat) {
            return after;
        }
    }

    /**
     * Leaves; the write ends the agent's hold on its task (so no complete is accepted from this life any more),
     * and the task it was on stays named on the returned item for the caller to hand back.
     */
    public Agent leave(String team, String agentId, String reason, Instant now) {
        return transition(team, agentId, Trigger.LEAVE, reason == null ? "agent left" : reason, now, u -> { });
    }

    public Agent cleanup(String team, String agentId, String reason, Instant now) {
        return transition(team, agentId, Trigger.CLEANUP, reason == null ? "cleaned up by operator" : reason, now,
                u -> { });
    }

    /** A host reports its agent crashed: alive -> dead at once. */
    public Agent fail(String team, String agentId, String reason, Instant now) {
        return fail(team, agentId, reason, now, null);
    }

    /**
     * A host reports its agent crashed: alive -> dead at once; {@code cause}, when its lease is silent (the caller
     * asked {@link #hostSilence}), stamps the death as part of the host's incident, as the sweep's deaths are.
     */
    public Agent fail(String team, String agentId, String reason, Instant now,
                      HostIncidents.Cause cause) {
        return fail(team, agentId, reason, now, cause, null, null);
    }

    /**
     * As {@link #fail(String, String, String, Instant, HostIncidents.Cause)}, from a host daemon that restarts the
     * agent itself: {@code hostRestartUntil} (null: it does not) is its claim on the restart, which the revive flow's
     * first write respects ({@link #restartInitiated}); {@code restartsLastHour} (null: not told) is the daemon's own
     * restarts of the agent, kept as its stats are. Both ride on the death's one conditional write.
     */
    public Agent fail(String team, String agentId, String reason, Instant now, HostIncidents.Cause cause,
                      Instant hostRestartUntil, Long restartsLastHour) {
        return transition(team, agentId, Trigger.REPORTED_FAILURE, reason == null ? "failure reported by host" : reason,
                now, u -> {
                    stampCause(u, cause);
                    if (hostRestartUntil != null) {
                        u.set(AgentItems.HOST_RESTART, ms(hostRestartUntil));
                    } else {
                        u.remove(AgentItems.HOST_RESTART);
                    }
                    AgentItems.stampStats(u, AgentStats.restarts(restartsLastHour));
                });
    }

    /** A host stopped restarting its crash-looping agent: alive, dead or restarting -> dead_failed_revive at once. */
    public Agent giveUp(String team, String agentId, String reason, Instant now) {
        return giveUp(team, agentId, reason, now, null);
    }

    /** As {@link #giveUp(String, String, String, Instant)}, stamped with its lease's silence as {@link #fail} is. */
    public Agent giveUp(String team, String agentId, String reason, Instant now,
                        HostIncidents.Cause cause) {
        return giveUp(team, agentId, reason, now, cause, null);
    }

    /** As {@link #giveUp(String, String, String, Instant, HostIncidents.Cause)}, with the daemon's own restarts. */
    public Agent giveUp(String team, String agentId, String reason, Instant now, HostIncidents.Cause cause,
                        Long restartsLastHour) {
        return transition(team, agentId, Trigger.HOST_GAVE_UP, reason == null ? "host gave up restarting it" : reason,
                now, u -> {
                    stampCause(u, cause);
                    AgentItems.stampStats(u, AgentStats.restarts(restartsLastHour));
                });
    }

    private static void stampCause(Update u, HostIncidents.Cause cause) {
        if (cause != null) {
            AgentItems.stampHostCause(u, cause);
        }
    }

    /**
     * The silence of the lease the agent beats through, when that lease is flagged expired and not renewed since
     * (docs/alerts-noise.md): a death reported then is part of the host's incident. Two small reads (the agent's
     * link, then its lease), which the failure report's use case makes before its write (the write itself reads
     * nothing); null for an agent with no lease. A stale answer only labels the death's alerts, never its status.
     */
    public HostIncidents.Cause hostSilence(String team, String agentId) {
        Map<String, AttributeValue> item = StoreFailures.call("read the agent's lease link", () -> dynamo.getItem(
                r -> r.tableName(table).key(AgentItems.key(team, agentId)).projectionExpression("#l")
                        .expressionAttributeNames(Map.of("#l", AgentItems.LEASE)))).item();
        String hostId = item == null ? null : Items.str(item, AgentItems.LEASE);
        if (hostId == null) {
            return null;
        }
        Map<String, AttributeValue> lease = StoreFailures.call("read the agent's host lease", () -> dynamo.getItem(
                r -> r.tableName(table).key(HostLeaseStore.key(team, hostId)).consistentRead(true)
                        .projectionExpression("#at, #exp").expressionAttributeNames(Map.of(
                                "#at", HostLeaseStore.RENEWED_AT, "#exp", HostLeaseStore.EXPIRED_AT)))).item();
        Instant flagged = lease == null ? null : Items.instant(lease, HostLeaseStore.EXPIRED_AT);
        Instant renewed = lease == null ? null : Items.instant(lease, HostLeaseStore.RENEWED_AT);
        if (flagged == null || (renewed != null && renewed.isAfter(flagged))) {
            return null;
        }
        return new HostIncidents.Cause(hostId, flagged);
    }

    /**
     * Holds back the sweep's dead-marking of this agent until {@code until} (a maintenance window). The
     * reason, if any, is kept with the agent's side data by the caller: the agent item stays small. Answered as
     * {@link #read} reads the agent after it (with its host lease's beat of it), for the application layer to judge.
     */
    public Read pause(String team, String agentId, Instant until) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.set(AgentItems.PAUSED_UNTIL, ms(until));
        AgentItems.quiet(u);
        return write("pause the agent", team, agentId, u);
    }

    /** Ends the agent's pause; answered as {@link #pause} is. */
    public Read resume(String team, String agentId) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.remove(AgentItems.PAUSED_UNTIL);
        AgentItems.quiet(u);
        return write("resume the agent", team, agentId, u);
    }

    /** The write, answered as {@link #read} reads the agent after it: with its host lease's beat of it. */
    private Read write(String what, String team, String agentId, Update u) {
        try {
            return read(team, agentId, StoreFailures.call(what, () -> dynamo.updateItem(
                    u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException e) {
            throw LifelineException.agentNotFound(agentId);
        }
    }

    /**
     * The revive flow's own transitions (restart_initiated, restart_exhausted): allowed by the table and
     * conditional on the transition seq the flow was started for, so two executions for the same death,
     * or a flow that lost a race with a join, can never both act. Empty when the condition refused.
     */
    public Optional<Agent> reviveStep(String team, String agentId, Trigger trigger, long expectedSeq, String reason,
                                      Instant now) {
        try {
            return Optional.of(transition(team, agentId, trigger, reason, now,
                    u -> u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(expectedSeq)))));
        } catch (LifelineException e) {
            if (e.kind() == LifelineException.Kind.CONFLICT) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * The revive flow's first step: dead -> restarting ({@code restart_initiated}), conditional as
     * {@link #reviveStep}, stamping in the same write the first restart command the flow issues (its id from
     * {@link HostCommandStore#commandId}), so the transition and the request reach the bus from one stream record;
     * the caller then puts the command itself ({@link HostCommandStore#issueRestart} with {@code stampedAlready});
     * {@code commandExpiry} is the command's ({@link HostCommandStore#expiry}; null without a host).
     */
    public Initiation restartInitiated(String team, String agentId, long expectedSeq, String reason,
                                       Long commandExpiry, String hostId, String commandReason,
                                       Instant now) {
        String commandId = HostCommandStore.commandId(agentId, expectedSeq, 1);
        Instant[] held = new Instant[1];
        Agent restarting = transition(team, agentId, Trigger.RESTART_INITIATED, reason, now, u -> {
            u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(expectedSeq)));
            // The host daemon that reported this death restarts the agent itself: not before its claim lapses.
            String claim = u.name(AgentItems.HOST_RESTART);
            u.condition("attribute_not_exists(" + claim + ") OR " + claim + " <= " + u.value(ms(now)));
            if (hostId != null) {
                u.set(AgentItems.RESTART_COMMAND, HostCommandStore.commandStamp(commandId, hostId, 1,
                        commandReason, now, commandExpiry));
            }
        }, old -> {
            statusOrThrow(old, agentId);
            Instant until = Items.instant(old, AgentItems.HOST_RESTART);
            boolean standing = Items.num(old, AgentItems.T_SEQ, 0) == expectedSeq && until != null
                    && until.isAfter(now) && AgentStatus.DEAD.wire().equals(Items.str(old, STATUS));
            held[0] = standing ? until : null;
            return null;
        });
        return new Initiation(restarting, held[0]);
    }

    /**
     * What the revive flow's first write did: {@code restarting}, the agent it moved to restarting, or null when the
     * write was refused; then {@code hostRestartUntil} is the standing claim of the host daemon that reported the
     * death and restarts the agent itself (the flow waits until then), or null (the death is not the flow's to act on,
     * or the write is being retried: the caller reads the agent to tell).
     */
    public record Initiation(Agent restarting, Instant hostRestartUntil) {
        /** The agent it moved to restarting, if the write was made. */
        public Optional<Agent> written() {
            return Optional.ofNullable(restarting);
        }
    }

    /**
     * Finishes a published change on the agent item in one quiet write: the published watermark moves to {@code seq};
     * when {@code seq} is still the newest transition, its details and the bus-only stamps
     * ({@link AgentItems#PUBLISHED_DETAILS}) go, since its record on the ledger has them; and when {@code taskId} is
     * given, the task the stopped life was on is cleared (as {@link #clearTask}). A part whose condition no longer
     * holds (a newer transition, a new claim) is left out of a second write, decided from the refused write's image.
     */
    public void finishChange(String team, String agentId, long seq, String taskId) {
        finishChange(team, agentId, seq, taskId, false, null);
    }

    /**
     * {@link #finishChange(String, String, long, String)}, and when {@code flapKnown}, the agent's flapping mark set
     * to {@code flappingSince} (null: removed; docs/alerts-noise.md).
     */
    public void finishChange(String team, String agentId, long seq, String taskId, boolean flapKnown,
                             Instant flappingSince) {
        boolean details = true;
        boolean task = taskId != null;
        for (int attempt = 0; attempt < 3; attempt++) {
            Update u = publishedWrite(team, agentId, seq);
            u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
            if (!flapKnown) {
                // leave the mark as it is
            } else if (flappingSince != null) {
                u.set(AgentItems.FLAPPING, n(flappingSince.toEpochMilli()));
            } else {
                u.remove(AgentItems.FLAPPING);
            }
            if (details) {
                u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(seq)));
                AgentItems.PUBLISHED_DETAILS.forEach(u::remove);
            }
            if (task) {
                u.remove(AgentItems.TASK);
                u.condition(u.name(AgentItems.TASK) + " = " + u.value(s(taskId)));
                u.condition("attribute_not_exists(" + u.name(AgentItems.HOLD) + ")");
            }
            try {
                StoreFailures.call("finish the change", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
                return;
            } catch (ConditionalCheckFailedException e) {
                Map<String, AttributeValue> old = e.item();
                if (old == null || old.isEmpty() || Items.num(old, AgentItems.PUBLISHED_SEQ, 0) >= seq) {
                    return; // the agent is gone, or a later transition is published already
                }
                details = details && Items.num(old, AgentItems.T_SEQ, 0) == seq;
                task = task && taskId.equals(Items.str(old, AgentItems.TASK)) && !old.containsKey(AgentItems.HOLD);
            }
        }
    }

    /**
     * Removes the agent's flapping mark if it is still the flag of {@code since} (the flapping resolve; docs/
     * alerts-noise.md): a quiet conditional write; nothing if the agent is gone or carries another mark.
     */
    public void clearFlapping(String team, String agentId, Instant since) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.remove(AgentItems.FLAPPING);
        AgentItems.quiet(u);
        u.condition(u.name(AgentItems.FLAPPING) + " = " + u.value(n(since.toEpochMilli())));
        try {
            StoreFailures.call("clear the flapping mark", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException notThisFlag) {
            // gone, or marked by another flag
        }
    }

    /** The quiet write that moves the published watermark to {@code seq}, unless a later one is there. */
    private Update publishedWrite(String team, String agentId, long seq) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.set(AgentItems.PUBLISHED_SEQ, n(seq));
        AgentItems.quiet(u);
        String ps = u.name(AgentItems.PUBLISHED_SEQ);
        u.condition("attribute_not_exists(" + ps + ") OR " + ps + " < " + u.value(n(seq)));
        return u;
    }

    /** Clears the agent's task if it is still {@code taskId} and the agent's current life does not hold it. */
    public void clearTask(String team, String agentId, String taskId) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.remove(AgentItems.TASK);
        AgentItems.quiet(u);
        u.condition(u.name(AgentItems.TASK) + " = " + u.value(s(taskId)));
        // The fence marks the task TASK names, so "not holding that task" is "no fence" once TASK names it.
        u.condition("attribute_not_exists(" + u.name(AgentItems.HOLD) + ")");
        try {
            StoreFailures.call("clear the agent's task", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
        } catch (ConditionalCheckFailedException e) {
            // Someone else moved on (a new claim, or it was already cleared): nothing to do.
        }
    }

    static AgentStatus currentStatusOrThrow(ConditionalCheckFailedException e, String agentId) {
        return statusOrThrow(e.item(), agentId);
    }

    /** The status on a refused write's image of the agent, or agent-not-found when there is none. */
    static AgentStatus statusOrThrow(Map<String, AttributeValue> old, String agentId) {
        if (old == null || old.isEmpty()) {
            throw LifelineException.agentNotFound(agentId);
        }
        return AgentStatus.fromWire(old.get(STATUS).s()).orElseThrow();
    }

    /**
     * The refusal of a heartbeat from an agent that is not alive, in the API's words: its status, what that means and
     * what to do (join); the SDK then joins again. The MCP heartbeat tool words the same refusal as the heartbeat
     * protocol's error table, which its callers match (LifelineTools).
     */
    static LifelineException rejoinRequired(AgentStatus current) {
        String message = "The agent is " + current.wire() + " (" + current.meaning() + "), so its beats are refused: "
                + "it must join again before it beats";
        return new LifelineException(LifelineException.Kind.CONFLICT, "REJOIN_REQUIRED", message, current, null);
    }
}
