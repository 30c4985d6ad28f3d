package io.lifeline.bench;

import static io.lifeline.bench.Bill.BEATS;
import static io.lifeline.bench.Bill.DASHBOARD;
import static io.lifeline.bench.Bill.FIXED;
import static io.lifeline.bench.Bill.STORAGE;
import static io.lifeline.bench.Bill.SWEEP;
import static io.lifeline.bench.Bill.WORK;
import static io.lifeline.bench.CostUnits.GB;
import static io.lifeline.bench.CostUnits.HOURS_PER_MONTH;
import static io.lifeline.bench.CostUnits.MINUTES_PER_MONTH;
import static io.lifeline.bench.CostUnits.SECONDS_PER_MONTH;
import static io.lifeline.bench.CostUnits.fmt;
import static io.lifeline.bench.CostUnits.fmt4;

import java.util.ArrayList;
import java.util.List;

/**
 * The per-service line items of one workload's month, group by group in the order the bill prints them: the fixed
 * lines there with no agents at all, the sweep, the heartbeats, the work (tasks, status changes, the publisher,
 * deaths), the dashboard, storage. Also the pricing rules the lines share: Lambda's requests and duration, X-Ray's
 * sampling, custom metrics billed by the hour.
 */
final class LineItems {
    private final Workload w;
    private final Deployment d;
    private final Measures m;
    private final Assumptions a;
    private final Prices p;
    private final Lines lines = new Lines();
    private final int n;
    private final double sweeps;
    private final double platform;

    private LineItems(Workload w, Deployment d, Measures m, Assumptions a, Prices p) {
        this.w = w;
        this.d = d;
        this.m = m;
        this.a = a;
        this.p = p;
        this.n = w.agents();
        this.sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;
        this.platform = d.platformLines() ? a.platformLogBytes() : 0;
    }

    /** The workload's bill under the deployment, its caps already checked ({@link FleetCaps#shortfalls}). */
    static Bill bill(Workload w, Deployment d, Measures m, Assumptions a, Prices p) {
        LineItems items = new LineItems(w, d, m, a, p);
        items.fixed();
        items.sweep();
        items.beats();
        items.work();
        items.dashboard();
        items.storage();
        return new Bill(w, d, items.lines.list);
    }

    /** Fixed: there with no agents at all. */
    private void fixed() {
        lines.watch(FIXED, "CloudWatch alarms (" + d.alarmSet() + " set: " + d.alarms() + " alarms, " + d.alarmMetrics()
                + " metrics)", d.alarmMetrics() * p.alarmPerMonth(), d.alarmMetrics() + " alarm metrics x $"
                + p.alarmPerMonth() + " a month (template.yaml, AlarmSet " + d.alarmSet() + ")");
        lines.watch(FIXED, "custom metrics published with no agents (" + d.idleMetrics() + ")",
                d.idleMetrics() * p.metricPerMonth(), "counts of 0 are not published; the sweep's time is AWS/Lambda's "
                        + "Duration (free)");
        lines.add(FIXED, "sweep clock: the schedule (1 a minute)", MINUTES_PER_MONTH
                * (d.scheduler() ? p.schedulerPerMillion() : p.scheduledRulePerMillion()) / 1e6, fmt(MINUTES_PER_MONTH)
                + (d.scheduler() ? " invocations at EventBridge Scheduler's price"
                        : " events of a scheduled rule on the default bus (SAM Type: Schedule): no charge"));
        double extraSweeps = (d.sweepsPerMinute() - 1) * MINUTES_PER_MONTH;
        double sqsRequests = a.sqsIdleReceivesPerMinute() * MINUTES_PER_MONTH + MINUTES_PER_MONTH
                + a.sqsRequestsPerExtraSweep() * extraSweeps;
        lines.add(FIXED, "sweep clock: SQS (delayed messages for the minute's other sweeps)",
                sqsRequests * p.sqsPerMillion() / 1e6, fmt(sqsRequests) + " requests: Lambda's long polls of an idle "
                        + "queue (" + fmt(a.sqsIdleReceivesPerMinute()) + "/min), a SendMessageBatch a minute, a "
                        + "receive and a delete per queued sweep");
        lines.add(FIXED, "sweep clock: Lambda requests (" + fmt(d.sweepsPerMinute()) + " sweeps a minute)",
                lambdaRequests(sweeps, p), fmt(sweeps) + " invocations");
        lines.watch(FIXED, "sweep: X-Ray traces", d.sweepTraced() ? sweeps * p.xrayPerMillionTraces() / 1e6 : 0,
                d.sweepTraced() ? fmt(sweeps) + " traces" : "none: the sweep function is Tracing: PassThrough");
        lines.log(FIXED, "sweep: log lines (its line" + (platform > 0 ? " + Lambda's START/END/REPORT)" : "; no "
                + "platform lines at SystemLogLevel WARN)"), sweeps, m.sweepLineBytes() + platform, p,
                fmt(m.sweepLineBytes() + platform) + " bytes a sweep (the idle line, measured)");
        if (d.repairsPerMonth() > 0) {
            double r = d.repairsPerMonth();
            lines.add(FIXED, "outbox repair every 15 min: Lambda", lambda(r, a.repairBaseMillis(), d.memoryGb(), p),
                    fmt(r) + " runs x " + fmt(a.repairBaseMillis()) + " ms (+ its Scan, below)");
            lines.watch(FIXED, "outbox repair: X-Ray traces", d.repairTraced() ? r * p.xrayPerMillionTraces() / 1e6 : 0,
                    d.repairTraced() ? fmt(r) + " traces" : "none: Tracing: PassThrough");
            lines.log(FIXED, "outbox repair: log lines", r, a.repairLogBytes() + platform, p, fmt(a.repairLogBytes()
                    + platform) + " bytes a run");
        }
    }

