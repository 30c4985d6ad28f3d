package io.lifeline.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.app.SweepRound;
import io.lifeline.app.Sweeper;
import io.lifeline.config.Config;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.joda.time.DateTime;
import org.joda.time.DateTimeZone;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;

/**
 * The sweep and its clock. EventBridge schedules fire at most once a minute, and a Lambda that sleeps between
 * sweeps pays for the sleep, so the minute's other sweeps travel as delayed SQS messages: the scheduled
 * invocation ({@link #handleRequest}) first queues sweeps 2..{@code SWEEPS_PER_INVOCATION}, each due
 * {@code SWEEP_INTERVAL_MS} after the one before (timed from the invocation's start) and delayed by SQS until
 * then, and then sweeps; the same function, fed by the queue's event source, sweeps once per message
 * ({@link #handleQueued}), judging its lateness against the due time the message carries. A lost message
 * costs one sweep: the next minute's schedule sweeps and queues again. In AWS the runtime enters through
 * {@link #handleEvent}, which tells the two kinds of event apart. Every sweep logs one JSON line that is also
 * its metrics document (EMF, counts that are not 0); a sweep that stops running shows as missing data in
 * AWS/Lambda's metrics of the function; it answers the ids it marked dead.
 */
public final class SweepHandler implements RequestHandler<ScheduledEvent, List<String>> {
    /** The message attribute (and body field) that carries a queued sweep's due time, ISO-8601. */
    public static final String DUE_AT = "dueAt";
    /** A part message's body fields: its round's instant, its index, and the round's parts. */
    static final String ROUND = "round";
    static final String PART = "part";
    static final String OF = "of";
    /** When the sweep a round answers was due (its schedule's or queued message's time), for the round's line. */
    static final String ROUND_DUE = "roundDue";
    /** SQS's longest message delay. */
    static final int MAX_DELAY_SECONDS = 900;
    /** SQS's most entries in one SendMessageBatch. */
    static final int MAX_BATCH = 10;
    /** The most ids of one list (dead, held, expired...) the sweep's line names; the rest are counted. */
    static final int NAMED = 20;

    private final Sweeper sweeper;
    private final SweepRound round;
    private final Config config;
    private final Clock clock;
    private final Supplier<SqsClient> sqs;
    /** Whether a due sweep judges; asked once per sweep (the Lambda runtime's handler: every sweep does). */
    private final SweepGate gate;

    public SweepHandler() {
        this(Wiring.fromEnvironment());
    }

    public SweepHandler(Wiring wiring) {
        this(wiring, SweepGate.JUDGE_EVERY_SWEEP);
    }

    /** {@code gate}: whether each due sweep judges, given how late it is (see {@link SweepGate}). */
    public SweepHandler(Wiring wiring, SweepGate gate) {
        this.gate = Objects.requireNonNull(gate, "gate");
        this.config = wiring.config();
        this.clock = wiring.clock();
        this.sqs = wiring.sqs();
        if (config.sweepsPerInvocation() > 1 && config.sweepQueueUrl() == null) {
            throw new IllegalStateException("SWEEP_QUEUE_URL is not set: the sweep queues "
                    + (config.sweepsPerInvocation() - 1) + " sweeps a minute there (SWEEPS_PER_INVOCATION)");
        }
        UseCases useCases = new UseCases(wiring);
        this.sweeper = useCases.sweeper();
        this.round = config.sweepParts() > 1 ? useCases.sweepRound() : null;
        if (round != null && config.sweepQueueUrl() == null) {
            throw new IllegalStateException("SWEEP_QUEUE_URL is not set: a sweep sends its parts there (SWEEP_PARTS)");
        }
    }

