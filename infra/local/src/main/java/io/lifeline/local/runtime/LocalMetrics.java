package io.lifeline.local.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * What CloudWatch does with the functions' lines in the Embedded Metric Format, for Lifeline Local: every line whose
 * {@code _aws.CloudWatchMetrics} names metrics is read as CloudWatch would read it (namespace, metric name, the
 * line's value), and the metrics are kept per namespace and name: samples, sum and the last one's time. Local serves
 * them at {@code GET /local/metrics} (no key; Local listens on loopback), which is how Local shows that the
 * deployment's metric namespace receives data ({@code lifeline doctor} reads it). Lines of every Local in this JVM
 * are seen (the functions' log is one per JVM).
 */
public final class LocalMetrics implements Consumer<String> {
    /** Where Local serves the metrics it extracted (not a route of template.yaml). */
    public static final String PATH = "/local/metrics";

    private record Stat(long samples, double sum, long lastMillis) {
    }

    private final Map<String, Map<String, Stat>> byNamespace = new TreeMap<>();

    @Override
    public void accept(String line) {
        if (!line.contains("\"CloudWatchMetrics\"")) {
            return;
        }
        JsonNode l;
        try {
            l = Json.MAPPER.readTree(line);
        } catch (IOException e) {
            return; // not JSON: CloudWatch would not extract it either
        }
        JsonNode aws = l.path("_aws");
        long at = aws.path("Timestamp").asLong(System.currentTimeMillis());
        for (JsonNode directive : aws.path("CloudWatchMetrics")) {
            String namespace = directive.path("Namespace").asText();
            for (JsonNode metric : directive.path("Metrics")) {
                String name = metric.path("Name").asText();
                JsonNode value = l.path(name);
                double v = value.isArray() ? sum(value) : value.asDouble();
                long n = value.isArray() ? value.size() : 1;
                synchronized (byNamespace) {
                    byNamespace.computeIfAbsent(namespace, k -> new TreeMap<>()).merge(name, new Stat(n, v, at),
                            (a, b) -> new Stat(a.samples() + b.samples(), a.sum() + b.sum(),
                                    Math.max(a.lastMillis(), b.lastMillis())));
                }
            }
        }
    }

    private static double sum(JsonNode values) {
        double s = 0;
        for (JsonNode v : values) {
            s += v.asDouble();
        }
        return s;
    }

    /** {@code {"namespaces":{"Lifeline":{"EventsPublished":{"samples":3,"sum":5.0,"last":"..."}}}}}. */
    public String json() {
        ObjectNode out = Json.object();
        ObjectNode namespaces = out.putObject("namespaces");
        synchronized (byNamespace) {
            byNamespace.forEach((ns, metrics) -> {
                ObjectNode n = namespaces.putObject(ns);
                metrics.forEach((name, s) -> n.putObject(name).put("samples", s.samples()).put("sum", s.sum())
                        .put("last", Instant.ofEpochMilli(s.lastMillis()).toString()));
            });
        }
        return Json.write(out);
    }
}