    /** The sweep: grows with the live table only. */
    private void sweep() {
        double minimumUnits = d.minSegments() * 0.5;
        double unitsPerSweep = Math.max(minimumUnits, n * w.sweepUnitsPerAgent());
        lines.add(SWEEP, "sweep: DynamoDB reads (Scan of the live table)",
                sweeps * unitsPerSweep * p.rruPerMillion() / 1e6, fmt(unitsPerSweep) + " RRU a sweep ("
                        + (n == 0 ? "0.5 per segment, " + d.minSegments() + " segments"
                                : fmt4(w.sweepUnitsPerAgent()) + " per alive agent") + ")");
        if (d.repairsPerMonth() > 0) {
            double repairUnits = Math.max(0.5, n * w.sweepUnitsPerAgent()) + 0.5;
            lines.add(SWEEP, "outbox repair: Scan of the live table + the parked records",
                    d.repairsPerMonth() * repairUnits * p.rruPerMillion() / 1e6, fmt(repairUnits) + " RRU a run");
        }
        double sweepMillis = a.sweepBaseMillis() + a.sweepMillisPerAgent() * n;
        lines.add(SWEEP, "sweep: Lambda duration", lambdaDuration(sweeps, sweepMillis, d.memoryGb(), p),
                fmt(sweepMillis) + " ms a sweep at " + d.memoryGb() + " GB");
    }

