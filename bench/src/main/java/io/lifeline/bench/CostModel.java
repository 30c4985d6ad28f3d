package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Figure 6: what a deployment costs a month, itemised: every function (the sweep clock, the sweep, heartbeats,
 * the authorizer, task routes, the publisher per change, the revive flow, the dashboard), every read (the
 * sweep's Scan of the live table, the authorizer's key read, the dashboard's list), and the fixed costs
 * (alarms, custom metrics, X-Ray traces, logs, storage and PITR), for an idle deployment, 20 agents, 1,000 busy
 * agents with 30 days of history and 100,000 agents. Pure arithmetic from the prices in bench/prices.json, the
 * template's resources and what the bench measured (or the stated assumptions where it did not), so the unit
 * tests check it. List prices, no free tier (the account's free tier is shared by everything else in it).
 */
public final class CostModel {
    public static final double SECONDS_PER_MONTH = 30 * 86_400.0;
    public static final double MINUTES_PER_MONTH = SECONDS_PER_MONTH / 60;
    static final double GB = 1e9;

    /** Prices (USD) as in prices.json. */
    public record Prices(double apiPerMillion, double lambdaPerMillion, double lambdaPerGbSecond,
                         double wruPerMillion, double rruPerMillion, double eventsPerMillion, double sfnPerThousand,
                         double sqsPerMillion, double schedulerPerMillion, double alarmPerMonth, double metricPerMonth,
                         double logsIngestPerGb, double logsStoragePerGbMonth, double xrayPerMillionTraces,
                         double storagePerGbMonth, double pitrPerGbMonth, double transferOutPerGb,
                         double archivePerGb, double archiveStoragePerGbMonth) {
        static Prices load() throws Exception {
            try (InputStream in = CostModel.class.getResourceAsStream("/prices.json")) {
                JsonNode p = Json.MAPPER.readTree(in);
                return new Prices(p.get("apiGatewayHttpApiPerMillionRequests").asDouble(),
                        p.get("lambdaPerMillionRequests").asDouble(), p.get("lambdaArmPerGbSecond").asDouble(),
                        p.get("dynamoDbOnDemandPerMillionWriteUnits").asDouble(),
                        p.get("dynamoDbOnDemandPerMillionReadUnits").asDouble(),
                        p.get("eventBridgeCustomEventsPerMillion").asDouble(),
                        p.get("stepFunctionsStandardPerThousandTransitions").asDouble(),
                        p.get("sqsStandardPerMillionRequests").asDouble(),
                        p.get("eventBridgeSchedulerPerMillionInvocations").asDouble(),
                        p.get("cloudWatchAlarmPerMonth").asDouble(), p.get("cloudWatchCustomMetricPerMonth").asDouble(),
                        p.get("cloudWatchLogsIngestionPerGb").asDouble(),
                        p.get("cloudWatchLogsStoragePerGbMonth").asDouble(),
                        p.get("xrayPerMillionTracesRecorded").asDouble(),
                        p.get("dynamoDbStoragePerGbMonth").asDouble(), p.get("dynamoDbPitrPerGbMonth").asDouble(),
                        p.get("dataTransferOutPerGb").asDouble(), p.get("eventBridgeArchivePerGb").asDouble(),
                        p.get("eventBridgeArchiveStoragePerGbMonth").asDouble());
            }
        }
    }

    /**
     * What template.yaml deploys that costs money by the month, and what the code emits. {@code alarms}: the
     * CloudWatch alarms; {@code idleMetrics}: custom metrics every sweep emits (so even with no agents);
     * {@code fleetMetrics}: the further ones a fleet's heartbeats, publisher and revive flow emit.
     */
    public record Deployment(int alarms, int alarmMetrics, int idleMetrics, int fleetMetrics, double sweepsPerMinute, int minSegments,
                             double memoryGb, double dashboardMemoryGb, double authorizerCacheSeconds,
                             boolean sweepTraced, double repairsPerMonth, boolean archived) {
        /** The template's figures: alarms counted in template.yaml, the rest from the code (see BENCHMARKS.md). */
        static Deployment fromTemplate() throws Exception {
            String template;
            try (InputStream in = CostModel.class.getResourceAsStream("/template.yaml")) {
                template = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            // Each alarm is billed per metric it watches: one, or each MetricStat of a metric-math alarm.
            int alarms = 0;
            int alarmMetrics = 0;
            for (String resource : template.substring(template.indexOf("\nResources:"))
                    .split("\n  (?=[A-Za-z0-9]+:\n)")) {
                if (resource.contains("Type: AWS::CloudWatch::Alarm")) {
                    alarms++;
                    alarmMetrics += Math.max(1, resource.split("MetricStat:", -1).length - 1);
                }
            }
            // The sweep function's block: traced unless it says PassThrough (the clock's decision turned it off).
            // (the resource's lines: indented more than the resource names, up to the next resource)
            Matcher block = Pattern.compile("\n  SweepFunction:\n((?:(?:    .*)?\n)*)").matcher(template);
            String sweepBlock = block.find() ? block.group(1) : "";
            boolean traced = !sweepBlock.contains("Tracing: PassThrough");
            // Every sweep: SweepDuration, AgentsScanned, AgentsMarkedDead, SelfPreservationHolds, SweepWriteErrors
            // (io.lifeline.sweep.SweepHandler);
            // every repair run: RecordsRedriven, ReplaysStamped (io.lifeline.events.OutboxRepairHandler).
            // Fleet: Heartbeats, HeartbeatsRejected by code (~2 codes seen), EventsPublished, EventsFailed,
            // ReviveOutcomes by step and outcome (~4 seen).
            double repairs = template.contains("OutboxRepairFunction:") ? MINUTES_PER_MONTH / 15 : 0;
            return new Deployment(alarms, alarmMetrics, 5 + (repairs > 0 ? 2 : 0), 1 + 2 + 2 + 4, 4, 4, 1.0, 0.5, 300, traced,
                    repairs, template.contains("Type: AWS::Events::Archive"));
        }
    }

    /**
     * What the model cannot measure on Lifeline Local and assumes (each stated in BENCHMARKS.md section 6).
     * Durations are billed Lambda milliseconds; log sizes are bytes per line as CloudWatch Logs ingests them.
     */
    public record Assumptions(double heartbeatMillis, double batchMillis, double authorizerMillis, double routeMillis,
                              double publisherMillisPerChange, double sweepBaseMillis, double sweepMillisPerAgent,
                              double heartbeatLogBytes, double platformLogBytes, double accessLogBytes,
                              double sweepLogBytes, double publishLogBytes, double authorizerLogBytes,
                              double responseBytes, double sqsIdleReceivesPerMinute, double sqsRequestsPerExtraSweep,
                              double xraySampleReservoirPerSecond, double xraySampleRate,
                              double writeUnitsPerTask, double writeUnitsPerChange, double changesPerTask,
                              double changesPerAgentDay, double eventsPerChange, double eventsPerDeath,
                              double sfnTransitionsPerDeath, double itemOverheadBytes, double dashboardPollSeconds,
                              double dashboardRequestsPerPoll, double repairBaseMillis, double repairLogBytes,
                              double eventBytes) {
        static Assumptions defaults() {
            return new Assumptions(10, 25, 10, 15, 30, 60, 0.02,
                    430, 330, 280, 760, 440, 190,
                    450, 15, 2,
                    1, 0.05,
                    13, 4, 2, 2, 1, 3, 12, 100, 2, 3, 100, 450, 1_000);
        }
    }

    /**
     * A month of one workload. {@code agentsPerRequest}: 1 single, 10 a daemon's batch; {@code tasksPerAgentDay}:
     * the busy agents' work (0: beats only); {@code historyBytesPerAgent}: what 30 days leave on the ledger;
     * {@code liveItemBytes}: one agent item; {@code sweepUnitsPerAgent}: read units per alive agent per sweep
     * (measured in section 2); {@code dashboardHours}: hours a month one person keeps the dashboard open on a team
     * of {@code dashboardTeamAgents}.
     */
    public record Workload(String name, int agents, double beatSeconds, int agentsPerRequest, double tasksPerAgentDay,
                           double historyBytesPerAgent, double liveItemBytes, double sweepUnitsPerAgent,
                           double deathsPerAgentMonth, double dashboardHours, int dashboardTeamAgents,
                           double writeUnitsPerAgentBeat) {
        /** One write unit per agent per beat (direct heartbeats, or a batch without a host lease). */
        public Workload(String name, int agents, double beatSeconds, int agentsPerRequest, double tasksPerAgentDay,
                        double historyBytesPerAgent, double liveItemBytes, double sweepUnitsPerAgent,
                        double deathsPerAgentMonth, double dashboardHours, int dashboardTeamAgents) {
            this(name, agents, beatSeconds, agentsPerRequest, tasksPerAgentDay, historyBytesPerAgent, liveItemBytes,
                    sweepUnitsPerAgent, deathsPerAgentMonth, dashboardHours, dashboardTeamAgents, 1.0);
        }

        /** A daemon's batch through a host lease of {@code perHost} agents: one lease write per host per beat. */
        static Workload hosted(String name, int agents, int perHost, double writeUnitsPerAgentBeat, double itemBytes,
                               double units) {
            return new Workload(name, agents, 30, perHost, 20, 0, itemBytes, units, 1, 176, 100,
                    writeUnitsPerAgentBeat);
        }
    }

    /** One line of the bill: its group, what it is, dollars a month, and how it was counted. */
    public record Line(String group, String item, double usd, String basis) {
    }

    public record Bill(Workload workload, List<Line> lines) {
        public double total() {
            return lines.stream().mapToDouble(Line::usd).sum();
        }

        public double group(String group) {
            return lines.stream().filter(l -> l.group().equals(group)).mapToDouble(Line::usd).sum();
        }

        /** Keeping agents alive: the clock, the sweep and the beats (no work, no storage, no dashboard). */
        public double liveness() {
            return group(FIXED) + group(SWEEP) + group(BEATS);
        }

        public double livenessPerAgent() {
            return workload.agents() == 0 ? Double.NaN : liveness() / workload.agents();
        }

        public double totalPerAgent() {
            return workload.agents() == 0 ? Double.NaN : total() / workload.agents();
        }
    }

    static final String FIXED = "fixed";
    static final String SWEEP = "sweep";
    static final String BEATS = "beats";
    static final String WORK = "work";
    static final String STORAGE = "storage";
    static final String DASHBOARD = "dashboard";

    private CostModel() {
    }

    /** Traces X-Ray records a month for a function invoked {@code perSecond} times a second (default rule). */
    static double tracesPerMonth(double perSecond, Assumptions a) {
        double sampled = Math.min(perSecond, a.xraySampleReservoirPerSecond())
                + a.xraySampleRate() * Math.max(0, perSecond - a.xraySampleReservoirPerSecond());
        return sampled * SECONDS_PER_MONTH;
    }

    static double lambda(double invocations, double millis, double memoryGb, Prices p) {
        return invocations * p.lambdaPerMillion() / 1e6
                + invocations * Math.ceil(millis) / 1000.0 * memoryGb * p.lambdaPerGbSecond();
    }

    static double logs(double lines, double bytesPerLine, Prices p) {
        return lines * bytesPerLine / GB * p.logsIngestPerGb();
    }

    public static Bill bill(Workload w, Deployment d, Assumptions a, Prices p) {
        List<Line> lines = new ArrayList<>();
        int n = w.agents();
        double sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;

        // ---- fixed: there with no agents at all ---------------------------------------------------------------
        lines.add(new Line(FIXED, "CloudWatch alarms (" + d.alarms() + ", watching " + d.alarmMetrics() + " metrics)",
                d.alarmMetrics() * p.alarmPerMonth(), d.alarmMetrics() + " alarm metrics x $" + p.alarmPerMonth()
                        + " a month (template.yaml; a metric-math alarm pays for each metric)"));
        lines.add(new Line(FIXED, "custom metrics emitted with no agents (" + d.idleMetrics() + ")",
                d.idleMetrics() * p.metricPerMonth(), d.idleMetrics() + " EMF metrics x $" + p.metricPerMonth()
                        + " (the sweep's on every sweep" + (d.repairsPerMonth() > 0 ? ", the repair's 2 on every run" : "") + ")"));
        double extraSweeps = (d.sweepsPerMinute() - 1) * MINUTES_PER_MONTH;
        lines.add(new Line(FIXED, "sweep clock: the schedule (1 a minute)",
                MINUTES_PER_MONTH * p.schedulerPerMillion() / 1e6, fmt(MINUTES_PER_MONTH)
                        + " scheduled invocations, priced as EventBridge Scheduler"));
        double sqsRequests = a.sqsIdleReceivesPerMinute() * MINUTES_PER_MONTH + MINUTES_PER_MONTH
                + a.sqsRequestsPerExtraSweep() * extraSweeps;
        lines.add(new Line(FIXED, "sweep clock: SQS (delayed messages for the minute's other sweeps)",
                sqsRequests * p.sqsPerMillion() / 1e6, fmt(sqsRequests) + " requests: Lambda's long polls of an idle "
                        + "queue (" + fmt(a.sqsIdleReceivesPerMinute()) + "/min), a SendMessageBatch a minute, a "
                        + "receive and a delete per queued sweep"));
        lines.add(new Line(FIXED, "sweep clock: Lambda requests (" + fmt(d.sweepsPerMinute()) + " sweeps a minute)",
                sweeps * p.lambdaPerMillion() / 1e6, fmt(sweeps) + " invocations"));
        lines.add(new Line(FIXED, "sweep: X-Ray traces", d.sweepTraced() ? sweeps * p.xrayPerMillionTraces() / 1e6 : 0,
                d.sweepTraced() ? fmt(sweeps) + " traces (a sweep a 15 s is within the default rule's 1/s reservoir)"
                        : "none: the sweep function is Tracing: PassThrough"));
        if (d.repairsPerMonth() > 0) {
            double r = d.repairsPerMonth();
            lines.add(new Line(FIXED, "outbox repair every 15 min: Lambda, trace, its line",
                    lambda(r, a.repairBaseMillis(), d.memoryGb(), p) + r * p.xrayPerMillionTraces() / 1e6
                            + logs(r, a.repairLogBytes() + a.platformLogBytes(), p),
                    fmt(r) + " runs x " + fmt(a.repairBaseMillis()) + " ms (+ its Scan, below)"));
        }
        lines.add(new Line(FIXED, "sweep: log lines (its line + Lambda's START/END/REPORT)",
                logs(sweeps, a.sweepLogBytes() + a.platformLogBytes(), p),
                fmt(a.sweepLogBytes() + a.platformLogBytes()) + " bytes a sweep"));

        // ---- the sweep: grows with the live table only -------------------------------------------------------
        double liveBytes = n * (w.liveItemBytes() + a.itemOverheadBytes());
        double minimumUnits = d.minSegments() * 0.5;
        double unitsPerSweep = Math.max(minimumUnits, n * w.sweepUnitsPerAgent());
        lines.add(new Line(SWEEP, "sweep: DynamoDB reads (Scan of the live table)",
                sweeps * unitsPerSweep * p.rruPerMillion() / 1e6, fmt(unitsPerSweep) + " RRU a sweep ("
                        + (n == 0 ? "0.5 per segment, " + d.minSegments() + " segments"
                                : fmt4(w.sweepUnitsPerAgent()) + " per alive agent") + ")"));
        if (d.repairsPerMonth() > 0) {
            double repairUnits = Math.max(0.5, n * w.sweepUnitsPerAgent()) + 0.5;
            lines.add(new Line(SWEEP, "outbox repair: Scan of the live table + the parked records",
                    d.repairsPerMonth() * repairUnits * p.rruPerMillion() / 1e6, fmt(repairUnits) + " RRU a run"));
        }
        double sweepMillis = a.sweepBaseMillis() + a.sweepMillisPerAgent() * n;
        lines.add(new Line(SWEEP, "sweep: Lambda duration", sweeps * Math.ceil(sweepMillis) / 1000.0 * d.memoryGb()
                * p.lambdaPerGbSecond(), fmt(sweepMillis) + " ms a sweep at " + d.memoryGb() + " GB"));

        // ---- heartbeats -------------------------------------------------------------------------------------
        double beats = n * SECONDS_PER_MONTH / w.beatSeconds();
        double requests = beats / w.agentsPerRequest();
        double beatMillis = w.agentsPerRequest() == 1 ? a.heartbeatMillis() : a.batchMillis();
        if (n > 0) {
            lines.add(new Line(BEATS, "API Gateway requests (heartbeats)", requests * p.apiPerMillion() / 1e6,
                    fmt(requests) + " requests"));
            lines.add(new Line(BEATS, "heartbeat Lambda (requests + duration)", lambda(requests, beatMillis,
                    d.memoryGb(), p), fmt(requests) + " x " + fmt(beatMillis) + " ms"));
            if (w.writeUnitsPerAgentBeat() == 1.0) {
                lines.add(new Line(BEATS, "DynamoDB writes (1 WRU a beat, live item "
                        + fmt(w.liveItemBytes()) + " B)", beats * p.wruPerMillion() / 1e6, fmt(beats) + " WRU"));
            } else {
                double wru = beats * w.writeUnitsPerAgentBeat();
                lines.add(new Line(BEATS, "DynamoDB writes (host lease: 1 WRU a renewal for " + w.agentsPerRequest()
                        + " agents, measured " + fmt(w.writeUnitsPerAgentBeat()) + " WRU an agent-beat)",
                        wru * p.wruPerMillion() / 1e6, fmt(wru) + " WRU"));
            }
            // One key per agent (single) or per daemon (batched); API Gateway caches the answer per key.
            double keys = (double) n / w.agentsPerRequest();
            double authRuns = keys * SECONDS_PER_MONTH / d.authorizerCacheSeconds();
            lines.add(new Line(BEATS, "authorizer Lambda + its key read (1 RRU)", lambda(authRuns, a.authorizerMillis(),
                    d.memoryGb(), p) + authRuns * p.rruPerMillion() / 1e6, fmt(authRuns) + " runs: one per key per "
                            + fmt(d.authorizerCacheSeconds()) + " s"));
            double rate = requests / SECONDS_PER_MONTH;
            double authRate = authRuns / SECONDS_PER_MONTH;
            double traces = tracesPerMonth(rate, a) + tracesPerMonth(authRate, a);
            lines.add(new Line(BEATS, "X-Ray traces (heartbeat + authorizer)", traces * p.xrayPerMillionTraces() / 1e6,
                    fmt(traces) + " traces (1/s + 5% of the rest)"));
            lines.add(new Line(BEATS, "logs: heartbeat line + Lambda's lines + access log",
                    logs(requests, a.heartbeatLogBytes() + a.platformLogBytes() + a.accessLogBytes(), p)
                            + logs(authRuns, a.authorizerLogBytes() + a.platformLogBytes(), p),
                    fmt(a.heartbeatLogBytes() + a.platformLogBytes() + a.accessLogBytes()) + " bytes a request"));
            lines.add(new Line(BEATS, "data transfer out (answers)", requests * a.responseBytes() / GB
                    * p.transferOutPerGb(), fmt(a.responseBytes()) + " bytes an answer"));
            lines.add(new Line(BEATS, "custom metrics the fleet emits (" + d.fleetMetrics() + ")",
                    d.fleetMetrics() * p.metricPerMonth(), "heartbeats, rejections, publisher, revive outcomes"));
        }

        // ---- work: tasks, status changes, the publisher, deaths ----------------------------------------------
        double tasks = n * w.tasksPerAgentDay() * 30;
        double changes = tasks * a.changesPerTask() + (w.tasksPerAgentDay() > 0 ? n * a.changesPerAgentDay() * 30 : 0);
        double deaths = n * w.deathsPerAgentMonth();
        if (tasks > 0) {
            double calls = tasks * 3;
            lines.add(new Line(WORK, "task routes (create, claim, complete): API + Lambda", calls * p.apiPerMillion()
                    / 1e6 + lambda(calls, a.routeMillis(), d.memoryGb(), p), fmt(calls) + " requests"));
            lines.add(new Line(WORK, "task writes (" + fmt(a.writeUnitsPerTask()) + " WRU a task)",
                    tasks * a.writeUnitsPerTask() * p.wruPerMillion() / 1e6, "create 1 + claim 4+2 + complete 4+2 "
                            + "(transactions: 2 WRU an item; the assignee index)"));
        }
        if (changes + deaths > 0) {
            double all = changes + deaths;
            lines.add(new Line(WORK, "publisher per change: Lambda", lambda(all, a.publisherMillisPerChange(),
                    d.memoryGb(), p), fmt(all) + " changes, one invocation each (a busy stream batches more)"));
            lines.add(new Line(WORK, "publisher per change: writes (transition + 2 event copies + the watermark)",
                    all * a.writeUnitsPerChange() * p.wruPerMillion() / 1e6, fmt(a.writeUnitsPerChange())
                            + " WRU a change"));
            double events = changes * a.eventsPerChange() + deaths * a.eventsPerDeath();
            lines.add(new Line(WORK, "publisher: the event log read before sending (dedup)",
                    events * p.rruPerMillion() / 1e6, "1 RRU an event (a strongly consistent BatchGetItem)"));
            lines.add(new Line(WORK, "EventBridge events (PutEvents)", events * p.eventsPerMillion() / 1e6,
                    fmt(events) + " events"));
            if (d.archived()) {
                double gb = events * a.eventBytes() / GB;
                lines.add(new Line(WORK, "EventBridge archive (every event, kept 30 days)", gb
                        * (p.archivePerGb() + p.archiveStoragePerGbMonth()), fmt(gb) + " GB of " + fmt(a.eventBytes())
                        + "-byte events archived and kept"));
            }
            lines.add(new Line(WORK, "publisher: logs", logs(all, a.publishLogBytes() + a.platformLogBytes(), p),
                    "its line + Lambda's, per invocation"));
            double traces = tracesPerMonth(all / SECONDS_PER_MONTH, a);
            if (tasks > 0) {
                lines.add(new Line(WORK, "task routes: logs", logs(tasks * 3, a.heartbeatLogBytes()
                        + a.platformLogBytes() + a.accessLogBytes(), p), "as a heartbeat request"));
                traces += tracesPerMonth(tasks * 3 / SECONDS_PER_MONTH, a);
            }
            lines.add(new Line(WORK, "X-Ray traces (publisher, task routes)", traces * p.xrayPerMillionTraces() / 1e6,
                    fmt(traces) + " traces"));
        }
        if (deaths > 0) {
            lines.add(new Line(WORK, "revive flow (Step Functions standard)", deaths * a.sfnTransitionsPerDeath()
                    * p.sfnPerThousand() / 1e3, fmt(deaths) + " deaths x " + fmt(a.sfnTransitionsPerDeath())
                    + " transitions"));
        }

        // ---- storage: DynamoDB (with PITR) and the logs kept ----------------------------------------------------
        double historyBytes = w.tasksPerAgentDay() > 0 ? n * w.historyBytesPerAgent() : 0;
        lines.add(new Line(STORAGE, "DynamoDB live table + PITR", liveBytes / GB * (p.storagePerGbMonth()
                + p.pitrPerGbMonth()), fmt(liveBytes / 1e6) + " MB"));
        if (historyBytes > 0) {
            lines.add(new Line(STORAGE, "DynamoDB ledger (30 days of history) + PITR", historyBytes / GB
                    * (p.storagePerGbMonth() + p.pitrPerGbMonth()), fmt(historyBytes / 1e6) + " MB"));
        }
        // Every line above whose item is a log line is ingestion, at the ingestion price: back to gigabytes.
        double ingested = lines.stream().filter(l -> l.item().contains("log")).mapToDouble(Line::usd).sum()
                / p.logsIngestPerGb();
        lines.add(new Line(STORAGE, "CloudWatch Logs kept (a month's lines, uncompressed: an upper bound)",
                ingested * p.logsStoragePerGbMonth(), fmt(ingested) + " GB"));

        // ---- the dashboard: one person keeps it open ---------------------------------------------------------
        if (w.dashboardHours() > 0) {
            double polls = w.dashboardHours() * 3600 / a.dashboardPollSeconds();
            double calls = polls * a.dashboardRequestsPerPoll();
            double reads = polls * w.dashboardTeamAgents() * 0.5;
            lines.add(new Line(DASHBOARD, "dashboard open " + fmt(w.dashboardHours()) + " h (team of "
                    + w.dashboardTeamAgents() + ")", calls * p.apiPerMillion() / 1e6 + lambda(calls, a.routeMillis(),
                    d.dashboardMemoryGb(), p) + reads * p.rruPerMillion() / 1e6 + logs(calls, a.heartbeatLogBytes()
                    + a.platformLogBytes() + a.accessLogBytes(), p), fmt(calls) + " requests, " + fmt(reads)
                    + " RRU (every poll lists the team: 0.5 RRU an agent)"));
        }
        return new Bill(w, lines);
    }

    /**
     * The idle bill less the allowances every account has each month, whatever its age: 10 alarms, 10 custom
     * metrics, 5 GB of logs, 1 M Lambda requests and 400,000 GB-s, 1 M SQS requests, 14 M Scheduler invocations,
     * 100,000 X-Ray traces, 25 GB of DynamoDB storage. What is left: traces past 100,000, alarms and metrics past
     * 10, and the sweep's and the repair's reads (on-demand reads have no free allowance).
     */
    static double idleAfterFreeTier(Deployment d, Assumptions a, Prices p) {
        double sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;
        double traces = Math.max(0, (d.sweepTraced() ? sweeps : 0) + d.repairsPerMonth() - 100_000)
                * p.xrayPerMillionTraces() / 1e6;
        double reads = (sweeps * d.minSegments() * 0.5 + d.repairsPerMonth()) * p.rruPerMillion() / 1e6;
        double alarms = Math.max(0, d.alarmMetrics() - 10) * p.alarmPerMonth();
        double metrics = Math.max(0, d.idleMetrics() - 10) * p.metricPerMonth();
        return traces + reads + alarms + metrics;
    }

    static String fmt(double v) {
        if (v >= 100 || v == Math.rint(v)) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return String.format(Locale.ROOT, "%,.2f", v);
    }

    static String fmt4(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }

    static void run(Report report, Measured m) throws Exception {
        Prices p = Prices.load();
        Deployment d = Deployment.fromTemplate();
        Assumptions a = Assumptions.defaults();
        List<String> assumed = new ArrayList<>();
        double units = m.sweepReadUnitsPerAgent;
        double unitsNoHistory = m.sweepReadUnitsPerAgentNoHistory;
        double itemBytes = m.liveAgentItemBytes;
        if (Double.isNaN(units)) {
            // Section 2's last published figures (BENCHMARKS.md), when this run did not measure them.
            units = 0.0444;
            unitsNoHistory = 0.045;
            itemBytes = 361;
            assumed.add("sweep units per agent and live item size from BENCHMARKS.md section 2 (not run now)");
        }
        double historyBytes = 681_207;
        double wcu = Double.isNaN(m.heartbeatWriteUnits) ? 1.0 : m.heartbeatWriteUnits;
        if (wcu != 1.0) {
            assumed.add("a heartbeat measured " + wcu + " WRU; the model prices 1");
        }
        // idle: nothing but the deployment. 20 agents: beats only. 1,000 busy: 20 tasks a day each, 30 days of
        // history, a dashboard open 8 h x 22 days on a team of 100. 100,000: beats, teams of 100, same dashboard.
        List<Workload> workloads = List.of(
                new Workload("idle (0 agents)", 0, 30, 1, 0, 0, itemBytes, units, 0, 0, 0),
                new Workload("20 agents, 30 s", 20, 30, 1, 0, 0, itemBytes, units, 1, 0, 0),
                new Workload("1,000 busy agents with 30 days of history, single", 1_000, 30, 1, 20, historyBytes,
                        itemBytes, units, 1, 176, 100),
                new Workload("1,000 busy agents without history, single", 1_000, 30, 1, 20, 0, itemBytes,
                        unitsNoHistory, 1, 176, 100),
                new Workload("1,000 busy agents with 30 days of history, batched 10", 1_000, 30, 10, 20, historyBytes,
                        itemBytes, units, 1, 176, 100),
                new Workload("1,000 busy agents without history, batched 10", 1_000, 30, 10, 20, 0, itemBytes,
                        unitsNoHistory, 1, 176, 100),
                new Workload("100,000 agents, single", 100_000, 30, 1, 0, 0, itemBytes, units, 1, 176, 100),
                new Workload("100,000 agents, batched 10", 100_000, 30, 10, 0, 0, itemBytes, units, 1, 176, 100),
                // Host leases (issue 13): the batched-10 workload without history, each batch one lease write.
                Workload.hosted("1,000 busy agents without history, host lease of 10", 1_000, 10,
                        Double.isNaN(m.hosted10WriteUnitsPerAgent) ? 0.1 : m.hosted10WriteUnitsPerAgent, itemBytes,
                        unitsNoHistory),
                Workload.hosted("1,000 busy agents without history, host lease of 25", 1_000, 25,
                        Double.isNaN(m.hosted25WriteUnitsPerAgent) ? 0.04 : m.hosted25WriteUnitsPerAgent, itemBytes,
                        unitsNoHistory));
        ObjectNode details = report.details().putObject("costModel");
        details.set("prices", Json.MAPPER.valueToTree(p));
        details.set("deployment", Json.MAPPER.valueToTree(d));
        details.set("assumptions", Json.MAPPER.valueToTree(a));
        ArrayNode bills = details.putArray("bills");
        List<Bill> out = new ArrayList<>();
        for (Workload w : workloads) {
            Bill b = bill(w, d, a, p);
            out.add(b);
            ObjectNode o = bills.addObject();
            o.set("workload", Json.MAPPER.valueToTree(w));
            o.set("lines", Json.MAPPER.valueToTree(b.lines()));
            o.put("total", b.total()).put("liveness", b.liveness());
            System.out.printf(Locale.ROOT, "  %s: $%.2f a month (liveness $%.2f)%n", w.name(), b.total(),
                    b.liveness());
            for (Line l : b.lines()) {
                System.out.printf(Locale.ROOT, "    %-9s %-72s %10.4f  %s%n", l.group(), l.item(), l.usd(), l.basis());
            }
        }
        Bill idle = out.get(0);
        report.add("6", "idle deployment (0 agents): fixed $ a month, list prices", idle.total(), "USD",
                "the old sleeping sweep alone (~1.9 M GB-s)", 1.9e6 * p.lambdaPerGbSecond(), "<= 1",
                idle.total() <= 1);
        double free = idleAfterFreeTier(d, a, p);
        report.add("6", "idle deployment: after the always-free tier (if nothing else in the account uses it)", free,
                "USD", "list prices", idle.total(), "<= 1", free <= 1);
        details.put("idleAfterFreeTier", free);
        report.add("6", "20 agents, 30 s: $ a month", out.get(1).total(), "USD", "per agent", out.get(1).totalPerAgent(),
                null, null);
        for (int i : new int[] {2, 4}) {
            Bill with = out.get(i);
            Bill without = out.get(i + 1);
            String mode = i == 2 ? "single" : "batched 10";
            report.add("6", "1,000 busy agents, " + mode + ": liveness $ per agent-month, with / without history",
                    with.livenessPerAgent(), "USD", "without history", without.livenessPerAgent(), "no more",
                    with.livenessPerAgent() <= without.livenessPerAgent() + 1e-12);
            report.add("6", "1,000 busy agents, " + mode + ": total $ per agent-month (work, storage, dashboard)",
                    with.totalPerAgent(), "USD", "without history", without.totalPerAgent(), null, null);
        }
        report.add("6", "100,000 agents, single: $ per agent-month", out.get(6).totalPerAgent(), "USD",
                "batched 10", out.get(7).totalPerAgent(), null, null);
        double floor = SECONDS_PER_MONTH / 30 * p.wruPerMillion() / 1e6;
        report.add("6", "1,000 agents, single: liveness $ per agent-month", out.get(2).livenessPerAgent(), "USD",
                "DynamoDB 1 WRU/beat alone", floor, "<= 0.10", out.get(2).livenessPerAgent() <= 0.10);
        report.add("6", "1,000 agents, batched 10: liveness $ per agent-month", out.get(4).livenessPerAgent(), "USD",
                "DynamoDB 1 WRU/beat alone", floor, "<= 0.06", out.get(4).livenessPerAgent() <= 0.06);
        report.add("6", "1,000 agents, host lease of 10: liveness $ per agent-month", out.get(8).livenessPerAgent(),
                "USD", "batched 10 without history", out.get(5).livenessPerAgent(), "<= 0.02",
                out.get(8).livenessPerAgent() <= 0.02);
        report.add("6", "1,000 agents, host lease of 25: liveness $ per agent-month", out.get(9).livenessPerAgent(),
                "USD", "batched 10 without history", out.get(5).livenessPerAgent(), null, null);
        assumed.forEach(report::note);
    }
}
