package io.lifeline.agent;

import java.time.Duration;

/**
 * A validated heartbeat. {@code reported} is the status the agent says it is in (from {@code status} or
 * implied by an SDK {@code source}), or null to keep the current one. {@code nextWithin} overrides the
 * agent's stale-after for this one deadline. {@code metadataJson}/{@code checkpointJson} are null when
 * absent. {@code activity}: what the beat says beyond its time (waiting, a turn in progress), or null when it says
 * nothing of it (a daemon's batch entry: the agent's wait is left as it is); {@code allowance}: the deployment's
 * allowance for that activity, which the agent's own replaces when it has one ({@link Liveness}). {@code address}: the
 * source address the beat came from (the request's {@code requestContext.http.sourceIp}), or null when unknown; the
 * agent's failure domain when it beats directly ({@link FailureDomains}).
 */
public record Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                        AgentStats stats, String metadataJson, String checkpointJson, Liveness.Activity activity,
                        Duration allowance, String address) {
    public Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                     AgentStats stats, String metadataJson, String checkpointJson, Liveness.Activity activity,
                     Duration allowance) {
        this(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson, activity, allowance,
                null);
    }

    /** A beat that says nothing of waiting or of a turn in progress (a plain one). */
    public Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                     AgentStats stats, String metadataJson, String checkpointJson) {
        this(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson, null, null);
    }

    /** This beat with {@code activity}, under the deployment's {@code allowance} for it (null for a plain one). */
    public Heartbeat with(Liveness.Activity activity, Duration allowance) {
        return new Heartbeat(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson,
                activity, allowance, address);
    }

    /** This beat as sent from {@code address} (null: unknown). */
    public Heartbeat from(String address) {
        return new Heartbeat(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson,
                activity, allowance, address);
    }
}