    /** Heartbeats: ingress, the heartbeat function, its writes, key look-ups, traces and logs. */
    private void beats() {
        double beats = n * SECONDS_PER_MONTH / w.beatSeconds();
        double requests = beats / w.agentsPerRequest();
        // A host lease is one UpdateItem a request; a plain batch writes each agent's item, one after another.
        double beatMillis = w.hosted() ? m.heartbeatMillis() : m.heartbeatMillis() * w.agentsPerRequest();
        double keys = (double) n / w.agentsPerRequest();
        double keyChecks = keys * SECONDS_PER_MONTH / d.keyCacheSeconds();
        if (n > 0) {
            if (w.viaUrl()) {
                lines.add(BEATS, "ingress: heartbeat Function URL", requests * p.functionUrlPerMillion() / 1e6,
                        fmt(requests) + " requests: no charge beyond Lambda's own");
            } else {
                lines.add(BEATS, "ingress: API Gateway HTTP API", requests * p.apiPerMillion() / 1e6,
                        fmt(requests) + " requests at $" + p.apiPerMillion() + " a million");
            }
            lines.add(BEATS, "heartbeat Lambda requests", lambdaRequests(requests, p), fmt(requests) + " invocations");
            lines.add(BEATS, "heartbeat Lambda duration", lambdaDuration(requests, beatMillis, d.memoryGb(), p),
                    fmt(requests) + " x " + fmt(Math.ceil(beatMillis)) + " ms billed at " + d.memoryGb() + " GB ("
                            + (w.agentsPerRequest() == 1 || w.hosted() ? "the handler's measured time"
                                    : w.agentsPerRequest() + " x the handler's measured time") + ")");
            if (w.hookEvents()) {
                double wru = beats * w.writeUnitsPerAgentBeat();
                lines.add(BEATS, "DynamoDB writes (hook events: " + fmt(w.writeUnitsPerAgentBeat())
                        + " WRU an event, the rest coalesced)", wru * p.wruPerMillion() / 1e6, fmt(wru) + " WRU");
                double environments = environments(requests, beatMillis);
                double refused = (beats - wru) * (1 - 1 / environments);
                lines.add(BEATS, "DynamoDB writes refused by the coalescing condition (billed)",
                        refused * p.wruPerMillion() / 1e6, fmt(refused) + " WRU: a repeat that reaches an "
                                + "environment which did not make the agent's last write, about 1 - 1/"
                                + fmt(environments) + " of the repeats (" + fmt(environments) + " environments busy)");
            } else if (w.hosted()) {
                double wru = beats * w.writeUnitsPerAgentBeat();
                lines.add(BEATS, "DynamoDB writes (host lease: 1 WRU a renewal for " + w.agentsPerRequest()
                        + " agents, measured " + fmt(w.writeUnitsPerAgentBeat()) + " WRU an agent-beat)",
                        wru * p.wruPerMillion() / 1e6, fmt(wru) + " WRU");
            } else {
                lines.add(BEATS, "DynamoDB writes (1 WRU a beat, live item " + fmt(w.liveItemBytes()) + " B)",
                        beats * p.wruPerMillion() / 1e6, fmt(beats) + " WRU");
            }
            // One key per agent (single) or per daemon. On the API the authorizer's answer is cached by API Gateway:
            // one look-up per key per cache period. On the URL each execution environment caches the keys it has
            // seen, so a key is looked up once per period in every environment its requests reach.
            double perKey = w.viaUrl() ? environmentsReached(environments(requests, beatMillis),
                    d.keyCacheSeconds() / w.beatSeconds()) : 1;
            double lookUps = keyChecks * perKey;
            double keyRead = lookUps * a.keyReadUnits() * p.rruPerMillion() / 1e6;
            if (w.viaUrl()) {
                lines.add(BEATS, "key look-ups (KeyCache: 1 GetItem per key per " + fmt(d.keyCacheSeconds())
                        + " s in each environment a key reaches)", keyRead, fmt(lookUps)
                        + " eventually consistent GetItems (" + fmt(a.keyReadUnits()) + " RRU): " + fmt(perKey)
                        + " environments a key's requests reach in a period");
            } else {
                lines.add(BEATS, "authorizer Lambda + its key look-up (1 per key per " + fmt(d.keyCacheSeconds())
                        + " s)", lambda(keyChecks, a.authorizerMillis(), d.memoryGb(), p) + keyRead,
                        fmt(keyChecks) + " runs x " + fmt(a.authorizerMillis()) + " ms, a GetItem each");
            }
            double traces = d.heartbeatTraced() ? tracesPerMonth(requests / SECONDS_PER_MONTH, a) : 0;
            double authorizerTraces = w.viaUrl() ? 0 : tracesPerMonth(keyChecks / SECONDS_PER_MONTH, a);
            lines.watch(BEATS, "X-Ray traces (heartbeat" + (w.viaUrl() ? "" : " + authorizer") + ")",
                    (traces + authorizerTraces) * p.xrayPerMillionTraces() / 1e6, (d.heartbeatTraced()
                            ? fmt(traces) + " heartbeat traces (1/s + 5% of the rest)"
                            : "heartbeat: none (HeartbeatTracing PassThrough)") + (w.viaUrl() ? ""
                            : "; authorizer: " + fmt(authorizerTraces) + " (1/s + 5%)"));
            BeatLog log = m.log(w.viaUrl(), w.agentsPerRequest());
            double perBeat = log.handlerBytesPerBeat() + log.authorizerBytesPerBeat();
            double perRequest = platform + (w.viaUrl() ? 0 : a.accessLogBytes());
            lines.log(BEATS, "logs: heartbeat lines" + (w.viaUrl() ? "" : " + authorizer + access log")
                    + (platform > 0 ? " + Lambda's" : ""), beats, perBeat + perRequest / w.agentsPerRequest(), p,
                    fmt(perBeat) + " B a beat measured (refusals, changes, the 300 s summary)"
                            + (perRequest > 0 ? " + " + fmt(perRequest) + " B a request" : "")
                            + (platform > 0 ? "" : "; no platform lines at SystemLogLevel WARN"));
            lines.add(BEATS, "data transfer out (answers)", requests * a.responseBytes() / GB * p.transferOutPerGb(),
                    fmt(a.responseBytes()) + " bytes an answer");
        }
    }

