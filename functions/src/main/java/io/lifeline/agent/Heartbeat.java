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
 * agent's failure domain when it beats directly ({@link FailureDomains}). {@code progress}: what the beat says of the
 * agent's progress ({@link Reported}), or null when it says nothing of it (the item's last progress stays).
 */
public record Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                        AgentStats stats, String metadataJson, String checkpointJson, Liveness.Activity activity,
                        Duration allowance, String address, Reported progress) {

    /**
     * A beat's report of progress: the age of the agent's last progress when the beat was sent ({@code age}; zero:
     * it progresses now, as every hook event does), whether a tool call is in flight ({@code toolInFlight}: a hook's
     * tool start), and the reason its source gives for a silence ({@code reason}, null: none).
     */
    public record Reported(Duration age, boolean toolInFlight, String reason) {
        /** Progress now, with no tool call in flight: any hook event that is not a tool's start. */
        public static final Reported NOW = new Reported(Duration.ZERO, false, null);
        /** A tool call starts now: progress, and legitimate silence until its end. */
        public static final Reported TOOL_STARTED = new Reported(Duration.ZERO, true, null);
    }

    public Heartbeat(String team, String agentId, AgentStatus reported, String source, Duration nextWithin,
                     AgentStats stats, String metadataJson, String checkpointJson, Liveness.Activity activity,
                     Duration allowance, String address) {
        this(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson, activity, allowance,
                address, null);
    }
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
                activity, allowance, address, progress);
    }

    /** This beat reporting {@code p} of the agent's progress (null: nothing). */
    public Heartbeat withProgress(Reported p) {
        return new Heartbeat(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson,
                activity, allowance, address, p);
    }

    /** This beat as sent from {@code address} (null: unknown). */
    public Heartbeat from(String address) {
        return new Heartbeat(team, agentId, reported, source, nextWithin, stats, metadataJson, checkpointJson,
                activity, allowance, address, progress);
    }
}
