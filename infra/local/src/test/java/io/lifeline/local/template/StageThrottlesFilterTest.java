package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.LocalTables;
import io.lifeline.support.Metrics;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The stage's 429s on the heartbeat routes reach an alarm: template.yaml's metric filter on the HTTP API's access log
 * reads only fields the access log's format writes, counts status 429 only, and its route patterns (CloudWatch Logs'
 * {@code *} wildcard) match the four heartbeat routes, the ones the stage throttles by FleetSize, and no other route;
 * the metric it publishes is one an alarm of every set watches. (Lambda's own throttles, the URL's 429s included, are
 * AWS/Lambda's Throttles, which ObservabilityTest checks.) Not run against CloudWatch: the pattern's grammar is
 * checked here as the CloudWatch Logs filter-pattern page writes it.
 */
@Tag("unit")
public class StageThrottlesFilterTest {
    private static final Pattern FIELD = Pattern.compile("\\$\\.(\\w+) = \"([^\"]*)\"");

    static JsonNode root() throws Exception {
        return new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
    }

    /** The Lifeline metrics the template's metric filters publish. */
    public static Set<String> filtered() throws Exception {
        Set<String> out = new HashSet<>();
        root().path("Resources").forEach(r -> {
            if ("AWS::Logs::MetricFilter".equals(r.path("Type").asText())) {
                r.at("/Properties/MetricTransformations").forEach(t -> {
                    if (Metrics.NAMESPACE.equals(t.path("MetricNamespace").asText())) {
                        out.add(t.path("MetricName").asText());
                    }
                });
            }
        });
        return out;
    }

    @Test
    void theAccessLogsFilter_countsThe429sOfTheHeartbeatRoutes_andAnAlarmOfEverySetWatchesIt() throws Exception {
        JsonNode root = root();
        JsonNode filter = root.at("/Resources/HeartbeatStageThrottlesFilter/Properties");
        assertEquals("HttpApiAccessLogs", filter.path("LogGroupName").asText(), "the HTTP API's access log");
        String pattern = filter.path("FilterPattern").asText();
        String format = root.at("/Resources/HttpApi/Properties/AccessLogSettings/Format").asText();
        Matcher m = FIELD.matcher(pattern);
        List<String> routeGlobs = new ArrayList<>();
        Set<String> status = new TreeSet<>();
        while (m.find()) {
            assertTrue(format.contains("\"" + m.group(1) + "\":"), "the access log writes $." + m.group(1));
            if (m.group(1).equals("routeKey")) {
                routeGlobs.add(m.group(2));
            } else {
                assertEquals("status", m.group(1), pattern);
                status.add(m.group(2));
            }
        }
        assertEquals(Set.of("429"), status, "the stage's throttle answers, nothing else");
        assertTrue(pattern.startsWith("{ ($.status = \"429\") && (") && pattern.endsWith(")) }"), pattern);

        Set<String> heartbeatRoutes = new HashSet<>();
        root.at("/Resources/HttpApi/Properties/RouteSettings").fieldNames().forEachRemaining(heartbeatRoutes::add);
        assertEquals(4, heartbeatRoutes.size(), heartbeatRoutes.toString());
        Set<String> matched = new HashSet<>();
        for (String route : allRoutes()) {
            if (routeGlobs.stream().anyMatch(g -> route.matches(glob(g)))) {
                matched.add(route);
            }
        }
        assertEquals(heartbeatRoutes, matched, "the filter's routes are the heartbeat routes: " + routeGlobs);

        String metric = filter.at("/MetricTransformations/0/MetricName").asText();
        JsonNode alarm = root.at("/Resources/HeartbeatStageThrottlesAlarm");
        assertTrue(alarm.path("Condition").isMissingNode(), "in every alarm set");
        assertEquals(Metrics.NAMESPACE, alarm.at("/Properties/Namespace").asText());
        assertEquals(metric, alarm.at("/Properties/MetricName").asText());
        assertEquals("notBreaching", alarm.at("/Properties/TreatMissingData").asText(), "published only on a 429");
        assertTrue(filter.at("/MetricTransformations/0/DefaultValue").isMissingNode());
        assertEquals(Set.of(metric), filtered());
    }

    /** CloudWatch Logs' wildcard as a regex: {@code *} any run of characters, the rest literal. */
    static String glob(String g) {
        List<String> parts = new ArrayList<>();
        for (String part : g.split("\\*", -1)) {
            parts.add(Pattern.quote(part));
        }
        return String.join(".*", parts);
    }

    private static Set<String> allRoutes() throws Exception {
        Set<String> keys = new HashSet<>();
        var template = TestStack.template();
        template.functions(Map.of(), LifelineLocal.resourceNames(template, LocalTables.named(template, "t"), "b"))
                .forEach(f -> f.routes().forEach(r -> keys.add(r.routeKey())));
        assertTrue(keys.size() > 10, keys.toString());
        return keys;
    }
}
