package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every alarm of template.yaml deploys, under every combination of its conditions, and the alarm counts the docs
 * quote are the template's.
 *
 * <p>CloudWatch refuses a metric-math alarm whose {@code Metrics} array holds more than 10 metrics (entries with a
 * {@code MetricStat}) or more than 10 expressions: "Alarms based on metric math expressions can reference a maximum of
 * 10 metrics. This is a hard limit" (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-limits.html;
 * PutMetricAlarm's {@code Metrics}: "as many as 10 structures that contain a MetricStat parameter ... and as many as
 * 10 structures that contain the Expression parameter"). cfn-lint does not check it, and an alarm whose optional
 * metrics ({@code !If [Condition, metric, !Ref AWS::NoValue]}) pass it fails only the deploy that configures them.
 * So each alarm is rendered with every combination of the conditions it names (its own {@code Condition} and each
 * {@code !If}'s) true or false, each independently: a superset of the combinations parameters can reach. The table
 * of counts is written to {@code target/alarm-metrics.md}, and docs/logs-and-metrics.md must carry it.
 *
 * <p>A metric-math alarm is billed for every metric it reads, so the counts under the profiles' parameters (no
 * optional destination) are what an idle deployment pays; docs/logs-and-metrics.md and BENCHMARKS.md state them.
 */
@Tag("unit")
class AlarmCountsTest {
    /** Most {@code MetricStat} entries in one alarm's {@code Metrics} (CloudWatch; see the class comment). */
    static final int MAX_METRICS = 10;
    /** Most {@code Expression} entries in one alarm's {@code Metrics}. */
    static final int MAX_EXPRESSIONS = 10;
    /** CloudWatch's list price of an alarm metric (standard resolution), dollars a month; bench/prices.json's. */
    static final double ALARM_METRIC_PER_MONTH = 0.10;

    static JsonNode root;

    @BeforeAll
    static void read() throws Exception {
        root = TestStack.template().tree();
    }

    /** An alarm's metrics and expressions once its conditions are resolved; 0 and 0 when it is not deployed. */
    record Rendered(boolean deployed, int metrics, int expressions) {
    }

    /**
     * {@code node} with every {@code Fn::If} resolved by {@code holds}; null where it resolves to
     * {@code AWS::NoValue} (a list drops such an item, an object such a member).
     */
    static JsonNode render(JsonNode node, Map<String, Boolean> holds) {
        if (node.isObject() && node.size() == 1 && node.has("Fn::If")) {
            JsonNode branches = node.get("Fn::If");
            Boolean holds0 = holds.get(branches.get(0).asText());
            assertNotNull(holds0, "no value for the condition " + branches.get(0));
            return render(holds0 ? branches.get(1) : branches.get(2), holds);
        }
        if (node.isObject() && node.size() == 1 && "AWS::NoValue".equals(node.path("Ref").asText())) {
            return null;
        }
        if (node.isArray()) {
            ArrayNode out = new ObjectMapper().createArrayNode();
            node.forEach(item -> {
                JsonNode r = render(item, holds);
                if (r != null) {
                    out.add(r);
                }
            });
            return out;
        }
        if (node.isObject()) {
            ObjectNode out = new ObjectMapper().createObjectNode();
            node.fields().forEachRemaining(f -> {
                JsonNode r = render(f.getValue(), holds);
                if (r != null) {
                    out.set(f.getKey(), r);
                }
            });
            return out;
        }
        return node;
    }

    /** The conditions an alarm names: its own {@code Condition} first, then each {@code Fn::If}'s, in order. */
    static List<String> conditionsOf(JsonNode resource) {
        TreeSet<String> named = new TreeSet<>();
        collectIfs(resource.path("Properties"), named);
        List<String> out = new ArrayList<>();
        if (resource.has("Condition")) {
            out.add(resource.get("Condition").asText());
        }
        named.stream().filter(c -> !out.contains(c)).forEach(out::add);
        return out;
    }

    private static void collectIfs(JsonNode node, TreeSet<String> out) {
        if (node.has("Fn::If")) {
            out.add(node.get("Fn::If").get(0).asText());
        }
        node.forEach(child -> collectIfs(child, out));
    }

    /** One alarm rendered under {@code holds}: its {@code Metrics} entries counted, or 1 metric without any. */
    static Rendered rendered(JsonNode resource, Map<String, Boolean> holds) {
        if (resource.has("Condition") && !holds.get(resource.get("Condition").asText())) {
            return new Rendered(false, 0, 0);
        }
        JsonNode properties = render(resource.path("Properties"), holds);
        JsonNode math = properties.path("Metrics");
        if (math.isMissingNode()) {
            assertTrue(properties.has("MetricName"), "an alarm with neither Metrics nor MetricName: " + properties);
            return new Rendered(true, 1, 0);
        }
        int metrics = 0;
        int expressions = 0;
        for (JsonNode m : math) {
            assertTrue(m.has("MetricStat") != m.has("Expression"), "a Metrics entry is a metric or an expression: " + m);
            metrics += m.has("MetricStat") ? 1 : 0;
            expressions += m.has("Expression") ? 1 : 0;
        }
        return new Rendered(true, metrics, expressions);
    }

