package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.DynamodbEvent;
import com.amazonaws.services.lambda.runtime.events.StreamsEventResponse;
import com.amazonaws.services.lambda.runtime.events.transformers.v2.DynamodbEventTransformer;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.AgentStore;
import io.lifeline.store.EventLog;
import io.lifeline.store.InboxStore;
import io.lifeline.store.StreamChanges;
import io.lifeline.store.Tables;
import io.lifeline.store.TaskStore;
import io.lifeline.store.TeamStore;
import io.lifeline.store.TransitionLog;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.model.Record;

/**
 * The outbox, one pass per change. For each record of the live table's stream, in order: a status change
 * becomes its transition record and, on death, the hand-back and the leader's notice (all on the ledger); the
 * change and everything it caused ({@code TasksReassigned}, {@code LeaderNotified}) become events sent in the
 * same PutEvents, checked entry by entry, then kept in the team's event log. Records that carry no fact never
 * reach this handler: the stream mapping's FilterCriteria passes only records marked for the outbox. A record
 * whose work or events could not be done is reported back (ReportBatchItemFailures): the stream delivers
 * it and everything after it again, and since every write here is idempotent, nothing is lost and
 * nothing doubled.
 */
public final class PublisherHandler implements RequestHandler<DynamodbEvent, StreamsEventResponse> {
    /** In-invocation retries of entries PutEvents refused, before the record is handed back to the stream. */
    static final List<Duration> PUT_EVENTS_BACKOFF = List.of(Duration.ofMillis(100), Duration.ofMillis(200),
            Duration.ofMillis(400), Duration.ofMillis(800), Duration.ofMillis(1600));

    private final TransitionLog transitions;
    private final DeathFollowUp deaths;
    private final EventLog eventLog;
    private final EventBridgePublisher bus;
    private final java.time.Clock clock;

    public PublisherHandler() {
        this(Wiring.fromEnvironment());
    }

    public PublisherHandler(Wiring wiring) {
        Config config = wiring.config();
        this.clock = wiring.clock();
        Tables tables = config.tables();
        this.transitions = new TransitionLog(wiring.dynamo(), tables, config.transitionRetention());
        this.deaths = new DeathFollowUp(new AgentStore(wiring.dynamo(), tables), new TaskStore(wiring.dynamo(), tables),
                new TeamStore(wiring.dynamo(), tables), new InboxStore(wiring.dynamo(), tables, config.eventRetention()));
        this.eventLog = new EventLog(wiring.dynamo(), tables, config.eventRetention());
        this.bus = config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(), PUT_EVENTS_BACKOFF);
    }

    @Override
    public StreamsEventResponse handleRequest(DynamodbEvent event, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "publish")) {
            List<Record> records = DynamodbEventTransformer.toRecordsV2(event);
            List<List<LifelineEvent>> eventsByRecord = new ArrayList<>();
            int failedAt = records.size();
            String failure = null;
            for (int i = 0; i < records.size(); i++) {
                try {
                    eventsByRecord.add(handle(records.get(i)));
                } catch (RuntimeException e) {
                    failure = e.toString();
                    failedAt = i;
                    break;
                }
            }
            List<LifelineEvent> all = new ArrayList<>();
            eventsByRecord.forEach(all::addAll);
            EventBridgePublisher.Outcome sent = bus == null ? new EventBridgePublisher.Outcome(0, Set.of())
                    : bus.send(all);
            Set<String> unsent = sent.unsent();
            for (int i = 0; i < eventsByRecord.size() && i < failedAt; i++) {
                boolean delivered = eventsByRecord.get(i).stream().noneMatch(e -> unsent.contains(e.eventId()));
                if (!delivered) {
                    failedAt = i;
                    break;
                }
                eventsByRecord.get(i).forEach(e -> eventLog.append(e.team(),
                        new EventLog.Entry(e.eventId(), e.type(), e.at(), Json.write(e.detail()), e.agentId())));
            }
            log(records, all, sent, failedAt, failure, started);
            if (failedAt >= records.size()) {
                return StreamsEventResponse.builder().withBatchItemFailures(List.of()).build();
            }
            return StreamsEventResponse.builder().withBatchItemFailures(List.of(
                    new StreamsEventResponse.BatchItemFailure(records.get(failedAt).dynamodb().sequenceNumber())))
                    .build();
        }
    }

    /**
     * The batch's one line and metrics: records, events published and failed, and where the batch was handed
     * back ({@code outcome} {@code retry}: the stream delivers that record and the rest again).
     */
    private void log(List<Record> records, List<LifelineEvent> all, EventBridgePublisher.Outcome sent, int failedAt,
                     String failure, long started) {
        boolean handedBack = failedAt < records.size();
        ObjectNode line = Log.line(failure != null ? "ERROR" : handedBack ? "WARN" : "INFO", "publish")
                .put("outcome", handedBack ? "retry" : "ok").put("records", records.size());
        Set<String> teams = new java.util.TreeSet<>();
        all.forEach(e -> teams.add(e.team()));
        line.set("teams", Json.MAPPER.valueToTree(teams));
        if (handedBack) {
            line.put("retryFrom", records.get(failedAt).dynamodb().sequenceNumber());
        }
        Json.putIfPresent(line, "error", failure);
        line.put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis());
        Metrics.on(line, Metrics.PUBLISHER_FUNCTION, clock.instant())
                .count(Metrics.EVENTS_PUBLISHED, sent.put())
                .count(Metrics.EVENTS_FAILED, sent.unsent().size())
                .emit();
    }

    private List<LifelineEvent> handle(Record record) {
        List<LifelineEvent> events = new ArrayList<>();
        for (StreamChanges.Change change : StreamChanges.decode(record.dynamodb().oldImage(),
                record.dynamodb().newImage())) {
            events.add(EventCatalogue.of(change));
            if (change instanceof StreamChanges.StatusChanged c) {
                transitions.record(new TransitionLog.Change(c.team(), c.agentId(), c.transition()));
                deaths.handle(c).forEach(caused -> events.add(EventCatalogue.of(caused)));
            }
        }
        return events;
    }
}
