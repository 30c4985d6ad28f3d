package io.lifeline.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StallWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The digest flow's task for a burst of stalls (docs/alerts-noise.md), started by the window's
 * {@code AlertStallBurstStarted} (its input carries {@code kind: stalls}), in steps as the digest of deaths is: the
 * first marks the window's stalls digested (a stall counted later is alerted one by one) and reads their totals;
 * then, page by page, the window's hosts and teams with stalls (the largest ten kept, the first agents named, each
 * team's own view written to its event log); last, the one {@code AlertStallDigest} on the bus, logged under team
 * {@code *}. What a step carries to the next is bounded. A failure throws and the flow's Retry runs the step again;
 * a digest already logged is not sent twice.
 */
public final class StallDigest {
    /** The flow input's {@code kind} for a digest of stalls. */
    public static final String KIND = "stalls";

    private final StallWindowStore stalls;
    private final EventLog eventLog;
    private final EventBus bus;
    private final AlertBursts.Settings settings;
    private final String dashboardUrl;
    private final Clock clock;
    private final Duration budget;
    private final int pageSize;

    /** A digest of stalls sent through {@code bus} (null: none configured, logged only). */
    public StallDigest(AlertWindowStore windows, EventLog eventLog, EventBus bus, AlertBursts.Settings settings,
                       String dashboardUrl, Clock clock) {
        this(windows, eventLog, bus, settings, dashboardUrl, clock, BurstDigest.BUDGET, BurstDigest.PAGE);
    }

    /** With another time budget and page size (a test's: a step per page). */
    StallDigest(AlertWindowStore windows, EventLog eventLog, EventBus bus, AlertBursts.Settings settings,
                String dashboardUrl, Clock clock, Duration budget, int pageSize) {
        this.budget = budget;
        this.stalls = windows.stalls();
        this.eventLog = eventLog;
        this.bus = bus;
        this.settings = settings;
        this.dashboardUrl = dashboardUrl;
        this.clock = clock;
        this.pageSize = pageSize;
    }

    /** Whether a flow input is a digest of stalls'. */
    public static boolean isFor(Map<String, Object> input) {
        return input != null && KIND.equals(input.get("kind"));
    }

    /** One step of the flow for the window {@code start}; {@code in} is what the step before answered. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> step(Instant start, Map<String, Object> in, long started) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("window", start.toString());
        out.put("kind", KIND);
        out.put("again", false);
        Map<String, Object> t = in.get("tally") instanceof Map<?, ?> m ? new LinkedHashMap<>((Map<String, Object>) m)
                : null;
        if (t == null) {
            AlertWindowStore.Head head = stalls.digest(start);
            if (head == null) {
                out.put("sent", false);
                Log.emit(Log.line("INFO", "stall digest").put("outcome", "no_window").put("window", start.toString()));
                return out;
            }
            StallWindowStore.Totals totals = stalls.totals(start);
            t = new LinkedHashMap<>();
            t.put("phase", "hosts");
            // The time every write of this digest carries (the log's keys): the same on a retry of this step.
            t.put("at", in.get("digestAt") == null ? clock.instant().toString() : String.valueOf(in.get("digestAt")));
            t.put("stalls", totals.stalls());
            t.put("over", totals.over());
            t.put("back", totals.back());
            t.put("hostCount", 0);
            t.put("topHosts", new LinkedHashMap<String, Integer>());
            t.put("teamCount", 0);
            t.put("topTeams", new LinkedHashMap<String, Integer>());
            t.put("names", new ArrayList<String>());
        }
        long until = started + budget.toNanos();
        do {
            if ("hosts".equals(t.get("phase"))) {
                hostsPage(start, t);
            } else {
                teamsPage(start, t);
            }
        } while (!"send".equals(t.get("phase")) && System.nanoTime() < until);
        if (!"send".equals(t.get("phase"))) {
            out.put("tally", t);
            out.put("again", true);
            out.put("digestAt", clock.instant().toString());
            return out;
        }
        return send(start, t, out, started);
    }

    private static int number(Map<String, Object> t, String field) {
        return t.get(field) instanceof Number n ? n.intValue() : 0;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Integer> counts(Map<String, Object> t, String field) {
        Map<String, Integer> out = new LinkedHashMap<>();
        if (t.get(field) instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.put(String.valueOf(k), ((Number) v).intValue()));
        }
        t.put(field, out);
        return out;
    }

    private static List<String> names(Map<String, Object> t) {
        List<String> out = new ArrayList<>();
        if (t.get("names") instanceof List<?> l) {
            l.forEach(n -> out.add(String.valueOf(n)));
        }
        t.put("names", out);
        return out;
    }

    /** A page of hosts: a host's teams are one after another, so a host is summed across pages as it goes. */
    private void hostsPage(Instant start, Map<String, Object> t) {
        AlertWindowStore.Page<AlertWindowStore.HostCount> page = stalls.hosts(start, (String) t.get("after"),
                pageSize);
        Map<String, Integer> top = counts(t, "topHosts");
        for (AlertWindowStore.HostCount h : page.items()) {
            if (!h.host().equals(t.get("host"))) {
                closeHost(t, top);
                t.put("host", h.host());
            }
            t.put("hostStalls", number(t, "hostStalls") + h.deaths());
        }
        t.put("after", page.next());
        if (page.next() == null) {
            closeHost(t, top);
            t.put("phase", "teams");
        }
    }

