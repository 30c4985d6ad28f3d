package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostIncidents;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The event catalogue: how each change in the table is told on the bus. Events are
 * small: ids, statuses and a reason, never metadata or checkpoints.
 */
public final class EventCatalogue {
    public static final String AGENT_STATUS_CHANGED = "AgentStatusChanged";
    public static final String TASKS_REASSIGNED = "TasksReassigned";
    public static final String LEADER_NOTIFIED = "LeaderNotified";
    public static final String MASS_STALE_SUSPECTED = "MassStaleSuspected";
    public static final String SESSION_ROTATION_REQUESTED = "SessionRotationRequested";
    public static final String ADMIN_KEY_MINTED = "AdminKeyMinted";
    public static final String AGENT_RESTART_REQUESTED = "AgentRestartRequested";
    public static final String HOST_LEASE_EXPIRED = "HostLeaseExpired";
    public static final String HOST_LEASE_RESTORED = "HostLeaseRestored";
    public static final String AGENT_AWAITING_INPUT = "AgentAwaitingInput";
    public static final String AGENT_INPUT_RESUMED = "AgentInputResumed";
    /** Progress (docs/liveness.md): an agent in a turn with no progress past its threshold, and progress again. */
    public static final String AGENT_STALLED = "AgentStalled";
    public static final String AGENT_PROGRESS_RESUMED = "AgentProgressResumed";
    /** Parking (docs/liveness.md): an agent parked at a provider's usage limit, and resumed after it. */
    public static final String AGENT_PARKED = "AgentParked";
    public static final String AGENT_RESUMED = "AgentResumed";
    public static final String FLEET_MASS_STALE_SUSPECTED = "FleetMassStaleSuspected";
    public static final String FLEET_MASS_STALE_RESOLVED = "FleetMassStaleResolved";
    /** Digests for bursts (docs/alerts-noise.md): a window past its threshold, its digest, its end. */
    public static final String ALERT_BURST_STARTED = "AlertBurstStarted";
    public static final String ALERT_DIGEST = "AlertDigest";
    public static final String ALERT_BURST_RESOLVED = "AlertBurstResolved";
    /** Digests for bursts of stalls (docs/alerts-noise.md): a window past its threshold of stalls, its digest, its end. */
    public static final String ALERT_STALL_BURST_STARTED = "AlertStallBurstStarted";
    public static final String ALERT_STALL_DIGEST = "AlertStallDigest";
    public static final String ALERT_STALL_BURST_RESOLVED = "AlertStallBurstResolved";
    /** Flapping (docs/alerts-noise.md): an agent flagged flapping, and stable again. */
    public static final String AGENT_FLAPPING = "AgentFlapping";
    public static final String AGENT_FLAPPING_RESOLVED = "AgentFlappingResolved";

    private EventCatalogue() {
    }

    /** The event that tells {@code change} on the bus: one per kind of change ({@link StreamChanges.Visitor}). */
    public static LifelineEvent of(StreamChanges.Change change) {
        return change.accept(TOLD);
    }

