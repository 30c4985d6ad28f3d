package io.lifeline.app;

import io.lifeline.agent.LifelineException;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.outbox.OutboxRepair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The outbox's repair, the use case its scheduled Lambda adapter ({@code io.lifeline.events.OutboxRepairHandler})
 * runs. It re-drives parked stream records ({@link Outbox#redrive}), then finds transitions the outbox never finished
 * (a record lost to a publisher stalled past the stream's retention, or parked and expired) and stamps a replay of
 * each, which the stream brings to the outbox: its record, hand-back, leader's notice and events, with events already
 * in the event log not sent again. A transition is replayed once it has waited {@link #RECONCILE_AFTER} (the outbox's
 * normal lag is seconds), and only while the event log still remembers what was sent (its retention, less a day), so
 * nothing older is told twice. The same Scan finds agents offline or dead_failed_revive, unchanged for the offline
 * retention ({@code OFFLINE_AGENT_RETENTION_DAYS}, 0: never), and deletes them as an admin's DELETE would, so a fleet
 * that registers a new id per run does not leave the sweep reading its past.
 */
public final class OutboxRepairs {
    static final Duration RECONCILE_AFTER = Duration.ofMinutes(5);
    static final int REDRIVE_LIMIT = 100;
    /** Agents past the offline retention deleted in one run at most (the rest go in the next runs). */
    static final int RETIRE_LIMIT = 500;

    /** What one run did: parked records handled, replays stamped, agents deleted; {@code at}, when it looked. */
    public record Run(Instant at, int redriven, int replays, int agentsRetired) {
    }

    private final Outbox outbox;
    private final OutboxRepair repair;
    private final AgentStore agents;
    private final Duration offlineRetention;
    private final Duration window;
    private final Clock clock;

    /**
     * {@code eventRetention}, the event log's: a transition is replayed only within it, less a day (all of it when it
     * is a day or less); {@code offlineRetention} zero: no agent is deleted.
     */
    public OutboxRepairs(Outbox outbox, OutboxRepair repair, AgentStore agents, Duration offlineRetention,
                         Duration eventRetention, Clock clock) {
        this.outbox = outbox;
        this.repair = repair;
        this.agents = agents;
        this.offlineRetention = offlineRetention;
        this.window = eventRetention.minus(Duration.ofDays(1)).isNegative() ? eventRetention
                : eventRetention.minus(Duration.ofDays(1));
        this.clock = clock;
    }

    /** One run: the re-drive, then the Scan and what it finds, judged at the time the re-drive ended. */
    public Run run() {
        int redriven = outbox.redrive(REDRIVE_LIMIT);
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
        return new Run(now, redriven, replays, retired);
    }
}
