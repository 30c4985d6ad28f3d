package io.lifeline.app;

import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.AlertWindowStore;
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
import java.util.TreeMap;

/**
 * The digest flow's task for a burst (docs/alerts-noise.md), in steps that each fit the function's timeout however
 * many teams the window counts. The first marks the window digested and reads its totals; then, page by page, the
 * window's hosts (the largest kept) and its teams (the largest kept, the first few agents named, and each team's own
 * view written to its event log, 25 to a BatchWriteItem: one write per team); last, the one {@code AlertDigest} on
 * the bus for the operator's destinations, logged under team {@code *}. A step that runs out of its time budget
 * answers {@code again} with where it stopped, and the flow calls it again at once; what it carries is bounded (ten
 * teams, ten hosts, the named agents). A failure throws and the flow's Retry runs the same step again: the team views
 * are written again as they were (same keys), and a digest already logged is not sent twice. Its Lambda adapter is
 * {@code io.lifeline.events.DigestHandler}; {@code config.UseCases} builds it.
 */
public final class BurstDigest {
    /** Teams or hosts read per Query page. */
    static final int PAGE = 200;
    /** Time a step spends on pages before it hands over to the next (the function's timeout is 10 s). */
    static final Duration BUDGET = Duration.ofSeconds(4);
    private static final String HOSTS = "hosts";
    private static final String TEAMS = "teams";
    private static final String SEND = "send";

    private final AlertWindowStore windows;
    private final EventLog eventLog;
    private final EventBus bus;
    private final AlertBursts.Settings settings;
    private final String dashboardUrl;
    private final Clock clock;
    private final Duration budget;
    private final int pageSize;

    public BurstDigest(AlertWindowStore windows, EventLog eventLog, EventBus bus, AlertBursts.Settings settings,
                       String dashboardUrl, Clock clock) {
        this(windows, eventLog, bus, settings, dashboardUrl, clock, BUDGET, PAGE);
    }

    /** With another time budget and page size (a test's: a step per page). */
    BurstDigest(AlertWindowStore windows, EventLog eventLog, EventBus bus, AlertBursts.Settings settings,
                String dashboardUrl, Clock clock, Duration budget, int page) {
        this.budget = budget;
        this.pageSize = page;
        this.windows = windows;
        this.eventLog = eventLog;
        this.bus = bus;
        this.settings = settings;
        this.dashboardUrl = dashboardUrl;
        this.clock = clock;
    }

    /** The digest flow's failure to send, retried by the flow. */
    public static final class DigestNotSentException extends RuntimeException {
        DigestNotSentException(String message) {
            super(message);
        }
    }

    /** What a step carries to the next: the totals, where it stopped, and the bounded tallies so far. */
    static final class Tally {
        String phase;
        String after;
        Instant at;
        String lead;
        int deaths;
        int back;
        int failed;
        Map<String, Integer> reasons = new TreeMap<>();
        int hosts;
        Map<String, Integer> topHosts = new LinkedHashMap<>();
        String host;
        int hostDeaths;
        int teams;
        Map<String, Integer> topTeams = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();

        @SuppressWarnings("unchecked")
        static Tally of(Map<String, Object> in) {
            Tally t = new Tally();
            t.phase = (String) in.get("phase");
            t.after = (String) in.get("after");
            t.at = in.get("at") == null ? null : Instant.parse(String.valueOf(in.get("at")));
            t.lead = (String) in.get("lead");
            t.deaths = number(in, "deaths");
            t.back = number(in, "back");
            t.failed = number(in, "failed");
            t.reasons = counts(in.get("reasons"));
            t.hosts = number(in, "hostCount");
            t.topHosts = counts(in.get("topHosts"));
            t.host = (String) in.get("host");
            t.hostDeaths = number(in, "hostDeaths");
            t.teams = number(in, "teamCount");
            t.topTeams = counts(in.get("topTeams"));
            if (in.get("names") instanceof List<?> l) {
                l.forEach(n -> t.names.add(String.valueOf(n)));
            }
            return t;
        }

        Map<String, Object> into(Map<String, Object> out) {
            out.put("phase", phase);
            out.put("after", after);
            out.put("at", at.toString());
            out.put("lead", lead);
            out.put("deaths", deaths);
            out.put("back", back);
            out.put("failed", failed);
            out.put("reasons", reasons);
            out.put("hostCount", hosts);
            out.put("topHosts", topHosts);
            out.put("host", host);
            out.put("hostDeaths", hostDeaths);
            out.put("teamCount", teams);
            out.put("topTeams", topTeams);
            out.put("names", names);
            return out;
        }

        private static int number(Map<String, Object> in, String field) {
            return in.get(field) instanceof Number n ? n.intValue() : 0;
        }

        private static Map<String, Integer> counts(Object raw) {
            Map<String, Integer> out = new LinkedHashMap<>();
            if (raw instanceof Map<?, ?> m) {
                m.forEach((k, v) -> out.put(String.valueOf(k), ((Number) v).intValue()));
            }
            return out;
        }

        /** The host seen so far is complete: counted, and kept if among the largest. */
        void closeHost() {
            if (host != null) {
                hosts++;
                keepLargest(topHosts, host, hostDeaths);
            }
            host = null;
            hostDeaths = 0;
        }
    }