    /** Work: tasks, status changes, the publisher, deaths. */
    private void work() {
        double tasks = n * w.tasksPerAgentDay() * 30;
        double changes = tasks * a.changesPerTask() + (w.tasksPerAgentDay() > 0 ? n * a.changesPerAgentDay() * 30 : 0)
                + n * w.changesPerAgentMonth();
        double deaths = n * w.deathsPerAgentMonth();
        if (n > 0) {
            // Counts that are 0 are not published: each metric is billed for the hours it has something to count.
            // AgentsMarkedDead, and ReviveOutcomes restart_requested and revived, by deaths; EventsPublished by every
            // change and death. No refusal (HeartbeatsRejected) or fault is assumed.
            double metrics = 3 * metricMonths(deaths) + metricMonths(changes + deaths);
            lines.watch(BEATS, "custom metrics the fleet publishes (" + fmt(metrics) + " metric-months)",
                    metrics * p.metricPerMonth(), "AgentsMarkedDead and 2 ReviveOutcomes in the hours with a death ("
                            + fmt(deaths) + " a month), EventsPublished in the hours with a change");
        }
        if (tasks > 0) {
            double calls = tasks * 3;
            lines.add(WORK, "task routes (create, claim, complete): API + Lambda", calls * p.apiPerMillion()
                    / 1e6 + lambda(calls, a.routeMillis(), d.memoryGb(), p), fmt(calls) + " requests");
            lines.add(WORK, "task writes (" + fmt(a.writeUnitsPerTask()) + " WRU a task)",
                    tasks * a.writeUnitsPerTask() * p.wruPerMillion() / 1e6, "create 1 + claim 4+2 + complete 4+2 "
                            + "(transactions: 2 WRU an item; the assignee index)");
        }
        if (changes + deaths > 0) {
            double all = changes + deaths;
            lines.add(WORK, "publisher per change: Lambda", lambda(all, a.publisherMillisPerChange(),
                    d.memoryGb(), p), fmt(all) + " changes, one invocation each (a busy stream batches more)");
            lines.add(WORK, "publisher per change: writes (transition + 2 event copies + the watermark)",
                    all * a.writeUnitsPerChange() * p.wruPerMillion() / 1e6, fmt(a.writeUnitsPerChange())
                            + " WRU a change");
            double events = changes * a.eventsPerChange() + deaths * a.eventsPerDeath();
            lines.add(WORK, "publisher: the event log read before sending (dedup)",
                    events * p.rruPerMillion() / 1e6, "1 RRU an event (a strongly consistent BatchGetItem)");
            lines.add(WORK, "EventBridge events (PutEvents)", events * p.eventsPerMillion() / 1e6,
                    fmt(events) + " events");
            if (d.archived()) {
                double gb = events * a.eventBytes() / GB;
                lines.add(WORK, "EventBridge archive (every event, kept 30 days)", gb
                        * (p.archivePerGb() + p.archiveStoragePerGbMonth()), fmt(gb) + " GB of " + fmt(a.eventBytes())
                        + "-byte events archived and kept");
            }
            lines.log(WORK, "publisher: log lines", all, a.publishLogBytes() + platform, p,
                    "its line per invocation");
            double traces = tracesPerMonth(all / SECONDS_PER_MONTH, a);
            if (tasks > 0) {
                lines.log(WORK, "task routes: log lines", tasks * 3, a.routeLogBytes() + platform
                        + a.accessLogBytes(), p, "a request line + the access log");
                traces += tracesPerMonth(tasks * 3 / SECONDS_PER_MONTH, a);
            }
            lines.watch(WORK, "X-Ray traces (publisher" + (tasks > 0 ? ", task routes" : "") + ")",
                    traces * p.xrayPerMillionTraces() / 1e6, fmt(traces) + " traces (Tracing: Active)");
        }
        if (deaths > 0) {
            lines.add(WORK, "revive flow (Step Functions standard)", deaths * a.sfnTransitionsPerDeath()
                    * p.sfnPerThousand() / 1e3, fmt(deaths) + " deaths x " + fmt(a.sfnTransitionsPerDeath())
                    + " transitions");
        }
    }

    /** The dashboard: one person keeps it open. */
    private void dashboard() {
        if (w.dashboardHours() > 0) {
            double polls = w.dashboardHours() * 3600 / a.dashboardPollSeconds();
            double calls = polls * DashboardPoll.requests();
            double reads = polls * DashboardPoll.readUnits(w.dashboardTeamAgents(),
                    w.dashboardTeamAgents() * changesPerAgentSecond() * a.dashboardPollSeconds());
            lines.add(DASHBOARD, "dashboard open " + fmt(w.dashboardHours()) + " h (team of "
                    + w.dashboardTeamAgents() + ")", calls * p.apiPerMillion() / 1e6 + lambda(calls, a.routeMillis(),
                    d.dashboardMemoryGb(), p) + reads * p.rruPerMillion() / 1e6, fmt(calls) + " requests, "
                    + fmt(reads) + " RRU (a poll reads the changes since the last, a page and the troubled statuses "
                    + "every fifth: " + fmt(reads / polls) + " RRU a poll)");
            lines.log(DASHBOARD, "dashboard: log lines", calls, a.routeLogBytes() + platform + a.accessLogBytes(), p,
                    "a request line + the access log");
        }
    }

