package io.lifeline.support;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A function's routine work, counted in memory and written as one EMF document per interval instead of one line
 * per request: a plain heartbeat writes no line of its own. The document is written by the first
 * request that ends at least {@link #every} after the interval's first count, so an idle environment writes
 * nothing, and an environment that Lambda shuts down loses the counts of its last, unwritten interval (AWS/Lambda's
 * own {@code Invocations} metric is the exact request count; README.md, "Logs and metrics").
 */
public final class Summary {
    private final String service;
    private final Clock clock;
    private final Duration every;
    private final Map<String, Long> counts = new LinkedHashMap<>();
    /** Counts written as plain properties of the document, not metrics (a custom metric costs $0.30 a month). */
    private final Map<String, Long> notes = new LinkedHashMap<>();
    /** When the interval's first count arrived; null while nothing is counted. */
    private Instant since;

    public Summary(String service, Clock clock, Duration every) {
        this.service = service;
        this.clock = clock;
        this.every = every;
    }

    /** Adds {@code n} to {@code metric} (a {@link Metrics} name counted in {@link Metrics.Unit#COUNT}). */
    public void add(String metric, long n) {
        add(counts, metric, n);
    }

    /** Adds {@code n} to {@code property}, a count the document carries for Logs Insights but not as a metric. */
    public void note(String property, long n) {
        add(notes, property, n);
    }

    private void add(Map<String, Long> to, String name, long n) {
        if (n <= 0) {
            return;
        }
        synchronized (counts) {
            if (since == null) {
                since = clock.instant();
            }
            to.merge(name, n, Long::sum);
        }
    }

    /** Writes the interval's document when the interval is over; true when it wrote one. */
    public boolean flushIfDue() {
        Instant now = clock.instant();
        Map<String, Long> due;
        Map<String, Long> noted;
        synchronized (counts) {
            if (since == null || now.isBefore(since.plus(every))) {
                return false;
            }
            due = new LinkedHashMap<>(counts);
            noted = new LinkedHashMap<>(notes);
            counts.clear();
            notes.clear();
            since = null;
        }
        ObjectNode line = Json.object().put("level", "INFO").put("msg", "summary");
        noted.forEach(line::put);
        if (due.isEmpty()) {
            Log.emit(line.put(Metrics.SERVICE, service));
            return true;
        }
        Metrics metrics = Metrics.on(line, service, now);
        due.forEach(metrics::count);
        metrics.emit();
        return true;
    }
}
