package io.lifeline.store.agent;

import static io.lifeline.store.agent.AgentItems.STATUS;
import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.Transition;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Agents in DynamoDB: the roster (registering an agent, deleting it) and the reads of an agent. Its writes after
 * registration are {@link AgentWrites}' (every status change one conditional write, stamped for the outbox), the revive
 * flow's {@link ReviveTransitions}', and what the outbox marks once a change is published
 * {@link io.lifeline.store.outbox.OutboxMarks}'.
 */
public final class AgentStore {
    /** A deleted agent's roster entry (a tombstone): when it was deleted, and its id's last transition seq. */
    static final String RETIRED_AT = "retiredAt";
    static final String LAST_SEQ = "lastSeq";

    private final DynamoDbClient dynamo;
    private final String table;
    private final String ledger;

    public AgentStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.ledger = tables.ledger();
    }

    private static void putIfPresent(Map<String, AttributeValue> item, String attribute, Duration d) {
        if (d != null) {
            item.put(attribute, n(d.toMillis()));
        }
    }

    /**
     * Registers the agent: its live item and its entry in the team's roster on the ledger ({@link Keys#rosterKey}),
     * which lists the team's agents, in one transaction. The roster entry is the agent's keys and its status
     * ({@link RosterIndex}: offline now, moved by the outbox with each transition it records), so the live item carries
     * no index keys (the sweep reads every byte of it) and no heartbeat writes anything else.
     */
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
            p.tableName(ledger).item(RosterIndex.entry(a.team(), a.agentId(), now, fromSeq));
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
    Read read(String team, String agentId, Map<String, AttributeValue> item) {
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
}
