package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.AlertWindowStore;
import io.lifeline.store.EventLog;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Sends a burst's digest (docs/alerts-noise.md): the digest flow's one task, at the end of a window that went past
 * its threshold. Marks the window digested (a death of that window counted later is alerted one by one) and puts
 * one {@code AlertDigest} on the bus, which the alert rules deliver to each destination with their retries and
 * dead-letter queue; it is logged in the event log of every team it counts. Nothing runs between bursts: the flow
 * is started by the window's {@code AlertBurstStarted}. A failure throws, and the flow's Retry sends again (the same
 * event id; one already logged is not sent twice).
 */
public final class DigestHandler implements RequestHandler<Map<String, Object>, Map<String, Object>> {
    private final AlertWindowStore windows;
    private final EventLog eventLog;
    private final EventBridgePublisher bus;
    private final Config.AlertBursts settings;
    private final String dashboardUrl;
    private final Clock clock;

    public DigestHandler() {
        this(Wiring.fromEnvironment(), Wiring.environment("DASHBOARD_URL"));
    }

    public DigestHandler(Wiring wiring) {
        this(wiring, null);
    }

    public DigestHandler(Wiring wiring, String dashboardUrl) {
        Config config = wiring.config();
        this.windows = new AlertWindowStore(wiring.dynamo(), config.tables(), config.eventRetention());
        this.eventLog = new EventLog(wiring.dynamo(), config.tables(), config.eventRetention());
        this.bus = config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(),
                PublisherHandler.PUT_EVENTS_BACKOFF);
        this.settings = config.alertBursts();
        this.dashboardUrl = dashboardUrl == null || dashboardUrl.isBlank() ? null : dashboardUrl;
        this.clock = wiring.clock();
    }

    /** The digest flow's failure to send, retried by the flow. */
    public static final class DigestNotSentException extends RuntimeException {
        DigestNotSentException(String message) {
            super(message);
        }
    }

    @Override
    public Map<String, Object> handleRequest(Map<String, Object> input, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "digest")) {
            Object raw = input == null ? null : input.get("window");
            Instant start = Instant.parse(String.valueOf(raw));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("window", start.toString());
            out.put("again", false);
            AlertWindowStore.Window w = windows.digest(start);
            if (w == null) {
                out.put("sent", false);
                Log.emit(Log.line("INFO", "digest").put("outcome", "no_window").put("window", start.toString())
                        .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()));
                return out;
            }
            LifelineEvent digest = AlertBursts.digest(w, settings, dashboardUrl, clock.instant());
            EventLog.Entry entry = new EventLog.Entry(digest.eventId(), digest.type(), digest.at(),
                    Json.write(digest.detail()), null);
            int put = 0;
            if (bus != null) {
                Set<String> logged = eventLog.logged(List.of(Map.entry(digest.team(), entry)));
                if (!logged.contains(digest.eventId())) {
                    EventBridgePublisher.Outcome sent = bus.send(List.of(digest));
                    if (!sent.unsent().isEmpty()) {
                        Metrics.on(Log.line("ERROR", "digest").put("outcome", "retry")
                                        .put("window", start.toString()).put("durationMs",
                                                Duration.ofNanos(System.nanoTime() - started).toMillis()),
                                        Metrics.DIGEST_FUNCTION, clock.instant())
                                .count(Metrics.EVENTS_FAILED, sent.unsent().size()).emit();
                        throw new DigestNotSentException("the bus did not take the digest of " + start);
                    }
                    put = sent.put();
                }
            }
            eventLog.append(digest.team(), entry);
            digest.alsoLoggedFor().forEach(team -> eventLog.append(team, entry));
            Metrics.on(Log.line("INFO", "digest").put("outcome", "sent")
                            .put("window", start.toString()).put("deaths", w.deaths()).put("teams", w.byTeam().size())
                            .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()),
                            Metrics.DIGEST_FUNCTION, clock.instant())
                    .count(Metrics.EVENTS_PUBLISHED, put).emit();
            out.put("sent", true);
            out.put("deaths", w.deaths());
            return out;
        }
    }
}
