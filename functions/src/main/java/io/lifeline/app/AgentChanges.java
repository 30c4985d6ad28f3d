package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.ErrorClassifier;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.team.TeamStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * An agent's lifecycle, the one use case behind every route that changes an agent: register, join, leave (its task
 * handed back), clean up, delete, a host's failure report or give-up, pause and resume, and an error it reports.
 * The changes whose answer shows the agent (join, pause, resume) are answered as {@code GET} shows it: the store
 * writes and answers the item with its host lease's beat of it, and {@link Liveness#shown} judges it
 * ({@link AgentQueries}), so a hosted agent's answer never differs from the {@code GET} that follows. A sign of life
 * of an agent on a schedule is followed by the deadline {@link Liveness#scheduled} gives it ({@link #followSchedule}).
 * The hand-back of a stopped agent's task is this class's ({@link #handBack}): the task store and the agent store
 * each write their own item, and neither takes the other.
 */
public final class AgentChanges {
    /** An agent that left, and the task it held that went back to pending (empty when none). */
    public record Left(Agent agent, List<String> tasksHandedBack) {
    }

    private final AgentStore agents;
    private final AgentWrites writes;
    private final AgentDataStore data;
    private final TaskStore tasks;
    private final TeamStore teams;

    public AgentChanges(AgentStore agents, AgentWrites writes, AgentDataStore data, TaskStore tasks,
                        TeamStore teams) {
        this.agents = agents;
        this.writes = writes;
        this.data = data;
        this.tasks = tasks;
        this.teams = teams;
    }

    /**
     * Registers {@code a}; an allowance it leaves null is the team's (one read of the team's settings, at
     * registration only, and none when the agent gives all three).
     */
    public Agent register(NewAgent a, Instant now) {
        NewAgent full = a;
        if (a.workingAllowance() == null || a.inputAllowance() == null || a.personAllowance() == null
                || a.stallAfter() == null || a.onStall() == null) {
            // The team's allowances and stall rule, for those the agent does not give (one read, at registration).
            TeamSettings team = teams.get(a.team());
            full = new NewAgent(a.team(), a.agentId(), a.name(), a.role(), a.hostId(), a.staleAfter(),
                    a.graceMisses(), a.schedule(), a.timeZone(),
                    a.workingAllowance() != null ? a.workingAllowance() : team.workingAllowance(),
                    a.inputAllowance() != null ? a.inputAllowance() : team.inputAllowance(),
                    a.personAllowance() != null ? a.personAllowance() : team.personAllowance(),
                    a.stallAfter() != null ? a.stallAfter() : team.stallAfter(),
                    a.onStall() != null ? a.onStall() : team.onStall());
        }
        return agents.register(full, now);
    }

    /**
     * Deletes an agent that left or that no revive can bring back: nothing of it is swept again (its live item and
     * side data go; its history stays for its retention).
     */
    public Agent delete(String team, String agentId, Instant now) {
        return agents.delete(team, agentId, now);
    }

    /** The agent leaves (offline), and the task it held goes back to pending ({@link #handBack}). */
    public Left leave(String team, String agentId, String reason, Instant now) {
        Agent after = writes.leave(team, agentId, reason, now);
        return new Left(after, handBack(after, now));
    }

    /** An admin cleans up an agent (offline, whatever its status). */
    public Agent cleanup(String team, String agentId, String reason, Instant now) {
        return writes.cleanup(team, agentId, reason, now);
    }

    /**
     * A host reports its agent crashed (dead, reported_failure): {@code restartIn}, when given, is the host's claim on
     * the restart ({@link Liveness#hostRestartClaim}), {@code restarts} its own restarts of the agent in the last
     * hour. While the agent's lease is silent, its reported death belongs to the host's incident
     * (docs/alerts-noise.md): {@link AgentStore#hostSilence} reads it first.
     */
    public Agent fail(String team, String agentId, String reason, Duration restartIn, Long restarts, Instant now) {
        return fail(team, agentId, reason, restartIn, restarts, null, now);
    }

    /**
     * As above; {@code stall} (null: a crash) when the host stopped the agent because it stalled, and why: a death
     * with trigger {@code stalled} that raises the stall in the same write ({@link AgentWrites#fail}).
     */
    public Agent fail(String team, String agentId, String reason, Duration restartIn, Long restarts, String stall,
                      Instant now) {
        HostIncidents.Cause cause = agents.hostSilence(team, agentId);
        return writes.fail(team, agentId, reason, now, cause,
                restartIn == null ? null : Liveness.hostRestartClaim(now, restartIn), restarts, stall);
    }

    /** The runtime's process is gone without its session's end: a reported failure with no claim and no cause. */
    public Agent fail(String team, String agentId, String reason, Instant now) {
        return writes.fail(team, agentId, reason, now);
    }

    /** A host stopped restarting the agent after a crash loop (dead_failed_revive, host_gave_up). */
    public Agent giveUp(String team, String agentId, String reason, Long restarts, Instant now) {
        HostIncidents.Cause cause = agents.hostSilence(team, agentId);
        return writes.giveUp(team, agentId, reason, now, cause, restarts);
    }

    /** An error the agent reports: classified, its record kept with the agent's side data. */
    public ErrorClassifier.Classification reportError(String team, String agentId, String message, Instant now) {
        ErrorClassifier.Classification c = ErrorClassifier.classify(message);
        data.recordError(team, agentId, message, c.category(), now);
        return c;
    }

    /**
     * Hands back the task an agent held when it stopped being alive, then clears it from the agent. Stamped with the
     * stop's own time, as the outbox's hand-back for the same stop is: whichever runs second finds it done for that
     * stop and changes nothing.
     */
    public List<String> handBack(Agent stopped, Instant now) {
        String taskId = stopped.currentTaskId();
        if (taskId == null) {
            return List.of();
        }
        Instant stop = stopped.lastTransition() == null ? now : stopped.lastTransition().at();
        boolean handed = tasks.handBack(stopped.team(), taskId, stopped.agentId(), stop);
        writes.clearTask(stopped.team(), stopped.agentId(), taskId);
        return handed ? List.of(taskId) : List.of();
    }

    /** The agent joins (a new life), due again as its schedule or its stale-after says; answered as shown. */
    public Agent join(String team, String agentId, Instant now) {
        AgentStore.Read read = writes.joinAndRead(team, agentId, now);
        Agent after = followSchedule(writes, read.agent(), null);
        return AgentQueries.shown(new AgentStore.Read(after, read.leaseBeat(), read.lastMissAt()));
    }

    /**
     * The agent joins again without an answer (a hook's proof of life after a 409 rejoinRequired): one write, then
     * its schedule's deadline ({@link #followSchedule}).
     */
    Agent rejoin(String team, String agentId, Instant now) {
        return followSchedule(writes, writes.join(team, agentId, now), null);
    }

    /** Holds back the sweep's dead-marking of the agent until {@code until}; answered as shown. */
    public Agent pause(String team, String agentId, Instant until) {
        return AgentQueries.shown(writes.pause(team, agentId, until));
    }

    /** As above, its reason (or none) kept with the agent's side data, not on its item (which stays small). */
    public Agent pause(String team, String agentId, Instant until, String reason) {
        Agent after = pause(team, agentId, until);
        data.savePauseReason(team, agentId, reason);
        return after;
    }

    /** Ends the agent's pause and forgets its reason; answered as shown. */
    public Agent resume(String team, String agentId) {
        Agent after = AgentQueries.shown(writes.resume(team, agentId));
        data.savePauseReason(team, agentId, null);
        return after;
    }

    /**
     * {@code written}, a sign of life just written (its deadline its stale-after's or an allowance's, as the write
     * cannot read a schedule), with the deadline {@link Liveness#scheduled} gives it when it is on a schedule and the
     * beat sent no {@code nextWithin} of its own: the store writes it (a second conditional write, scheduled agents
     * only; none when the item holds it already).
     */
    static Agent followSchedule(AgentWrites writes, Agent written, Duration nextWithin) {
        return Liveness.followsSchedule(written, nextWithin)
                ? writes.writeDeadline(written, Liveness.scheduled(written)) : written;
    }
}