    /** Keeps {@code key} in {@code top} if it is among the {@link AlertBursts#TOP} largest (ties: the first seen). */
    static void keepLargest(Map<String, Integer> top, String key, int count) {
        top.merge(key, count, Integer::sum);
        if (top.size() > AlertBursts.TOP) {
            String smallest = top.entrySet().stream().min(Map.Entry.<String, Integer>comparingByValue()
                    .thenComparing(Map.Entry.comparingByKey(Comparator.reverseOrder()))).orElseThrow().getKey();
            top.remove(smallest);
        }
    }

    /** One step of the flow for the window {@code start}; {@code in} is what the step before answered. */
    public Map<String, Object> step(Instant start, Map<String, Object> in, long started) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("window", start.toString());
        out.put("again", false);
        Tally t = Tally.of(in);
        if (t.phase == null) {
            AlertWindowStore.Head head = windows.digest(start);
            if (head == null) {
                out.put("sent", false);
                Log.emit(Log.line("INFO", "digest").put("outcome", "no_window").put("window", start.toString())
                        .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()));
                return out;
            }
            AlertWindowStore.Totals totals = windows.totals(start);
            t.phase = HOSTS;
            // The time every write of this digest carries (the log's keys): the same on a retry of this step.
            t.at = in.get("digestAt") == null ? clock.instant() : Instant.parse(String.valueOf(in.get("digestAt")));
            t.lead = head.lead();
            t.deaths = totals.deaths();
            t.back = totals.back();
            t.failed = totals.failed();
            t.reasons = totals.byReason();
        }
        long until = started + budget.toNanos();
        do {
            // At least one page a step, so every step makes progress.
            if (t.phase.equals(HOSTS)) {
                hostsPage(start, t);
            } else {
                teamsPage(start, t);
            }
        } while (!t.phase.equals(SEND) && System.nanoTime() < until);
        if (!t.phase.equals(SEND)) {
            t.into(out).put("again", true);
            out.put("digestAt", clock.instant().toString());
            Log.emit(Log.line("INFO", "digest").put("outcome", "continues").put("window", start.toString())
                    .put("phase", t.phase).put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()));
            return out;
        }
        return send(start, t, out, started);
    }

    private void hostsPage(Instant start, Tally t) {
        AlertWindowStore.Page<AlertWindowStore.HostCount> page = windows.hosts(start, t.after, pageSize);
        for (AlertWindowStore.HostCount h : page.items()) {
            if (!h.host().equals(t.host)) {
                t.closeHost();
                t.host = h.host();
            }
            t.hostDeaths += h.deaths();
        }
        t.after = page.next();
        if (t.after == null) {
            t.closeHost();
            t.phase = TEAMS;
        }
    }

    private void teamsPage(Instant start, Tally t) {
        AlertWindowStore.Page<AlertWindowStore.TeamCount> page = windows.teams(start, t.after, pageSize);
        List<Map.Entry<String, EventLog.Entry>> views = new ArrayList<>();
        String id = AlertBursts.digestId(start);
        for (AlertWindowStore.TeamCount team : page.items()) {
            t.teams++;
            keepLargest(t.topTeams, team.team(), team.deaths());
            for (String agent : team.names()) {
                if (t.names.size() < settings.named()) {
                    t.names.add(team.team() + "/" + agent);
                }
            }
            views.add(Map.entry(team.team(), new EventLog.Entry(id, EventCatalogue.ALERT_DIGEST, t.at,
                    Json.write(AlertBursts.teamView(team, start, settings, t.deaths, t.at)), null)));
        }
        eventLog.appendAll(views);
        t.after = page.next();
        if (t.after == null) {
            t.phase = SEND;
        }
    }

    private Map<String, Object> send(Instant start, Tally t, Map<String, Object> out, long started) {
        AlertWindowStore.Window w = new AlertWindowStore.Window(start, t.deaths, t.back, t.lead, true, t.topTeams,
                t.topHosts, t.reasons, t.names, t.teams, t.hosts, t.failed);
        LifelineEvent digest = AlertBursts.digest(w, settings, dashboardUrl, t.at);
        EventLog.Entry entry = new EventLog.Entry(digest.eventId(), digest.type(), digest.at(),
                Json.write(digest.detail()), null);
        int put = 0;
        if (bus != null) {
            Set<String> logged = eventLog.logged(List.of(Map.entry(StreamChanges.FLEET_TEAM, entry)));
            if (!logged.contains(digest.eventId())) {
                EventBus.Outcome sent = bus.send(List.of(digest));
                if (!sent.unsent().isEmpty()) {
                    Metrics.on(Log.line("ERROR", "digest").put("outcome", "retry").put("window", start.toString())
                                    .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()),
                                    Metrics.DIGEST_FUNCTION, clock.instant())
                            .count(Metrics.EVENTS_FAILED, sent.unsent().size()).emit();
                    throw new DigestNotSentException("the bus did not take the digest of " + start);
                }
                put = sent.put();
            }
        }
        eventLog.append(StreamChanges.FLEET_TEAM, entry);
        Metrics.on(Log.line("INFO", "digest").put("outcome", "sent").put("window", start.toString())
                        .put("deaths", w.deaths()).put("teams", w.teams()).put("hosts", w.hosts())
                        .put("bytes", entry.detailJson().length())
                        .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()),
                        Metrics.DIGEST_FUNCTION, clock.instant())
                .count(Metrics.EVENTS_PUBLISHED, put).emit();
        out.put("sent", true);
        out.put("deaths", w.deaths());
        return out;
    }
}
