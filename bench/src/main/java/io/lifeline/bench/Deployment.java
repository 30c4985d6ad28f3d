package io.lifeline.bench;

import static io.lifeline.bench.CostUnits.MINUTES_PER_MONTH;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        try (InputStream in = Deployment.class.getResourceAsStream("/template.yaml")) {
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
