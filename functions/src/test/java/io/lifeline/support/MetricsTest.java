package io.lifeline.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The EMF writer and the invocation context of {@link Log}, on their own. */
@Tag("unit")
class MetricsTest {
    private final List<String> lines = new ArrayList<>();

    @AfterEach
    void restore() {
        Log.sink(null);
    }

    @Test
    void metricsWithTheSameDimensions_shareADirective_andValuesAreTopLevel() throws Exception {
        Log.sink(lines::add);
        Metrics.on(Log.line("INFO", "x").put("team", "acme"), "SweepFunction", Instant.ofEpochMilli(1234))
                .count("A", 2).put("B", Metrics.Unit.MILLISECONDS, 1.5)
                .put("C", Metrics.Unit.COUNT, 1, Map.of("code", "X")).emit();
        assertEquals(1, lines.size());
        assertTrue(lines.get(0).startsWith("{\"level\":\"INFO\",\"msg\":\"x\""), lines.get(0));
        JsonNode d = Json.parse(lines.get(0));
        assertEquals(1234, d.at("/_aws/Timestamp").asLong());
        JsonNode directives = d.at("/_aws/CloudWatchMetrics");
        assertEquals(2, directives.size());
        assertEquals("[[\"service\"]]", directives.get(0).get("Dimensions").toString());
        assertEquals(2, directives.get(0).get("Metrics").size());
        assertEquals("[[\"service\",\"code\"]]", directives.get(1).get("Dimensions").toString());
        assertEquals("SweepFunction", d.get("service").asText());
        assertEquals("X", d.get("code").asText());
        assertTrue(d.get("A").isIntegralNumber());
        assertEquals(1.5, d.get("B").asDouble());
        assertEquals("acme", d.get("team").asText());
    }

    @Test
    void countsOfZero_areNotPublished_andADocumentOfZerosIsAPlainLine() throws Exception {
        Log.sink(lines::add);
        Metrics.on(Log.line("INFO", "x"), "SweepFunction", Instant.EPOCH).count("A", 0).count("B", 0)
                .put("C", Metrics.Unit.COUNT, 0, Map.of("code", "X")).emit();
        Metrics.on(Log.line("INFO", "y"), "SweepFunction", Instant.EPOCH).count("A", 0).count("B", 3).emit();
        JsonNode zeros = Json.parse(lines.get(0));
        assertFalse(zeros.has("_aws"), "nothing to publish: a custom metric is billed for every hour it is sent");
        assertFalse(zeros.has("A") || zeros.has("B") || zeros.has("code"), lines.get(0));
        JsonNode some = Json.parse(lines.get(1));
        assertEquals("[{\"Name\":\"B\",\"Unit\":\"Count\"}]", some.at("/_aws/CloudWatchMetrics/0/Metrics").toString());
        assertFalse(some.has("A"));
    }

    @Test
    void faultCounters_andFaults_addUpInOneMetricWithNoDimension() throws Exception {
        Log.sink(lines::add);
        Metrics.on(Log.line("ERROR", "publish"), Metrics.PUBLISHER_FUNCTION, Instant.EPOCH)
                .count(Metrics.EVENTS_PUBLISHED, 4).count(Metrics.EVENTS_FAILED, 2).count(Metrics.RECORDS_PARKED, 1)
                .fault(3).emit();
        Metrics.on(Log.line("INFO", "sweep"), Metrics.SWEEP_FUNCTION, Instant.EPOCH).count(Metrics.AGENTS_MARKED_DEAD, 5)
                .fault(0).emit();
        JsonNode d = Json.parse(lines.get(0));
        assertEquals(6, d.get(Metrics.FAULTS).asLong(), "2 failed + 1 parked + 3 more");
        JsonNode directives = d.at("/_aws/CloudWatchMetrics");
        assertEquals(2, directives.size());
        assertEquals("[[]]", directives.get(1).get("Dimensions").toString());
        assertEquals(Metrics.FAULTS, directives.get(1).at("/Metrics/0/Name").asText());
        JsonNode healthy = Json.parse(lines.get(1));
        assertFalse(healthy.has(Metrics.FAULTS), lines.get(1));
        assertEquals(1, healthy.at("/_aws/CloudWatchMetrics").size());
    }

    @Test
    void aDimensionHasOneValuePerDocument() {
        Metrics m = Metrics.on(Log.line("INFO", "x").put("code", "A"), "HeartbeatFunction", Instant.EPOCH);
        assertThrows(IllegalArgumentException.class, () -> m.put("R", Metrics.Unit.COUNT, 1, Map.of("code", "B")));
    }

    @Test
    void invocationFields_areOnEveryLineOfTheInvocation_andGoneAfter() {
        try (Log.Invocation ignored = Log.invocation("req-1", "publish")) {
            JsonNode inside = Log.line("WARN", "detail");
            assertEquals("req-1", inside.get("requestId").asText());
            assertEquals("publish", inside.get("operation").asText());
        }
        assertFalse(Log.line("INFO", "after").has("requestId"));
    }

    @Test
    void aNestedInvocation_givesTheOuterOneItsFieldsBack() {
        try (Log.Invocation outer = Log.invocation("req-1", "publish")) {
            try (Log.Invocation inner = Log.invocation("req-2", "revive")) {
                assertEquals("req-2", Log.line("INFO", "x").get("requestId").asText());
            }
            assertEquals("publish", Log.line("INFO", "x").get("operation").asText());
        }
        assertFalse(Log.line("INFO", "x").has("operation"));
    }
}