    /**
     * The scheduled invocation: queues the minute's other sweeps, then sweeps. Queuing comes first, so a sweep
     * that fails (a throttled Scan) still leaves the rest of the minute's sweeps on their way; a queue that
     * refuses them fails the invocation after the sweep ran.
     */
    @Override
    public List<String> handleRequest(ScheduledEvent event, Context context) {
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "sweep")) {
            Instant start = clock.instant();
            RuntimeException queueFailure = null;
            int queued = 0;
            try {
                queued = queueRest(start);
            } catch (SdkException | IllegalStateException e) {
                Log.emit(Log.line("ERROR", "sweep_clock").put("outcome", "queue_failed").put("error", e.toString()));
                queueFailure = e;
            }
            List<String> dead = sweepDue(scheduledTime(event), queued);
            if (queueFailure != null) {
                throw queueFailure;
            }
            return dead;
        }
    }

    /**
     * A batch from the sweep queue (the template gives it one message at a time): one sweep per message, each
     * judged late or not against the due time it carries. A message without one is on time, like a scheduled
     * event without a time.
     */
    public List<String> handleQueued(SQSEvent event, Context context) {
        List<String> dead = new ArrayList<>();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "sweep")) {
            for (SQSEvent.SQSMessage message : event.getRecords() == null ? List.<SQSEvent.SQSMessage>of()
                    : event.getRecords()) {
                if (!isPart(message)) {
                    dead.addAll(sweepDue(dueAt(message), -1));
                    continue;
                }
                PartMessage part = part(message);
                if (part != null) {
                    dead.addAll(partDue(part));
                }
            }
        }
        return dead;
    }

    /**
     * The Lambda runtime's way in (the template's {@code Handler}): the function gets EventBridge's scheduled
     * events and the queue's SQS events, so it reads the JSON itself and hands each to its typed handler. It
     * reads only the fields the sweep uses: a scheduled event's {@code id} and {@code time}; a record's
     * {@code messageId}, {@code body}, {@code eventSourceARN} and string message attributes.
     */
    public void handleEvent(InputStream input, OutputStream output, Context context) throws IOException {
        JsonNode event = Json.MAPPER.readTree(input);
        List<String> dead = event != null && event.has("Records") ? handleQueued(sqsEvent(event), context)
                : handleRequest(scheduledEvent(event), context);
        output.write(Json.MAPPER.writeValueAsBytes(dead));
    }

    static ScheduledEvent scheduledEvent(JsonNode json) {
        ScheduledEvent event = new ScheduledEvent();
        if (json == null) {
            return event;
        }
        event.setId(json.path("id").asText(null));
        event.setSource(json.path("source").asText(null));
        event.setDetailType(json.path("detail-type").asText(null));
        String time = json.path("time").asText(null);
        if (time != null) {
            // UTC named, not the JVM's default zone: the deployment jar leaves Joda's zone database out.
            event.setTime(new DateTime(Instant.parse(time).toEpochMilli(), DateTimeZone.UTC));
        }
        return event;
    }

    static SQSEvent sqsEvent(JsonNode json) {
        List<SQSEvent.SQSMessage> records = new ArrayList<>();
        for (JsonNode r : json.path("Records")) {
            SQSEvent.SQSMessage m = new SQSEvent.SQSMessage();
            m.setMessageId(r.path("messageId").asText(null));
            m.setBody(r.path("body").asText(null));
            m.setEventSource(r.path("eventSource").asText(null));
            m.setEventSourceArn(r.path("eventSourceARN").asText(null));
            Map<String, SQSEvent.MessageAttribute> attributes = new HashMap<>();
            r.path("messageAttributes").fields().forEachRemaining(e -> {
                SQSEvent.MessageAttribute a = new SQSEvent.MessageAttribute();
                a.setDataType(e.getValue().path("dataType").asText(null));
                a.setStringValue(e.getValue().path("stringValue").asText(null));
                attributes.put(e.getKey(), a);
            });
            m.setMessageAttributes(attributes);
            records.add(m);
        }
        SQSEvent event = new SQSEvent();
        event.setRecords(records);
        return event;
    }

    /**
     * Queues sweeps 2..n of this invocation's minute, each due {@code i} intervals after {@code start}. SQS delays
     * in whole seconds, so each message is delayed by its offset rounded up: a queued sweep never runs early, and
     * runs at most a second after its due time (plus the poller's pick-up). Answers how many it queued.
     */
    int queueRest(Instant start) {
        int n = config.sweepsPerInvocation();
        if (n <= 1) {
            return 0;
        }
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 1; i < n; i++) {
            Duration offset = config.sweepInterval().multipliedBy(i);
            String due = start.plus(offset).toString();
            int delay = (int) Math.min(MAX_DELAY_SECONDS, (offset.toMillis() + 999) / 1000);
            entries.add(SendMessageBatchRequestEntry.builder().id("sweep-" + (i + 1)).delaySeconds(delay)
                    .messageBody(Json.write(Json.object().put(DUE_AT, due)))
                    .messageAttributes(Map.of(DUE_AT, MessageAttributeValue.builder().dataType("String")
                            .stringValue(due).build()))
                    .build());
        }
        send(entries);
        return entries.size();
    }

    /** Sends the entries in batches of {@link #MAX_BATCH}; fails when the queue refuses any. */
    private void send(List<SendMessageBatchRequestEntry> entries) {
        List<String> failed = new ArrayList<>();
        for (int from = 0; from < entries.size(); from += MAX_BATCH) {
            List<SendMessageBatchRequestEntry> chunk = entries.subList(from, Math.min(entries.size(), from + MAX_BATCH));
            SendMessageBatchResponse response = sqs.get().sendMessageBatch(b -> b.queueUrl(config.sweepQueueUrl())
                    .entries(chunk));
            for (BatchResultErrorEntry f : response.failed()) {
                failed.add(f.id() + ": " + f.code());
            }
        }
        if (!failed.isEmpty()) {
            throw new IllegalStateException("the sweep queue refused " + failed);
        }
    }

    /** A queued sweep's due time, from its message attribute; null (on time) when it has none it can read. */
    private static Instant dueAt(SQSEvent.SQSMessage message) {
        SQSEvent.MessageAttribute a = message.getMessageAttributes() == null ? null
                : message.getMessageAttributes().get(DUE_AT);
        if (a == null || a.getStringValue() == null) {
            return null;
        }
        try {
            return Instant.parse(a.getStringValue());
        } catch (DateTimeParseException e) {
            Log.emit(Log.line("WARN", "sweep_clock").put("outcome", "bad_due_time")
                    .put("messageId", message.getMessageId()).put("dueAt", a.getStringValue()));
            return null;
        }
    }

    /** When a schedule was due (the event's time); null for an event without a time (a manual invoke, a test). */
    private static Instant scheduledTime(ScheduledEvent event) {
        return event == null || event.getTime() == null ? null : Instant.ofEpochMilli(event.getTime().getMillis());
    }

    /**
     * One sweep that was due at {@code due} (null: now). {@code queued}: how many sweeps this invocation queued,
     * for its line (-1: a queued sweep, which queues none).
     */
    private List<String> sweepDue(Instant due, int queued) {
        // One reading of the time decides both whether this sweep is late and what it judges: a stall after the
        // check cannot make it judge at a time the heartbeats queued behind the stall missed.
        Instant now = clock.instant();
        Duration late = due == null || due.isAfter(now) ? Duration.ZERO : Duration.between(due, now);
        SweepGate.Hold hold = gate.hold(now, late);
        if (hold != null) {
            ObjectNode line = Log.line("WARN", "sweep").put("outcome", "skipped_late")
                    .put("lateMs", late.toMillis()).put("due", now.minus(late).toString());
            if (hold.until() != null) {
                line.put("heldUntil", hold.until().toString());
            }
            putQueued(line, queued);
            Log.emit(line);
            return List.of();
        }
        if (round != null) {
            return coordinate(now, late, queued);
        }
        long sweepStart = System.nanoTime();
        Sweeper.Report report;
        try {
            report = sweeper.sweepOnce(now);
        } catch (RuntimeException e) {
            // The invocation fails (and Lambda counts the error); the line says why, and counts a fault.
            Metrics.on(Log.line("ERROR", "sweep").put("outcome", "error").put("error", e.toString())
                    .put("durationMs", Duration.ofNanos(System.nanoTime() - sweepStart).toMillis()),
                    Metrics.SWEEP_FUNCTION, now).fault(1).emit();
            throw e;
        }
        ObjectNode line = line(report);
        line.put("due", now.minus(late).toString());
        putQueued(line, queued);
        emit(line, report, clock.instant());
        return report.markedDead();
    }

    /**
     * A due sweep fanned out: begins the round at {@code now} (counting the parts the round before it lacked), sends
     * its other parts to the sweep queue, due at once, and runs part 0. {@code late}: how late the sweep is against
     * its due time, which every part's message carries for the round's line.
     */
    private List<String> coordinate(Instant now, Duration late, int queued) {
        SweepRound.Begun begun = round.begin(now, config.sweepParts());
        if (begun.previousMissing() > 0) {
            Metrics.on(Log.line("WARN", "sweep_round").put("outcome", "parts_missing")
                    .put("partsMissing", begun.previousMissing()), Metrics.SWEEP_FUNCTION, now)
                    .count(Metrics.SWEEP_PARTS_MISSING, begun.previousMissing()).emit();
        }
        Instant due = now.minus(late);
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (SweepRound.Part p : begun.toSend()) {
            String at = p.round().toString();
            entries.add(SendMessageBatchRequestEntry.builder().id("part-" + p.part())
                    .messageBody(Json.write(Json.object().put(DUE_AT, at).put(ROUND, at).put(PART, p.part())
                            .put(OF, p.of()).put(ROUND_DUE, due.toString())))
                    .messageAttributes(Map.of(DUE_AT, MessageAttributeValue.builder().dataType("String")
                            .stringValue(at).build()))
                    .build());
        }
        send(entries);
        return run(new PartMessage(new SweepRound.Part(now, 0, config.sweepParts()), due), queued);
    }

    /** A part as its message carries it: the part, and when the sweep its round answers was due. */
    record PartMessage(SweepRound.Part part, Instant due) {
    }

    /**
     * A part message, judged late or not against its round's instant (the time it was sent, due at once); a late
     * part does not scan.
     */
    private List<String> partDue(PartMessage message) {
        SweepRound.Part part = message.part();
        Instant now = clock.instant();
        Duration late = part.round().isAfter(now) ? Duration.ZERO : Duration.between(part.round(), now);
        SweepGate.Hold hold = gate.hold(now, late);
        if (hold != null) {
            Log.emit(partLine("WARN", part).put("outcome", "skipped_late").put("lateMs", late.toMillis()));
            return List.of();
        }
        return run(message, -1);
    }

    /**
     * Runs one part; the part that completes the round writes its sweep line, as one invocation's sweep does (its
     * {@code due} the round's, and {@code parts}). A part that fails fails its invocation, with a fault counted.
     */
    private List<String> run(PartMessage message, int queued) {
        SweepRound.Part part = message.part();
        long started = System.nanoTime();
        SweepRound.Done done;
        try {
            done = round.run(part);
        } catch (RuntimeException e) {
            Metrics.on(partLine("ERROR", part).put("outcome", "error").put("error", e.toString())
                    .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()),
                    Metrics.SWEEP_FUNCTION, clock.instant()).fault(1).emit();
            throw e;
        }
        if (done.superseded()) {
            Log.emit(partLine("WARN", part).put("outcome", "superseded"));
            return List.of();
        }
        ObjectNode partLine = partLine("INFO", part).put("itemsScanned", done.itemsScanned())
                .put("itemsShipped", done.itemsShipped()).put("bytesShipped", done.bytesShipped())
                .put("writeUnitsShipped", done.writeUnits())
                .put("decided", done.report() != null);
        putQueued(partLine, queued);
        Log.emit(partLine);
        if (done.report() == null) {
            return List.of();
        }
        ObjectNode line = line(done.report());
        line.put("due", message.due() == null ? part.round().toString() : message.due().toString())
                .put("parts", part.of());
        emit(line, done.report(), clock.instant());
        return done.report().markedDead();
    }

    private static ObjectNode partLine(String level, SweepRound.Part part) {
        return Log.line(level, "sweep_part").put("round", part.round().toString()).put(PART, part.part())
                .put(OF, part.of());
    }

    /** Whether the message is a part of a round (its body names one) rather than a due sweep. */
    static boolean isPart(SQSEvent.SQSMessage message) {
        return message.getBody() != null && message.getBody().contains("\"" + PART + "\"");
    }

    /** A part message's round, part, parts and due time (its body); null, logged, when it cannot be read. */
    static PartMessage part(SQSEvent.SQSMessage message) {
        try {
            JsonNode body = Json.MAPPER.readTree(message.getBody());
            String due = body.path(ROUND_DUE).asText(null);
            return new PartMessage(new SweepRound.Part(Instant.parse(body.path(ROUND).asText()),
                    body.path(PART).asInt(), body.path(OF).asInt()), due == null ? null : Instant.parse(due));
        } catch (IOException | DateTimeParseException e) {
            Log.emit(Log.line("WARN", "sweep_part").put("outcome", "bad_part")
                    .put("messageId", message.getMessageId()));
            return null;
        }
    }

    private static void putQueued(ObjectNode line, int queued) {
        if (queued >= 0) {
            line.put("queued", queued);
        }
    }

    /**
     * What a sweep did: {@code held} when self-preservation held a team back (or the whole fleet), {@code partial} when some writes
     * were skipped on errors (retried next sweep), {@code acted} when it marked or counted misses, else
     * {@code idle}.
     */
    static String outcome(Sweeper.Report r) {
        if (r.fleetHeld() || !r.teamsHeld().isEmpty()) {
            return "held";
        }
        if (r.skippedOnError() > 0) {
            return "partial";
        }
        return !r.markedDead().isEmpty() || r.missesRecorded() > 0 || r.raceLostToHeartbeat() > 0
                || !r.awaitingRaised().isEmpty() || !r.stalled().isEmpty()
                || r.missesTooSoon() > 0 || !r.revivesEnded().isEmpty() ? "acted" : "idle";
    }

    /** The sweep's line: what it read, what it wrote, what it held back. */
    static ObjectNode line(Sweeper.Report r) {
        ObjectNode line = Log.line(r.skippedOnError() > 0 ? "WARN" : "INFO", "sweep");
        line.put("outcome", outcome(r)).put("at", r.at().toString())
                .put("itemsScanned", r.itemsScanned()).put("aliveSeen", r.aliveSeen())
                .put("missesRecorded", r.missesRecorded()).put("raceLostToHeartbeat", r.raceLostToHeartbeat())
                .put("missesTooSoon", r.missesTooSoon())
                .put("skippedOnError", r.skippedOnError()).put("consumedReadUnits", r.consumedReadUnits())
                .put("durationMs", r.took().toMillis());
        named(line, "markedDead", r.markedDead());
        named(line, "teamsHeld", r.teamsHeld());
        if (r.fleet() != null && r.fleet().stale() > 0) {
            line.set("fleet", Json.object().put("held", r.fleet().held()).put("alive", r.fleet().alive())
                    .put("stale", r.fleet().stale()).put("threshold", r.fleet().threshold()));
        }
        named(line, "revivesEnded", r.revivesEnded());
        named(line, "hostsExpired", r.hostsExpired());
        if (r.leaseAnswersDropped() > 0) {
            // A host lease's cached answer for an agent whose item no longer matches it, dropped so the next beat
            // is written: counted where the sweep writes it, shown only when it happened.
            line.put("leaseAnswersDropped", r.leaseAnswersDropped());
        }
        if (!r.awaitingRaised().isEmpty()) {
            named(line, "awaitingInput", r.awaitingRaised());
        }
        if (!r.stalled().isEmpty()) {
            named(line, "stalled", r.stalled());
        }
        return line;
    }

    /**
     * A list of ids on the line: its first {@link #NAMED}, and, when it has any, the whole count beside it
     * ({@code <field>Count}). One mass death marks every agent dead in one sweep, and the line is also the sweep's
     * EMF document: CloudWatch Logs refuses an event over 256 KB, and that sweep's metrics would be lost with it.
     * Five lists of 20 ids of at most 129 characters and the rest of the line stay under 16 KB at any fleet size
     * (14,099 bytes in SweepLineTest).
     */
    private static void named(ObjectNode line, String field, List<String> ids) {
        ArrayNode names = line.putArray(field);
        ids.stream().limit(NAMED).forEach(names::add);
        if (!ids.isEmpty()) {
            line.put(field + "Count", ids.size());
        }
    }

    /**
     * Writes the line with its metrics (EMF). Counts of 0 are not published (a metric is billed for every hour it
     * is), so an idle deployment's sweep publishes none, nor does a healthy fleet's; the sweep's time is
     * {@code durationMs} on the line and AWS/Lambda's Duration, the alive agents it saw {@code aliveSeen}. A
     * restarting agent the sweep had to end is a revive flow that broke: a fault.
     */
    static void emit(ObjectNode line, Sweeper.Report r, Instant now) {
        Metrics.on(line, Metrics.SWEEP_FUNCTION, now)
                .count(Metrics.AGENTS_MARKED_DEAD, r.markedDead().size())
                .count(Metrics.SELF_PRESERVATION_HOLDS, r.teamsHeld().size())
                .count(Metrics.FLEET_SELF_PRESERVATION_HOLDS, r.fleetHeld() ? 1 : 0)
                .count(Metrics.SWEEP_WRITE_ERRORS, r.skippedOnError())
                .fault(r.revivesEnded().size())
                .emit();
    }
}
