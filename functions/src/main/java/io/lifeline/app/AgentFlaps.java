package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.FlapHold;
import io.lifeline.agent.Transition;
import io.lifeline.store.outbox.FlapStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Flapping (docs/alerts-noise.md): what the outbox decides about one status change so that an agent in a crash loop
 * is named once instead of alerting at every death. A flip is a change between alive and down (dead, restarting,
 * dead_failed_revive; offline is a deliberate leave and no flip). Flips are counted on the ledger
 * ({@link FlapStore}) in windows of {@link Settings#window()} opened by the first flip; the flip that takes
 * a window past {@link Settings#threshold()} flags the agent and raises one {@code AgentFlapping}. While the
 * flag stands, every change of the agent into or out of a down status carries {@code flapping} (since when), which
 * the per-agent alert rules skip; every change is still recorded and published. The flag's own check flow
 * (the flag check's Lambda handler, {@code FlapCheckHandler}) resolves the flag once the agent has not flipped for
 * {@link Settings#stable()}.
 * The flag fails open ({@link FlapHold}): a change that comes one sweep interval after the check was due, the check
 * having failed or never run, is no longer held; it is alerted as ever, and ends the flag in the write that counts
 * it (one {@code AgentFlappingResolved}, the id the check would have sent). A change that follows from a silent
 * host is its host's incident and is not counted.
 */
public final class AgentFlaps {
    /**
     * Flapping (docs/alerts-noise.md): an agent whose status goes between alive and not alive more than
     * {@code threshold} times within {@code window} is flagged flapping; the flag resolves once it has not changed
     * for {@code stable}, and holds no change that comes later than that plus one {@code sweep} interval, even if its
     * check never ran ({@link #hold}).
     */
    public record Settings(int threshold, Duration window, Duration stable, Duration sweep) {
        /** The flag's judgement of time: when it resolves, and until when it holds an agent's changes. */
        public FlapHold hold() {
            return new FlapHold(stable, sweep);
        }
    }

    private final FlapStore store;
    private final Settings settings;
    private final FlapHold hold;

    public AgentFlaps(FlapStore store, Settings settings) {
        this.store = store;
        this.settings = settings;
        this.hold = settings.hold();
    }

    /** What a change means: {@code flapping} (the flag's time, or null: alerted as ever) and events it raises. */
    record Decision(Instant flapping, List<LifelineEvent> raised) {
        static final Decision NONE = new Decision(null, List.of());
        /** A change between alive statuses (working, ready): says nothing about the flag, which it leaves as is. */
        static final Decision UNTOUCHED = new Decision(null, List.of());
    }

    static boolean down(AgentStatus s) {
        return !s.isAlive() && s != AgentStatus.OFFLINE;
    }

    Decision decide(StreamChanges.StatusChanged c) {
        Transition t = c.transition();
        if (t.from() == null || c.cause() != null) {
            return Decision.NONE;
        }
        boolean flip = (t.from().isAlive() && down(t.to())) || (down(t.from()) && t.to().isAlive());
        if (!flip) {
            if (!down(t.to())) {
                return t.to().isAlive() && t.from().isAlive() ? Decision.UNTOUCHED : Decision.NONE;
            }
            // A change while down (a failed revive) of a flagged agent is held with its flag, within the flag's
            // bound from its newest flip: one read, no write.
            FlapStore.Flaps f = store.read(c.team(), c.agentId());
            return f == null || f.flaggedAt() == null || !hold.holds(f.last(), t.at()) ? Decision.NONE
                    : new Decision(f.flaggedAt(), List.of());
        }
        FlapStore.Flaps f = store.count(c.team(), c.agentId(), t.seq(), t.to().wire(), t.at(), settings.window())
                .flaps();
        if (f.flaggedAt() != null) {
            if (f.flaggedAt().equals(t.at())) {
                // The change that flagged it, handled again, raises the same event (the same id).
                return new Decision(f.flaggedAt(), List.of(flapping(c, f.flaggedAt(), f.count(), settings)));
            }
            // Held while it comes within the flag's bound from the flip before it (this change's own count moved
            // that one to previous; an item counted before previous was kept: the flag's own time).
            Instant before = f.seq() == t.seq() && f.previous() != null ? f.previous() : f.flaggedAt();
            if (hold.holds(before, t.at())) {
                return new Decision(f.flaggedAt(), List.of());
            }
            return lapsed(c, f.flaggedAt(), before);
        }
        if (f.count() <= settings.threshold()) {
            return Decision.NONE;
        }
        if (store.flag(c.team(), c.agentId(), t.at())) {
            return new Decision(t.at(), List.of(flapping(c, t.at(), f.count(), settings)));
        }
        FlapStore.Flaps now = store.read(c.team(), c.agentId());
        return now == null || now.flaggedAt() == null ? Decision.NONE : new Decision(now.flaggedAt(), List.of());
    }

    /**
     * Change {@code c} came past the bound of the flag raised at {@code since} (the agent stable since {@code stable}):
     * the flag's check failed or never ran. The change is not held; the flag ends in one conditional write, and its
     * one resolve is raised here (none if the check, or an earlier pass of this change, ended it first).
     */
    private Decision lapsed(StreamChanges.StatusChanged c, Instant since, Instant stable) {
        Transition t = c.transition();
        if (!store.lapse(c.team(), c.agentId(), since, t.seq())) {
            return Decision.NONE;
        }
        return new Decision(null, List.of(resolved(c.team(), c.agentId(), since, stable, t.from().wire(), settings,
                t.at())));
    }

    /** The agent flagged flapping at {@code since}, at change {@code c}, its {@code changes}-th in the window. */
    public static LifelineEvent flapping(StreamChanges.StatusChanged c, Instant since, int changes,
                                  Settings settings) {
        String id = c.team() + "/" + c.agentId() + "/flapping/" + since.toEpochMilli();
        ObjectNode d = Json.object().put("eventId", id).put("team", c.team()).put("agentId", c.agentId());
        Json.putIfPresent(d, "name", c.name());
        Json.putIfPresent(d, "hostId", c.hostId());
        d.put("since", since.toString()).put("changes", changes).put("threshold", settings.threshold())
                .put("windowSeconds", settings.window().toSeconds())
                .put("stableSeconds", settings.stable().toSeconds())
                .put("checkAt", since.plus(settings.stable()).toString())
                .put("status", c.transition().to().wire()).put("seq", c.transition().seq())
                .put("at", c.transition().at().toString());
        if (c.hostRestartsLastHour() != null) {
            // Its host daemon's own restarts (each also two of the changes counted: its crash report and its join).
            d.put("hostRestartsLastHour", c.hostRestartsLastHour());
        }
        return new LifelineEvent(c.team(), EventCatalogue.AGENT_FLAPPING, id, c.transition().at(), d);
    }

    /** The flag raised at {@code since} ends: the agent has not flipped since {@code last}; it is {@code status}. */
    public static LifelineEvent resolved(String team, String agentId, Instant since, Instant last, String status,
                                  Settings settings, Instant at) {
        String id = team + "/" + agentId + "/flapping/" + since.toEpochMilli() + "/resolved";
        AgentStatus s = status == null ? null : AgentStatus.fromWire(status).orElse(null);
        ObjectNode d = Json.object().put("eventId", id).put("team", team).put("agentId", agentId)
                .put("since", since.toString()).put("stableSince", last.toString())
                .put("stableSeconds", settings.stable().toSeconds());
        Json.putIfPresent(d, "status", status);
        d.put("alive", s != null && s.isAlive()).put("at", at.toString());
        return new LifelineEvent(team, EventCatalogue.AGENT_FLAPPING_RESOLVED, id, at, d);
    }
}
