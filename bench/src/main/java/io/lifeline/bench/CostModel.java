package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Figure 6: what a deployment costs a month, itemised: every function (the sweep clock, the sweep, heartbeats,
 * the authorizer, task routes, the publisher per change, the revive flow, the dashboard), every read (the
 * sweep's Scan of the live table, the key look-ups, the dashboard's list), what a deployment pays to watch itself
 * (alarms, custom metrics, X-Ray traces, log lines, the logs kept) and storage, for an idle deployment, 20 agents,
 * 1,000 busy agents with 30 days of history, 100,000 and 1,000,000 agents, single and batched, through the heartbeat
 * Function URL and through API Gateway, and for host leases of 10 and 25. A fleet is priced only under caps that can
 * serve it ({@link #shortfalls}: Lambda's 10 requests a second per unit of concurrency, the stage's route throttle,
 * the authorizer), by default the smallest {@link FleetSizing} size that fits; past them it is refused
 * ({@link Unservable}), naming the cap that binds. Pure arithmetic from the prices in
 * bench/prices.json, the template's resources and parameter defaults, and what the bench measured (or the stated
 * assumptions where it did not), so the unit tests check it. List prices, no free tier (the account's free tier is
 * shared by everything else in it).
 */
public final class CostModel {
    public static final double SECONDS_PER_MONTH = 30 * 86_400.0;
    public static final double MINUTES_PER_MONTH = SECONDS_PER_MONTH / 60;
    public static final double HOURS_PER_MONTH = SECONDS_PER_MONTH / 3600;
    static final double GB = 1e9;

