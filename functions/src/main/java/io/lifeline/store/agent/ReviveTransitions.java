package io.lifeline.store.agent;

import static io.lifeline.store.agent.AgentItems.STATUS;
import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Trigger;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Tables;
import java.time.Instant;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The revive flow's own writes on the agent's item: its transitions ({@code restart_initiated},
 * {@code restart_exhausted}), each conditional on the transition seq the flow was started for, made as
 * {@link AgentWrites} makes every transition.
 */
public final class ReviveTransitions {
    private final AgentWrites writes;

    public ReviveTransitions(DynamoDbClient dynamo, Tables tables) {
        this.writes = new AgentWrites(dynamo, tables);
    }

    /**
     * The revive flow's own transitions (restart_initiated, restart_exhausted): allowed by the table and
     * conditional on the transition seq the flow was started for, so two executions for the same death,
     * or a flow that lost a race with a join, can never both act. Empty when the condition refused.
     */
    public Optional<Agent> reviveStep(String team, String agentId, Trigger trigger, long expectedSeq, String reason,
                                      Instant now) {
        try {
            return Optional.of(writes.transition(team, agentId, trigger, reason, now,
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
        Agent restarting = writes.transition(team, agentId, Trigger.RESTART_INITIATED, reason, now, u -> {
            u.condition(u.name(AgentItems.T_SEQ) + " = " + u.value(n(expectedSeq)));
            // The host daemon that reported this death restarts the agent itself: not before its claim lapses.
            String claim = u.name(AgentItems.HOST_RESTART);
            u.condition("attribute_not_exists(" + claim + ") OR " + claim + " <= " + u.value(ms(now)));
            if (hostId != null) {
                u.set(AgentItems.RESTART_COMMAND, HostCommandStore.commandStamp(commandId, hostId, 1,
                        commandReason, now, commandExpiry));
            }
        }, old -> {
            AgentWrites.statusOrThrow(old, agentId);
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
    }}