    private static final StreamChanges.Visitor<LifelineEvent> TOLD = new StreamChanges.Visitor<>() {
        @Override
        public LifelineEvent statusChanged(StreamChanges.StatusChanged c) {
            var t = c.transition();
            String id = c.team() + "/" + c.agentId() + "/status/" + t.seq();
            ObjectNode d = base(id, c.team()).put("agentId", c.agentId());
            Json.putIfPresent(d, "name", c.name());
            Json.putIfPresent(d, "hostId", c.hostId());
            d.put("from", t.from().wire()).put("to", t.to().wire()).put("trigger", t.trigger().wire());
            Json.putIfPresent(d, "reason", t.reason());
            if (t.to() == AgentStatus.DEAD || t.to() == AgentStatus.DEAD_FAILED_REVIVE) {
                d.put("reviveFlow", reviveFlow(d));
            }
            if (c.cause() != null) {
                // The host silence this death follows from, also on the changes after it and on its return: the
                // alert rules leave those to the host's incident (docs/alerts-noise.md).
                d.set("cause", c.cause().source() != null
                        ? Json.object().put("kind", HostIncidents.SOURCE_SILENT).put("source", c.cause().source())
                                .put("since", c.cause().expiredAt().toString())
                        : Json.object().put("kind", HostIncidents.HOST_SILENT).put("hostId", c.cause().hostId())
                                .put("expiredAt", c.cause().expiredAt().toString()));
            }
            if (c.hostRestart() != null) {
                // Its host daemon reported this death and restarts the agent itself (until then): the daemon's to
                // handle, so the per-agent alert rules leave it and the join that ends it (docs/alerts-noise.md).
                d.put("hostRestart", c.hostRestart().toString());
            }
            d.put("seq", t.seq()).put("at", t.at().toString());
            return new LifelineEvent(c.team(), AGENT_STATUS_CHANGED, id, t.at(), d);
        }

        @Override
        public LifelineEvent taskReassigned(StreamChanges.TaskReassigned c) {
            String id = c.team() + "/" + c.taskId() + "/reassigned/" + c.at().toEpochMilli();
            ObjectNode d = base(id, c.team()).put("fromAgentId", c.fromAgentId());
            d.set("taskIds", Json.MAPPER.createArrayNode().add(c.taskId()));
            d.put("at", c.at().toString());
            return new LifelineEvent(c.team(), TASKS_REASSIGNED, id, c.at(), d);
        }

        @Override
        public LifelineEvent leaderNotice(StreamChanges.LeaderNotice c) {
            String id = c.team() + "/" + c.leaderAgentId() + "/inbox/" + c.notice().noticeId();
            ObjectNode d = base(id, c.team()).put("leaderAgentId", c.leaderAgentId())
                    .put("aboutAgentId", c.notice().aboutAgentId()).put("message", c.notice().message());
            d.set("tasksHandedBack", Json.MAPPER.valueToTree(c.notice().tasksHandedBack()));
            d.put("at", c.notice().at().toString());
            return new LifelineEvent(c.team(), LEADER_NOTIFIED, id, c.notice().at(), d);
        }

        @Override
        public LifelineEvent massStale(StreamChanges.MassStale c) {
            String id = c.team() + "/mass-stale/" + c.since().toEpochMilli();
            // How many, since when, why: held (self-preservation) or one failure domain gone silent (its agents die).
            ObjectNode d = base(id, c.team()).put("aliveAgents", c.aliveAgents()).put("staleAgents", c.staleAgents())
                    .put("threshold", c.threshold()).put("held", c.held()).put("since", c.since().toString());
            d.put("why", c.why() != null ? c.why() : c.held() ? "dead-marking is held back" : "marked dead as judged");
            d.put("at", c.since().toString());
            return new LifelineEvent(c.team(), MASS_STALE_SUSPECTED, id, c.since(), d);
        }

        @Override
        public LifelineEvent sessionRotation(StreamChanges.SessionRotation c) {
        Instant at = c.at() == null ? Instant.EPOCH : c.at();
        String id = c.team() + "/" + c.agentId() + "/rotation/" + c.rotation();
        ObjectNode d = base(id, c.team()).put("agentId", c.agentId()).put("rotation", c.rotation())
                .put("at", at.toString());
        return new LifelineEvent(c.team(), SESSION_ROTATION_REQUESTED, id, at, d);
        }

        @Override
        public LifelineEvent restartRequested(StreamChanges.RestartRequested c) {
            var cmd = c.command();
            String id = c.team() + "/" + cmd.hostId() + "/command/" + cmd.commandId();
            ObjectNode d = base(id, c.team()).put("agentId", cmd.agentId()).put("hostId", cmd.hostId())
                    .put("attempt", cmd.attempt()).put("commandId", cmd.commandId());
            Json.putIfPresent(d, "reason", cmd.reason());
            d.put("at", cmd.createdAt().toString()).put("expiresAt", cmd.expiresAt().toString());
            return new LifelineEvent(c.team(), AGENT_RESTART_REQUESTED, id, cmd.createdAt(), d);
        }

        @Override
        public LifelineEvent adminKeyMinted(StreamChanges.AdminKeyMinted c) {
            String id = c.team() + "/admin-key/" + c.keyId();
            ObjectNode d = base(id, c.team()).put("keyId", c.keyId()).put("scope", "admin")
                    .put("operatorKeyId", c.operatorKeyId()).put("at", c.at().toString());
            return new LifelineEvent(c.team(), ADMIN_KEY_MINTED, id, c.at(), d);
        }

        @Override
        public LifelineEvent hostLeaseExpired(StreamChanges.HostLeaseExpired c) {
            String id = c.team() + "/" + c.hostId() + "/lease-expired/" + c.at().toEpochMilli();
            ObjectNode d = base(id, c.team()).put("hostId", c.hostId()).put("agentCount", c.agentCount());
            d.set("agentIds", Json.MAPPER.valueToTree(c.agents()));
            if (c.lastRenewedAt() != null) {
                d.put("lastRenewedAt", c.lastRenewedAt().toString());
            }
            // The silence's id, which its HostLeaseRestored carries too (PagerDuty's dedup key for the host).
            d.put("expiredAt", c.at().toString());
            // One incident per physical host: a further lease of it names the lease that leads (the rules page once).
            Json.putIfPresent(d, "partOf", c.partOf());
            if (c.leases() > 1) {
                d.put("leases", c.leases());
            }
            d.put("at", c.at().toString());
            return new LifelineEvent(c.team(), HOST_LEASE_EXPIRED, id, c.at(), d);
        }

        @Override
        public LifelineEvent hostLeaseRestored(StreamChanges.HostLeaseRestored c) {
            Instant at = c.at() == null ? c.expiredAt() : c.at();
            String id = c.team() + "/" + c.hostId() + "/lease-restored/" + c.expiredAt().toEpochMilli();
            ObjectNode d = base(id, c.team()).put("hostId", c.hostId()).put("expiredAt", c.expiredAt().toString());
            if (c.renewedAt() != null) {
                d.put("renewedAt", c.renewedAt().toString());
            }
            Json.putIfPresent(d, "partOf", c.partOf());
            d.put("at", at.toString());
            return new LifelineEvent(c.team(), HOST_LEASE_RESTORED, id, at, d);
        }

        @Override
        public LifelineEvent fleetMassStale(StreamChanges.FleetMassStale c) {
            return fleet(c);
        }

        @Override
        public LifelineEvent awaitingInput(StreamChanges.AwaitingInput c) {
            return awaiting(c);
        }

        @Override
        public LifelineEvent stall(StreamChanges.Stall c) {
            return stalled(c);
        }

        @Override
        public LifelineEvent park(StreamChanges.Park c) {
            return parked(c);
        }
    };

