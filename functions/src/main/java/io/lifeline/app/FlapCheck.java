package io.lifeline.app;

import io.lifeline.agent.FlapHold;
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
 * on this check to end: it lapses at {@link FlapHold#until} ({@link AgentFlaps}). Its Lambda adapter is
 * {@code io.lifeline.events.FlapCheckHandler}; {@code config.UseCases} builds it.
 */
public final class FlapCheck {
    private final EventLog eventLog;
    private final EventBus bus;
    private final Clock clock;
    private final FlapStore flaps;
    private final AgentFlaps.Settings flapping;
    private final FlapHold hold;
    private final OutboxMarks liveAgents;

    /** {@code bus} null: no bus (the resolve is only logged). */
    public FlapCheck(EventLog eventLog, EventBus bus, FlapStore flaps, OutboxMarks liveAgents,
                     AgentFlaps.Settings flapping, Clock clock) {
        this.eventLog = eventLog;
        this.bus = bus;
        this.clock = clock;
        this.flaps = flaps;
        this.flapping = flapping;
        this.hold = flapping.hold();
        this.liveAgents = liveAgents;
    }

    /** The check's failure to send the resolve, retried by the flow. */
    public static final class ResolveNotSentException extends RuntimeException {
        ResolveNotSentException(String message) {
            super(message);
        }
    }

    /**
     * The check of the flag {@code since} of {@code team}'s {@code agentId} (the flow's input); answers the flow's
     * next input ({@code again}, {@code checkAt}, {@code resolved}) and writes the check's line.
     */
    public Map<String, Object> check(String team, String agentId, Instant since, long started) {
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
