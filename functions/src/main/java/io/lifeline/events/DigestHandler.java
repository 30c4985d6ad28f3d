package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.AgentStore;
import io.lifeline.store.AlertWindowStore;
import io.lifeline.store.EventLog;
import io.lifeline.store.FlapStore;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
    private final EventLog eventLog;
    private final EventBridgePublisher bus;
    private final Clock clock;
    private final FlapStore flaps;
    private final Config.Flapping flapping;
    private final AgentStore liveAgents;

    public DigestHandler() {
        this(Wiring.fromEnvironment(), Wiring.environment("DASHBOARD_URL"));
    }

    public DigestHandler(Wiring wiring) {
        this(wiring, null);
    }

    public DigestHandler(Wiring wiring, String dashboardUrl) {
        Config config = wiring.config();
        this.eventLog = new EventLog(wiring.dynamo(), config.tables(), config.eventRetention());
        this.bus = config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(),
                PublisherHandler.PUT_EVENTS_BACKOFF);
        this.clock = wiring.clock();
        this.burst = new BurstDigest(new AlertWindowStore(wiring.dynamo(), config.tables(), config.eventRetention()),
                eventLog, bus, config.alertBursts(), dashboardUrl == null || dashboardUrl.isBlank() ? null : dashboardUrl,
                clock);
        this.flaps = new FlapStore(wiring.dynamo(), config.tables(), config.eventRetention());
        this.flapping = config.flapping();
        this.liveAgents = new AgentStore(wiring.dynamo(), config.tables());
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
            if (input != null && input.get("agentId") != null) {
                return checkFlapping(input, started);
            }
            Object raw = input == null ? null : input.get("window");
            return burst.step(Instant.parse(String.valueOf(raw)), input, started);
        }
    }

    /**
     * The flow's check of a flapping agent (started by its {@code AgentFlapping}): once it has not flipped for the
     * stable window, ends the flag (one conditional write: only if no flip came in between) and sends one
     * {@code AgentFlappingResolved}; else answers {@code again} with the time to check next (the newest flip plus
     * the stable window), and the flow waits until then. A flag already ended by this flow (a retry after the write)
     * sends its resolve again under the same id, which is not sent twice.
     */
    private Map<String, Object> checkFlapping(Map<String, Object> input, long started) {
        String team = String.valueOf(input.get("team"));
        String agentId = String.valueOf(input.get("agentId"));
        Instant since = Instant.parse(String.valueOf(input.get("since")));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("team", team);
        out.put("agentId", agentId);
        out.put("since", since.toString());
        out.put("again", false);
        Instant now = clock.instant();
        FlapStore.Flaps f = flaps.read(team, agentId);
        String outcome;
        if (f == null || (f.flaggedAt() == null && !since.equals(f.resolvedFlag()))
                || (f.flaggedAt() != null && !since.equals(f.flaggedAt()))) {
            outcome = "gone"; // another flag, or none: nothing of this one is left to resolve
        } else if (f.flaggedAt() != null && now.isBefore(f.last().plus(flapping.stable()))) {
            out.put("again", true);
            out.put("digestAt", f.last().plus(flapping.stable()).toString());
            outcome = "flapping";
        } else if (f.flaggedAt() != null && !flaps.resolve(team, agentId, since, f.last())) {
            // a flip came in between: look again at once
            out.put("again", true);
            out.put("digestAt", now.toString());
            outcome = "changed";
        } else {
            LifelineEvent resolved = AgentFlaps.resolved(team, agentId, since, f.last(), f.lastStatus(), flapping, now);
            EventLog.Entry entry = new EventLog.Entry(resolved.eventId(), resolved.type(), resolved.at(),
                    Json.write(resolved.detail()), agentId);
            if (bus != null) {
                Set<String> logged = eventLog.logged(List.of(Map.entry(team, entry)));
                if (!logged.contains(resolved.eventId()) && !bus.send(List.of(resolved)).unsent().isEmpty()) {
                    throw new DigestNotSentException("the bus did not take the flapping resolve of " + agentId);
                }
            }
            eventLog.append(team, entry);
            liveAgents.clearFlapping(team, agentId, since);
            out.put("resolved", true);
            outcome = "resolved";
        }
        Log.emit(Log.line("INFO", "digest").put("outcome", "flap_" + outcome).put("team", team)
                .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()));
        return out;
    }
}