    /**
     * A park at a usage limit and its end: one event each per park, both carrying when it was parked
     * ({@code since}, the pair's id) and the reset it waited for ({@code until}). {@code state}: {@code parked},
     * {@code resumed}, or {@code ended} (it left or died while parked).
     */
    private static LifelineEvent parked(StreamChanges.Park c) {
        boolean resumed = c.resumedAt() != null;
        Instant at = resumed ? c.resumedAt() : c.since();
        String id = c.team() + "/" + c.agentId() + (resumed ? "/resumed/" : "/parked/") + c.since().toEpochMilli();
        ObjectNode d = base(id, c.team()).put("agentId", c.agentId());
        Json.putIfPresent(d, "name", c.name());
        Json.putIfPresent(d, "hostId", c.hostId());
        Json.putIfPresent(d, "reason", c.reason());
        if (c.until() != null) {
            d.put("until", c.until().toString());
        }
        d.put("state", !resumed ? "parked" : c.ended() ? "ended" : "resumed").put("since", c.since().toString()).put("at", at.toString());
        return new LifelineEvent(c.team(), resumed ? AGENT_RESUMED : AGENT_PARKED, id, at, d);
    }

    /**
     * A stall and its end: one event each per stall, both carrying when it was raised ({@code since}, PagerDuty's
     * dedup key), so the resume closes exactly that stall's page. {@code state}: {@code stalled}, {@code resumed}
     * (progress again, the turn ended or a tool started) or {@code ended} (the agent left or died, a restart's
     * death included).
     */
    private static LifelineEvent stalled(StreamChanges.Stall c) {
        boolean resumed = c.resumedAt() != null;
        Instant at = resumed ? c.resumedAt() : c.since();
        String id = c.team() + "/" + c.agentId() + (resumed ? "/progress-resumed/" : "/stalled/")
                + c.since().toEpochMilli();
        ObjectNode d = base(id, c.team()).put("agentId", c.agentId());
        Json.putIfPresent(d, "name", c.name());
        Json.putIfPresent(d, "hostId", c.hostId());
        Json.putIfPresent(d, "reason", c.reason());
        if (c.lastProgressAt() != null) {
            d.put("lastProgressAt", c.lastProgressAt().toString());
        }
        d.put("state", !resumed ? "stalled" : c.ended() ? "ended" : "resumed")
                .put("since", c.since().toString()).put("at", at.toString());
        return new LifelineEvent(c.team(), resumed ? AGENT_PROGRESS_RESUMED : AGENT_STALLED, id, at, d);
    }