    /** Status changes a second per agent, as {@link #work} counts them (tasks, the day's changes, deaths). */
    private double changesPerAgentSecond() {
        double perMonth = w.tasksPerAgentDay() * 30 * a.changesPerTask()
                + (w.tasksPerAgentDay() > 0 ? a.changesPerAgentDay() * 30 : 0) + w.changesPerAgentMonth()
                + w.deathsPerAgentMonth();
        return perMonth / SECONDS_PER_MONTH;
    }

    /**
     * The execution environments busy serving {@code requests} a month of {@code millis} each (Little's law: the
     * rate times the time each takes), at least one.
     */
    static double environments(double requests, double millis) {
        return Math.max(1, requests / SECONDS_PER_MONTH * millis / 1000);
    }

    /**
     * The distinct environments, on average, that {@code requests} of one key reach among {@code environments}
     * busy ones, each request landing on any of them alike: {@code E (1 - (1 - 1/E)^k)}; 1 with one environment.
     */
    static double environmentsReached(double environments, double requests) {
        return environments <= 1 ? 1 : environments * (1 - Math.pow(1 - 1 / environments, requests));
    }

    /** Storage: DynamoDB (with PITR) and the logs kept. */
    private void storage() {
        double liveBytes = n * (w.liveItemBytes() + a.itemOverheadBytes());
        double historyBytes = w.tasksPerAgentDay() > 0 ? n * w.historyBytesPerAgent() : 0;
        lines.add(STORAGE, "DynamoDB live table + PITR", liveBytes / GB * (p.storagePerGbMonth()
                + p.pitrPerGbMonth()), fmt(liveBytes / 1e6) + " MB");
        if (historyBytes > 0) {
            lines.add(STORAGE, "DynamoDB ledger (30 days of history) + PITR", historyBytes / GB
                    * (p.storagePerGbMonth() + p.pitrPerGbMonth()), fmt(historyBytes / 1e6) + " MB");
        }
        // Every log group keeps LogRetentionDays (30 by default): about one month's lines, uncompressed.
        lines.watch(STORAGE, "CloudWatch Logs kept (30 days' lines, uncompressed: an upper bound)",
                lines.logBytes / GB * p.logsStoragePerGbMonth(), fmt(lines.logBytes / GB) + " GB");
    }

    /** Traces X-Ray records a month for a function invoked {@code perSecond} times a second (Lambda's fixed rule). */
    static double tracesPerMonth(double perSecond, Assumptions a) {
        double sampled = Math.min(perSecond, a.xraySampleReservoirPerSecond())
                + a.xraySampleRate() * Math.max(0, perSecond - a.xraySampleReservoirPerSecond());
        return sampled * SECONDS_PER_MONTH;
    }

    static double lambdaRequests(double invocations, Prices p) {
        return invocations * p.lambdaPerMillion() / 1e6;
    }

    static double lambdaDuration(double invocations, double millis, double memoryGb, Prices p) {
        return invocations * Math.ceil(millis) / 1000.0 * memoryGb * p.lambdaPerGbSecond();
    }

    static double lambda(double invocations, double millis, double memoryGb, Prices p) {
        return lambdaRequests(invocations, p) + lambdaDuration(invocations, millis, memoryGb, p);
    }

    /**
     * The share of a month a custom metric is billed for when it is published only in the hours something happens,
     * {@code perMonth} times a month at random: the hours with at least one (a metric is billed by the hour).
     */
    static double metricMonths(double perMonth) {
        return 1 - Math.exp(-perMonth / HOURS_PER_MONTH);
    }

    /** Adds lines and counts the log bytes they ingest, for the logs kept. */
    private static final class Lines {
        final List<Line> list = new ArrayList<>();
        double logBytes;

        void add(String group, String item, double usd, String basis) {
            list.add(new Line(group, item, usd, basis, false));
        }

        void watch(String group, String item, double usd, String basis) {
            list.add(new Line(group, item, usd, basis, true));
        }

        /** A log line: {@code count} lines of {@code bytes} each. */
        void log(String group, String item, double count, double bytes, Prices p, String basis) {
            logBytes += count * bytes;
            watch(group, item, count * bytes / GB * p.logsIngestPerGb(), basis);
        }
    }
}
