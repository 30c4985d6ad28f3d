package io.lifeline.events;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.config.Config;
import io.lifeline.store.AlertWindowStore;
import io.lifeline.store.StreamChanges;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Digests for bursts (docs/alerts-noise.md): what the outbox decides about one status change so that a burst of
 * deaths reaches people as one digest per window instead of one message per agent. Windows are
 * {@link Config.AlertBursts#window()} long and aligned to the epoch. The first {@code threshold} alertable deaths of
 * a window (to dead or dead_failed_revive from alive, not caused by a silent host) go out one by one as always; a
 * later one carries {@code burst} (the window's start), which the alert rules leave to the digest, and the first of
 * them also raises {@code AlertBurstStarted}, which starts the window's digest flow. A change while still dead of a
 * death in a burst (a failed revive) and the agent's return or clean-up carry {@code burst} too; the last return
 * of a burst's agents raises {@code AlertBurstResolved}. Once a window's digest is out, a late death of that window
 * is alerted one by one again, so none falls between. The events themselves are all published, always.
 */
public final class AlertBursts {
    static final String NO_HOST = "-";

    private final AlertWindowStore windows;
    private final Config.AlertBursts settings;

    AlertBursts(AlertWindowStore windows, Config.AlertBursts settings) {
        this.windows = windows;
        this.settings = settings;
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

    Decision decide(StreamChanges.StatusChanged c) {
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
        Instant start = windowOf(c.diedAt());
        if (toDead) {
            // A failed revive (or a host's give-up) of a death that is in a burst is the burst's.
            AlertWindowStore.Window w = windows.read(start);
            return w != null && inBurst(w) ? new Decision(start, List.of()) : Decision.NONE;
        }
        if (t.to().isAlive() || t.to() == AgentStatus.OFFLINE) {
            String id = changeId(c);
            AlertWindowStore.Mark mark = windows.mark(start, id);
            if (mark != null) {
                // Handled before: the same decision, no write (the event log holds what it raised).
                AlertWindowStore.Window w = mark.raised() ? windows.read(start) : null;
                return !mark.burst() ? Decision.NONE : new Decision(start,
                        w == null ? List.of() : List.of(resolved(w, c.transition().at())));
            }
            AlertWindowStore.Window w = windows.countBack(start);
            if (w == null) {
                return Decision.NONE;
            }
            boolean burst = inBurst(w);
            boolean last = burst && w.back() == w.deaths();
            windows.putMark(start, id, new AlertWindowStore.Mark(burst, last));
            if (!burst) {
                return Decision.NONE;
            }
            return new Decision(start, last ? List.of(resolved(w, c.transition().at())) : List.of());
        }
        return Decision.NONE;
    }

    /** The change's id within its window's marks: the agent and the transition's seq. */
    private static String changeId(StreamChanges.StatusChanged c) {
        return c.team() + "#" + c.agentId() + "#" + c.transition().seq();
    }

    private boolean inBurst(AlertWindowStore.Window w) {
        return w.deaths() > settings.threshold();
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
        AlertWindowStore.Window w = windows.countDeath(start, c.team(), c.hostId() == null ? NO_HOST : c.hostId(),
                t.trigger().wire(), pagerDutyKey(c));
        if (w.deaths() <= settings.named()) {
            windows.name(start, c.team() + "/" + c.agentId());
        }
        boolean burst = w.deaths() > settings.threshold() && !w.digested();
        boolean first = burst && w.deaths() == settings.threshold() + 1;
        windows.putMark(start, id, new AlertWindowStore.Mark(burst, first));
        if (!burst) {
            return Decision.NONE;
        }
        return new Decision(start, first ? List.of(started(c.team(), start, settings, t.at())) : List.of());
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

    /** A window past its threshold ({@code team}: that of the death that took it past), which starts its digest. */
    public static LifelineEvent started(String team, Instant start, Config.AlertBursts settings, Instant at) {
        Instant end = start.plus(settings.window());
        String id = "alerts/burst/" + start.toEpochMilli() + "/started";
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", start.toString()).put("windowEnd", end.toString())
                .put("digestAt", end.plus(DIGEST_MARGIN).toString()).put("threshold", settings.threshold())
                .put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_BURST_STARTED, id, at, d,
                List.of(team));
    }

    /** Time after a window's end for its last deaths to come through the outbox before the digest. */
    static final Duration DIGEST_MARGIN = Duration.ofSeconds(5);

    /** Every agent of the burst of window {@code w} is back or handled. */
    public static LifelineEvent resolved(AlertWindowStore.Window w, Instant at) {
        String id = "alerts/burst/" + w.start().toEpochMilli() + "/resolved";
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", w.start().toString()).put("deaths", w.deaths()).put("back", w.back())
                .put("pagerDutyKey", w.lead()).put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_BURST_RESOLVED, id, at, d,
                new ArrayList<>(w.byTeam().keySet()));
    }

    /** The window's digest, as {@link DigestHandler} sends it. */
    public static LifelineEvent digest(AlertWindowStore.Window w, Config.AlertBursts settings, String dashboardUrl,
                                Instant at) {
        String id = "alerts/burst/" + w.start().toEpochMilli() + "/digest";
        int individually = Math.min(w.deaths(), settings.threshold());
        ObjectNode d = Json.object().put("eventId", id).put("team", StreamChanges.FLEET_TEAM)
                .put("window", w.start().toString()).put("windowEnd", w.start().plus(settings.window()).toString())
                .put("deaths", w.deaths()).put("sentOneByOne", individually)
                .put("inDigest", w.deaths() - individually);
        d.set("byTeam", Json.MAPPER.valueToTree(w.byTeam()));
        d.set("byHost", Json.MAPPER.valueToTree(w.byHost()));
        d.set("byReason", Json.MAPPER.valueToTree(w.byReason()));
        d.set("agents", Json.MAPPER.valueToTree(w.names()));
        d.put("unnamed", Math.max(0, w.deaths() - w.names().size()));
        d.put("summary", summary(w));
        d.put("pagerDutyKey", w.lead());
        // Every agent of the burst back (or handled) before its digest: AlertBurstResolved went out already and
        // resolved the burst's incident; PagerDuty's digest rule skips such a digest so it does not reopen it.
        d.put("allBack", w.back() >= w.deaths());
        d.put("dashboard", (dashboardUrl == null ? "" : dashboardUrl) + "#status=dead");
        d.put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_DIGEST, id, at, d,
                new ArrayList<>(w.byTeam().keySet()));
    }

    /** One line for people: the counts by team, host and reason (the largest ten of each) and the named agents. */
    static String summary(AlertWindowStore.Window w) {
        String named = String.join(", ", w.names())
                + (w.deaths() > w.names().size() ? " and " + (w.deaths() - w.names().size()) + " more" : "");
        return "by team: " + top(w.byTeam()) + "; by host: " + top(w.byHost()) + "; by reason: " + top(w.byReason())
                + "; agents: " + named;
    }

    private static String top(Map<String, Integer> counts) {
        List<Map.Entry<String, Integer>> sorted = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder())
                        .thenComparing(Map.Entry.comparingByKey())).toList();
        String shown = sorted.stream().limit(10).map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        return sorted.size() > 10 ? shown + " and " + (sorted.size() - 10) + " more" : shown;
    }
}
