package io.lifeline.store.agent;

import static io.lifeline.store.agent.AgentItems.STATUS;
import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

/**
 * An agent's writes on its live item after it is registered: the heartbeat, the transitions of its lifecycle (join,
 * leave, clean-up, a reported failure, a host's give-up), the scheduled deadline, a pause and its end. Every status
 * change is one conditional write whose condition is the transition table's from-states; it stamps the transition on
 * the item, and the table's stream (the outbox) turns the stamp into a history record and an event. Nothing here
 * reads before it writes: a refused condition returns the current item ({@code ALL_OLD}), which says why. The
 * roster and the reads are {@link AgentStore}'s, the revive flow's steps {@link ReviveTransitions}'s, and what the
 * outbox marks once a change is published {@link io.lifeline.store.outbox.OutboxMarks}'.
 */
public final class AgentWrites {
    /** How often a heartbeat retries after losing a race with another status change. */
    private static final int STATUS_RACE_ATTEMPTS = 5;

    private final DynamoDbClient dynamo;
    private final String table;
    private final HostLeaseStore leases;
    /** Reads an item a write answered back as {@link AgentStore#read} answers (with its host lease's beat). */
    private final AgentStore reads;

    public AgentWrites(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.leases = new HostLeaseStore(dynamo, tables);
        this.reads = new AgentStore(dynamo, tables);
    }

    /**
     * A heartbeat: one conditional UpdateItem when the status does not change (the common case), so it costs
     * one request and no read. When the agent reports the other alive status, the refused first write
     * returns the current item and a second write makes the change, conditional on the status it saw.
     */
    public Agent heartbeat(Heartbeat hb, Instant now) {
        return heartbeat(hb, now, now, null, null, null, null).agent();
    }

    /**
     * A heartbeat whose caller knows the status the agent is likely in ({@code likely}, from what it wrote last): when
     * the beat reports another, the first attempt is already the change from {@code likely}, so a change costs one
     * write, not a refused one and a second. A wrong guess costs what an unknown one does.
     */
    public Agent heartbeat(Heartbeat hb, Instant now, AgentStatus likely) {
        return heartbeat(hb, now, now, null, likely, null, null).agent();
    }

    /**
     * A hook's beat as {@link #heartbeat(Heartbeat, Instant, AgentStatus)} writes it, coalesced on the item
     * ({@link HookStamp}): a repeat of the state the item's last hook write wrote less than {@code window} ago is
     * refused by the write's condition and writes nothing ({@code written} false, {@code hookAt} that write's time,
     * {@code agent} the item as it is). {@code window} null: never coalesced.
     */
    public Hooked hookBeat(Heartbeat hb, Instant now, AgentStatus likely, Duration window) {
        return heartbeat(hb, now, now, null, likely, window, null);
    }

    /** What a hook's beat did: written at {@code hookAt}, or coalesced with the hook write at {@code hookAt}. */
    public record Hooked(Agent agent, boolean written, Instant hookAt) {
    }

    /**
     * A beat through a host lease that must be written to the agent's item (its first through this host, a status
     * change, data sent, or no answer cached on the lease): the heartbeat above, with the sign of life at
     * {@code beatAt} (the agent's last local beat as its daemon reported it, never after {@code now}) and the
     * item naming the lease {@code hostId}, so the sweep judges it from there too.
     */
    public Agent hostedBeat(Heartbeat hb, Instant now, Instant beatAt, String hostId) {
        return hostedBeat(hb, now, beatAt, hostId, null);
    }

    /**
     * {@link #hostedBeat(Heartbeat, Instant, Instant, String)} with the host daemon's stall judgement when it changed
     * ({@code stalled}: true, stalled since {@code now}; false, no longer; null: not sent), in the same write
     * ({@link AgentItems#stampStall}): a stall costs no write of its own, only its change does.
     */
    public Agent hostedBeat(Heartbeat hb, Instant now, Instant beatAt, String hostId, Boolean stalled) {
        return heartbeat(hb, now, beatAt, hostId, null, null, stalled).agent();
    }

