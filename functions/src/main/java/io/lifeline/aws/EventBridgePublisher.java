package io.lifeline.aws;

import io.lifeline.app.EventBus;
import io.lifeline.app.LifelineEvent;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequestEntry;
import software.amazon.awssdk.services.eventbridge.model.PutEventsResponse;
import software.amazon.awssdk.services.eventbridge.model.PutEventsResultEntry;

/**
 * Sends events with PutEvents, at most 10 a call. It reads every result entry (never only the call's
 * success), sends again only the entries that failed, with backoff, and answers which events are still
 * not on the bus. Ids sent by this container are remembered for a while, so a replayed stream batch does
 * not put an event on the bus twice. The adapter of the application layer's port {@link EventBus} on AWS.
 */
public final class EventBridgePublisher implements EventBus {
    private static final int MAX_ENTRIES_PER_CALL = 10;
    private static final int REMEMBERED_IDS = 20_000;

    private final EventBridgeClient client;
    private final String busName;
    private final List<Duration> backoff;
    private final Set<String> sent = Collections.newSetFromMap(new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED_IDS;
        }
    });

    public EventBridgePublisher(EventBridgeClient client, String busName, List<Duration> backoff) {
        this.client = client;
        this.busName = busName;
        this.backoff = backoff;
    }

    /** Publishes {@code events}; answers the ids that could not be put on the bus after every retry. */
    public Set<String> publish(List<LifelineEvent> events) {
        return send(events).unsent();
    }

    /** Publishes {@code events}; events already put by this container are skipped and not counted. */
    @Override
    public synchronized Outcome send(List<LifelineEvent> events) {
        List<LifelineEvent> pending = new ArrayList<>();
        for (LifelineEvent e : events) {
            if (!sent.contains(e.eventId())) {
                pending.add(e);
            }
        }
        int toSend = pending.size();
        for (int attempt = 0; !pending.isEmpty(); attempt++) {
            if (attempt > 0) {
                if (attempt > backoff.size()) {
                    break;
                }
                pause(backoff.get(attempt - 1));
            }
            pending = sendOnce(pending);
        }
        Set<String> failed = new HashSet<>();
        pending.forEach(e -> failed.add(e.eventId()));
        return new Outcome(toSend - pending.size(), failed);
    }

    private List<LifelineEvent> sendOnce(List<LifelineEvent> events) {
        List<LifelineEvent> failed = new ArrayList<>();
        for (int from = 0; from < events.size(); from += MAX_ENTRIES_PER_CALL) {
            List<LifelineEvent> chunk = events.subList(from, Math.min(events.size(), from + MAX_ENTRIES_PER_CALL));
            List<PutEventsRequestEntry> entries = new ArrayList<>();
            for (LifelineEvent e : chunk) {
                entries.add(PutEventsRequestEntry.builder().eventBusName(busName).source(LifelineEvent.SOURCE)
                        .detailType(e.type()).time(e.at()).detail(Json.write(e.detail())).build());
            }
            PutEventsResponse response;
            try {
                response = client.putEvents(r -> r.entries(entries));
            } catch (SdkException e) {
                // The invocation's own line counts what stayed unsent; this one says why.
                Log.emit(Log.line("WARN", "PutEvents failed")
                        .put("events", chunk.size()).put("error", e.getMessage()));
                failed.addAll(chunk);
                continue;
            }
            List<PutEventsResultEntry> results = response.entries();
            for (int i = 0; i < chunk.size(); i++) {
                PutEventsResultEntry r = i < results.size() ? results.get(i) : null;
                if (r == null || r.errorCode() != null || r.eventId() == null) {
                    failed.add(chunk.get(i));
                } else {
                    sent.add(chunk.get(i).eventId());
                }
            }
        }
        return failed;
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
