package io.lifeline.client.manager;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The crash-recovery protocol's heartbeat manager for one agent: a heartbeat at {@link #start()} and then every
 * interval, carrying the activity state (as ready/working) and the stats. The interval is the server's: each answer
 * carries {@code heartbeatIntervalSeconds} (at most half the agent's stale-after), and the next beat follows
 * it ({@link #DEFAULT_INTERVAL} until the first answer), unless the builder pinned one. When the server answers
 * rejoinRequired (the agent was marked dead, or is offline), it joins again and sends the beat once more, so an agent
 * that resumes is healthy within one interval. After each beat it writes the state file atomically,
 * when one is configured, and can send a checkpoint with the beat.
 */
public final class HeartbeatManager implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HeartbeatManager.class.getName());
    /** The interval before the server has answered (and from a server that does not say): DESIGN's 30 s. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    private final LifelineClient client;
    private final String agentId;
    /** The builder's interval, or null to follow the server's. */
    private final Duration pinned;
    private volatile Duration interval;
    private final Clock clock;
    private final StateStore stateStore;
    private final Supplier<Map<String, Object>> checkpoint;
    private final boolean sendCheckpoint;
    private final Supplier<Map<String, Object>> metadata;
    private final Long nextHeartbeatWithinSeconds;
    private final CopyOnWriteArrayList<HeartbeatListener> listeners = new CopyOnWriteArrayList<>();

    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong toolCalls = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Object beatLock = new Object();
    private volatile ActivityState state = ActivityState.IDLE;
    private volatile Instant startedAt;
    private volatile ScheduledExecutorService executor;
    /** The scheduler stop() shut down, kept to tell that it has terminated. */
    private volatile ScheduledExecutorService stoppedExecutor;
    private volatile HeartbeatEvent lastEvent;
    /** When the work loop last called {@link #progress}, or null before its first call (beats then say nothing). */
    private volatile Instant lastProgress;

    private HeartbeatManager(Builder b) {
        this.client = Objects.requireNonNull(b.client, "client");
        this.agentId = Objects.requireNonNull(b.agentId, "agentId");
        this.pinned = b.interval;
        this.interval = b.interval == null ? DEFAULT_INTERVAL : b.interval;
        this.clock = b.clock;
        this.stateStore = b.statePath == null ? null : new StateStore(b.statePath);
        this.checkpoint = b.checkpoint;
        this.sendCheckpoint = b.sendCheckpoint;
        this.metadata = b.metadata;
        this.nextHeartbeatWithinSeconds = b.nextHeartbeatWithinSeconds;
        if (pinned != null && (pinned.isNegative() || pinned.isZero())) {
            throw new IllegalArgumentException("interval must be positive");
        }
    }

    public static Builder builder(LifelineClient client, String agentId) {
        return new Builder(client, agentId);
    }

    /**
     * Sends the first heartbeat now (joining if the server asks), then one every interval on a background
     * thread (each beat is scheduled one interval after the previous one, at the interval its answer advised).
     * Answers the first beat. A first beat the server refuses for good stops the manager and is thrown: the
     * agent must be registered first (404 AGENT_NOT_FOUND, said so), and the key must be right (401/403). A
     * passing failure (unreachable, 429/503) does not: the manager keeps beating.
     *
     * @throws LifelineApiException when the first beat is refused for good
     */
    public HeartbeatEvent start() {
        synchronized (this) {
            if (executor != null) {
                throw new IllegalStateException("already started");
            }
            startedAt = clock.instant();
            if (state == ActivityState.STOPPED) {
                state = ActivityState.IDLE;
            }
            executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "lifeline-heartbeat-" + agentId);
                t.setDaemon(true);
                return t;
            });
        }
        HeartbeatEvent first = beatNow();
        if (first.failure() instanceof LifelineApiException refused && refused.status() / 100 == 4
                && !refused.isTransient() && !refused.rejoinRequired()) {
            // Not a passing problem: an unregistered agent, a wrong key or team. Fail now, not beat forever.
            stop();
            if (refused.status() == 404) {
                throw new LifelineApiException(refused.status(), refused.code(), "Agent '" + agentId
                        + "' is not registered in team '" + client.team() + "': register it first (client.register("
                        + "RegisterAgent.of(...)) or lifeline register " + agentId + ")", refused.agentStatus(), false);
            }
            throw refused;
        }
        scheduleNext();
        return first;
    }

    /** The interval the next beat waits: the pinned one, or the server's latest advice. */
    public Duration interval() {
        return interval;
    }

    private void scheduleNext() {
        ScheduledExecutorService ex = executor;
        if (ex == null) {
            return;
        }
        try {
            ex.schedule(this::tick, interval.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            // stop() shut the executor down between the beat and this; nothing more to send
        }
    }

    /** Stops the heartbeats (no leave: the server notices the silence). Idempotent. */
    public void stop() {
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
            executor = null;
            state = ActivityState.STOPPED;
        }
        if (ex == null) {
            return;
        }
        stoppedExecutor = ex;
        ex.shutdownNow();
        try {
            ex.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        persist(clock.instant());
    }

    /** True once stopped with its scheduler terminated: no beat can be sent any more (none is scheduled or running). */
    boolean schedulerTerminated() {
        ScheduledExecutorService ex = stoppedExecutor;
        return executor == null && ex != null && ex.isTerminated();
    }

    /** Stops and tells the server the agent left ({@code offline}). */
    public void stopAndLeave(String reason) {
        stop();
        client.leave(agentId, reason);
    }

    @Override
    public void close() {
        stop();
    }

    public boolean running() {
        return executor != null;
    }

    /** Sets the activity state; entering {@code error} counts one error, {@code stopped} stops the manager. */
    public void setState(ActivityState next) {
        ActivityState before = state;
        if (next == ActivityState.STOPPED) {
            stop();
            return;
        }
        if (next == ActivityState.ERROR && before != ActivityState.ERROR) {
            errors.incrementAndGet();
        }
        state = next;
    }

    public ActivityState state() {
        return state;
    }

    public void recordActivity(Activity activity) {
        switch (activity) {
            case MESSAGE -> messages.incrementAndGet();
            case TOOL_CALL -> toolCalls.incrementAndGet();
            case ERROR -> errors.incrementAndGet();
            default -> throw new IllegalArgumentException(activity.name());
        }
    }

    /**
     * Tells the manager the agent's work moved on (a step done, a model token received, an item processed): the work
     * loop calls it, not the heartbeat thread. From the first call on, every beat carries the age of the last one
     * ({@code progressAgeMs}), so a loop that wedges while this manager keeps beating is seen: the server judges a
     * {@code working} agent with no progress past its {@code stallAfterSeconds} stalled (docs/liveness.md).
     */
    public void progress() {
        lastProgress = clock.instant();
    }

    /** When {@link #progress} was last called, or null. */
    public Instant lastProgress() {
        return lastProgress;
    }

    public HeartbeatStats stats() {
        Instant start = startedAt;
        long uptime = start == null ? 0 : Math.max(0, Duration.between(start, clock.instant()).toSeconds());
        return new HeartbeatStats(messages.get(), toolCalls.get(), errors.get(), uptime);
    }

    /** Adds a listener; run the answer to remove it. */
    public Runnable onHeartbeat(HeartbeatListener listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    public HeartbeatEvent lastEvent() {
        return lastEvent;
    }

    public String agentId() {
        return agentId;
    }

    private void tick() {
        try {
            beatNow();
        } catch (RuntimeException e) {
            // Keep beating whatever happened to this one.
            LOG.log(System.Logger.Level.WARNING, "heartbeat of " + agentId + " failed", e);
        } finally {
            scheduleNext();
        }
    }

    /** Follows the server's advice, unless the builder pinned an interval. */
    private void follow(HeartbeatResult result) {
        if (pinned != null || result == null || result.heartbeatIntervalSeconds() == null
                || result.heartbeatIntervalSeconds() < 1) {
            return;
        }
        interval = Duration.ofSeconds(result.heartbeatIntervalSeconds());
    }

    /** Sends one heartbeat now, joining first if the server asks; answers what happened. */
    public HeartbeatEvent beatNow() {
        synchronized (beatLock) {
            ActivityState current = state;
            Instant now = clock.instant();
            HeartbeatStats stats = stats();
            Heartbeat hb = new Heartbeat(current.reportedStatus(), null, metadata == null ? null : metadata.get(),
                    stats.toWire(), sendCheckpoint && checkpoint != null ? checkpoint.get() : null,
                    nextHeartbeatWithinSeconds);
            Instant progressed = lastProgress;
            if (progressed != null) {
                hb = hb.withProgressAgeMs(Math.max(0, Duration.between(progressed, now).toMillis()));
            }
            HeartbeatResult result = null;
            LifelineException failure = null;
            boolean rejoined = false;
            try {
                try {
                    result = client.heartbeat(agentId, hb);
                } catch (LifelineApiException e) {
                    if (!e.rejoinRequired() && !"REJOIN_REQUIRED".equals(e.code())) {
                        throw e;
                    }
                    client.join(agentId);
                    rejoined = true;
                    result = client.heartbeat(agentId, hb);
                }
            } catch (LifelineException e) {
                failure = e;
            }
            follow(result);
            HeartbeatEvent event = new HeartbeatEvent(agentId, now, current, stats, result, failure, rejoined);
            lastEvent = event;
            persist(now);
            for (HeartbeatListener l : listeners) {
                try {
                    l.onHeartbeat(event);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "a heartbeat listener failed", e);
                }
            }
            return event;
        }
    }

    private void persist(Instant now) {
        if (stateStore == null) {
            return;
        }
        HeartbeatEvent last = lastEvent;
        try {
            stateStore.save(new PersistedState(agentId, client.team(), state.wire(),
                    last == null ? null : last.timestamp(), stats(), checkpoint == null ? null : checkpoint.get(),
                    Path.of("").toAbsolutePath().toString(), now));
        } catch (RuntimeException e) {
            // The crash-recovery protocol: persisting is not critical; the next beat tries again.
            LOG.log(System.Logger.Level.WARNING, "cannot persist the state of " + agentId, e);
        }
    }

    /** Settings of a manager; client and agent are required. */
    public static final class Builder {
        private final LifelineClient client;
        private final String agentId;
        private Duration interval;
        private Clock clock = Clock.systemUTC();
        private Path statePath;
        private Supplier<Map<String, Object>> checkpoint;
        private boolean sendCheckpoint;
        private Supplier<Map<String, Object>> metadata;
        private Long nextHeartbeatWithinSeconds;

        private Builder(LifelineClient client, String agentId) {
            this.client = client;
            this.agentId = agentId;
        }

        /**
         * Pins the time between heartbeats. Without it the manager follows the server's
         * {@code heartbeatIntervalSeconds}, which keeps the agent alive whatever its stale-after; a pinned
         * interval longer than half the agent's stale-after lets it die between beats.
         */
        public Builder interval(Duration d) {
            this.interval = d;
            return this;
        }

        public Builder clock(Clock c) {
            this.clock = c;
            return this;
        }

        /** Where to keep the crash-recovery state file; none by default. */
        public Builder statePath(Path p) {
            this.statePath = p;
            return this;
        }

        /** The agent's checkpoint, saved in the state file; with {@code send}, also sent with every heartbeat. */
        public Builder checkpoint(Supplier<Map<String, Object>> c, boolean send) {
            this.checkpoint = c;
            this.sendCheckpoint = send;
            return this;
        }

        /** Metadata sent with every heartbeat (at most 4 KiB as JSON). */
        public Builder metadata(Supplier<Map<String, Object>> m) {
            this.metadata = m;
            return this;
        }

        /** Tells the server to expect the next beat within this many seconds (else the agent's staleAfter). */
        public Builder nextHeartbeatWithinSeconds(Long s) {
            this.nextHeartbeatWithinSeconds = s;
            return this;
        }

        public HeartbeatManager build() {
            return new HeartbeatManager(this);
        }
    }
}
