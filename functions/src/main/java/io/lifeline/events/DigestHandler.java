package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.app.BurstDigest;
import io.lifeline.app.StallDigest;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Log;
import java.time.Instant;
import java.util.Map;

/**
 * Sends a burst's digest (docs/alerts-noise.md): the digest flow's Lambda adapter, at the end of a window that went
 * past its threshold; the use case is {@link BurstDigest} (io.lifeline.app, in steps that each fit the timeout). Marks the window digested (a death of that
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
        String dashboard = dashboardUrl == null || dashboardUrl.isBlank() ? null : dashboardUrl;
        UseCases useCases = new UseCases(wiring);
        this.burst = useCases.burstDigest(dashboard);
        this.stalls = useCases.stallDigest(dashboard);
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
