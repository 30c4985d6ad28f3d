package io.lifeline.client.daemon;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.BatchResult;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.Stats;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The beats of a round: the running agents in batches of at most 25, one a host lease (the host id for the first 25
 * agents of the daemon's list, {@code <hostId>.2} for the next, ...), each entry carrying the agent's restarts in the
 * last hour and what its runtime's hooks said when either changed since the server last took it, and what the server
 * has not taken of its stall, park and subagents ({@link PendingChanges}), each batch the agents' local beat ages when
 * a {@link LocalBeats} channel is given; an entry answered rejoinRequired is joined again.
 */
final class BeatRound {
    private final LifelineClient client;
    private final String hostId;
    private final AgentActions actions;
    private final Clock clock;
    /** The local beat channel, or null: the agents' processes running is then their sign of life. */
    private final LocalBeats localBeats;
    /** Whether batch entries carry the hooks' waiting and inTurn (the server takes them). */
    private final boolean waitingFields;

    BeatRound(LifelineClient client, String hostId, AgentActions actions, Clock clock, LocalBeats localBeats,
            boolean waitingFields) {
        this.client = client;
        this.hostId = hostId;
        this.actions = actions;
        this.clock = clock;
        this.localBeats = localBeats;
        this.waitingFields = waitingFields;
    }

    /** Beats the running agents, one batch call a lease. */
    void beat(List<AgentSlot> running, Instant now, RoundLog log) {
        for (Map.Entry<Integer, List<AgentSlot>> lease : leaseChunks(running).entrySet()) {
            beatLease(leaseId(lease.getKey()), lease.getValue(), now, log);
        }
    }

    private void beatLease(String leaseId, List<AgentSlot> slots, Instant now, RoundLog log) {
        List<BatchEntry> chunk = new ArrayList<>();
        Map<String, AgentSlot> byId = new HashMap<>();
        Map<String, List<Object>> signatures = new HashMap<>();
        Map<String, Boolean> stalls = new HashMap<>();
        Map<String, PendingChanges.Sent> changes = new HashMap<>();
        for (AgentSlot s : slots) {
            byId.put(s.id(), s);
            if (localBeats != null) {
                signatures.put(s.id(), hookSignature(s.id())); // what this entry says, before a hook changes it
            }
            PendingChanges.Sent change = s.toSend(leaseId != null);
            changes.put(s.id(), change);
            chunk.add(withProgress(s, entry(s, now, signatures.get(s.id()))).withParked(change.park())
                    .withSubagents(change.subagents()));
            if (change.stall() != null) {
                stalls.put(s.id(), change.stall());
            }
        }
        try {
            log.batchCalls++;
            BatchResult answer = leaseId == null ? client.heartbeats(chunk)
                    : client.hostHeartbeats(leaseId, chunk, localBeatAges(slots), stalls);
            Set<String> accepted = new HashSet<>();
            answer.results().stream().filter(HeartbeatResult::success).forEach(r -> accepted.add(r.agentId()));
            for (BatchEntry sent : chunk) {
                // Only what the server took: a refused entry (not alive) wrote nothing, so it is sent again.
                AgentSlot s = byId.get(sent.agentId());
                if (sent.heartbeat().stats() != null && accepted.contains(sent.agentId())) {
                    s.restartsSent(sent.heartbeat().stats().restartsLastHour());
                }
                if (accepted.contains(sent.agentId()) && localBeats != null) {
                    s.hookSent(signatures.get(sent.agentId()));
                }
                if (accepted.contains(sent.agentId())) {
                    s.taken(changes.get(sent.agentId()));
                }
            }
            for (HeartbeatResult r : answer.results()) {
                log.results.add(r);
                answered(byId.get(r.agentId()), r, log);
            }
        } catch (LifelineException e) {
            log.problems.add("batch heartbeat failed: " + e.getMessage());
        }
    }

    /** The server's answer for one agent: its advice taken, a rejoin made, a refusal told. */
    private void answered(AgentSlot s, HeartbeatResult r, RoundLog log) {
        if (s != null) {
            s.advise(r.heartbeatIntervalSeconds());
        }
        if (r.needsRejoin() && s != null && actions.join(s, log.problems)) {
            log.rejoined.add(r.agentId());
        } else if (!r.success()) {
            log.problems.add(r.agentId() + ": heartbeat refused: " + r.code());
        }
    }

    /**
     * The running agents by host lease: each agent's lease is fixed by its place in the daemon's list (25 a lease),
     * so an agent that stops and starts stays on the same lease, and only running agents are sent.
     */
    private static Map<Integer, List<AgentSlot>> leaseChunks(List<AgentSlot> running) {
        Map<Integer, List<AgentSlot>> out = new TreeMap<>();
        for (AgentSlot s : running) {
            out.computeIfAbsent(s.index() / LifelineClient.MAX_BATCH, k -> new ArrayList<>()).add(s);
        }
        return out;
    }

    /** The lease of chunk {@code k}: the host id, then {@code <hostId>.2}, ...; null if that is no valid id. */
    private String leaseId(int k) {
        String id = k == 0 ? hostId : hostId + "." + (k + 1);
        return id.length() <= 64 ? id : null;
    }

    /**
     * With a local beat channel: how long ago (ms) each agent last beat locally, or since its process was (re)started
     * if it has not beaten since; without one, none (the server takes the batch's time).
     */
    private Map<String, Long> localBeatAges(List<AgentSlot> slots) {
        if (localBeats == null) {
            return Map.of();
        }
        Instant now = clock.instant();
        Map<String, Long> ages = new HashMap<>();
        for (AgentSlot s : slots) {
            String a = s.id();
            if (!localBeats.judgedBySigns(a)) {
                continue; // its process running is its sign of life
            }
            LocalBeats.HookState st = localBeats.hookState(a);
            if (st.waiting() != null || st.inTurn()) {
                // Waiting (for input or a person), or in a tool call or turn, while its process lives: alive for as
                // long as it waits or works (no allowance applies to a hosted beat: the daemon's word is the process).
                ages.put(a, 0L);
                continue;
            }
            Instant started = s.startedAt();
            Instant last = localBeats.last(a).filter(t -> started == null || t.isAfter(started)).orElse(started);
            if (last != null) {
                ages.put(a, Math.max(0, Duration.between(last, now).toMillis()));
            }
        }
        return ages;
    }

    /**
     * The agent's beat: its restarts in the last hour when that count differs from the one the server last took
     * (the first restart, each later one, each that leaves the hour, down to the 0), else a plain beat. A beat
     * that carries stats writes the agent's item, while a plain one through the host lease does not, so sending
     * an unchanged count every beat would cost a write per agent per beat.
     */
    private static Heartbeat plainOrCounted(AgentSlot s, Instant now) {
        long n = s.restartsLastHour(now);
        Long sent = s.restartsSent();
        if (sent == null ? n == 0 : sent == n) {
            return Heartbeat.empty();
        }
        return Heartbeat.empty().withStats(Stats.restarts(n));
    }

    /**
     * The agent's batch entry: {@link #plainOrCounted}, plus what its runtime's hooks said (status and source, and
     * with {@code waitingFields} waiting and inTurn) when that changed since the server last took it: a change of
     * status writes the agent's item, an unchanged one would cost nothing but is not sent either.
     */
    private BatchEntry entry(AgentSlot s, Instant now, List<Object> sig) {
        String agentId = s.id();
        Heartbeat hb = plainOrCounted(s, now);
        if (sig == null || sig.get(0) == null || sig.equals(s.hookSent())) {
            return new BatchEntry(agentId, hb);
        }
        Heartbeat withStatus = new Heartbeat((String) sig.get(0), (String) sig.get(3), hb.metadata(), hb.stats(),
                hb.checkpoint(), hb.nextHeartbeatWithinSeconds());
        if (!waitingFields) {
            return new BatchEntry(agentId, withStatus);
        }
        // Waiting for input or a person; else in a turn; else waiting for nothing ("none" ends a wait).
        String waiting = (String) sig.get(1);
        if (waiting != null) {
            return new BatchEntry(agentId, withStatus, waiting, null);
        }
        return Boolean.TRUE.equals(sig.get(2)) ? new BatchEntry(agentId, withStatus, null, Boolean.TRUE)
                : new BatchEntry(agentId, withStatus, "none", null);
    }

    /**
     * The entry with the age of the agent's last progress and what its silence would mean, while the daemon judges
     * its progress ({@link ProgressWatch}: in a turn). This adds no write: a beat the host lease answers stays
     * answered by it, and one that writes the agent's item (a change) carries it in that write.
     */
    private static BatchEntry withProgress(AgentSlot s, BatchEntry e) {
        Long age = s.progressAgeMs();
        if (age == null) {
            return e;
        }
        return new BatchEntry(e.agentId(), e.heartbeat().withProgressAgeMs(age)
                .withStallReason(ProgressWatch.reason(s)), e.waiting(), e.inTurn(), e.parked());
    }

    /** What the hooks say now, as one value: status, waiting and inTurn (with {@code waitingFields}), source. */
    private List<Object> hookSignature(String agentId) {
        LocalBeats.HookState st = localBeats.hookState(agentId);
        return Arrays.asList(st.status(), waitingFields ? st.waiting() : null,
                waitingFields && st.inTurn(), st.source());
    }
}
