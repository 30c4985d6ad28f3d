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
import java.util.function.Function;

/**
 * Flapping (docs/alerts-noise.md): what the outbox decides about one status change so that an agent in a crash loop
 * is named once instead of alerting at every death. A flip is a change between alive and down (dead, restarting,
 * dead_failed_revive; offline is a deliberate leave and no flip); a stall under {@code onStall: alert}, in which the
 * agent stays working, is a flip into a down status and its end one back ({@link #decideStall}). Flips are counted
 * on the ledger ({@link FlapStore}) in windows of {@link Settings#window()} opened by the first flip; the flip that
 * takes a window past {@link Settings#threshold()} flags the agent and raises one {@code AgentFlapping}. While the
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

    /** What a stall's start leaves as the agent's newest change on its flap item, and in its flag's events. */
    static final String STALLED = "stalled";

    private final FlapStore store;
    private final Settings settings;
    private final FlapHold hold;

    public AgentFlaps(FlapStore store, Settings settings) {
        this.store = store;
        this.settings = settings;
        this.hold = settings.hold();
    }

    /** What a change means: {@code flapping} (the flag's time, or null: alerted as ever) and events it raises. */
    record Decision(Instant flapping, List<LifelineEvent> raised, Instant ended) {
        static final Decision NONE = new Decision(null, List.of());
        /** A change between alive statuses (working, ready): says nothing about the flag, which it leaves as is. */
        static final Decision UNTOUCHED = new Decision(null, List.of());

        /** {@code ended}: the flag (its time) this decision ended as lapsed, or null. */
        Decision(Instant flapping, List<LifelineEvent> raised) {
            this(flapping, raised, null);
        }
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
        // This change's own count moved the flip before it to previous (an item counted before previous was kept:
        // none, so the flag's own time).
        return counted(c.team(), c.agentId(), f, t.at(), f.seq() == t.seq(),
                since -> flapping(c, since, f.count(), settings),
                since -> store.lapse(c.team(), c.agentId(), since, t.seq()) ? t.from().wire() : null);
    }

    /**
     * What a stall change means (docs/alerts-noise.md): under {@code onStall: alert} the agent stays {@code working},
     * so its stall is the flip a death would be. Its start counts as a change into a down status ({@code stalled})
     * and its end (progress again, or the turn ended) as the change back to alive, so a stalling agent is flagged at
     * the same stall as under {@code onStall: restart}, where each stall is a death and a join. A stall change the
     * agent's status speaks for is not counted again: the start in its restart's death write (the death counts), the
     * end by a death, a leave or a new life's join ({@code ended}: that change counts, or is no flip). Such a change
     * of a flagged agent is held with the flag: {@code ofStatus}, its own record's status change's decision, else one
     * read, judged from the newest flip.
     */
    Decision decideStall(StreamChanges.Stall s, Decision ofStatus) {
        boolean resumed = s.resumedAt() != null;
        boolean alive = s.status() != null && AgentStatus.fromWire(s.status()).map(AgentStatus::isAlive).orElse(false);
        if (!alive || s.ended()) {
            if (ofStatus != null) {
                return ofStatus.flapping() == null ? Decision.NONE : new Decision(ofStatus.flapping(), List.of());
            }
            Instant at = resumed ? s.resumedAt() : s.since();
            FlapStore.Flaps f = store.read(s.team(), s.agentId());
            return f == null || f.flaggedAt() == null || !hold.holds(f.last(), at) ? Decision.NONE
                    : new Decision(f.flaggedAt(), List.of());
        }
        long key = FlapStore.stallKey(s.since(), resumed);
        Instant at = resumed ? s.resumedAt() : s.since();
        String status = resumed ? s.status() : STALLED;
        FlapStore.Flaps f = store.countStall(s.team(), s.agentId(), key, status, at, settings.window()).flaps();
        return counted(s.team(), s.agentId(), f, at, f.stall() == key && at.equals(f.last()),
                since -> flapping(s, status, since, f.count(), at, settings),
                since -> store.lapseAtStall(s.team(), s.agentId(), since, key, at)
                        ? (resumed ? STALLED : s.status()) : null);
    }

    /**
     * The decision for a flip counted at {@code at}, the item {@code f} after its count ({@code newest}: this count
     * is still the newest, so {@code f.previous()} is the flip before it). Past the threshold it flags the agent
     * ({@code flagging}: its {@code AgentFlapping}, given the flag's time); flagged, it is held while it comes within
     * the flag's bound from the flip before it, else the flag lapses ({@code lapse}: ends the flag of the time given
     * in one conditional write and answers the status before the flip, or null when it was ended already).
     */
    private Decision counted(String team, String agentId, FlapStore.Flaps f, Instant at, boolean newest,
                             Function<Instant, LifelineEvent> flagging, Function<Instant, String> lapse) {
        if (f.flaggedAt() != null) {
            if (f.flaggedAt().equals(at)) {
                // The change that flagged it, handled again, raises the same event (the same id).
                return new Decision(f.flaggedAt(), List.of(flagging.apply(f.flaggedAt())));
            }
            Instant before = newest && f.previous() != null ? f.previous() : f.flaggedAt();
            if (hold.holds(before, at)) {
                return new Decision(f.flaggedAt(), List.of());
            }
            return lapsed(team, agentId, f.flaggedAt(), before, at, lapse);
        }
        if (f.count() <= settings.threshold()) {
            return Decision.NONE;
        }
        if (store.flag(team, agentId, at)) {
            return new Decision(at, List.of(flagging.apply(at)));
        }
        FlapStore.Flaps now = store.read(team, agentId);
        return now == null || now.flaggedAt() == null ? Decision.NONE : new Decision(now.flaggedAt(), List.of());
    }

    /**
     * A change at {@code at} came past the bound of the flag raised at {@code since} (the agent stable since
     * {@code stable}): the flag's check failed or never ran. The change is not held; the flag ends in one conditional
     * write, and its one resolve is raised here (none if the check, or an earlier pass of this change, ended it first).
     */
    private Decision lapsed(String team, String agentId, Instant since, Instant stable, Instant at,
                            Function<Instant, String> lapse) {
        String status = lapse.apply(since);
        if (status == null) {
            return Decision.NONE;
        }
        return new Decision(null, List.of(resolved(team, agentId, since, stable, status, settings, at)), since);
    }

    /** The agent flagged flapping at {@code since}, at change {@code c}, its {@code changes}-th in the window. */
    public static LifelineEvent flapping(StreamChanges.StatusChanged c, Instant since, int changes,
                                  Settings settings) {
        ObjectNode d = flapping(c.team(), c.agentId(), c.name(), c.hostId(), since, changes, settings)
                .put("status", c.transition().to().wire()).put("seq", c.transition().seq())
                .put("at", c.transition().at().toString());
        if (c.hostRestartsLastHour() != null) {
            // Its host daemon's own restarts (each also two of the changes counted: its crash report and its join).
            d.put("hostRestartsLastHour", c.hostRestartsLastHour());
        }
        return new LifelineEvent(c.team(), EventCatalogue.AGENT_FLAPPING, d.get("eventId").asText(),
                c.transition().at(), d);
    }

    /**
     * The agent flagged flapping at {@code since}, at a change of its stall {@code s} at {@code at} (its start:
     * {@code status} {@code stalled}; its end: the status it resumed in), its {@code changes}-th in the window. No
     * {@code seq}: a stall changes no status.
     */
    public static LifelineEvent flapping(StreamChanges.Stall s, String status, Instant since, int changes,
                                         Instant at, Settings settings) {
        ObjectNode d = flapping(s.team(), s.agentId(), s.name(), s.hostId(), since, changes, settings)
                .put("status", status).put("stalledSince", s.since().toString()).put("at", at.toString());
        return new LifelineEvent(s.team(), EventCatalogue.AGENT_FLAPPING, d.get("eventId").asText(), at, d);
    }

    private static ObjectNode flapping(String team, String agentId, String name, String hostId, Instant since,
                                       int changes, Settings settings) {
        String id = team + "/" + agentId + "/flapping/" + since.toEpochMilli();
        ObjectNode d = Json.object().put("eventId", id).put("team", team).put("agentId", agentId);
        Json.putIfPresent(d, "name", name);
        Json.putIfPresent(d, "hostId", hostId);
        return d.put("since", since.toString()).put("changes", changes).put("threshold", settings.threshold())
                .put("windowSeconds", settings.window().toSeconds())
                .put("stableSeconds", settings.stable().toSeconds())
                .put("checkAt", since.plus(settings.stable()).toString());
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
