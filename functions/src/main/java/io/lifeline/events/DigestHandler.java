package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.app.StallDigest;
import io.lifeline.aws.EventBridgePublisher;
import io.lifeline.config.Config;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.support.Log;
import java.time.Instant;
import java.util.Map;

/**
 * Sends a burst's digest (docs/alerts-noise.md): the digest flow's task, at the end of a window that went past its
 * threshold ({@link BurstDigest}, in steps that each fit the timeout). Marks the window digested (a death of that
 * window counted later is alerted one by one), writes each team it counts its own view of the digest, and puts one
 * {@code AlertDigest} on the bus for the operator's destinations, which the alert rules deliver with their retries
 * and dead-letter queue. Nothing runs between bursts: the flow is started by the window's {@code AlertBurstStarted}.
 * A failure throws, and the flow's Retry runs the step again (the same event id; one already logged is not sent
 * twice).
 */
public final class DigestHandler implements RequestHandler<Map<String, Object>, Map<String, Object>> {
    private final BurstDigest burst;
    /** The digest of a burst of stalls (its flow input's {@code kind: stalls}). */
    private final StallDigest stalls;

    public DigestHandler() {
        this(Wiring.fromEnvironment(), Wiring.environment("DASHBOARD_URL"));
    }

    public DigestHandler(Wiring wiring) {
        this(wiring, null);
    }

    public DigestHandler(Wiring wiring, String dashboardUrl) {
        Config config = wiring.config();
        EventBridgePublisher bus = config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(),
                UseCases.PUT_EVENTS_BACKOFF);
        AlertWindowStore windows = new AlertWindowStore(wiring.dynamo(), config.tables(), config.eventRetention());
        EventLog log = new EventLog(wiring.dynamo(), config.tables(), config.eventRetention());
        String dashboard = dashboardUrl == null || dashboardUrl.isBlank() ? null : dashboardUrl;
        this.burst = new BurstDigest(windows, log, bus, config.alertBursts(), dashboard, wiring.clock());
        this.stalls = new StallDigest(windows, log, bus, config.alertBursts(), dashboard, wiring.clock());
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
            if (StallDigest.isFor(input)) {
                return stalls.step(Instant.parse(String.valueOf(raw)), input, started);
            }
            return burst.step(Instant.parse(String.valueOf(raw)), input, started);
        }
    }
}
