package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.StreamsEventResponse;
import com.amazonaws.services.lambda.runtime.events.transformers.v2.DynamodbEventTransformer;
import io.lifeline.config.Wiring;
import io.lifeline.store.TransitionLog;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.Record;

/**
 * The outbox: reads the table's stream and turns each status change stamped on an agent item into its
 * transition record. Writes are idempotent, so a replayed batch changes nothing. A record that fails is
 * reported back (ReportBatchItemFailures) and the stream retries from it; nothing after it is skipped.
 */
public final class PublisherHandler implements RequestHandler<DynamodbEvent, StreamsEventResponse> {
    private final TransitionLog transitions;

    public PublisherHandler() {
        this(Wiring.fromEnvironment());
    }

    public PublisherHandler(Wiring wiring) {
        this.transitions = new TransitionLog(wiring.dynamo(), wiring.config().tableName(),
                wiring.config().transitionRetention());
    }

    @Override
    public StreamsEventResponse handleRequest(DynamodbEvent event, Context context) {
        List<Record> records = DynamodbEventTransformer.toRecordsV2(event);
        for (Record record : records) {
            try {
                handle(record);
            } catch (RuntimeException e) {
                System.err.println("outbox record " + record.dynamodb().sequenceNumber() + " failed: " + e);
                return StreamsEventResponse.builder().withBatchItemFailures(List.of(
                        new StreamsEventResponse.BatchItemFailure(record.dynamodb().sequenceNumber()))).build();
            }
        }
        return StreamsEventResponse.builder().withBatchItemFailures(List.of()).build();
    }

    private void handle(Record record) {
        TransitionLog.carriedBy(record.dynamodb().oldImage(), record.dynamodb().newImage())
                .ifPresent(transitions::record);
    }
}
