package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StallWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Digests for bursts of stalls (docs/alerts-noise.md): a stall under {@code onStall: alert} counts in its window's
 * burst rule as a death does, but beside the deaths, so that what reaches people says stalled. The first
 * {@code threshold} stalls of a window go out one by one as ever; a later one carries {@code burst}, which the stall
 * rule leaves to the window's digest of stalls, and the first of them raises {@code AlertStallBurstStarted}, which
 * starts that digest. A stall's end carries {@code burst} when its start did. Every end (progress again, the turn
 * ended, or the stall ended by a death, a leave or a new life) makes the stall over; only progress again counts it
 * back. The end that leaves every stall of a window past its threshold over raises {@code AlertStallBurstResolved}.
 *
 * <p>The counting mirrors {@link AlertBursts}' for deaths: one conditional write decides the first past the
 * threshold, each change's decision is kept as a mark so the same change handled again decides the same with no
 * write, and a failure to count means "not in a burst" (the stall is alerted on its own), never a stall held back.
 */
public final class StallBursts {
    private final AlertWindowStore windows;
    private final StallWindowStore stalls;
    private final AlertBursts.Settings settings;
    private final Clock clock;
    private final AlertBursts owner;
    private final Set<Instant> pastThreshold = AlertBursts.remembered();
    private final Set<Instant> digested = AlertBursts.remembered();

    StallBursts(AlertBursts owner, AlertWindowStore windows, AlertBursts.Settings settings, Clock clock) {
        this.owner = owner;
        this.windows = windows;
        this.stalls = windows.stalls();
        this.settings = settings;
        this.clock = clock;
    }

    /**
     * The decision for stall change {@code s} ({@code held}: its agent's flapping flag holds it, so its start is no
     * burst's); a failure of the counting is logged and answers {@link AlertBursts.Decision#NONE}.
     */
    AlertBursts.Decision decide(StreamChanges.Stall s, boolean held) {
        try {
            if (s.resumedAt() != null) {
                return end(s);
            }
            // A stall raised in its restart's death write is that death, counted as one.
            boolean alive = s.status() != null
                    && AgentStatus.fromWire(s.status()).map(AgentStatus::isAlive).orElse(false);
            return held || !alive || s.ended() ? AlertBursts.Decision.NONE : start(s);
        } catch (RuntimeException e) {
            Log.emit(Log.line("WARN", "stall burst counting failed; alerted one by one").put("team", s.team())
                    .put("agentId", s.agentId()).put("since", s.since().toString()).put("error", e.toString()));
            return AlertBursts.Decision.NONE;
        }
    }

    /** The stall's id within its window's marks: the agent and the stall's start. */
    private static String stallId(StreamChanges.Stall s) {
        return "S#" + s.team() + "#" + s.agentId() + "#" + s.since().toEpochMilli();
    }

    private AlertBursts.Decision start(StreamChanges.Stall s) {
        Instant start = owner.windowOf(s.since());
        String id = stallId(s);
        AlertWindowStore.Mark mark = windows.mark(start, id);
        if (mark != null) {
            return !mark.burst() ? AlertBursts.Decision.NONE : new AlertBursts.Decision(start, mark.raised()
                    ? List.of(started(s.team(), start, settings, s.since())) : List.of());
        }
        int counted = pastThreshold.contains(start) ? 0 : stalls.countHead(start, settings.threshold() + 1);
        boolean first = counted == settings.threshold() + 1;
        if (counted == 0 || first) {
            pastThreshold.add(start);
        }
        boolean burst = counted == 0 || first;
        try {
            stalls.countStall(start, s.team(), s.agentId(), s.hostId() == null ? AlertBursts.NO_HOST : s.hostId(),
                    settings.named());
            if (burst && !first && owner.digestMayBeOut(start)) {
                // Counted before this read: if the digest is not out yet, it will count this stall.
                burst = !digested(start);
            }
            windows.putMark(start, id, new AlertWindowStore.Mark(burst, first));
        } catch (RuntimeException e) {
            if (!first) {
                throw e;
            }
            // The first past the threshold raises the window's start whatever else failed: its digest must run.
            Log.emit(Log.line("WARN", "stall burst counting failed after the window's start").put("team", s.team())
                    .put("agentId", s.agentId()).put("error", e.toString()));
        }
        if (!burst) {
            return AlertBursts.Decision.NONE;
        }
        return new AlertBursts.Decision(start, first ? List.of(started(s.team(), start, settings, s.since()))
                : List.of());
    }

