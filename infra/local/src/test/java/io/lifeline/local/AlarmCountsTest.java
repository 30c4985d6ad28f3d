package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The alarm counts are the template's: counted here, from template.yaml, for each alarm set with and without the
 * heartbeat URL (no optional destination), and README and BENCHMARKS.md must state those counts, so the three
 * cannot disagree again. A metric-math alarm is billed for every metric it reads, an optional one (!If) only when
 * its condition holds.
 */
@Tag("contract")
class AlarmCountsTest {
    record Count(int alarms, int metrics) {
        String words() {
            return alarms + " alarms on " + metrics + " metrics";
        }
    }

    static Count count(JsonNode resources, boolean full, boolean url) {
        int alarms = 0;
        int metrics = 0;
        for (Map.Entry<String, JsonNode> r : (Iterable<Map.Entry<String, JsonNode>>) resources::fields) {
            JsonNode alarm = r.getValue();
            if (!"AWS::CloudWatch::Alarm".equals(alarm.path("Type").asText())) {
                continue;
            }
            String condition = alarm.path("Condition").asText("");
            if ((condition.equals("FullAlarms") && !full) || (condition.equals("HasHeartbeatUrl") && !url)) {
                continue;
            }
            assertTrue(condition.isEmpty() || condition.equals("FullAlarms") || condition.equals("HasHeartbeatUrl"),
                    r.getKey() + ": " + condition);
            alarms++;
            JsonNode math = alarm.path("Properties").path("Metrics");
            if (math.isMissingNode()) {
                metrics++;
                continue;
            }
            for (JsonNode m : math) {
                if (m.isArray()) { // !If [Condition, item, NoValue]
                    if (url && m.get(0).asText().equals("HasHeartbeatUrl")) {
                        metrics++;
                    }
                } else if (m.has("MetricStat")) {
                    metrics++;
                }
            }
        }
        return new Count(alarms, metrics);
    }

    @Test
    void readmeAndBenchmarks_stateTheTemplatesCounts() throws Exception {
        JsonNode resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile())
                .path("Resources");
        Count essential = count(resources, false, true);
        Count essentialNoUrl = count(resources, false, false);
        Count full = count(resources, true, true);
        assertEquals(new Count(7, 9), essential, "essential, with the URL");
        assertEquals(new Count(7, 7), essentialNoUrl, "essential, the unreserved profile (no URL)");
        assertEquals(new Count(22, 41), full, "full, with the URL");
        Path root = TestStack.templatePath().getParent();
        // Words, whatever the line breaks.
        String readme = Files.readString(root.resolve("docs/logs-and-metrics.md")).replaceAll("\\s+", " ");
        String benchmarks = Files.readString(root.resolve("BENCHMARKS.md")).replaceAll("\\s+", " ");
        for (String text : new String[] {readme, benchmarks}) {
            assertTrue(text.contains(essential.words()), essential.words());
            assertTrue(text.contains(full.words()), full.words());
        }
        assertTrue(readme.contains(essentialNoUrl.alarms() + " on " + essentialNoUrl.metrics()), readme.length() + "");
        assertTrue(readme.contains("$" + String.format("%.2f", essential.metrics() * 0.10) + " a month"));
        assertTrue(readme.contains("$" + String.format("%.2f", full.metrics() * 0.10) + " a month"));
    }
}
