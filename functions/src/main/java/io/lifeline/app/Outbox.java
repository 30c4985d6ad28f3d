package io.lifeline.app;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.outbox.OutboxMarks;
import io.lifeline.store.outbox.OutboxParking;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The outbox, one pass per change: the use case behind the live table's stream (its Lambda adapter is
 * {@code io.lifeline.events.PublisherHandler}). For each record (each item's records in stream order, different items
 * of a batch at once, see {@link #run}): a status change becomes its transition record and, on death, the hand-back
 * and the leader's notice (all on the ledger); the change and everything it caused ({@code TasksReassigned},
 * {@code LeaderNotified}) become events sent in the same PutEvents through the port {@link EventBus}, checked entry by
 * entry, then kept in the team's event log, and the agent's published watermark moves to the change's seq. Records
 * that carry no fact never reach it: the stream mapping's FilterCriteria passes only records marked for the outbox.
 *
 * <p>Failures are told apart. A transient one (the store or the bus throttled or unavailable) hands the record back
 * (ReportBatchItemFailures): the stream delivers it and everything after it again, and since every write here is
 * idempotent and events already in the event log are not sent again, nothing is lost and nothing doubled. A record
 * that fails for any other reason, or keeps failing transiently for longer than {@link #PARK_AFTER}, is parked on
 * the ledger with its images and error ({@link OutboxParking}; metric {@code RecordsParked}, alarmed) and the shard
 * moves on; {@link #redrive} re-drives parked records (the outbox repair, {@link OutboxRepairs}).
 */
public final class Outbox {
    /** How long a record may keep failing transiently (first failure seen by this container) before it is parked. */
    static final Duration PARK_AFTER = Duration.ofMinutes(15);
    /** Threads that handle a batch's items at once (each item's records in order). */
    static final int WORKERS = 8;

    private final TransitionLog transitions;
    private final DeathFollowUp deaths;
    private final EventLog eventLog;
    private final OutboxMarks marks;
    private final OutboxParking parking;
    /** The bus; null where none is configured (the changes are recorded and finished, nothing is sent). */
    private final EventBus bus;
    private final Clock clock;
    /** Which deaths reach people one by one and which in their window's digest (docs/alerts-noise.md). */
    private final AlertBursts bursts;
    /** Which changes an agent's flapping holds from the per-agent alerts (docs/alerts-noise.md). */
    private final AgentFlaps flaps;
    /** Handle different items of a batch at once; idle threads end after 30 s. */
    private final ExecutorService workers = workers();
    /** Sequence number -> when this container first saw it fail transiently. */
    private final Map<String, Instant> failingSince = new ConcurrentHashMap<>();

    public Outbox(TransitionLog transitions, DeathFollowUp deaths, EventLog eventLog, OutboxMarks marks,
                  OutboxParking parking, AlertBursts bursts, AgentFlaps flaps, EventBus bus, Clock clock) {
        this.transitions = transitions;
        this.deaths = deaths;
        this.eventLog = eventLog;
        this.marks = marks;
        this.parking = parking;
        this.bursts = bursts;
        this.flaps = flaps;
        this.bus = bus;
        this.clock = clock;
    }


    private static ExecutorService workers() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(WORKERS, WORKERS,
                30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "publisher-worker");
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** What one record led to: its events, and for each status change what finishing it writes on the agent item. */
    record Work(List<LifelineEvent> events, List<Finish> finishes, List<FlapMark> flapMarks) {
        Work(List<LifelineEvent> events, List<Finish> finishes) {
            this(events, finishes, List.of());
        }
    }

    /**
     * The agent's flapping mark after a stall change that flagged it (docs/alerts-noise.md): set to {@code flapping}
     * (its flag's time), or, where the change ended a lapsed flag, that flag's mark ({@code ended}) removed. A stall
     * has no status change whose finishing write would carry it.
     */
    record FlapMark(String team, String agentId, Instant flapping, Instant ended) {
    }

    /** A status change to finish once its events are out: the watermark to {@code seq}, the task to clear if any. */
    record Finish(String team, String agentId, long seq, String taskToClear, boolean flapKnown, Instant flapping) {
    }

    /** One record's images and its place in the stream. */
    public record Images(String sequenceNumber, Map<String, AttributeValue> oldImage,
                         Map<String, AttributeValue> newImage) {
    }

    /** How a batch ended: where it was handed back (size: nowhere), why, and what it put on the bus or parked. */
    public static final class Batch {
        int failedAt;
        String failure;
        int put;
        int unsent;
        int parked;
        final Set<String> teams = new TreeSet<>();

        /** Record {@code i} could not be handled: the batch is handed back from the earliest such record. */
        synchronized void failAt(int i, String why) {
            if (i < failedAt) {
                failedAt = i;
                failure = why;
            }
        }

        /** The first record handed back to the stream; the batch's size when none is. */
        public synchronized int failedAt() {
            return failedAt;
        }

        synchronized void addParked() {
            parked++;
        }

        /** Why the batch was handed back, or a record could not be parked; null when neither happened. */
        public synchronized String failure() {
            return failure;
        }

        /** Events put on the bus. */
        public synchronized int put() {
            return put;
        }

        /** Events the bus did not take. */
        public synchronized int unsent() {
            return unsent;
        }

        /** Records parked on the ledger. */
        public synchronized int parked() {
            return parked;
        }

        /** The teams whose events the batch carried, in order. */
        public synchronized Set<String> teams() {
            return new TreeSet<>(teams);
        }
    }

    /**
     * Handles a batch in three steps, each item's records in stream order and different items at once (on
     * {@link #WORKERS} threads; DynamoDB orders a stream by item only): each record's work (its transition record, what
     * a death causes), parking what cannot be handled; then every event of the records before the first transient
     * failure in one send (PutEvents of up to 10 entries a call); then, for the records whose events are all on the
     * bus, the event log and the finishing write. The first transient failure hands that record and the rest back.
     */
    public Batch run(List<Images> records) {
        Batch batch = new Batch();
        batch.failedAt = records.size();
        Work[] works = new Work[records.size()];
        Map<String, List<Integer>> items = new LinkedHashMap<>();
        for (int i = 0; i < records.size(); i++) {
            items.computeIfAbsent(StreamChanges.itemOf(records.get(i).oldImage(), records.get(i).newImage()),
                    k -> new ArrayList<>()).add(i);
        }
        forEachItem(items.values(), indexes -> {
            for (int i : indexes) {
                if (i > batch.failedAt()) {
                    return; // behind a record that comes back with the batch: handled then
                }
                Images r = records.get(i);
                try {
                    works[i] = handle(r.oldImage(), r.newImage());
                } catch (RuntimeException e) {
                    if (transientFailure(e) && !failedTooLong(r.sequenceNumber())) {
                        batch.failAt(i, e.toString());
                        return; // this item's later records come back with the batch
                    }
                    String parkFailure = park(r, e.toString(), 1, batch);
                    if (parkFailure != null) {
                        batch.failAt(i, parkFailure);
                        return;
                    }
                }
            }
        });
        List<LifelineEvent> all = new ArrayList<>();
        for (int i = 0; i < batch.failedAt(); i++) {
            if (works[i] != null) {
                all.addAll(works[i].events());
            }
        }
        all.forEach(e -> batch.teams.add(e.team()));
        Set<String> unsent = send(all, batch);
        for (int i = 0; i < batch.failedAt(); i++) {
            Work w = works[i];
            if (w == null || w.events().stream().noneMatch(e -> unsent.contains(e.eventId()))) {
                continue;
            }
            if (failedTooLong(records.get(i).sequenceNumber())) {
                String parkFailure = park(records.get(i), "events not delivered to the bus", 1, batch);
                if (parkFailure == null) {
                    works[i] = null;
                    continue;
                }
                batch.failure = parkFailure;
            }
            batch.failedAt = i;
            break;
        }
        int finishBefore = batch.failedAt();
        List<List<Integer>> toFinish = new ArrayList<>();
        for (List<Integer> indexes : items.values()) {
            List<Integer> done = indexes.stream().filter(i -> i < finishBefore && works[i] != null).toList();
            if (!done.isEmpty()) {
                toFinish.add(done);
            }
        }
        forEachItem(toFinish, indexes -> {
            for (int i : indexes) {
                finish(works[i]);
                failingSince.remove(records.get(i).sequenceNumber());
            }
        });
        return batch;
    }

    /**
     * Runs {@code work} for each item's list of record indexes: one item on this thread, several at once on the
     * workers. Waits for all; the first failure is thrown (the stream then delivers the whole batch again, and every
     * write here is idempotent).
     */
    private void forEachItem(Collection<List<Integer>> items,
                             Consumer<List<Integer>> work) {
        if (items.size() <= 1) {
            items.forEach(work);
            return;
        }
        List<Future<Void>> running = new ArrayList<>();
        for (List<Integer> indexes : items) {
            running.add(workers.submit(Log.carrying(() -> {
                work.accept(indexes);
                return null;
            })));
        }
        RuntimeException failure = null;
        for (Future<Void> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException re ? re
                            : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while publishing", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** After a record's events are on the bus: the event log, then the published watermark. */
    private void finish(Work w) {
        w.events().forEach(e -> {
            EventLog.Entry entry = new EventLog.Entry(e.eventId(), e.type(), e.at(), Json.write(e.detail()), e.agentId());
            eventLog.append(e.team(), entry);
            // A fleet event: each team it concerns logs its own view of it, never the fleet's detail.
            e.teamViews().forEach((team, view) -> eventLog.append(team,
                    new EventLog.Entry(e.eventId(), e.type(), e.at(), Json.write(view), null)));
        });
        w.finishes().forEach(f -> marks.finishChange(f.team(), f.agentId(), f.seq(), f.taskToClear(), f.flapKnown(),
                f.flapping()));
        w.flapMarks().forEach(m -> {
            if (m.flapping() != null) {
                marks.markFlapping(m.team(), m.agentId(), m.flapping());
            } else {
                marks.clearFlapping(m.team(), m.agentId(), m.ended());
            }
        });
    }

    /** Sends what the event log does not hold yet (an earlier pass's send); answers the ids still not on the bus. */
    private Set<String> send(List<LifelineEvent> events, Batch batch) {
        if (bus == null || events.isEmpty()) {
            return Set.of();
        }
        List<Map.Entry<String, EventLog.Entry>> entries = new ArrayList<>();
        events.forEach(e -> entries.add(Map.entry(e.team(), new EventLog.Entry(e.eventId(), e.type(), e.at(), null,
                e.agentId()))));
        Set<String> logged;
        try {
            logged = eventLog.logged(entries);
        } catch (LifelineException e) {
            logged = Set.of(); // the bus's own dedup by id still protects consumers; better twice than never
        }
        Set<String> already = logged;
        EventBus.Outcome sent = bus.send(events.stream().filter(e -> !already.contains(e.eventId()))
                .toList());
        batch.put += sent.put();
        batch.unsent += sent.unsent().size();
        return sent.unsent();
    }

    /** Parks the record; answers null when it is parked, else why it could not be. */
    private String park(Images r, String error, int attempts, Batch batch) {
        try {
            parking.park(r.sequenceNumber(), r.oldImage(), r.newImage(), error, attempts, clock.instant());
        } catch (RuntimeException e) {
            return "could not park the record: " + e;
        }
        failingSince.remove(r.sequenceNumber());
        batch.addParked();
        Log.emit(Log.line("ERROR", "stream record parked").put("sequenceNumber", r.sequenceNumber())
                .put("error", error));
        return null;
    }

    /** The store or the bus throttled or out of reach: worth retrying. Anything else will fail the same way again. */
    static boolean transientFailure(RuntimeException e) {
        if (e instanceof LifelineException le) {
            return le.kind() == LifelineException.Kind.THROTTLED || le.kind() == LifelineException.Kind.UNAVAILABLE;
        }
        return e instanceof SdkException && !(e instanceof AwsServiceException
                ase && ase.statusCode() >= 400 && ase.statusCode() < 500 && ase.statusCode() != 429);
    }

    private boolean failedTooLong(String sequenceNumber) {
        Instant now = clock.instant();
        Instant since = failingSince.computeIfAbsent(sequenceNumber, k -> now);
        return !now.isBefore(since.plus(PARK_AFTER));
    }

    /**
     * Re-drives parked records, oldest first, at most {@code limit}: each is handled as if the stream had brought
     * it; one that fails again stays parked with one more attempt. Answers how many were handled.
     */
    public int redrive(int limit) {
        int handled = 0;
        for (OutboxParking.Parked p : parking.list(limit)) {
            Batch batch = new Batch();
            try {
                Work w = handle(p.oldImage(), p.newImage());
                Set<String> unsent = send(w.events(), batch);
                if (!unsent.isEmpty()) {
                    parking.park(p.sequenceNumber(), p.oldImage(), p.newImage(), "events not delivered to the bus",
                            p.attempts() + 1, clock.instant());
                    continue;
                }
                finish(w);
                parking.remove(p);
                handled++;
            } catch (RuntimeException e) {
                parking.park(p.sequenceNumber(), p.oldImage(), p.newImage(), e.toString(), p.attempts() + 1,
                        clock.instant());
            }
        }
        return handled;
    }

    /** A record's work: the transition record, what a death causes, and every event, in the order they happened. */
    Work handle(Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage) {
        List<LifelineEvent> events = new ArrayList<>();
        List<Finish> finishes = new ArrayList<>();
        List<FlapMark> flapMarks = new ArrayList<>();
        // The record's status change's flapping decision, which a stall change its status speaks for follows.
        AgentFlaps.Decision ofStatus = null;
        for (StreamChanges.Change change : StreamChanges.decode(oldImage, newImage)) {
            LifelineEvent event = EventCatalogue.of(change);
            events.add(event);
            if (change instanceof StreamChanges.StatusChanged c) {
                ofStatus = statusChanged(c, event, events, finishes);
            } else if (change instanceof StreamChanges.Stall s) {
                stall(s, event, events, ofStatus, flapMarks);
            }
        }
        return new Work(events, finishes, flapMarks);
    }

    /**
     * A stall change under {@code onStall: alert} counts in the flapping rule as a death does (docs/alerts-noise.md):
     * while its agent is flagged it carries {@code flapping}, which the stall's alert rule skips.
     */
    private void stall(StreamChanges.Stall s, LifelineEvent event, List<LifelineEvent> events,
                       AgentFlaps.Decision ofStatus, List<FlapMark> flapMarks) {
        AgentFlaps.Decision flap = flaps.decideStall(s, ofStatus);
        if (flap.flapping() != null) {
            event.detail().put("flapping", flap.flapping().toString());
        }
        events.addAll(flap.raised());
        // A stall counts in its window's burst rule beside the deaths (a start the flag holds is no burst's); one
        // past the threshold, and its end, carry burst for the window's digest of stalls.
        AlertBursts.Decision burst = bursts.decideStall(s, flap.flapping() != null);
        if (burst.burst() != null) {
            event.detail().put("burst", burst.burst().toString());
        }
        events.addAll(burst.raised());
        // The live item's mark: set by the change that flags the agent (every later status change's finishing write
        // keeps it), removed by one that ends a lapsed flag. A held change finds it set already: no write.
        boolean flagged = flap.raised().stream().anyMatch(e -> e.type().equals(EventCatalogue.AGENT_FLAPPING));
        if (flagged || flap.ended() != null) {
            flapMarks.add(new FlapMark(s.team(), s.agentId(), flagged ? flap.flapping() : null, flap.ended()));
        }
    }

    /** A status change: its flapping and burst decisions, its transition record and what its death causes. */
    private AgentFlaps.Decision statusChanged(StreamChanges.StatusChanged c, LifelineEvent event,
                                              List<LifelineEvent> events, List<Finish> finishes) {
        // Every change is published; a change of a flapping agent is marked as such (its flag's one
        // AgentFlapping speaks for it), a death in a burst for its window's digest.
        AgentFlaps.Decision flap = flaps.decide(c);
        // A give-up (dead_failed_revive) is not held by the flag: nobody restarts the agent any more, so it is
        // the one change of a crash loop a person must act on, and it pages once; so is the change that ends
        // it, which resolves that page (docs/alerts-noise.md).
        boolean gaveUp = c.transition().to() == AgentStatus.DEAD_FAILED_REVIVE
                || c.transition().from() == AgentStatus.DEAD_FAILED_REVIVE;
        if (flap.flapping() != null && !gaveUp) {
            event.detail().put("flapping", flap.flapping().toString());
        }
        events.addAll(flap.raised());
        // A death the flag holds is no burst's; a return is its death's (counted if it came before the flag).
        // Counting never holds a change back: a failure to count decides "not in a burst".
        // A death its host daemon restarts itself, and its return, are the daemon's: no burst's either.
        boolean held = c.hostRestart() != null || flap.flapping() != null && !gaveUp
                && (c.diedAt() == null || !c.diedAt().isBefore(flap.flapping()));
        AlertBursts.Decision burst = held ? AlertBursts.Decision.NONE : bursts.decide(c);
        if (burst.burst() != null) {
            event.detail().put("burst", burst.burst().toString());
        }
        events.addAll(burst.raised());
        transitions.record(new TransitionLog.Change(c.team(), c.agentId(), c.transition()));
        DeathFollowUp.FollowUp followUp = deaths.handle(c);
        followUp.told().forEach(caused -> events.add(EventCatalogue.of(caused)));
        finishes.add(new Finish(c.team(), c.agentId(), c.transition().seq(), followUp.taskToClear(),
                flap != AgentFlaps.Decision.UNTOUCHED, flap.flapping()));
        return gaveUp ? AgentFlaps.Decision.NONE : flap;
    }
}