    /**
     * A stall's end, counted only if its start was (its mark): over, and back if with progress again ({@code ended}:
     * by a death, a leave or a new life, over as a stall but not back). It carries {@code burst} as its start did.
     */
    private AlertBursts.Decision end(StreamChanges.Stall s) {
        Instant start = owner.windowOf(s.since());
        AlertWindowStore.Mark began = windows.mark(start, stallId(s));
        if (began == null) {
            return AlertBursts.Decision.NONE;
        }
        String id = stallId(s) + "#end";
        AlertWindowStore.Mark mark = windows.mark(start, id);
        if (mark != null) {
            return decision(start, mark.burst(), mark.raised(), s.resumedAt());
        }
        StallWindowStore.Shard shard = stalls.countEnd(start, s.team(), s.agentId(), s.ended() ? 0 : 1);
        if (shard == null) {
            return AlertBursts.Decision.NONE;
        }
        boolean last = false;
        if (shard.settled() && past(start)) {
            last = stalls.totals(start).allOver() && stalls.markResolved(start);
        }
        windows.putMark(start, id, new AlertWindowStore.Mark(began.burst(), last));
        return decision(start, began.burst(), last, s.resumedAt());
    }

    private AlertBursts.Decision decision(Instant start, boolean burst, boolean last, Instant at) {
        List<LifelineEvent> raised = last ? List.of(resolved(start, stalls.totals(start), at)) : List.of();
        return burst || last ? new AlertBursts.Decision(burst ? start : null, raised) : AlertBursts.Decision.NONE;
    }

    /** The window went past its threshold of stalls: remembered, else one consistent read of its head. */
    private boolean past(Instant start) {
        if (pastThreshold.contains(start)) {
            return true;
        }
        AlertWindowStore.Head head = stalls.head(start);
        boolean past = head != null && head.counted() > settings.threshold();
        if (past) {
            pastThreshold.add(start);
        }
        return past;
    }

    private boolean digested(Instant start) {
        if (digested.contains(start)) {
            return true;
        }
        AlertWindowStore.Head head = stalls.head(start);
        if (head != null && head.digested()) {
            digested.add(start);
            return true;
        }
        return false;
    }

    private static String idOf(Instant start, String what) {
        return "alerts/stall-burst/" + start.toEpochMilli() + "/" + what;
    }

    /**
     * A window past its threshold of stalls ({@code team}: that of the stall that took it past), which starts its
     * digest of stalls. It names no team, so the team that raised it logs the same detail, as its own.
     */
    public static LifelineEvent started(String team, Instant start, AlertBursts.Settings settings, Instant at) {
        Instant end = start.plus(settings.window());
        String id = idOf(start, "started");
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", start.toString()).put("windowEnd", end.toString())
                .put("digestAt", end.plus(AlertBursts.DIGEST_MARGIN).toString())
                .put("threshold", settings.threshold()).put("at", at.toString());
        ObjectNode view = d.deepCopy().put("team", team).put("scope", "team");
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_STALL_BURST_STARTED, id, at, d,
                Map.of(team, view));
    }

    /**
     * Every stall of the burst of window {@code start} is over: how many, and how many of them with progress again
     * ({@code back}; the rest ended by a death, a leave or a new life). The operator's alone (team {@code *}).
     */
    public static LifelineEvent resolved(Instant start, StallWindowStore.Totals all, Instant at) {
        String id = idOf(start, "resolved");
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", start.toString()).put("stalls", all.stalls()).put("over", all.over())
                .put("back", all.back()).put("ended", all.over() - all.back()).put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_STALL_BURST_RESOLVED, id, at, d);
    }
}
