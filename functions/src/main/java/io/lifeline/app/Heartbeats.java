package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostLeaseStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The heartbeat use cases behind the heartbeat routes: one agent's beat, a batch of direct beats, and a daemon's
 * batch that names its host. Each beat's outcome is a {@link Beat}; the adapter turns it into the protocol's answer.
 * What the deadline of a beat is, written or answered by the lease, is {@link Liveness}'s.
 *
 * <p>A host's batch: one renewal of the host lease carries every agent's lease beat; an agent's item is written only
 * when something about it changes (its first beat through this host, a status it reports that differs, data sent,
 * or no answer cached on the lease, as after a death), and the lease's answer is then cached, so the next plain beat
 * of it costs nothing more. Every agent still gets an answer, in order.
 */
public final class Heartbeats {

    /** One beat's outcome. */
    public sealed interface Beat permits Written, Answered, Refused {
        String agentId();
    }

    /** The beat was written to the agent's item: {@code after} is the agent as written. */
    public record Written(Heartbeat heartbeat, Agent after) implements Beat {
        @Override
        public String agentId() {
            return heartbeat.agentId();
        }
    }

    /**
     * The host lease answered the beat alone ({@code cached}): the sign of life is the local beat {@code beatAt}, the
     * deadline {@link Liveness#viaLease}.
     */
    public record Answered(String agentId, HostLease.Cached cached, Instant beatAt) implements Beat {
        public Instant deadline() {
            return Liveness.viaLease(beatAt, cached.staleAfter());
        }
    }

    /** A batch entry refused on its own, the rest of the batch going on. */
    public record Refused(String agentId, LifelineException error) implements Beat {
    }

    /**
     * One request's account for the heartbeat function's metrics: beats accepted, batch entries refused by error
     * code, and the status changes the beats' own reports made ({@code agentId: from -> to}). Made per request by the
     * adapter; nothing else holds it.
     */
    public static final class Tally {
        private int accepted;
        private final Map<String, Integer> refused = new TreeMap<>();
        private final List<String> changes = new ArrayList<>();

        public void accepted() {
            accepted++;
        }

        void refused(String code) {
            refused.merge(code, 1, Integer::sum);
        }

        void changed(String agentId, String from, String to) {
            changes.add(agentId + ": " + from + " -> " + to);
        }

        public int acceptedCount() {
            return accepted;
        }

        /** Entries of a batch refused while the request as a whole succeeded, by error code. */
        public Map<String, Integer> refusedEntries() {
            return Map.copyOf(refused);
        }

        public List<String> changes() {
            return List.copyOf(changes);
        }
    }

    private final AgentWrites agents;
    private final AgentDataStore data;
    private final HostLeaseStore leases;
    private final Liveness.Allowances allowances;

    public Heartbeats(AgentWrites agents, AgentDataStore data, HostLeaseStore leases, Liveness.Allowances allowances) {
        this.agents = agents;
        this.data = data;
        this.leases = leases;
        this.allowances = allowances;
    }

    /** {@code hb} with the deployment's allowance it carries for its activity ({@link Liveness#carried}). */
    private Heartbeat carrying(Heartbeat hb, boolean throughHost) {
        return hb.with(hb.activity(), Liveness.carried(hb.activity(), allowances, throughHost));
    }

    /**
     * One agent's direct beat (its activity stated: plain when it says nothing): written to its item, its data saved;
     * refused as the store refuses it.
     */
    public Agent beat(Heartbeat hb, Instant now, Tally tally) {
        return written(carrying(hb, false), now, tally);
    }

    private Agent written(Heartbeat hb, Instant now, Tally tally) {
        Agent after = AgentChanges.followSchedule(agents, agents.heartbeat(hb, now), hb.nextWithin());
        noteChange(hb, after, now, tally);
        data.save(hb.team(), hb.agentId(), hb.metadataJson(), hb.checkpointJson(), now);
        tally.accepted();
        return after;
    }

