package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Digests for bursts (docs/alerts-noise.md): what the outbox decides about one status change so that a burst of
 * deaths reaches people as one digest per window instead of one message per agent. Windows are
 * {@link Settings#window()} long and aligned to the epoch. The first {@code threshold} alertable deaths of
 * a window (to dead or dead_failed_revive from alive, not caused by a silent host) go out one by one as always; a
 * later one carries {@code burst} (the window's start), which the alert rules leave to the digest, and the first of
 * them also raises {@code AlertBurstStarted}, which starts the window's digest flow. A change while still dead of a
 * death in a burst (a failed revive) and the agent's return or clean-up carry {@code burst} too; the return that
 * leaves every agent of the burst back, and none in {@code dead_failed_revive}, raises {@code AlertBurstResolved}.
 * Once a window's digest is out, a late death of that window is alerted one by one again, so none falls between.
 *
 * <p>The counts are spread over small items ({@link AlertWindowStore}), none written by every death. Only the
 * window's first {@code threshold + 1} deaths write its head, which decides exactly once which death is the first
 * past the threshold; this container remembers a window past its threshold and does not ask again. The events
 * themselves are all published, always: {@link #decide} never throws, and a failure to count means "not in a burst"
 * (the change is alerted on its own), never a change held back.
 *
 * <p>Stalls under {@code onStall: alert} are counted in the same windows beside the deaths, in counts of their own,
 * and reach people as a digest of stalls ({@link StallBursts}, {@link #decideStall}); the deaths' decisions here are
 * not changed by them.
 */
public final class AlertBursts {
    static final String NO_HOST = "-";
    /** The clocks of the outbox and the digest flow may differ by this much (both are AWS time). */
    static final Duration CLOCK_SKEW = Duration.ofSeconds(1);
    /** Windows this container remembers as past their threshold, or digested. */
    private static final int REMEMBERED = 64;

    /**
     * Digests for bursts (docs/alerts-noise.md): past {@code threshold} alertable deaths in one {@code window}
     * (windows aligned to the epoch), the window's further deaths reach people in one digest at its end, naming up
     * to {@code named} agents.
     */
    public record Settings(int threshold, Duration window, int named) {
    }

    private final AlertWindowStore windows;
    private final Settings settings;
    private final Clock clock;
    private final Set<Instant> pastThreshold = remembered();
    private final Set<Instant> digested = remembered();
    /** The stalls of the same windows, counted beside the deaths. */
    private final StallBursts stalls;

    public AlertBursts(AlertWindowStore windows, Settings settings, Clock clock) {
        this.windows = windows;
        this.settings = settings;
        this.clock = clock;
        this.stalls = new StallBursts(this, windows, settings, clock);
    }

    static Set<Instant> remembered() {
        return Collections.synchronizedSet(Collections.newSetFromMap(new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Instant, Boolean> eldest) {
                return size() > REMEMBERED;
            }
        }));
    }

    /** What a change means: {@code burst} (its window's start, or null: alerted one by one) and events it raises. */
    record Decision(Instant burst, List<LifelineEvent> raised) {
        static final Decision NONE = new Decision(null, List.of());
    }

    /** The start of the window holding {@code at}. */
    Instant windowOf(Instant at) {
        long w = settings.window().toMillis();
        return Instant.ofEpochMilli(Math.floorDiv(at.toEpochMilli(), w) * w);
    }

    /**
     * The decision for {@code c}; a failure of the counting (any store error, a refused write) is logged and
     * answers {@link Decision#NONE}: the change is published and alerted on its own.
     */
    Decision decide(StreamChanges.StatusChanged c) {
        try {
            return decideOrThrow(c);
        } catch (RuntimeException e) {
            Log.emit(Log.line("WARN", "burst counting failed; alerted one by one").put("team", c.team())
                    .put("agentId", c.agentId()).put("seq", c.transition().seq()).put("error", e.toString()));
            return Decision.NONE;
        }
    }

    /**
     * The decision for stall change {@code s} under {@code onStall: alert} ({@code held}: its agent's flapping flag
     * holds it): counted beside the deaths, for the window's digest of stalls ({@link StallBursts}). Never throws.
     */
    Decision decideStall(StreamChanges.Stall s, boolean held) {
        return stalls.decide(s, held);
    }

    private Decision decideOrThrow(StreamChanges.StatusChanged c) {
        Transition t = c.transition();
        if (c.cause() != null || t.from() == null) {
            return Decision.NONE;
        }
        boolean toDead = t.to() == AgentStatus.DEAD || t.to() == AgentStatus.DEAD_FAILED_REVIVE;
        if (toDead && t.from().isAlive()) {
            return death(c);
        }
        if (c.diedAt() == null || t.from().isAlive()) {
            return Decision.NONE;
        }
        return afterDeath(c, windowOf(c.diedAt()));
    }

    /**
     * A change of an agent still (or no longer) down after a death of window {@code start}: a return (to ready or
     * working) or a clean-up (to offline) counts back; into dead_failed_revive counts the agent failed, out of it
     * (a rejoin, another revive) not failed any more; a clean-up of a failed agent keeps it failed (nobody brought
     * it back). The return that leaves the whole window settled raises its {@code AlertBurstResolved}.
     */
    private Decision afterDeath(StreamChanges.StatusChanged c, Instant start) {
        Transition t = c.transition();
        int back = t.to().isAlive() || t.to() == AgentStatus.OFFLINE ? 1 : 0;
        int failed = (t.to() == AgentStatus.DEAD_FAILED_REVIVE ? 1 : 0)
                - (t.from() == AgentStatus.DEAD_FAILED_REVIVE && t.to() != AgentStatus.OFFLINE ? 1 : 0);
        if (back == 0 && failed == 0) {
            // Down again while still down (restarting -> dead) is the burst's if the death is; a revive's start
            // (dead -> restarting) is no alert of anyone's and needs no read.
            return t.to() == AgentStatus.DEAD && past(start) ? new Decision(start, List.of()) : Decision.NONE;
        }
        String id = changeId(c);
        AlertWindowStore.Mark mark = windows.mark(start, id);
        if (mark != null) {
            // Handled before: the same decision, no write (the event log holds what it raised).
            return !mark.burst() ? Decision.NONE : new Decision(start,
                    mark.raised() ? List.of(resolved(start, c.transition().at())) : List.of());
        }
        AlertWindowStore.Shard shard = windows.countAfterDeath(start, c.team(), c.agentId(), back, failed);
        if (shard == null) {
            return Decision.NONE;
        }
        boolean burst = past(start);
        boolean last = false;
        if (burst && back == 1 && shard.settled()) {
            AlertWindowStore.Totals all = windows.totals(start);
            last = all.back() >= all.deaths() && all.failed() <= 0 && windows.markResolved(start);
        }
        windows.putMark(start, id, new AlertWindowStore.Mark(burst, last));
        if (!burst) {
            return Decision.NONE;
        }
        return new Decision(start, last ? List.of(resolved(start, c.transition().at())) : List.of());
    }

    /** The window went past its threshold: remembered, else one consistent read of its head. */
    private boolean past(Instant start) {
        if (pastThreshold.contains(start)) {
            return true;
        }
        AlertWindowStore.Head head = windows.head(start);
        boolean past = head != null && head.counted() > settings.threshold();
        if (past) {
            pastThreshold.add(start);
        }
        return past;
    }

    /** The change's id within its window's marks: the agent and the transition's seq. */
    private static String changeId(StreamChanges.StatusChanged c) {
        return c.team() + "#" + c.agentId() + "#" + c.transition().seq();
    }

    private Decision death(StreamChanges.StatusChanged c) {
        Transition t = c.transition();
        Instant start = windowOf(t.at());
        String id = changeId(c);
        AlertWindowStore.Mark mark = windows.mark(start, id);
        if (mark != null) {
            // Handled before (a stream retry, the repair's replay): the same decision, and no write.
            return !mark.burst() ? Decision.NONE : new Decision(start, mark.raised()
                    ? List.of(started(c.team(), start, settings, t.at())) : List.of());
        }
        int counted = pastThreshold.contains(start) ? 0 : windows.countHead(start, settings.threshold() + 1,
                pagerDutyKey(c));
        boolean first = counted == settings.threshold() + 1;
        if (counted == 0 || first) {
            pastThreshold.add(start);
        }
        boolean burst = counted == 0 || first;
        try {
            windows.countDeath(start, c.team(), c.agentId(), c.hostId() == null ? NO_HOST : c.hostId(),
                    t.trigger().wire(), t.to() == AgentStatus.DEAD_FAILED_REVIVE, settings.named());
            if (burst && !first && digestMayBeOut(start)) {
                // Counted before this read: if the digest is not out yet, it will count this death.
                burst = !digested(start);
            }
            windows.putMark(start, id, new AlertWindowStore.Mark(burst, first));
        } catch (RuntimeException e) {
            if (!first) {
                throw e;
            }
            // The first past the threshold raises the window's start whatever else failed: its digest must run.
            Log.emit(Log.line("WARN", "burst counting failed after the window's start").put("team", c.team())
                    .put("agentId", c.agentId()).put("error", e.toString()));
        }
        if (!burst) {
            return Decision.NONE;
        }
        return new Decision(start, first ? List.of(started(c.team(), start, settings, t.at())) : List.of());
    }

    /**
     * Whether the window's digest flow may have marked it digested by now: not before its {@code digestAt} (the
     * flow waits until then), read on this clock after the count, less the clocks' possible skew.
     */
    boolean digestMayBeOut(Instant start) {
        return !clock.instant().isBefore(start.plus(settings.window()).plus(DIGEST_MARGIN).minus(CLOCK_SKEW));
    }

    private boolean digested(Instant start) {
        if (digested.contains(start)) {
            return true;
        }
        AlertWindowStore.Head head = windows.head(start);
        if (head != null && head.digested()) {
            digested.add(start);
            return true;
        }
        return false;
    }

    /**
     * The PagerDuty key the first death of a window pages under (template.yaml's rules): the agent's, or its
     * {@code /reviving} key when the revive flow handles it. The window's digest pages under the same key, so a
     * burst is one incident with its first death's.
     */
    static String pagerDutyKey(StreamChanges.StatusChanged c) {
        boolean reviving = c.transition().to() == AgentStatus.DEAD && c.hostId() != null;
        return "lifeline/" + c.team() + "/" + c.agentId() + (reviving ? "/reviving" : "");
    }

    /**
     * A window past its threshold ({@code team}: that of the death that took it past), which starts its digest. It
     * names no team, so the team that raised it logs the same detail, as its own.
     */
    public static LifelineEvent started(String team, Instant start, Settings settings, Instant at) {
        Instant end = start.plus(settings.window());
        String id = "alerts/burst/" + start.toEpochMilli() + "/started";
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", start.toString()).put("windowEnd", end.toString())
                .put("digestAt", end.plus(DIGEST_MARGIN).toString()).put("threshold", settings.threshold())
                .put("at", at.toString());
        ObjectNode view = d.deepCopy().put("team", team).put("scope", "team");
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_BURST_STARTED, id, at, d,
                Map.of(team, view));
    }

    /** Time after a window's end for its last deaths to come through the outbox before the digest. */
    static final Duration DIGEST_MARGIN = Duration.ofSeconds(5);

    /** Every agent of the burst of window {@code start} is back or handled: read with its totals and head. */
    private LifelineEvent resolved(Instant start, Instant at) {
        AlertWindowStore.Totals all = windows.totals(start);
        AlertWindowStore.Head head = windows.head(start);
        return resolved(new AlertWindowStore.Window(start, all.deaths(), all.back(), head == null ? null : head.lead(),
                head != null && head.digested(), Map.of(), Map.of(), all.byReason(), List.of(), 0, 0, all.failed()),
                at);
    }

    /**
     * Every agent of the burst of window {@code w} is back or handled. The operator's alone (team {@code *}): each
     * team's own returns are its own {@code AgentStatusChanged}, marked {@code burst}.
     */
    public static LifelineEvent resolved(AlertWindowStore.Window w, Instant at) {
        String id = "alerts/burst/" + w.start().toEpochMilli() + "/resolved";
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", w.start().toString()).put("deaths", w.deaths()).put("back", w.back())
                .put("pagerDutyKey", w.lead()).put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_BURST_RESOLVED, id, at, d);
    }

    /**
     * The window's digest, as the digest flow ({@code DigestHandler}) sends it to the operator's destinations:
     * bounded whatever the fleet (the largest teams and hosts, counts of the rest, the first named agents). Its team
     * views are written by the digest flow page by page ({@code BurstDigest}), not carried here.
     */
    public static LifelineEvent digest(AlertWindowStore.Window w, Settings settings, String dashboardUrl,
                                Instant at) {
        String id = digestId(w.start());
        int individually = Math.min(w.deaths(), settings.threshold());
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", w.start().toString()).put("windowEnd", w.start().plus(settings.window()).toString())
                .put("deaths", w.deaths()).put("sentOneByOne", individually)
                .put("inDigest", w.deaths() - individually).put("teams", w.teams()).put("hosts", w.hosts());
        d.set("byTeam", Json.MAPPER.valueToTree(w.byTeam()));
        d.set("byHost", Json.MAPPER.valueToTree(w.byHost()));
        d.set("byReason", Json.MAPPER.valueToTree(w.byReason()));
        d.set("agents", Json.MAPPER.valueToTree(w.names()));
        d.put("unnamed", Math.max(0, w.deaths() - w.names().size()));
        d.put("failed", w.failed());
        d.put("summary", summary(w));
        d.put("pagerDutyKey", w.lead());
        // Every agent of the burst back (or handled) before its digest, none in dead_failed_revive: AlertBurstResolved
        // went out already and resolved the burst's incident; PagerDuty's digest rule skips such a digest so it does
        // not reopen it. A failed revive is not back: that digest pages.
        d.put("allBack", w.back() >= w.deaths() && w.failed() <= 0);
        d.put("dashboard", (dashboardUrl == null ? "" : dashboardUrl) + "#status=dead");
        d.put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_DIGEST, id, at, d);
    }

    public static String digestId(Instant start) {
        return "alerts/burst/" + start.toEpochMilli() + "/digest";
    }

    /**
     * A team's own view of the digest, for its event log: its deaths in the window, the ids and hosts of its first
     * few, and the fleet's total as a bare number; nothing of another team.
     */
    public static ObjectNode teamView(AlertWindowStore.TeamCount t, Instant start, Settings settings,
                               int fleetDeaths, Instant at) {
        ObjectNode d = Json.object().put("eventId", digestId(start)).put("team", t.team()).put("scope", "team")
                .put("window", start.toString()).put("windowEnd", start.plus(settings.window()).toString())
                .put("deaths", t.deaths());
        d.set("agents", Json.MAPPER.valueToTree(t.names()));
        d.put("unnamed", Math.max(0, t.deaths() - t.names().size()));
        d.set("byHost", Json.MAPPER.valueToTree(t.hosts()));
        d.put("fleetDeaths", fleetDeaths).put("at", at.toString());
        return d;
    }

    /**
     * One line for people: the counts by team, host and reason (the largest ten of each, and how many more) and the
     * named agents.
     */
    static String summary(AlertWindowStore.Window w) {
        String named = String.join(", ", w.names())
                + (w.deaths() > w.names().size() ? " and " + (w.deaths() - w.names().size()) + " more" : "");
        return "by team: " + top(w.byTeam(), w.teams()) + "; by host: " + top(w.byHost(), w.hosts())
                + "; by reason: " + top(w.byReason(), w.byReason().size()) + "; agents: " + named;
    }

    private static String top(Map<String, Integer> counts, int of) {
        List<Map.Entry<String, Integer>> sorted = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder())
                        .thenComparing(Map.Entry.comparingByKey())).toList();
        String shown = sorted.stream().limit(TOP).map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        int shownCount = Math.min(TOP, sorted.size());
        return of > shownCount ? shown + " and " + (of - shownCount) + " more" : shown;
    }

    /** The teams and hosts a digest names, the largest first. */
    public static final int TOP = 10;
}
