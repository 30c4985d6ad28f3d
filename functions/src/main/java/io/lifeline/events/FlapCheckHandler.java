package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.agent.FlapHold;
import io.lifeline.app.AgentFlaps;
import io.lifeline.app.LifelineEvent;
import io.lifeline.aws.EventBridgePublisher;
import io.lifeline.config.Config;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.FlapStore;
import io.lifeline.store.outbox.OutboxMarks;
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
 * A flapping agent's check (docs/alerts-noise.md): the flap-check flow's task, started by the agent's
 * {@code AgentFlapping}, on a function and a flow of its own so that no burst's digest delays it. Once the agent has
 * not flipped for the stable window ({@link FlapHold#stable}), it ends the flag (one conditional write: only if no
 * flip came in between) and sends one {@code AgentFlappingResolved}; else it answers {@code again} with the time to
 * check next (the newest flip plus the stable window), and the flow waits until then. A flag already ended (by this
 * flow, a retry after the write, or by the outbox when the flag lapsed) sends its resolve again under the same id,
 * which is not sent twice. A failure throws, and the flow's Retry runs the check again; once the retries are spent
 * the flow's Catch counts one {@code Faults} itself (FaultsAlarm) and the execution fails. The flag does not depend
 * on this check to end: it lapses at {@link FlapHold#until} ({@link AgentFlaps}).
 */
public final class FlapCheckHandler implements RequestHandler<Map<String, Object>, Map<String, Object>> {
    private final EventLog eventLog;
    private final EventBridgePublisher bus;
    private final Clock clock;
    private final FlapStore flaps;
    private final AgentFlaps.Settings flapping;
    private final FlapHold hold;
    private final OutboxMarks liveAgents;

    public FlapCheckHandler() {
        this(Wiring.fromEnvironment());
    }

    public FlapCheckHandler(Wiring wiring) {
        Config config = wiring.config();
        this.eventLog = new EventLog(wiring.dynamo(), config.tables(), config.eventRetention());
        this.bus = config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(),
                UseCases.PUT_EVENTS_BACKOFF);
        this.clock = wiring.clock();
        this.flaps = new FlapStore(wiring.dynamo(), config.tables(), config.eventRetention());
        this.flapping = config.flapping();
        this.hold = flapping.hold();
        this.liveAgents = new OutboxMarks(wiring.dynamo(), config.tables());
    }

    /** The check's failure to send the resolve, retried by the flow. */
    public static final class ResolveNotSentException extends RuntimeException {
        ResolveNotSentException(String message) {
            super(message);
        }
    }

    @Override
    public Map<String, Object> handleRequest(Map<String, Object> input, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(),
                "flapCheck")) {
            return check(input, started);
        }
    }

    private Map<String, Object> check(Map<String, Object> input, long started) {
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
        } else if (f.flaggedAt() != null && !hold.stable(f.last(), now)) {
            out.put("again", true);
            out.put("checkAt", hold.stableAt(f.last()).toString());
            outcome = "flapping";
        } else if (f.flaggedAt() != null && !flaps.resolve(team, agentId, since, f.last())) {
            // a flip came in between: look again at once
            out.put("again", true);
            out.put("checkAt", now.toString());
            outcome = "changed";
        } else {
            sendResolved(team, agentId, since, f, now);
            liveAgents.clearFlapping(team, agentId, since);
            out.put("resolved", true);
            outcome = "resolved";
        }
        Log.emit(Log.line("INFO", "flapCheck").put("outcome", outcome).put("team", team)
                .put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis()));
        return out;
    }

    private void sendResolved(String team, String agentId, Instant since, FlapStore.Flaps f, Instant now) {
        LifelineEvent resolved = AgentFlaps.resolved(team, agentId, since, f.last(), f.lastStatus(), flapping, now);
        EventLog.Entry entry = new EventLog.Entry(resolved.eventId(), resolved.type(), resolved.at(),
                Json.write(resolved.detail()), agentId);
        if (bus != null) {
            Set<String> logged = eventLog.logged(List.of(Map.entry(team, entry)));
            if (!logged.contains(resolved.eventId()) && !bus.send(List.of(resolved)).unsent().isEmpty()) {
                throw new ResolveNotSentException("the bus did not take the flapping resolve of " + agentId);
            }
        }
        eventLog.append(team, entry);
    }
}