    private static void closeHost(Map<String, Object> t, Map<String, Integer> top) {
        if (t.get("host") != null) {
            t.put("hostCount", number(t, "hostCount") + 1);
            keepLargest(top, (String) t.get("host"), number(t, "hostStalls"));
        }
        t.put("host", null);
        t.put("hostStalls", 0);
    }

    /** Keeps {@code key} in {@code top} if it is among the {@link AlertBursts#TOP} largest. */
    private static void keepLargest(Map<String, Integer> top, String key, int count) {
        top.merge(key, count, Integer::sum);
        if (top.size() > AlertBursts.TOP) {
            String smallest = top.entrySet().stream().min(Map.Entry.<String, Integer>comparingByValue()
                    .thenComparing(Map.Entry.comparingByKey(Comparator.reverseOrder()))).orElseThrow().getKey();
            top.remove(smallest);
        }
    }

    private void teamsPage(Instant start, Map<String, Object> t) {
        AlertWindowStore.Page<AlertWindowStore.TeamCount> page = stalls.teams(start, (String) t.get("after"),
                pageSize);
        Map<String, Integer> top = counts(t, "topTeams");
        List<String> names = names(t);
        Instant at = Instant.parse(String.valueOf(t.get("at")));
        List<Map.Entry<String, EventLog.Entry>> views = new ArrayList<>();
        for (AlertWindowStore.TeamCount team : page.items()) {
            t.put("teamCount", number(t, "teamCount") + 1);
            keepLargest(top, team.team(), team.deaths());
            for (String agent : team.names()) {
                if (names.size() < settings.named()) {
                    names.add(team.team() + "/" + agent);
                }
            }
            views.add(Map.entry(team.team(), new EventLog.Entry(digestId(start), EventCatalogue.ALERT_STALL_DIGEST, at,
                    Json.write(teamView(team, start, settings, number(t, "stalls"), at)), null)));
        }
        eventLog.appendAll(views);
        t.put("after", page.next());
        if (page.next() == null) {
            t.put("phase", "send");
        }
    }

