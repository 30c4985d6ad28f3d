package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.StreamsEventResponse;
import com.amazonaws.services.lambda.runtime.events.transformers.v2.DynamodbEventTransformer;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.app.Outbox;
import io.lifeline.app.Outbox.Batch;
import io.lifeline.app.Outbox.Images;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.Record;

/**
 * The outbox's Lambda adapter: the live table's stream brings a batch, {@link Outbox} (io.lifeline.app) handles it,
 * and this answers the records to deliver again (ReportBatchItemFailures: the first record handed back, and all
 * after it) and writes the batch's line and metrics.
 */
public final class PublisherHandler implements RequestHandler<DynamodbEvent, StreamsEventResponse> {
    private final Outbox outbox;
    private final Clock clock;

    public PublisherHandler() {
        this(Wiring.fromEnvironment());
    }

    public PublisherHandler(Wiring wiring) {
        this.outbox = new UseCases(wiring).outbox();
        this.clock = wiring.clock();
    }

    @Override
    public StreamsEventResponse handleRequest(DynamodbEvent event, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "publish")) {
            List<Images> records = new ArrayList<>();
            for (Record r : DynamodbEventTransformer.toRecordsV2(event)) {
                records.add(new Images(r.dynamodb().sequenceNumber(), r.dynamodb().oldImage(), r.dynamodb().newImage()));
            }
            Batch batch = outbox.run(records);
            log(records, batch, started);
            if (batch.failedAt() >= records.size()) {
                return StreamsEventResponse.builder().withBatchItemFailures(List.of()).build();
            }
            return StreamsEventResponse.builder().withBatchItemFailures(List.of(
                    new StreamsEventResponse.BatchItemFailure(records.get(batch.failedAt()).sequenceNumber())))
                    .build();
        }
    }

    /**
     * The batch's one line and metrics: records, events published and failed, records parked, and where the
     * batch was handed back ({@code outcome} {@code retry}: the stream delivers that record and the rest again).
     */
    private void log(List<Images> records, Batch batch, long started) {
        boolean handedBack = batch.failedAt() < records.size();
        ObjectNode line = Log.line(batch.failure() != null || batch.parked() > 0 ? "ERROR" : handedBack ? "WARN" : "INFO",
                "publish").put("outcome", handedBack ? "retry" : "ok").put("records", records.size());
        line.set("teams", Json.MAPPER.valueToTree(batch.teams()));
        if (handedBack) {
            line.put("retryFrom", records.get(batch.failedAt()).sequenceNumber());
        }
        if (batch.parked() > 0) {
            line.put("parked", batch.parked());
        }
        Json.putIfPresent(line, "error", batch.failure());
        line.put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis());
        Metrics.on(line, Metrics.PUBLISHER_FUNCTION, clock.instant())
                .count(Metrics.EVENTS_PUBLISHED, batch.put())
                .count(Metrics.EVENTS_FAILED, batch.unsent())
                .count(Metrics.RECORDS_PARKED, batch.parked())
                .emit();
    }
}
