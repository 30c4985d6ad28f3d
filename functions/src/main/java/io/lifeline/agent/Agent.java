package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;

/**
 * An agent as stored. {@code heartbeatAt} and {@code deadline} are null until the agent first joins;
 * {@code beats} counts accepted heartbeats and joins, so a sweep can make its dead-marking conditional on
 * exactly the heartbeat it saw. {@code lastTransition} is the newest status change, stamped on the item by
 * the same write that made it. {@code schedule} (with {@code timeZone}) replaces the plain stale-after
 * deadline when set; {@code staleAfter} is then the grace after each expected heartbeat. {@code waiting}: what the
 * alive agent waits for and since when (its turn ended, or a permission prompt), or null. {@code progress}: its last
 * sign of progress, or null when it never reported one; {@code stall}: the stall the sweep raised, or null;
 * {@code parked}: the usage limit it is parked at, or null.
 */
public record Agent(
        String team,
        String agentId,
        String name,
        String role,
        String hostId,
        AgentStatus status,
        Instant heartbeatAt,
        Instant deadline,
        int consecutiveMisses,
        long beats,
        Duration staleAfter,
        int graceMisses,
        String currentTaskId,
        AgentStats stats,
        Instant registeredAt,
        Transition lastTransition,
        Instant pausedUntil,
        String schedule,
        String timeZone,
        Liveness.Wait waiting,
        Instant flappingSince,
        Liveness.Progress progress,
        Liveness.Stall stall,
        Liveness.Parked parked) {

    /** An agent that is not parked. */
    public Agent(String team, String agentId, String name, String role, String hostId, AgentStatus status,
                 Instant heartbeatAt, Instant deadline, int consecutiveMisses, long beats, Duration staleAfter,
                 int graceMisses, String currentTaskId, AgentStats stats, Instant registeredAt,
                 Transition lastTransition, Instant pausedUntil, String schedule, String timeZone,
                 Liveness.Wait waiting, Instant flappingSince, Liveness.Progress progress, Liveness.Stall stall) {
        this(team, agentId, name, role, hostId, status, heartbeatAt, deadline, consecutiveMisses, beats, staleAfter,
                graceMisses, currentTaskId, stats, registeredAt, lastTransition, pausedUntil, schedule, timeZone, waiting,
                flappingSince, progress, stall, null);
    }

    /** An agent with no sign of progress and no stall. */
    public Agent(String team, String agentId, String name, String role, String hostId, AgentStatus status,
                 Instant heartbeatAt, Instant deadline, int consecutiveMisses, long beats, Duration staleAfter,
                 int graceMisses, String currentTaskId, AgentStats stats, Instant registeredAt,
                 Transition lastTransition, Instant pausedUntil, String schedule, String timeZone,
                 Liveness.Wait waiting, Instant flappingSince) {
        this(team, agentId, name, role, hostId, status, heartbeatAt, deadline, consecutiveMisses, beats, staleAfter,
                graceMisses, currentTaskId, stats, registeredAt, lastTransition, pausedUntil, schedule, timeZone, waiting,
                flappingSince, null, null);
    }

    /** An agent that is not flagged flapping (docs/alerts-noise.md). */
    public Agent(String team, String agentId, String name, String role, String hostId, AgentStatus status,
                 Instant heartbeatAt, Instant deadline, int consecutiveMisses, long beats, Duration staleAfter,
                 int graceMisses, String currentTaskId, AgentStats stats, Instant registeredAt,
                 Transition lastTransition, Instant pausedUntil, String schedule, String timeZone,
                 Liveness.Wait waiting) {
        this(team, agentId, name, role, hostId, status, heartbeatAt, deadline, consecutiveMisses, beats, staleAfter,
                graceMisses, currentTaskId, stats, registeredAt, lastTransition, pausedUntil, schedule, timeZone, waiting,
                null);
    }

    /** An agent that waits for nothing. */
    public Agent(String team, String agentId, String name, String role, String hostId, AgentStatus status,
                 Instant heartbeatAt, Instant deadline, int consecutiveMisses, long beats, Duration staleAfter,
                 int graceMisses, String currentTaskId, AgentStats stats, Instant registeredAt,
                 Transition lastTransition, Instant pausedUntil, String schedule, String timeZone) {
        this(team, agentId, name, role, hostId, status, heartbeatAt, deadline, consecutiveMisses, beats, staleAfter,
                graceMisses, currentTaskId, stats, registeredAt, lastTransition, pausedUntil, schedule, timeZone, null);
    }

    /** This agent with another newest sign of life, deadline and miss count (as judged through its host lease). */
    public Agent withSignOfLife(Instant heartbeatAt, Instant deadline, int consecutiveMisses) {
        return new Agent(team, agentId, name, role, hostId, status, heartbeatAt, deadline, consecutiveMisses, beats,
                staleAfter, graceMisses, currentTaskId, stats, registeredAt, lastTransition, pausedUntil, schedule,
                timeZone, waiting, flappingSince, progress, stall, parked);
    }

    /** True when an operator has paused this agent's dead-marking at {@code now}. */
    public boolean pausedAt(Instant now) {
        return Liveness.paused(pausedUntil, now);
    }
}
