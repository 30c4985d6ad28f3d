package io.lifeline.support;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CloudWatch metrics as Embedded Metric Format: a log line that also carries {@code _aws} becomes metrics
 * when CloudWatch Logs ingests it, so a metric costs no call and, on the hot path, no extra line. The names
 * live here, once; template.yaml's alarms are tested against the documents these methods write.
 * (docs/design/observability/decisions.md, "Metrics: a small EMF writer on top of Log".)
 *
 * <p>A custom metric is billed for every hour it is published, zeros included, so a count of 0 is not published
 * (neither the metric nor its property): an idle deployment publishes no custom metric at all. Alarms on counts
 * treat missing data as not breaching. Every fault counter ({@link #FAULT_COUNTERS}, and {@link #fault}) is also
 * added into {@link #FAULTS}, one metric with no dimension, which the default alarm set watches
 * (docs/design/deploy-and-cost/decisions.md, "An idle deployment under $1 a month").
 */
public final class Metrics {
    public static final String NAMESPACE = "Lifeline";
    /** Every metric's first dimension: the template's logical id of the function that emits it. */
    public static final String SERVICE = "service";

    public static final String HEARTBEAT_FUNCTION = "HeartbeatFunction";
    public static final String SWEEP_FUNCTION = "SweepFunction";
    public static final String PUBLISHER_FUNCTION = "PublisherFunction";
    public static final String REVIVE_FUNCTION = "ReviveFunction";
    /** The burst digest's function (docs/alerts-noise.md): its digests put on the bus, and those the bus refused. */
    public static final String DIGEST_FUNCTION = "DigestFunction";

    /**
     * Heartbeats accepted (a batch counts each accepted entry): a property of the heartbeat function's summary, not
     * a metric (AWS/Lambda's Invocations counts its requests; no alarm watches it, and a metric costs $0.30 a month).
     */
    public static final String HEARTBEATS = "Heartbeats";
    /** Heartbeats refused, with dimension {@link #CODE}: whole requests and single entries of a batch. */
    public static final String HEARTBEATS_REJECTED = "HeartbeatsRejected";
    public static final String CODE = "code";
    /**
     * Keys the heartbeat function looked up itself (its Function URL has no authorizer): one GetItem each. A plain
     * property of its summary, not a metric: a custom metric costs $0.30 a month, more than the look-ups it counts.
     */
    public static final String KEY_LOOKUPS = "keyLookups";
    public static final String AGENTS_MARKED_DEAD = "AgentsMarkedDead";
    /**
     * The sweep's writes that failed (throttled, the table out of reach) and were skipped, to be retried next sweep.
     * A sweep whose every write fails still reports its duration; this is what shows nobody is being judged.
     */
    public static final String SWEEP_WRITE_ERRORS = "SweepWriteErrors";
    /** Parts a fanned-out sweep's round lacked when the next began: that round decided and wrote nothing. */
    public static final String SWEEP_PARTS_MISSING = "SweepPartsMissing";
    /** Teams whose dead-marking self-preservation held back in one sweep. */
    public static final String SELF_PRESERVATION_HOLDS = "SelfPreservationHolds";
    /** Sweeps the deployment-wide guard held (1 per held sweep): no agent of any team was marked dead. */
    public static final String FLEET_SELF_PRESERVATION_HOLDS = "FleetSelfPreservationHolds";
    public static final String EVENTS_PUBLISHED = "EventsPublished";
    /** Events still not on the bus after every retry of a batch (their record goes back to the stream). */
    public static final String EVENTS_FAILED = "EventsFailed";
    /** Stream records the outbox could not handle and parked on the ledger (OutboxParking). */
    public static final String RECORDS_PARKED = "RecordsParked";
    /** Parked records the outbox repair re-drove, and replays it stamped for transitions left unpublished. */
    public static final String RECORDS_REDRIVEN = "RecordsRedriven";
    public static final String REPLAYS_STAMPED = "ReplaysStamped";
    /** One revive step's answer, with dimensions {@link #STEP} and {@link #OUTCOME}. */
    public static final String REVIVE_OUTCOMES = "ReviveOutcomes";
    public static final String STEP = "step";
    public static final String OUTCOME = "outcome";
    /**
     * Everything the service failed to do or had to repair, from every function, in one metric with no dimension
     * (published only when not 0): a sweep's skipped writes or failed run, events not put on the bus, records
     * parked, replays of transitions the outbox never finished, revive flows that broke (an error step, or a
     * restart the sweep had to end), heartbeats answered 500, and, put by the flows themselves, a digest not sent or a
     * flap check that failed through their retries. FaultsAlarm watches it; the function's own line (a flow's: its
     * failed execution) says which fault it was.
     */
    public static final String FAULTS = "Faults";
    /** The counters whose values are also {@link #FAULTS}. */
    public static final Set<String> FAULT_COUNTERS = Set.of(SWEEP_WRITE_ERRORS, EVENTS_FAILED, RECORDS_PARKED,
            REPLAYS_STAMPED);

    public enum Unit {
        COUNT("Count"), MILLISECONDS("Milliseconds");

        final String wire;

        Unit(String wire) {
            this.wire = wire;
        }
    }

    private record Metric(String name, Unit unit) {
    }

    private final ObjectNode line;
    private final Instant at;
    /** Metrics grouped by their dimension names; each group is one directive of {@code CloudWatchMetrics}. */
    private final Map<List<String>, List<Metric>> directives = new LinkedHashMap<>();
    private long faults;

    private Metrics(ObjectNode line, String service, Instant at) {
        this.line = line.put(SERVICE, service);
        this.at = at;
    }

    /** Metrics of {@code service} to be carried by {@code line}, timestamped {@code at}. */
    public static Metrics on(ObjectNode line, String service, Instant at) {
        return new Metrics(line, service, at);
    }

    /** A metric with the service dimension only. */
    public Metrics put(String name, Unit unit, double value) {
        return put(name, unit, value, Map.of());
    }

    /**
     * A metric with the service dimension and {@code dimensions} (names to values, in order). A dimension's
     * value is a top-level member of the line, so one document has one value per dimension name.
     */
    public Metrics put(String name, Unit unit, double value, Map<String, String> dimensions) {
        if (unit == Unit.COUNT && value == 0) {
            return this;
        }
        if (FAULT_COUNTERS.contains(name)) {
            faults += (long) value;
        }
        List<String> names = new ArrayList<>();
        names.add(SERVICE);
        dimensions.forEach((k, v) -> {
            String existing = line.path(k).textValue();
            if (existing != null && !existing.equals(v)) {
                throw new IllegalArgumentException("dimension " + k + " is already " + existing + ", not " + v);
            }
            line.put(k, v);
            names.add(k);
        });
        directives.computeIfAbsent(List.copyOf(names), n -> new ArrayList<>()).add(new Metric(name, unit));
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            line.put(name, (long) value);
        } else {
            line.put(name, value);
        }
        return this;
    }

    /** A count with the service dimension; 0 is not published. */
    public Metrics count(String name, long value) {
        return put(name, Unit.COUNT, value);
    }

    /** Adds {@code n} faults (see {@link #FAULTS}) that no fault counter of this document carries. */
    public Metrics fault(long n) {
        faults += Math.max(0, n);
        return this;
    }

    /**
     * Adds {@code _aws} (last, so the line still starts with level and msg) and writes the line; a line with
     * nothing to publish is written without it.
     */
    public void emit() {
        if (faults > 0) {
            line.put(FAULTS, faults);
        }
        if (directives.isEmpty() && faults == 0) {
            Log.emit(line);
            return;
        }
        ObjectNode aws = Json.object().put("Timestamp", at.toEpochMilli());
        ArrayNode list = aws.putArray("CloudWatchMetrics");
        directives.forEach((dims, metrics) -> {
            ObjectNode d = list.addObject().put("Namespace", NAMESPACE);
            ArrayNode set = d.putArray("Dimensions").addArray();
            dims.forEach(set::add);
            ArrayNode ms = d.putArray("Metrics");
            metrics.forEach(m -> ms.addObject().put("Name", m.name()).put("Unit", m.unit().wire));
        });
        if (faults > 0) {
            ObjectNode d = list.addObject().put("Namespace", NAMESPACE);
            d.putArray("Dimensions").addArray();
            d.putArray("Metrics").addObject().put("Name", FAULTS).put("Unit", Unit.COUNT.wire);
        }
        line.set("_aws", aws);
        Log.emit(line);
    }
}
