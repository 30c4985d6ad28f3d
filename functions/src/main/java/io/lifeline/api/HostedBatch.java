package io.lifeline.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HeartbeatAdvice;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.config.Config;
import io.lifeline.store.AgentDataStore;
import io.lifeline.store.AgentStore;
import io.lifeline.store.HostLeaseStore;
import io.lifeline.support.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A daemon's batch that names its host: one renewal of the host lease carries every
 * agent's lease beat; an agent's item is written only when something about it changes (its first beat through
 * this host, a status it reports that differs, data sent, or no answer cached on the lease, as after a death),
 * and the lease's answer is then cached, so the next plain beat of it costs nothing more. Every agent still gets
 * The heartbeat protocol's answer, in order.
 */
final class HostedBatch {
    private final AgentStore agents;
    private final AgentDataStore data;
    private final HostLeaseStore leases;
    private final Config config;

    HostedBatch(AgentStore agents, AgentDataStore data, HostLeaseStore leases, Config config) {
        this.agents = agents;
        this.data = data;
        this.leases = leases;
        this.config = config;
    }

    /** {@code ages}: per entry, how long ago (ms) the daemon last heard the agent locally, or null for now. */
    List<ObjectNode> beat(String team, String hostId, List<Heartbeat> beats, List<Long> ages, Instant now) {
        // Two ids of one batch with the same lease key (about one batch in 10^9 of 25) beat directly.
        Set<String> keys = new HashSet<>();
        Set<String> direct = new HashSet<>();
        Map<String, String> keyOwner = new HashMap<>();
        for (Heartbeat hb : beats) {
            String k = HostLease.key(hb.agentId());
            if (!keys.add(k)) {
                direct.add(hb.agentId());
                direct.add(keyOwner.get(k));
            }
            keyOwner.put(k, hb.agentId());
        }
        List<HostLeaseStore.Beat> leaseBeats = new ArrayList<>();
        List<Instant> beatTimes = new ArrayList<>();
        for (int i = 0; i < beats.size(); i++) {
            Long age = ages.get(i);
            Instant at = age == null ? now : now.minusMillis(age);
            beatTimes.add(at);
            if (!direct.contains(beats.get(i).agentId())) {
                leaseBeats.add(new HostLeaseStore.Beat(beats.get(i).agentId(), at));
            }
        }
        HostLeaseStore.Renewed renewed = leaseBeats.isEmpty() ? new HostLeaseStore.Renewed(Map.of(), List.of(), Map.of())
                : leases.renew(team, hostId, leaseBeats, now);
        if (renewed.flagged() != null) {
            // The first renewal after a silence: the flag goes with one HostLeaseRestored (the sweep does it if
            // this write is lost; a plain renewal writes nothing more).
            try {
                leases.restore(team, hostId, renewed.flagged(), now);
            } catch (LifelineException leftToTheSweep) {
                // the next sweep restores it
            }
        }
        Map<String, HostLease.Cached> settle = new LinkedHashMap<>();
        List<ObjectNode> out = new ArrayList<>();
        for (int i = 0; i < beats.size(); i++) {
            Heartbeat hb = beats.get(i);
            Instant beatAt = beatTimes.get(i);
            HostLease.Cached cached = renewed.cached().get(hb.agentId());
            ObjectNode result;
            try {
                if (cached != null && plain(hb, cached)) {
                    result = cachedAnswer(cached, beatAt);
                } else {
                    boolean hosted = !direct.contains(hb.agentId());
                    Agent after = hosted ? agents.hostedBeat(hb, now, beatAt, hostId) : agents.heartbeat(hb, now);
                    data.save(hb.team(), hb.agentId(), hb.metadataJson(), hb.checkpointJson(), now);
                    result = HeartbeatHandler.answer(after, hb, config);
                    if (hosted) {
                        HostLease.Cached wanted = HostLease.Cached.of(after.status(), after.staleAfter(),
                                after.schedule()).orElse(null);
                        if (!Objects.equals(wanted, cached)) {
                            settle.put(hb.agentId(), wanted);
                        }
                    }
                }
            } catch (LifelineException e) {
                result = HttpApiHandler.errorBody(e);
                if (cached != null) {
                    settle.put(hb.agentId(), null); // the lease must not answer for it any more
                }
            }
            out.add(Json.object().put("agentId", hb.agentId()).setAll(result));
        }
        leases.settle(team, hostId, settle, renewed.prunable(), renewed.newer());
        return out;
    }

    /**
     * A beat the lease may answer alone: nothing but liveness, in the status the lease has cached (an entry that
     * says the agent's wait changed is written to its item).
     */
    private static boolean plain(Heartbeat hb, HostLease.Cached cached) {
        return hb.nextWithin() == null && hb.activity() == null && hb.metadataJson() == null && hb.checkpointJson() == null
                && (hb.stats() == null || AgentStats.NONE.equals(hb.stats()))
                && (hb.reported() == null || hb.reported() == cached.status());
    }

    /**
     * The heartbeat protocol's answer from the lease: the sign of life is the local beat, the deadline one stale-after
     * on.
     */
    private ObjectNode cachedAnswer(HostLease.Cached cached, Instant beatAt) {
        ObjectNode body = Json.object().put("success", true);
        Json.putTime(body, "heartbeatTs", beatAt);
        Json.putTime(body, "nextDeadline", beatAt.plus(cached.staleAfter()));
        body.put("agentStatus", cached.status().wire());
        return body.put("heartbeatIntervalSeconds", HeartbeatAdvice.interval(config.heartbeatInterval(),
                config.defaultStaleAfter(), cached.staleAfter(), null).toSeconds());
    }
}