    /**
     * A runtime's hook beat ({@link HookIngest}, which counts it): written as a direct beat is, the store's write
     * guessing the agent is in {@code likely} (the status the hook's last write left it in, or null); a status it
     * reports that moves the agent goes on the request's line like any beat's. A hook carries no side data. With a
     * {@code window}, a repeat of the item's last hook write within it writes nothing (coalesced on the item).
     */
    AgentWrites.Hooked hooked(Heartbeat hb, Instant now, AgentStatus likely, Duration window, Tally tally) {
        AgentWrites.Hooked h = agents.hookBeat(hb, now, likely, window);
        if (!h.written()) {
            return h;
        }
        Agent after = AgentChanges.followSchedule(agents, h.agent(), hb.nextWithin());
        noteChange(hb, after, now, tally);
        return new AgentWrites.Hooked(after, true, h.hookAt());
    }

    /** Notes on the request's line a status change {@code hb}'s own report made ({@code agentId: from -> to}). */
    private static void noteChange(Heartbeat hb, Agent after, Instant now, Tally tally) {
        Transition t = after.lastTransition();
        if (t != null && hb.reported() != null
                && (t.trigger() == Trigger.REPORT_READY || t.trigger() == Trigger.REPORT_WORKING)
                && t.at() != null && !t.at().isBefore(now)) {
            tally.changed(hb.agentId(), t.from().wire(), t.to().wire()); // this beat's own report moved it
        }
    }

    /** A batch of direct beats (each stating its activity): each written on its own, an entry's refusal not stopping the others. */
    public List<Beat> batch(List<Heartbeat> beats, Instant now, Tally tally) {
        List<Beat> out = new ArrayList<>();
        for (Heartbeat hb : beats) {
            try {
                out.add(new Written(hb, written(carrying(hb, false), now, tally)));
            } catch (LifelineException e) {
                tally.refused(e.code());
                out.add(new Refused(hb.agentId(), e));
            }
        }
        return out;
    }

    /**
     * A daemon's batch that names its host; an entry that states no activity leaves the agent's wait as it is, and
     * no allowance applies to any (the daemon beats for a waiting agent while its process lives). {@code ages}: per entry, how long ago (ms) the daemon last heard the
     * agent locally, or null for now.
     */
    public List<Beat> hosted(String team, String hostId, List<Heartbeat> entries, List<Long> ages, Instant now,
                             Tally tally) {
        return hosted(team, hostId, entries, ages, Collections.nCopies(entries.size(), null), now, tally);
    }

    /**
     * As above; {@code stalls}: per entry, the daemon's stall judgement when it changed (true: stalled, false: no
     * longer, null: not sent). An entry that carries one is written to the agent's item with it (one write per
     * change into or out of a stall); a stalled agent's later plain beats are answered by the lease as any are.
     */
    public List<Beat> hosted(String team, String hostId, List<Heartbeat> entries, List<Long> ages,
                             List<Boolean> stalls, Instant now, Tally tally) {
        List<Heartbeat> beats = entries.stream().map(hb -> carrying(hb, true)).toList();
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
        List<Beat> out = new ArrayList<>();
        for (int i = 0; i < beats.size(); i++) {
            Heartbeat hb = beats.get(i);
            Instant beatAt = beatTimes.get(i);
            HostLease.Cached cached = renewed.cached().get(hb.agentId());
            Beat result;
            try {
                if (cached != null && plain(hb, cached) && stalls.get(i) == null) {
                    result = new Answered(hb.agentId(), cached, beatAt);
                } else {
                    boolean hosted = !direct.contains(hb.agentId());
                    Agent after = AgentChanges.followSchedule(agents, hosted
                            ? agents.hostedBeat(hb, now, beatAt, hostId, stalls.get(i))
                            : agents.heartbeat(hb, now), hb.nextWithin());
                    data.save(hb.team(), hb.agentId(), hb.metadataJson(), hb.checkpointJson(), now);
                    result = new Written(hb, after);
                    if (hosted) {
                        HostLease.Cached wanted = HostLease.Cached.of(after.status(), after.staleAfter(),
                                after.schedule()).orElse(null);
                        if (!Objects.equals(wanted, cached)) {
                            settle.put(hb.agentId(), wanted);
                        }
                    }
                }
                tally.accepted();
            } catch (LifelineException e) {
                result = new Refused(hb.agentId(), e);
                tally.refused(e.code());
                if (cached != null) {
                    settle.put(hb.agentId(), null); // the lease must not answer for it any more
                }
            }
            out.add(result);
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
}