    /** Every assignment of true and false to {@code names}, each independent of the others (2^n). */
    static List<Map<String, Boolean>> combinations(List<String> names) {
        assertTrue(names.size() <= 12, "too many conditions to enumerate: " + names);
        List<Map<String, Boolean>> out = new ArrayList<>();
        for (int bits = (1 << names.size()) - 1; bits >= 0; bits--) {
            Map<String, Boolean> holds = new LinkedHashMap<>();
            for (int i = 0; i < names.size(); i++) {
                holds.put(names.get(i), (bits & (1 << (names.size() - 1 - i))) != 0);
            }
            out.add(holds);
        }
        return out;
    }

    /** The alarms of {@code resources}, by logical id, in template order. */
    static Map<String, JsonNode> alarms(JsonNode resources) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        resources.fields().forEachRemaining(r -> {
            if ("AWS::CloudWatch::Alarm".equals(r.getValue().path("Type").asText())) {
                out.put(r.getKey(), r.getValue());
            }
        });
        return out;
    }

    /**
     * The table: for each alarm, its metrics under each combination of the conditions its Metrics name (the
     * alarm's own Condition held), and the most; fails on any combination over CloudWatch's limits.
     */
    static String table(JsonNode resources, List<String> overLimit) {
        StringBuilder out = new StringBuilder("| alarm | deployed | metrics by condition | most |\n|---|---|---|---|\n");
        alarms(resources).forEach((id, alarm) -> {
            List<String> names = conditionsOf(alarm);
            String own = alarm.path("Condition").asText("");
            List<String> inner = names.stream().filter(n -> !n.equals(own)).toList();
            List<String> cells = new ArrayList<>();
            int most = 0;
            for (Map<String, Boolean> holds : combinations(names)) {
                Rendered r = rendered(alarm, holds);
                if (r.metrics() > MAX_METRICS || r.expressions() > MAX_EXPRESSIONS) {
                    overLimit.add(id + " " + holds + ": " + r.metrics() + " metrics, " + r.expressions()
                            + " expressions");
                }
                if (!r.deployed() || (!own.isEmpty() && !holds.get(own))) {
                    continue;
                }
                most = Math.max(most, r.metrics());
                if (!inner.isEmpty()) {
                    List<String> on = inner.stream().filter(holds::get).toList();
                    cells.add((on.isEmpty() ? "none" : String.join("+", on)) + ": " + r.metrics());
                }
            }
            String byCondition = cells.isEmpty() ? String.valueOf(most) : String.join(", ", cells);
            out.append("| `").append(id).append("` | ").append(own.isEmpty() ? "always" : own).append(" | ")
                    .append(byCondition).append(" | ").append(most).append(" |\n");
        });
        return out.toString();
    }

    @Test
    void everyAlarm_underEveryCombinationOfItsConditions_readsAtMostTenMetrics() throws Exception {
        List<String> overLimit = new ArrayList<>();
        String table = table(root.path("Resources"), overLimit);
        Path out = Path.of("target", "alarm-metrics.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, table, StandardCharsets.UTF_8);
        System.out.println(table);
        assertEquals(List.of(), overLimit, "alarms CloudWatch would refuse");
        String docs = Files.readString(TestStack.templatePath().resolveSibling("docs/logs-and-metrics.md"));
        assertTrue(docs.contains(table), "docs/logs-and-metrics.md must carry the table as the template has it:\n"
                + table);
    }

    /**
     * The check itself, on an alarm shaped as the template's rule-failure alarm was: six rules always, five more
     * with the optional destinations. Within the limit with none of them, refused with all of them.
     */
    @Test
    void theCheck_refusesAnAlarmThatPassesTheLimitOnlyWhenItsOptionalMetricsAreDeployed() throws Exception {
        StringBuilder metrics = new StringBuilder("[{\"Id\":\"sum\",\"Expression\":\"SUM(METRICS())\"}");
        for (int i = 0; i < 6; i++) {
            metrics.append(",{\"Id\":\"m").append(i).append("\",\"MetricStat\":{}}");
        }
        for (String c : List.of("HasA", "HasB", "HasB", "HasC", "HasD")) {
            metrics.append(",{\"Fn::If\":[\"").append(c).append("\",{\"Id\":\"x\",\"MetricStat\":{}},")
                    .append("{\"Ref\":\"AWS::NoValue\"}]}");
        }
        JsonNode resources = new ObjectMapper().readTree("{\"Wide\":{\"Type\":\"AWS::CloudWatch::Alarm\","
                + "\"Condition\":\"Full\",\"Properties\":{\"Metrics\":" + metrics + "]}}}");
        List<String> overLimit = new ArrayList<>();
        String table = table(resources, overLimit);
        assertEquals(1, overLimit.size(), overLimit.toString());
        assertTrue(overLimit.get(0).startsWith("Wide {Full=true, HasA=true, HasB=true, HasC=true, HasD=true}: 11"),
                overLimit.toString());
        assertTrue(table.contains("| `Wide` | Full | HasA+HasB+HasC+HasD: 11, "), table);
        assertTrue(table.contains(", none: 6 | 11 |"), table);
        assertFalse(rendered(resources.get("Wide"), Map.of("Full", false)).deployed());
    }

    /** The counts the docs quote. */
    @Nested
    class DocsCounts {
        /** Whether the template's condition {@code name} holds under {@code parameters} (defaults for the rest). */
        static boolean holds(String name, Map<String, String> parameters) {
            return evaluate(root.path("Conditions").path(name), parameters);
        }

        private static boolean evaluate(JsonNode c, Map<String, String> parameters) {
            if (c.has("Fn::Not")) {
                return !evaluate(c.get("Fn::Not").get(0), parameters);
            }
            if (c.has("Fn::And") || c.has("Fn::Or")) {
                boolean and = c.has("Fn::And");
                for (JsonNode part : c.get(and ? "Fn::And" : "Fn::Or")) {
                    if (evaluate(part, parameters) != and) {
                        return !and;
                    }
                }
                return and;
            }
            if (c.has("Fn::Equals")) {
                return value(c.get("Fn::Equals").get(0), parameters).equals(value(c.get("Fn::Equals").get(1), parameters));
            }
            assertTrue(c.has("Condition"), "a condition this test cannot evaluate: " + c);
            return holds(c.get("Condition").asText(), parameters);
        }

        private static String value(JsonNode v, Map<String, String> parameters) {
            if (!v.has("Ref")) {
                return v.asText();
            }
            String name = v.get("Ref").asText();
            JsonNode parameter = root.path("Parameters").path(name);
            assertFalse(parameter.isMissingNode(), "not a parameter: " + name);
            return parameters.getOrDefault(name, parameter.path("Default").asText());
        }

        record Count(int alarms, int metrics) {
            String words() {
                return alarms + " alarms on " + metrics + " metrics";
            }

            String dollars() {
                return "$" + String.format("%.2f", metrics * ALARM_METRIC_PER_MONTH) + " a month";
            }
        }

        /** The alarms deployed under {@code parameters}, and the metrics they read (what CloudWatch bills). */
        static Count count(Map<String, String> parameters) {
            Map<String, Boolean> all = new LinkedHashMap<>();
            root.path("Conditions").fieldNames().forEachRemaining(n -> all.put(n, holds(n, parameters)));
            int alarms = 0;
            int metrics = 0;
            for (JsonNode alarm : alarms(root.path("Resources")).values()) {
                Rendered r = rendered(alarm, all);
                alarms += r.deployed() ? 1 : 0;
                metrics += r.metrics();
            }
            return new Count(alarms, metrics);
        }

        static final Map<String, String> RESERVED = Map.of("ConcurrencyProfile", "reserved");
        static final Map<String, String> FULL_RESERVED = Map.of("ConcurrencyProfile", "reserved", "AlarmSet", "full");
        static final Map<String, String> FULL_UNRESERVED = Map.of("ConcurrencyProfile", "unreserved", "AlarmSet", "full");

        @Test
        void docsAndBenchmarks_stateTheTemplatesCounts_forBothProfiles() throws Exception {
            assertEquals("essential", root.path("Parameters").path("AlarmSet").path("Default").asText());
            assertEquals("unreserved", root.path("Parameters").path("ConcurrencyProfile").path("Default").asText());
            Count essential = count(RESERVED);
            Count essentialNoUrl = count(Map.of());
            Count full = count(FULL_RESERVED);
            Count fullNoUrl = count(FULL_UNRESERVED);
            assertTrue(essential.metrics() > essentialNoUrl.metrics(), "the URL's alarms read its metrics too");
            Path root = TestStack.templatePath().getParent();
            // Words, whatever the line breaks.
            String metricsPage = Files.readString(root.resolve("docs/logs-and-metrics.md")).replaceAll("\\s+", " ");
            String benchmarks = Files.readString(root.resolve("BENCHMARKS.md")).replaceAll("\\s+", " ");
            for (String text : new String[] {metricsPage, benchmarks}) {
                for (Count c : List.of(essential, essentialNoUrl, full, fullNoUrl)) {
                    assertTrue(text.contains(c.words()), c.words());
                }
            }
            for (Count c : List.of(essential, essentialNoUrl, full, fullNoUrl)) {
                assertTrue(metricsPage.contains(c.words() + ", " + c.dollars()), c.words() + ", " + c.dollars());
            }
        }
    }
}
