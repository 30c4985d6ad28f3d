package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.agent.LifelineException;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.outbox.OutboxRepair;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The outbox's repair, on a schedule (and by hand: {@code aws lambda invoke}). It re-drives parked stream records
 * ({@link PublisherHandler#redrive}), then finds transitions the outbox never finished (a record lost to a publisher
 * stalled past the stream's retention, or parked and expired) and stamps a replay of each, which the stream brings
 * to the publisher: its record, hand-back, leader's notice and events, with events already in the event log not
 * sent again. A transition is replayed once it has waited {@link #RECONCILE_AFTER} (the outbox's normal lag is
 * seconds), and only while the event log still remembers what was sent (its retention, less a day), so nothing
 * older is told twice. The same Scan finds agents offline or dead_failed_revive, unchanged for the offline
 * retention ({@code OFFLINE_AGENT_RETENTION_DAYS}, 0: never), and deletes them as an admin's DELETE would, so a fleet
 * that registers a new id per run does not leave the sweep reading its past.
 */
public final class OutboxRepairHandler implements RequestHandler<ScheduledEvent, Map<String, Object>> {
    static final Duration RECONCILE_AFTER = Duration.ofMinutes(5);
    static final int REDRIVE_LIMIT = 100;
    /** Agents past the offline retention deleted in one run at most (the rest go in the next runs). */
    static final int RETIRE_LIMIT = 500;

    private final PublisherHandler publisher;
    private final OutboxRepair repair;
    private final AgentStore agents;
    private final Duration offlineRetention;
    private final Duration window;
    private final Clock clock;

    public OutboxRepairHandler() {
        this(Wiring.fromEnvironment());
    }

    public OutboxRepairHandler(Wiring wiring) {
        Config config = wiring.config();
        this.publisher = new PublisherHandler(wiring);
        this.repair = new OutboxRepair(wiring.dynamo(), config.tables());
        this.agents = new AgentStore(wiring.dynamo(), config.tables());
        this.offlineRetention = config.offlineRetention();
        this.window = config.eventRetention().minus(Duration.ofDays(1)).isNegative() ? config.eventRetention()
                : config.eventRetention().minus(Duration.ofDays(1));
        this.clock = wiring.clock();
    }

    @Override
    public Map<String, Object> handleRequest(ScheduledEvent event, Context context) {
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "repair")) {
            int redriven = publisher.redrive(REDRIVE_LIMIT);
            Instant now = clock.instant();
            int replays = 0;
            OutboxRepair.Found found = repair.scan(offlineRetention.isZero() ? null : now.minus(offlineRetention));
            for (OutboxRepair.Unpublished u : found.unpublished()) {
                if (u.at() == null || u.at().isAfter(now.minus(RECONCILE_AFTER)) || u.at().isBefore(now.minus(window))) {
                    continue;
                }
                if (repair.replay(u, now, RECONCILE_AFTER)) {
                    replays++;
                }
            }
            int retired = 0;
            for (OutboxRepair.Retired r : found.retired()) {
                if (retired == RETIRE_LIMIT) {
                    break;
                }
                try {
                    agents.delete(r.team(), r.agentId(), now);
                    retired++;
                } catch (LifelineException e) {
                    // It changed since the Scan (a join, a task) or is gone: not retired now.
                }
            }
            var line = Log.line(redriven + replays > 0 ? "WARN" : "INFO", "outbox repair")
                    .put("outcome", redriven + replays > 0 ? "repaired" : "ok")
                    .put("redriven", redriven).put("replays", replays).put("agentsRetired", retired);
            Metrics.on(line, Metrics.PUBLISHER_FUNCTION, now).count(Metrics.RECORDS_REDRIVEN, redriven)
                    .count(Metrics.REPLAYS_STAMPED, replays).emit();
            return Map.of("redriven", redriven, "replays", replays, "agentsRetired", retired);
        }
    }
}