    private Hooked heartbeat(Heartbeat hb, Instant now, Instant beatAt, String hostId, AgentStatus likely,
                             Duration coalesce, Boolean stalled) {
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
            if (coalesce != null) {
                HookStamp.coalesce(u, hb, now, coalesce);
            }
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
            AgentItems.stampStall(u, now, stalled);
            try {
                Agent after = AgentItems.toAgent(StoreFailures.call("update heartbeat",
                        () -> dynamo.updateItem(u.request(ReturnValue.ALL_NEW))).attributes());
                return new Hooked(after, true, now);
            } catch (ConditionalCheckFailedException e) {
                Instant repeated = coalesce == null ? null : HookStamp.repeatOf(e.item(), hb, now, coalesce);
                if (repeated != null) {
                    return new Hooked(AgentItems.toAgent(e.item()), false, repeated);
                }
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
    Agent transition(String team, String agentId, Trigger trigger, String reason, Instant now,
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

    /** {@link #join}, answered as {@link AgentStore#read} reads the agent after it: with its lease's beat of it. */
    public AgentStore.Read joinAndRead(String team, String agentId, Instant now) {
        return reads.read(team, agentId, joinItem(team, agentId, now));
    }

    private Map<String, AttributeValue> joinItem(String team, String agentId, Instant now) {
        // A new life holds nothing: a task an earlier life held is that life's, handed back by the outbox from
        // the record of its end (the item's taskId is only what it was on, shown until then).
        Written w = transitionItem(team, agentId, Trigger.JOIN, "agent joined", now, u -> {
            AgentItems.stampLiveness(u, now);
            u.remove(AgentItems.HOLD).remove(AgentItems.TASK);
            AgentItems.endStall(u); // an earlier life's stall ends with it (its AgentProgressResumed, if still raised)
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
     * asked {@link AgentStore#hostSilence}), stamps the death as part of the host's incident, as the sweep's deaths
     * are.
     */
    public Agent fail(String team, String agentId, String reason, Instant now,
                      HostIncidents.Cause cause) {
        return fail(team, agentId, reason, now, cause, null, null);
    }

    /**
     * As {@link #fail(String, String, String, Instant, HostIncidents.Cause)}, from a host daemon that restarts the
     * agent itself: {@code hostRestartUntil} (null: it does not) is its claim on the restart, which the revive flow's
     * first write respects ({@link ReviveTransitions#restartInitiated}); {@code restartsLastHour} (null: not told) is
     * the daemon's own restarts of the agent, kept as its stats are. Both ride on the death's one conditional write.
     */
    public Agent fail(String team, String agentId, String reason, Instant now, HostIncidents.Cause cause,
                      Instant hostRestartUntil, Long restartsLastHour) {
        return fail(team, agentId, reason, now, cause, hostRestartUntil, restartsLastHour, null);
    }

    /**
     * As above; {@code stall} (null: a crash) when the host daemon stopped the agent because it stalled: the death's
     * trigger is then {@code stalled}, and the same write raises the stall with that reason ({@code AgentStalled},
     * unless one is raised already), as the sweep's own stall restart does. An agent the server still has as
     * {@code ready} (the daemon's turn began after its last beat) dies as a reported failure, the stall raised all the
     * same: the table takes {@code stalled} from {@code working} only.
     */
    public Agent fail(String team, String agentId, String reason, Instant now, HostIncidents.Cause cause,
                      Instant hostRestartUntil, Long restartsLastHour, String stall) {
        Consumer<Update> extra = u -> {
            stampCause(u, cause);
            if (hostRestartUntil != null) {
                u.set(AgentItems.HOST_RESTART, ms(hostRestartUntil));
            } else {
                u.remove(AgentItems.HOST_RESTART);
            }
            AgentItems.stampStats(u, AgentStats.restarts(restartsLastHour));
            if (stall != null) {
                u.set(AgentItems.PROGRESS_WHY, s(stall));
                AgentItems.raiseStall(u, now); // the transition's outbox mark carries it
            }
        };
        String why = reason == null ? "failure reported by host" : reason;
        if (stall == null) {
            return transition(team, agentId, Trigger.REPORTED_FAILURE, why, now, extra);
        }
        return transition(team, agentId, Trigger.STALLED, why, now, extra, refused -> {
            AgentStatus current = statusOrThrow(refused, agentId);
            if (current != AgentStatus.READY) {
                throw LifelineException.notAllowed(Trigger.REPORTED_FAILURE, current);
            }
            return transition(team, agentId, Trigger.REPORTED_FAILURE, why, now, extra);
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
     * Holds back the sweep's dead-marking of this agent until {@code until} (a maintenance window). The
     * reason, if any, is kept with the agent's side data by the caller: the agent item stays small. Answered as
     * {@link AgentStore#read} reads the agent after it (with its host lease's beat of it), for the application layer
     * to judge.
     */
    public AgentStore.Read pause(String team, String agentId, Instant until) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.set(AgentItems.PAUSED_UNTIL, ms(until));
        AgentItems.quiet(u);
        return write("pause the agent", team, agentId, u);
    }

    /** Ends the agent's pause; answered as {@link #pause} is. */
    public AgentStore.Read resume(String team, String agentId) {
        Update u = new Update(table, AgentItems.key(team, agentId));
        u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
        u.remove(AgentItems.PAUSED_UNTIL);
        AgentItems.quiet(u);
        return write("resume the agent", team, agentId, u);
    }

    /** The write, answered as {@link AgentStore#read} reads the agent after it: with its host lease's beat of it. */
    private AgentStore.Read write(String what, String team, String agentId, Update u) {
        try {
            return reads.read(team, agentId, StoreFailures.call(what, () -> dynamo.updateItem(
                    u.request(ReturnValue.ALL_NEW))).attributes());
        } catch (ConditionalCheckFailedException e) {
            throw LifelineException.agentNotFound(agentId);
        }
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
    }}