    private Map<String, Object> send(Instant start, Map<String, Object> t, Map<String, Object> out, long started) {
        LifelineEvent digest = digest(start, t);
        EventLog.Entry entry = new EventLog.Entry(digest.eventId(), digest.type(), digest.at(),
                Json.write(digest.detail()), null);
        int put = 0;
        if (bus != null) {
            Set<String> logged = eventLog.logged(List.of(Map.entry(StreamChanges.FLEET_TEAM, entry)));
            if (!logged.contains(digest.eventId())) {
                EventBus.Outcome sent = bus.send(List.of(digest));
                if (!sent.unsent().isEmpty()) {
                    Metrics.on(Log.line("ERROR", "stall digest").put("outcome", "retry")
                                    .put("window", start.toString()), Metrics.DIGEST_FUNCTION, clock.instant())
                            .count(Metrics.EVENTS_FAILED, sent.unsent().size()).emit();
                    throw new BurstDigest.DigestNotSentException("the bus did not take the digest of stalls of " + start);
                }
                put = sent.put();
            }
        }
        eventLog.append(StreamChanges.FLEET_TEAM, entry);
        int total = digest.detail().path("stalls").asInt();
        Metrics.on(Log.line("INFO", "stall digest").put("outcome", "sent").put("window", start.toString())
                        .put("stalls", total).put("teams", number(t, "teamCount"))
                        .put("hosts", number(t, "hostCount")).put("bytes", entry.detailJson().length())
                        .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()),
                        Metrics.DIGEST_FUNCTION, clock.instant())
                .count(Metrics.EVENTS_PUBLISHED, put).emit();
        out.put("sent", true);
        out.put("stalls", total);
        return out;
    }

    static String digestId(Instant start) {
        return "alerts/stall-burst/" + start.toEpochMilli() + "/digest";
    }

    /**
     * What a digest of stalls counts: the window's stalls, how many of them are over (and of those with progress
     * again), the largest teams and hosts with how many there were in all, and the first named agents.
     */
    public record Counts(int stalls, int over, int back, Map<String, Integer> byTeam, int teams,
                         Map<String, Integer> byHost, int hosts, List<String> names) {
    }

    private LifelineEvent digest(Instant start, Map<String, Object> t) {
        Instant at = Instant.parse(String.valueOf(t.get("at")));
        return digest(start, new Counts(number(t, "stalls"), number(t, "over"), number(t, "back"),
                counts(t, "topTeams"), number(t, "teamCount"), counts(t, "topHosts"), number(t, "hostCount"),
                names(t)), settings, dashboardUrl, at);
    }

    /**
     * The window's digest of stalls for the operator's destinations, bounded whatever the fleet: how many stalled,
     * how many of them went out one by one and how many are in this digest, the largest teams and hosts, the first
     * named agents, and how many are over (with progress again: {@code back}) by the time it is sent.
     */
    public static LifelineEvent digest(Instant start, Counts c, AlertBursts.Settings settings, String dashboardUrl,
                                       Instant at) {
        int individually = Math.min(c.stalls(), settings.threshold());
        ObjectNode d = Json.object().put("eventId", digestId(start)).put("team", StreamChanges.FLEET_TEAM)
                .put("window", start.toString()).put("windowEnd", start.plus(settings.window()).toString())
                .put("stalls", c.stalls()).put("sentOneByOne", individually)
                .put("inDigest", c.stalls() - individually).put("teams", c.teams()).put("hosts", c.hosts());
        d.set("byTeam", Json.MAPPER.valueToTree(c.byTeam()));
        d.set("byHost", Json.MAPPER.valueToTree(c.byHost()));
        d.set("agents", Json.MAPPER.valueToTree(c.names()));
        d.put("unnamed", Math.max(0, c.stalls() - c.names().size()));
        d.put("over", c.over()).put("back", c.back());
        d.put("allOver", c.over() >= c.stalls());
        d.put("summary", "by team: " + top(c.byTeam(), c.teams()) + "; by host: " + top(c.byHost(), c.hosts())
                + "; agents: " + String.join(", ", c.names())
                + (c.stalls() > c.names().size() ? " and " + (c.stalls() - c.names().size()) + " more" : ""));
        // Stalled is no status of the agent list (a stalled agent is working): the link opens the team's agents.
        d.put("dashboard", dashboardUrl == null ? "#" : dashboardUrl);
        d.put("at", at.toString());
        return new LifelineEvent(StreamChanges.FLEET_TEAM, EventCatalogue.ALERT_STALL_DIGEST, digestId(start), at, d);
    }

    private static String top(Map<String, Integer> counts, int of) {
        List<Map.Entry<String, Integer>> sorted = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder())
                        .thenComparing(Map.Entry.comparingByKey())).toList();
        String shown = sorted.stream().limit(AlertBursts.TOP).map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        int shownCount = Math.min(AlertBursts.TOP, sorted.size());
        return of > shownCount ? shown + " and " + (of - shownCount) + " more" : shown;
    }

    /**
     * A team's own view of the digest of stalls, for its event log: its stalls in the window, the ids and hosts of
     * its first few, and the fleet's total as a bare number; nothing of another team.
     */
    static ObjectNode teamView(AlertWindowStore.TeamCount t, Instant start, AlertBursts.Settings settings,
                               int fleetStalls, Instant at) {
        ObjectNode d = Json.object().put("eventId", digestId(start)).put("team", t.team()).put("scope", "team")
                .put("window", start.toString()).put("windowEnd", start.plus(settings.window()).toString())
                .put("stalls", t.deaths());
        d.set("agents", Json.MAPPER.valueToTree(t.names()));
        d.put("unnamed", Math.max(0, t.deaths() - t.names().size()));
        d.set("byHost", Json.MAPPER.valueToTree(t.hosts()));
        d.put("fleetStalls", fleetStalls).put("at", at.toString());
        return d;
    }
}