    /**
     * A wait for a person past its threshold, and its end: one event each per wait, both carrying the wait's start
     * ({@code since}, PagerDuty's dedup key), so the resume closes exactly that wait's page.
     */
    private static LifelineEvent awaiting(StreamChanges.AwaitingInput c) {
        boolean resumed = c.resumedAt() != null;
        Instant at = resumed ? c.resumedAt() : c.raisedAt() == null ? c.since() : c.raisedAt();
        String id = c.team() + "/" + c.agentId() + (resumed ? "/input-resumed/" : "/awaiting-input/")
                + c.since().toEpochMilli();
        ObjectNode d = base(id, c.team()).put("agentId", c.agentId());
        Json.putIfPresent(d, "name", c.name());
        Json.putIfPresent(d, "hostId", c.hostId());
        d.put("waitingFor", "person").put("state", resumed ? "resumed" : "waiting")
                .put("since", c.since().toString()).put("at", at.toString());
        return new LifelineEvent(c.team(), resumed ? AGENT_INPUT_RESUMED : AGENT_AWAITING_INPUT, id, at, d);
    }

    /**
     * The deployment-wide guard's hold and its end: one event each on the bus, with team {@code *}, for the
     * operator's destinations. Each team it names logs its own view (docs/events.md): the hold's counts as bare
     * numbers and no team's name, so its events route shows why its agents were not marked dead. Both carry the
     * hold's id ({@code since}, PagerDuty's dedup key), so the resolve closes exactly that hold's page.
     */
    private static LifelineEvent fleet(StreamChanges.FleetMassStale c) {
        boolean resolved = c.resolvedAt() != null;
        Instant at = resolved ? c.resolvedAt() : c.since();
        String id = "fleet/mass-stale/" + c.since().toEpochMilli() + (resolved ? "/resolved" : "");
        ObjectNode d = base(id, c.team()).put("scope", "fleet").put("state", resolved ? "resolved" : "held")
                .put("aliveAgents", c.aliveAgents()).put("staleAgents", c.staleAgents())
                .put("threshold", c.threshold()).put("teamCount", c.teamCount());
        d.put("since", c.since().toString()).put("at", at.toString());
        Map<String, ObjectNode> views = new LinkedHashMap<>();
        c.teams().forEach(team -> views.put(team, d.deepCopy().put("team", team)));
        d.set("teams", Json.MAPPER.valueToTree(c.teams()));
        return new LifelineEvent(c.team(), resolved ? FLEET_MASS_STALE_RESOLVED : FLEET_MASS_STALE_SUSPECTED, id, at, d,
                views);
    }

    /**
     * Whether the revive flow will take this death, decided from the detail itself by the very facts
     * template.yaml's {@code ReviveOnDeathRule} matches on: {@code to} is {@code dead} and a {@code hostId} is
     * present (someone can be asked to restart the agent). A {@code dead_failed_revive} is the flow's (or the
     * host's) last word: no flow will handle it. Alert rules use it to page for deaths nobody is bringing back and
     * to send a lower-urgency alert for the ones the flow is handling.
     */
    static boolean reviveFlow(ObjectNode detail) {
        return AgentStatus.DEAD.wire().equals(detail.path("to").asText()) && detail.hasNonNull("hostId");
    }

    private static ObjectNode base(String eventId, String team) {
        return Json.object().put("eventId", eventId).put("team", team);
    }
}