    /** Prices (USD) as in prices.json. */
    public record Prices(double apiPerMillion, double lambdaPerMillion, double lambdaPerGbSecond,
                         double wruPerMillion, double rruPerMillion, double eventsPerMillion, double sfnPerThousand,
                         double sqsPerMillion, double schedulerPerMillion, double alarmPerMonth, double metricPerMonth,
                         double logsIngestPerGb, double logsStoragePerGbMonth, double xrayPerMillionTraces,
                         double storagePerGbMonth, double pitrPerGbMonth, double transferOutPerGb,
                         double archivePerGb, double archiveStoragePerGbMonth, double functionUrlPerMillion,
                         double scheduledRulePerMillion) {
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
                        p.get("eventBridgeArchiveStoragePerGbMonth").asDouble(),
                        p.get("lambdaFunctionUrlPerMillionRequests").asDouble(),
                        p.get("eventBridgeScheduledRuleOnDefaultBusPerMillion").asDouble());
            }
        }
    }

    /**
     * What template.yaml deploys that costs money by the month, read from the template with its parameters'
     * defaults: {@code alarmSet} and its {@code alarms} and {@code alarmMetrics} (a metric-math alarm pays for every
     * metric it reads; the optional destinations' metrics are left out, as no webhook is configured by default);
     * {@code idleMetrics}: custom metrics published with no agents (none: counts of 0 are not published,
     * SweepLineTest); whether the sweep, the outbox repair and the heartbeat function record X-Ray traces; whether
     * Lambda's platform lines (START/END/REPORT) are kept ({@code SystemLogLevel} INFO or DEBUG); whether the sweep's
     * schedule is EventBridge Scheduler's (ScheduleV2, priced) or a scheduled rule on the default bus (free).
     */
    public record Deployment(String alarmSet, int alarms, int alarmMetrics, int idleMetrics, double sweepsPerMinute,
                             int minSegments, double memoryGb, double dashboardMemoryGb, double keyCacheSeconds,
                             boolean sweepTraced, boolean repairTraced, boolean heartbeatTraced,
                             boolean platformLines, boolean scheduler, double repairsPerMonth, boolean archived) {
        static String template() throws Exception {
            try (InputStream in = CostModel.class.getResourceAsStream("/template.yaml")) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }

        /**
         * The template's deployment with its default alarm set ({@code full}: with AlarmSet full), with the heartbeat
         * URL ({@code ConcurrencyProfile} reserved): the model prices beats through the URL.
         */
        static Deployment fromTemplate(boolean full) throws Exception {
            return fromTemplate(full, true);
        }

        /**
         * The same for either concurrency profile: {@code url} false is the default profile, unreserved, which
         * deploys no heartbeat URL, so the alarms on both heartbeat paths read the API function's metrics only.
         * Reserved concurrency itself is free; the profiles' idle bills differ by those alarm metrics alone.
         */
        static Deployment fromTemplate(boolean full, boolean url) throws Exception {
            String template = template();
            String defaultSet = parameterDefault(template, "AlarmSet");
            int alarms = 0;
            int alarmMetrics = 0;
            for (String resource : resources(template).values()) {
                if (!resource.contains("Type: AWS::CloudWatch::Alarm")) {
                    continue;
                }
                if (resource.contains("Condition: FullAlarms") && !full) {
                    continue;
                }
                alarms++;
                // A metric-math alarm's MetricStats that always exist (list items at the Metrics list's own level;
                // those nested under !If belong to optional destinations).
                Matcher stats = Pattern.compile("(?m)^        - \\{ Id: [^\\n]*MetricStat:").matcher(resource);
                int n = 0;
                while (stats.find()) {
                    n++;
                }
                // The heartbeat URL's metrics (!If HasHeartbeatUrl): read with the reserved profile only.
                Matcher urlMetrics = Pattern.compile(
                        "(?m)^          - HasHeartbeatUrl\\n          - \\{ Id: [^\\n]*MetricStat:").matcher(resource);
                while (url && urlMetrics.find()) {
                    n++;
                }
                alarmMetrics += Math.max(1, n);
            }
            Map<String, String> r = resources(template);
            boolean sweepTraced = !r.get("SweepFunction").contains("Tracing: PassThrough");
            boolean repairTraced = r.containsKey("OutboxRepairFunction")
                    && !r.get("OutboxRepairFunction").contains("Tracing: PassThrough");
            // The heartbeat function: Tracing: !If [TraceHeartbeats, Active, PassThrough], by HeartbeatTracing.
            String heartbeat = r.get("HeartbeatFunction");
            boolean heartbeatTraced = heartbeat.contains("TraceHeartbeats")
                    ? "Active".equals(parameterDefault(template, "HeartbeatTracing"))
                    : !heartbeat.contains("Tracing: PassThrough");
            String systemLevel = parameterDefault(template, "SystemLogLevel");
            boolean platform = systemLevel == null || !systemLevel.equals("WARN");
            boolean scheduler = r.get("SweepFunction").contains("Type: ScheduleV2");
            double repairs = r.containsKey("OutboxRepairFunction") ? MINUTES_PER_MONTH / 15 : 0;
            String keyCache = value(heartbeat, "KEY_CACHE_SECONDS");
            return new Deployment(full ? "full" : defaultSet, alarms, alarmMetrics, 0, 4, 4, 1.0, 0.5,
                    keyCache == null ? 300 : Double.parseDouble(keyCache), sweepTraced, repairTraced, heartbeatTraced,
                    platform, scheduler, repairs, template.contains("Type: AWS::Events::Archive"));
        }

        /** Resources by logical id, each its block of lines (indented more than the names, up to the next). */
        static Map<String, String> resources(String template) {
            Map<String, String> out = new LinkedHashMap<>();
            String body = template.substring(template.indexOf("\nResources:"), template.indexOf("\nOutputs:"));
            Matcher m = Pattern.compile("(?m)^  ([A-Za-z0-9]+):\n((?:(?:    .*| *#.*)?\n)*)").matcher(body);
            while (m.find()) {
                out.put(m.group(1), m.group(2));
            }
            return out;
        }

        static String parameterDefault(String template, String name) {
            Matcher m = Pattern.compile("\n  " + name + ":\n(?:    .*\n)*?    Default: '?([^'\\s]+)'?").matcher(template);
            return m.find() ? m.group(1) : null;
        }

        private static String value(String block, String variable) {
            Matcher m = Pattern.compile(variable + ": '?(\\d+)").matcher(block);
            return m.find() ? m.group(1) : null;
        }
    }

    /**
     * Figures measured from the functions' real output: the heartbeat handler's warm time (section 3's in-process
     * p50: what Lambda bills it for, less the network), the sweep's line at idle (bytes, as CloudWatch Logs ingests
     * it), and the log bytes and key look-ups a beat costs on each path ({@link ObservabilityBench}: the heartbeat
     * function's lines, and the authorizer's on the API path), keyed {@code url/N} or {@code api/N} for N agents a
     * request.
     */
    public record Measures(double heartbeatMillis, double sweepLineBytes, Map<String, BeatLog> beatLogs) {
        /** The last published figures (BENCHMARKS.md section 6), for the unit tests and a run that measures none. */
        static Measures published() {
            Map<String, BeatLog> logs = new LinkedHashMap<>();
            logs.put("url/1", new BeatLog(8.46, 0));
            logs.put("api/1", new BeatLog(7.11, 18.517));
            logs.put("url/10", new BeatLog(0.855, 0));
            logs.put("api/10", new BeatLog(0.72, 1.852));
            logs.put("url/25", new BeatLog(0.285, 0));
            logs.put("api/25", new BeatLog(0.24, 0.74));
            return new Measures(3.47, 413, logs);
        }

        BeatLog log(boolean viaUrl, int perRequest) {
            BeatLog l = beatLogs.get((viaUrl ? "url/" : "api/") + perRequest);
            if (l == null) {
                throw new IllegalArgumentException("no log figure measured for " + (viaUrl ? "url/" : "api/")
                        + perRequest + ": " + beatLogs.keySet());
            }
            return l;
        }
    }

    /** Log bytes a beat: the heartbeat function's lines, and the authorizer's (API path). */
    public record BeatLog(double handlerBytesPerBeat, double authorizerBytesPerBeat) {
    }

    /**
     * What the model cannot measure on Lifeline Local and assumes (each stated in BENCHMARKS.md section 6).
     * Durations are billed Lambda milliseconds; log sizes are bytes per line as CloudWatch Logs ingests them.
     */
    public record Assumptions(double authorizerMillis, double routeMillis, double publisherMillisPerChange,
                              double sweepBaseMillis, double sweepMillisPerAgent, double platformLogBytes,
                              double accessLogBytes, double routeLogBytes, double publishLogBytes,
                              double repairLogBytes, double responseBytes, double sqsIdleReceivesPerMinute,
                              double sqsRequestsPerExtraSweep, double xraySampleReservoirPerSecond,
                              double xraySampleRate, double writeUnitsPerTask, double writeUnitsPerChange,
                              double changesPerTask, double changesPerAgentDay, double eventsPerChange,
                              double eventsPerDeath, double sfnTransitionsPerDeath, double itemOverheadBytes,
                              double dashboardPollSeconds, double dashboardRequestsPerPoll, double repairBaseMillis,
                              double eventBytes, double keyReadUnits) {
        static Assumptions defaults() {
            return new Assumptions(10, 15, 30, 60, 0.02, 330, 280, 430, 440, 200, 450, 15, 2, 1, 0.05, 13, 4, 2, 2,
                    1, 3, 12, 100, 2, 3, 100, 1_000, 0.5);
        }
    }

    /**
     * A month of one workload. {@code agentsPerRequest}: 1 single, N a daemon's batch (or host lease) of N;
     * {@code viaUrl}: heartbeats through the heartbeat Function URL, else through API Gateway's HTTP API;
     * {@code tasksPerAgentDay}: the busy agents' work (0: beats only); {@code historyBytesPerAgent}: what 30 days
     * leave on the ledger; {@code liveItemBytes}: one agent item; {@code sweepUnitsPerAgent}: read units per alive
     * agent per sweep (measured in section 2); {@code dashboardHours}: hours a month one person keeps the dashboard
     * open on a team of {@code dashboardTeamAgents}; {@code writeUnitsPerAgentBeat}: 1, or 1/N through a host lease.
     */
    public record Workload(String name, int agents, double beatSeconds, int agentsPerRequest, boolean viaUrl,
                           double tasksPerAgentDay, double historyBytesPerAgent, double liveItemBytes,
                           double sweepUnitsPerAgent, double deathsPerAgentMonth, double dashboardHours,
                           int dashboardTeamAgents, double writeUnitsPerAgentBeat, double changesPerAgentMonth,
                           boolean hookEvents) {
        public Workload(String name, int agents, double beatSeconds, int agentsPerRequest, boolean viaUrl,
                        double tasksPerAgentDay, double historyBytesPerAgent, double liveItemBytes,
                        double sweepUnitsPerAgent, double deathsPerAgentMonth, double dashboardHours,
                        int dashboardTeamAgents, double writeUnitsPerAgentBeat) {
            this(name, agents, beatSeconds, agentsPerRequest, viaUrl, tasksPerAgentDay, historyBytesPerAgent,
                    liveItemBytes, sweepUnitsPerAgent, deathsPerAgentMonth, dashboardHours, dashboardTeamAgents,
                    writeUnitsPerAgentBeat, 0, false);
        }

        public boolean hosted() {
            return writeUnitsPerAgentBeat != 1.0;
        }

        /**
         * 1,000 hook-driven agents ({@link #HOOKS}'s session), each hook event one request to the heartbeat function
         * through the Function URL: {@code beatSeconds} is the month's seconds per event, and a coalesced event writes
         * nothing ({@code writeUnitsPerAgentBeat}: writes per event, as HookCostTest counts them).
         */
        static Workload hooksDirect(String name, Sweep s) {
            return new Workload(name, 1_000, SECONDS_PER_MONTH / HOOKS.eventsPerAgentMonth(), 1, true, 0, 0,
                    s.itemBytes(), s.unitsWithoutHistory(), 1, 0, 0, HOOKS.writesPerAgentMonth()
                    / HOOKS.eventsPerAgentMonth(), HOOKS.changesPerAgentMonth(), true);
        }

        /**
         * The same agents under `lifeline daemon`: their hooks go to the daemon on loopback (no request), the daemon
         * renews a host lease of {@code perHost} agents every 30 s, and each status change still writes the agent's
         * item and goes through the outbox.
         */
        static Workload hooksViaDaemon(String name, int perHost, double writeUnitsPerAgentBeat, Sweep s) {
            return new Workload(name, 1_000, 30, perHost, true, 0, 0, s.itemBytes(), s.unitsWithoutHistory(), 1, 0,
                    0, writeUnitsPerAgentBeat, HOOKS.changesPerAgentMonth(), false);
        }

        /** Beats only (1 death per agent-month), 30 s. */
        static Workload beats(String name, int agents, int perRequest, boolean viaUrl, Sweep s) {
            return new Workload(name, agents, 30, perRequest, viaUrl, 0, 0, s.itemBytes(), s.unitsWithHistory(),
                    agents == 0 ? 0 : 1, agents >= 1_000 ? 176 : 0, agents >= 1_000 ? 100 : 0, 1.0);
        }

        /** 1,000 busy agents: 20 tasks a day, a dashboard open 176 h on a team of 100; with or without history. */
        static Workload busy(String name, int perRequest, boolean viaUrl, boolean history, Sweep s) {
            return new Workload(name, 1_000, 30, perRequest, viaUrl, 20, history ? s.historyBytesPerAgent() : 0,
                    s.itemBytes(), history ? s.unitsWithHistory() : s.unitsWithoutHistory(), 1, 176, 100, 1.0);
        }

        /** 1,000 busy agents without history, whose daemons renew a host lease of {@code perHost} agents. */
        static Workload hosted(String name, int perHost, boolean viaUrl, double writeUnitsPerAgentBeat, Sweep s) {
            return new Workload(name, 1_000, 30, perHost, viaUrl, 20, 0, s.itemBytes(), s.unitsWithoutHistory(), 1,
                    176, 100, writeUnitsPerAgentBeat);
        }
    }

    /**
     * A hook-driven agent's month, from the real runs' event counts: it works {@code busyHours} a month in turns of
     * {@code toolCallsPerTurn} tool calls every {@code turnMinutes}; Claude Code sends 2n + 3 events a turn of n tool
     * calls inside a session (UserPromptSubmit, PreToolUse and PostToolUse per call, PostToolBatch, Stop; Codex one
     * more, its notify; Gemini CLI 3n + 5) and 2 a session (SessionStart, SessionEnd); {@code sessionsPerDay} on
     * {@code busyDays}. A turn writes at most {@code writesPerTurn} times (HookCostTest counts it with the default
     * 60 s coalescing window) and changes status twice (working, then ready: each a transition the outbox
     * publishes); a session's join and leave are two more of each.
     */
    public record HookSession(double busyHours, double turnMinutes, int toolCallsPerTurn, double sessionsPerDay,
                              double busyDays, int writesPerTurn) {
        double turnsPerAgentMonth() {
            return busyHours * 60 / turnMinutes;
        }

        double sessionsPerAgentMonth() {
            return sessionsPerDay * busyDays;
        }

        double eventsPerAgentMonth() {
            return turnsPerAgentMonth() * (2.0 * toolCallsPerTurn + 3) + 2 * sessionsPerAgentMonth();
        }

        double writesPerAgentMonth() {
            return turnsPerAgentMonth() * writesPerTurn + 2 * sessionsPerAgentMonth();
        }

        double changesPerAgentMonth() {
            return turnsPerAgentMonth() * 2 + 2 * sessionsPerAgentMonth();
        }
    }

    /** 176 busy hours (8 h on 22 days), a turn of 10 tool calls every 5 minutes, 4 sessions a day. */
    static final HookSession HOOKS = new HookSession(176, 5, 10, 4, 22, 5);

    /**
     * Section 2's figures the bill uses, as one input: read units per alive agent per sweep with and without 30 days
     * of history on the ledger, the busy agent's live item, and its history's bytes. {@link #PUBLISHED} holds the
     * last published run; a run of section 2 replaces it.
     */
    public record Sweep(double unitsWithHistory, double unitsWithoutHistory, double itemBytes,
                        double historyBytesPerAgent) {
        /**
         * BENCHMARKS.md section 2 as last published (2026-11-25, busy 231-byte item: 0.0284 RCU with history at 100,000
         * agents, 0.029 at 1,000). Update this one line when section 2 republishes.
         */
        static final Sweep PUBLISHED = new Sweep(0.0284, 0.029, 231, 681_207);
    }

    /** One line of the bill: its group, what it is, dollars a month, how it was counted, and if it is watching. */
    public record Line(String group, String item, double usd, String basis, boolean observability) {
    }

    public record Bill(Workload workload, Deployment deployment, List<Line> lines) {
        public double total() {
            return lines.stream().mapToDouble(Line::usd).sum();
        }

        public double group(String group) {
            return lines.stream().filter(l -> l.group().equals(group)).mapToDouble(Line::usd).sum();
        }

        /** What the deployment pays to watch itself: alarms, custom metrics, traces, log lines and the logs kept. */
        public double observability() {
            return lines.stream().filter(Line::observability).mapToDouble(Line::usd).sum();
        }

        /** The observability lines that come with the beats (their logs, traces and the fleet's metrics). */
        public double beatObservability() {
            return lines.stream().filter(l -> l.observability() && l.group().equals(BEATS)).mapToDouble(Line::usd)
                    .sum();
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

        public double usd(String itemPrefix) {
            return lines.stream().filter(l -> l.item().startsWith(itemPrefix)).mapToDouble(Line::usd).sum();
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

    /** A cap too small for a workload: its name and figure, the requests a second it serves and those needed. */
    public record Shortfall(String cap, int figure, double servesRps, double needsRps) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s %,d serves %,.0f requests/s, the fleet needs %,.0f", cap, figure,
                    servesRps, needsRps);
        }
    }

    /** The model's refusal to price a fleet its caps cannot serve: {@link #shortfalls()}, the tightest first. */
    public static final class Unservable extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        private final transient List<Shortfall> shortfalls;

        Unservable(Workload w, List<Shortfall> shortfalls) {
            super(w.name() + ": the caps cannot serve this fleet; " + shortfalls.stream().map(Shortfall::toString)
                    .reduce((x, y) -> x + "; " + y).orElse(""));
            this.shortfalls = List.copyOf(shortfalls);
        }

        public List<Shortfall> shortfalls() {
            return shortfalls;
        }
    }

    /** Agents alone at 30 s that send the workload's heartbeat requests (FleetSizing's unit). */
    static double equivalentAgents(Workload w) {
        return FleetSizing.equivalentAgents(w.agents(), w.beatSeconds(), 1.0, w.agentsPerRequest());
    }

    /** The caps of the smallest FleetSize that covers the workload: the deployment sized for it. */
    static FleetSizing.Caps sizedFor(Workload w) {
        return FleetSizing.caps(FleetSizing.classFor(equivalentAgents(w)), FleetSizing.Inputs.defaults());
    }

    /**
     * The caps that cannot serve the workload's mean heartbeat rate, tightest first (empty: it can be served). A
     * function serves min(10 x its concurrency, concurrency / duration) requests a second; the stage's route throttle
     * its rate; the authorizer runs once per key and cache period (API path only).
     */
    static List<Shortfall> shortfalls(Workload w, Deployment d, Measures m, Assumptions a, FleetSizing.Caps caps) {
        List<Shortfall> out = new ArrayList<>();
        if (w.agents() == 0) {
            return out;
        }
        double rps = w.agents() / w.beatSeconds() / w.agentsPerRequest();
        double millis = w.hosted() ? m.heartbeatMillis() : m.heartbeatMillis() * w.agentsPerRequest();
        if (w.viaUrl()) {
            function(out, "HeartbeatUrlFunction reserved concurrency", caps.heartbeatUrl(), millis, rps);
        } else {
            if (caps.heartbeatRouteRate() < rps) {
                out.add(new Shortfall("heartbeat route ThrottlingRateLimit", caps.heartbeatRouteRate(),
                        caps.heartbeatRouteRate(), rps));
            }
            function(out, "HeartbeatFunction reserved concurrency", caps.heartbeat(), millis, rps);
            double keys = (double) w.agents() / w.agentsPerRequest() / d.keyCacheSeconds();
            function(out, "AuthorizerFunction reserved concurrency", caps.authorizer(), a.authorizerMillis(), keys);
        }
        out.sort((x, y) -> Double.compare(x.servesRps() / x.needsRps(), y.servesRps() / y.needsRps()));
        return out;
    }

    private static void function(List<Shortfall> out, String cap, int concurrency, double millis, double rps) {
        double serves = Math.min(FleetSizing.RPS_PER_CONCURRENCY * concurrency, concurrency * 1000.0 / millis);
        if (serves < rps) {
            out.add(new Shortfall(cap, concurrency, serves, rps));
        }
    }

    /** The bill with the caps of the FleetSize the workload needs ({@link #sizedFor}). */
    public static Bill bill(Workload w, Deployment d, Measures m, Assumptions a, Prices p) {
        return bill(w, d, m, a, p, sizedFor(w));
    }

    /** The bill under {@code caps}; refused ({@link Unservable}) when they cannot serve the fleet. */
    public static Bill bill(Workload w, Deployment d, Measures m, Assumptions a, Prices p, FleetSizing.Caps caps) {
        List<Shortfall> refused = shortfalls(w, d, m, a, caps);
        if (!refused.isEmpty()) {
            throw new Unservable(w, refused);
        }
        Lines lines = new Lines();
        int n = w.agents();
        double sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;
        double platform = d.platformLines() ? a.platformLogBytes() : 0;

        // ---- fixed: there with no agents at all ---------------------------------------------------------------
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

        // ---- the sweep: grows with the live table only -------------------------------------------------------
        double liveBytes = n * (w.liveItemBytes() + a.itemOverheadBytes());
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

        // ---- heartbeats -------------------------------------------------------------------------------------
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
            } else if (w.hosted()) {
                double wru = beats * w.writeUnitsPerAgentBeat();
                lines.add(BEATS, "DynamoDB writes (host lease: 1 WRU a renewal for " + w.agentsPerRequest()
                        + " agents, measured " + fmt(w.writeUnitsPerAgentBeat()) + " WRU an agent-beat)",
                        wru * p.wruPerMillion() / 1e6, fmt(wru) + " WRU");
            } else {
                lines.add(BEATS, "DynamoDB writes (1 WRU a beat, live item " + fmt(w.liveItemBytes()) + " B)",
                        beats * p.wruPerMillion() / 1e6, fmt(beats) + " WRU");
            }
            // One key per agent (single) or per daemon; each is looked up once per cache period: by the heartbeat
            // function's KeyCache on the URL, by the authorizer (cached by API Gateway) on the API.
            double keyRead = keyChecks * a.keyReadUnits() * p.rruPerMillion() / 1e6;
            if (w.viaUrl()) {
                lines.add(BEATS, "key look-ups (KeyCache: 1 GetItem per key per " + fmt(d.keyCacheSeconds()) + " s)",
                        keyRead, fmt(keyChecks) + " eventually consistent GetItems (" + fmt(a.keyReadUnits())
                                + " RRU)");
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

        // ---- work: tasks, status changes, the publisher, deaths ----------------------------------------------
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

        // ---- the dashboard: one person keeps it open ---------------------------------------------------------
        if (w.dashboardHours() > 0) {
            double polls = w.dashboardHours() * 3600 / a.dashboardPollSeconds();
            double calls = polls * a.dashboardRequestsPerPoll();
            double reads = polls * w.dashboardTeamAgents() * 0.5;
            lines.add(DASHBOARD, "dashboard open " + fmt(w.dashboardHours()) + " h (team of "
                    + w.dashboardTeamAgents() + ")", calls * p.apiPerMillion() / 1e6 + lambda(calls, a.routeMillis(),
                    d.dashboardMemoryGb(), p) + reads * p.rruPerMillion() / 1e6, fmt(calls) + " requests, "
                    + fmt(reads) + " RRU (every poll lists the team: 0.5 RRU an agent)");
            lines.log(DASHBOARD, "dashboard: log lines", calls, a.routeLogBytes() + platform + a.accessLogBytes(), p,
                    "a request line + the access log");
        }

        // ---- storage: DynamoDB (with PITR) and the logs kept ----------------------------------------------------
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
        return new Bill(w, d, lines.list);
    }

    /**
     * The idle bill less the allowances every account has each month, whatever its age: 10 alarm metrics, 10 custom
     * metrics, 5 GB of logs, 1 M Lambda requests and 400,000 GB-s, 1 M SQS requests, 100,000 X-Ray traces. What is
     * left: alarm metrics past 10, traces past 100,000, and the sweep's and the repair's reads (on-demand reads have
     * no free allowance).
     */
    static double idleAfterFreeTier(Deployment d, Prices p) {
        double sweeps = d.sweepsPerMinute() * MINUTES_PER_MONTH;
        double traces = Math.max(0, (d.sweepTraced() ? sweeps : 0) + (d.repairTraced() ? d.repairsPerMonth() : 0)
                - 100_000) * p.xrayPerMillionTraces() / 1e6;
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

    /** The workloads the section prices, in the order it prints them. */
    static List<Workload> workloads(Sweep s, double hosted10, double hosted25) {
        return List.of(
                Workload.beats("idle (0 agents)", 0, 1, true, s),
                Workload.beats("20 agents, single, URL", 20, 1, true, s),
                Workload.beats("20 agents, single, API", 20, 1, false, s),
                Workload.busy("1,000 busy + history, single, URL", 1, true, true, s),
                Workload.busy("1,000 busy, no history, single, URL", 1, true, false, s),
                Workload.busy("1,000 busy + history, single, API", 1, false, true, s),
                Workload.busy("1,000 busy + history, batched 10, URL", 10, true, true, s),
                Workload.busy("1,000 busy, no history, batched 10, URL", 10, true, false, s),
                Workload.busy("1,000 busy + history, batched 10, API", 10, false, true, s),
                Workload.hosted("1,000 busy, host lease of 10, URL", 10, true, hosted10, s),
                Workload.hosted("1,000 busy, host lease of 25, URL", 25, true, hosted25, s),
                Workload.hosted("1,000 busy, host lease of 10, API", 10, false, hosted10, s),
                Workload.beats("100,000 agents, single, URL", 100_000, 1, true, s),
                Workload.beats("100,000 agents, batched 10, URL", 100_000, 10, true, s),
                Workload.beats("100,000 agents, single, API", 100_000, 1, false, s),
                Workload.beats("1,000,000 agents, single, URL", 1_000_000, 1, true, s),
                Workload.beats("1,000,000 agents, batched 10, URL", 1_000_000, 10, true, s),
                Workload.beats("1,000,000 agents, single, API", 1_000_000, 1, false, s),
                Workload.hooksDirect("1,000 hook-driven agents, direct, URL", s),
                Workload.hooksViaDaemon("1,000 hook-driven agents, daemon, lease of 10", 10, hosted10, s));
    }

    static Bill find(List<Bill> bills, String name) {
        return bills.stream().filter(b -> b.workload().name().equals(name)).findFirst().orElseThrow();
    }

    static void run(Report report, Measured measured) throws Exception {
        Prices p = Prices.load();
        Deployment d = Deployment.fromTemplate(false);
        Deployment full = Deployment.fromTemplate(true);
        Assumptions a = Assumptions.defaults();
        List<String> assumed = new ArrayList<>();
        Sweep s = Sweep.PUBLISHED;
        if (!Double.isNaN(measured.sweepReadUnitsPerAgent)) {
            s = new Sweep(measured.sweepReadUnitsPerAgent, measured.sweepReadUnitsPerAgentNoHistory,
                    measured.liveAgentItemBytes, Sweep.PUBLISHED.historyBytesPerAgent());
        } else {
            assumed.add("sweep units per agent and live item size: CostModel.Sweep.PUBLISHED (section 2 not run now)");
        }
        if (!Double.isNaN(measured.heartbeatWriteUnits) && measured.heartbeatWriteUnits != 1.0) {
            assumed.add("a heartbeat measured " + measured.heartbeatWriteUnits + " WRU; the model prices 1");
        }
        double heartbeatMillis = measured.handlerWarmMillis;
        if (Double.isNaN(heartbeatMillis)) {
            heartbeatMillis = Measures.published().heartbeatMillis();
            assumed.add("heartbeat handler time " + heartbeatMillis + " ms: section 3's last published in-process p50 "
                    + "(section 3 not run now)");
        }
        System.out.println("  measuring log bytes a beat (ObservabilityBench) and the idle sweep's line ...");
        Measures m = ObservabilityBench.measures(heartbeatMillis, 1_000);
        double hosted10 = Double.isNaN(measured.hosted10WriteUnitsPerAgent) ? 0.1 : measured.hosted10WriteUnitsPerAgent;
        double hosted25 = Double.isNaN(measured.hosted25WriteUnitsPerAgent) ? 0.04 : measured.hosted25WriteUnitsPerAgent;

        ObjectNode details = report.details().putObject("costModel");
        details.set("prices", Json.MAPPER.valueToTree(p));
        details.set("deployment", Json.MAPPER.valueToTree(d));
        details.set("deploymentFullAlarms", Json.MAPPER.valueToTree(full));
        details.set("measures", Json.MAPPER.valueToTree(m));
        details.set("sweepInputs", Json.MAPPER.valueToTree(s));
        details.set("assumptions", Json.MAPPER.valueToTree(a));
        ArrayNode json = details.putArray("bills");
        List<Bill> bills = new ArrayList<>();
        List<Workload> workloads = new ArrayList<>(workloads(s, hosted10, hosted25));
        for (Workload w : workloads) {
            bills.add(bill(w, d, m, a, p));
        }
        Bill idleFull = bill(workloads.get(0), full, m, a, p);
        for (Bill b : bills) {
            ObjectNode o = json.addObject();
            o.set("workload", Json.MAPPER.valueToTree(b.workload()));
            o.set("lines", Json.MAPPER.valueToTree(b.lines()));
            o.put("total", b.total()).put("liveness", b.liveness()).put("observability", b.observability());
        }
        json.addObject().put("name", "idle, AlarmSet full").put("total", idleFull.total())
                .set("lines", Json.MAPPER.valueToTree(idleFull.lines()));

        // The itemised table: one column per workload, one row per line.
        printTable(bills, idleFull);

        Bill idle = bills.get(0);
        report.add("6", "idle deployment (0 agents), ConcurrencyProfile reserved (with the heartbeat URL), AlarmSet "
                + "essential: $ a month, list prices", idle.total(), "USD",
                "AlarmSet full", idleFull.total(), "<= 1.70", idle.total() <= 1.70);
        // The default profile, unreserved, deploys no heartbeat URL: the same idle bill less the URL's alarm metrics.
        Bill idleUnreserved = bill(workloads.get(0), Deployment.fromTemplate(false, false), m, a, p);
        Bill idleFullUnreserved = bill(workloads.get(0), Deployment.fromTemplate(true, false), m, a, p);
        report.add("6", "idle deployment, ConcurrencyProfile unreserved (the default; no heartbeat URL), AlarmSet "
                + "essential: $ a month, list prices", idleUnreserved.total(), "USD", "AlarmSet full",
                idleFullUnreserved.total(), "<= 1.70", idleUnreserved.total() <= 1.70);
        report.add("6", "idle deployment, AlarmSet essential, after the always-free tier", idleAfterFreeTier(d, p),
                "USD", "AlarmSet full, after the free tier", idleAfterFreeTier(full, p), "<= 1",
                idleAfterFreeTier(d, p) <= 1);
        Bill url = find(bills, "1,000 busy + history, single, URL");
        Bill api = find(bills, "1,000 busy + history, single, API");
        report.add("6", "single agent, 30 s, via the Function URL: liveness $ per agent-month (1,000 agents, logs and "
                + "traces included)", url.livenessPerAgent(), "USD", "via API Gateway", api.livenessPerAgent(),
                "<= 0.10", url.livenessPerAgent() <= 0.10);
        Bill twenty = find(bills, "20 agents, single, URL");
        double beatObs = twenty.beatObservability() / 20;
        report.add("6", "20 agents via the URL: the beats' observability lines (logs, traces, the fleet's metrics) per "
                + "agent-month", beatObs, "USD", "total per agent-month", twenty.totalPerAgent(), "<= 0.1x",
                beatObs <= 0.1 * twenty.totalPerAgent());
        report.add("6", "20 agents via the URL: every observability line (with the alarms and the sweep's line) per "
                + "agent-month", twenty.observability() / 20, "USD", "total per agent-month", twenty.totalPerAgent(),
                null, null);
        for (String mode : List.of("single, URL", "batched 10, URL")) {
            Bill with = find(bills, "1,000 busy + history, " + mode);
            Bill without = find(bills, "1,000 busy, no history, " + mode);
            report.add("6", "1,000 busy agents, " + mode + ": liveness $ per agent-month, with / without history",
                    with.livenessPerAgent(), "USD", "without history", without.livenessPerAgent(), "no more",
                    with.livenessPerAgent() <= without.livenessPerAgent() + 1e-12);
        }
        Bill batched = find(bills, "1,000 busy + history, batched 10, URL");
        report.add("6", "1,000 agents, batched 10, via the URL: liveness $ per agent-month", batched.livenessPerAgent(),
                "USD", "via API Gateway", find(bills, "1,000 busy + history, batched 10, API").livenessPerAgent(),
                "<= 0.06", batched.livenessPerAgent() <= 0.06);
        Bill ten = find(bills, "1,000 busy, host lease of 10, URL");
        report.add("6", "1,000 agents, host lease of 10, via the URL: liveness $ per agent-month", ten.livenessPerAgent(),
                "USD", "via API Gateway", find(bills, "1,000 busy, host lease of 10, API").livenessPerAgent(), "<= 0.02",
                ten.livenessPerAgent() <= 0.02);
        report.add("6", "1,000 agents, host lease of 25, via the URL: liveness $ per agent-month",
                find(bills, "1,000 busy, host lease of 25, URL").livenessPerAgent(), "USD", "host lease of 10",
                ten.livenessPerAgent(), null, null);
        Bill hooks = find(bills, "1,000 hook-driven agents, direct, URL");
        Bill hooksDaemon = find(bills, "1,000 hook-driven agents, daemon, lease of 10");
        report.add("6", "hook-driven agent-month (" + fmt(HOOKS.eventsPerAgentMonth()) + " events, "
                + fmt(HOOKS.changesPerAgentMonth()) + " status changes), direct via the URL: total $ (liveness + the "
                + "status changes' outbox)", hooks.totalPerAgent(), "USD", "liveness alone", hooks.livenessPerAgent(),
                "<= 0.15", hooks.totalPerAgent() <= 0.15);
        report.add("6", "hook-driven agent-month through the daemon (host lease of 10): liveness $",
                hooksDaemon.livenessPerAgent(), "USD", "with the status changes' outbox", hooksDaemon.totalPerAgent(),
                "<= 0.02", hooksDaemon.livenessPerAgent() <= 0.02);
        report.add("6", "100,000 agents, single / batched 10, via the URL: total $ per agent-month",
                find(bills, "100,000 agents, single, URL").totalPerAgent(), "USD", "batched 10",
                find(bills, "100,000 agents, batched 10, URL").totalPerAgent(), null, null);
        million(report, d, m, a, p, s);
        assumed.forEach(report::note);
    }

    /**
     * 1,000,000 agents: refused under the default FleetSize's caps and under the caps the template set before
     * FleetSize, naming the cap that binds; priced under FleetSize 1000000's.
     */
    private static void million(Report report, Deployment d, Measures m, Assumptions a, Prices p, Sweep s) {
        Workload url = Workload.beats("1,000,000 agents, single, URL", 1_000_000, 1, true, s);
        Workload api = Workload.beats("1,000,000 agents, single, API", 1_000_000, 1, false, s);
        FleetSizing.Caps sized = sizedFor(url);
        for (Workload w : List.of(url, api)) {
            for (FleetSizing.Caps caps : List.of(FleetSizing.Caps.BEFORE_FLEET_SIZE,
                    FleetSizing.caps(10_000, FleetSizing.Inputs.defaults()))) {
                List<Shortfall> binds = shortfalls(w, d, m, a, caps);
                report.note(w.name() + (caps == FleetSizing.Caps.BEFORE_FLEET_SIZE ? ", the caps before FleetSize"
                        : ", FleetSize 10000 (the default)") + ": refused; binds first: " + (binds.isEmpty()
                        ? "nothing" : binds.get(0)) + " (" + binds.size() + " caps short)");
            }
        }
        Bill priced = bill(url, d, m, a, p, sized);
        report.add("6", "1,000,000 agents, single, via the URL, FleetSize 1000000 (URL function " + sized.heartbeatUrl()
                + "): total $ per agent-month", priced.totalPerAgent(), "USD", "liveness",
                priced.livenessPerAgent(), null, null);
    }

    private static void printTable(List<Bill> bills, Bill idleFull) {
        List<Bill> columns = new ArrayList<>();
        columns.add(bills.get(0));
        columns.add(idleFull);
        columns.addAll(bills.subList(1, bills.size()));
        List<String> items = new ArrayList<>();
        for (Bill b : columns) {
            for (Line l : b.lines()) {
                String key = l.group() + " | " + label(l.item());
                if (!items.contains(key)) {
                    items.add(key);
                }
            }
        }
        StringBuilder head = new StringBuilder("| group | line |");
        StringBuilder rule = new StringBuilder("|---|---|");
        for (Bill b : columns) {
            head.append(' ').append(b == idleFull ? "idle, AlarmSet full" : b.workload().name()).append(" |");
            rule.append("---|");
        }
        System.out.println(head);
        System.out.println(rule);
        for (String key : items) {
            StringBuilder row = new StringBuilder("| ").append(key).append(" |");
            for (Bill b : columns) {
                double sum = 0;
                boolean any = false;
                for (Line l : b.lines()) {
                    if ((l.group() + " | " + label(l.item())).equals(key)) {
                        sum += l.usd();
                        any = true;
                    }
                }
                row.append(' ').append(any ? money(sum) : "").append(" |");
            }
            System.out.println(row);
        }
        for (String total : List.of("**total $ a month**", "liveness (fixed + sweep + beats)",
                "observability (alarms, metrics, traces, logs)", "**total $ per agent-month**",
                "liveness $ per agent-month")) {
            StringBuilder row = new StringBuilder("| | ").append(total).append(" |");
            for (Bill b : columns) {
                double v = switch (total) {
                    case "**total $ a month**" -> b.total();
                    case "liveness (fixed + sweep + beats)" -> b.liveness();
                    case "observability (alarms, metrics, traces, logs)" -> b.observability();
                    case "**total $ per agent-month**" -> b.totalPerAgent();
                    default -> b.livenessPerAgent();
                };
                row.append(' ').append(Double.isNaN(v) ? "" : total.contains("per agent") ? fmt4(v) : money(v))
                        .append(" |");
            }
            System.out.println(row);
        }
        System.out.println();
        for (Bill b : columns) {
            System.out.printf(Locale.ROOT, "  %s: $%.4f a month (liveness $%.4f)%n",
                    b == idleFull ? "idle, AlarmSet full" : b.workload().name(), b.total(), b.liveness());
            for (Line l : b.lines()) {
                System.out.printf(Locale.ROOT, "    %-9s %-78s %11.5f  %s%n", l.group(), l.item(), l.usd(), l.basis());
            }
        }
    }

    /** A line's label without the figures that differ between workloads (alarm counts, metric-months). */
    static String label(String item) {
        return item.replaceAll(" \\((essential|full) set: [^)]*\\)", "").replaceAll(" \\([0-9.,]+ metric-months\\)", "")
                .replaceAll(", measured [0-9.]+ WRU an agent-beat", "").replaceAll(" for [0-9]+ agents", "")
                .replaceAll(", live item [0-9.]+ B", "");
    }

    static String money(double v) {
        if (v == 0) {
            return "0";
        }
        if (v >= 1_000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v >= 10) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return v < 0.0001 ? String.format(Locale.ROOT, "%.6f", v) : String.format(Locale.ROOT, "%.4f", v);
    }
}
