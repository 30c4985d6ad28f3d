package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.manager.HeartbeatManager;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Daemon mode, for a host running many agents. Each round ({@link #runOnce()}, every interval once
 * {@link #start()}ed; the interval is the smallest {@code heartbeatIntervalSeconds} the server advised for any
 * of its agents, on join and on every heartbeat, unless the builder pinned one):
 * <ol>
 * <li>an agent whose process exited is reported at once ({@code POST .../fail}, the reason saying how it ended:
 * exit status and last stderr line where the processes know them). At once means when the exit happens, when the
 * processes tell of it ({@link #processExited}, as {@link CommandProcesses} does from {@link Process#onExit()}):
 * an exit pass on its own thread does this step alone, between rounds; otherwise at the next round. A command that
 * exits with status 0 finished: its agent leaves ({@code offline}), no crash. Then, as the agent's
 * {@link RestartPolicy} says (default {@code on-failure}: after a crash only), restarted
 * and joined: at once after its first exit in {@code crashWindow}, then after a backoff that doubles with each
 * exit in the window ({@code restartBackoff}, 2x, 4x, ... at most {@code maxRestartBackoff}). A crash report says
 * when the daemon restarts the agent ({@code restartInSeconds}): the revive flow stands down until then, so the two
 * never race, and it carries the daemon's own restarts of the agent ({@code restartsLastHour}). At
 * {@code maxCrashes} crashes in the window the daemon gives up: it reports the agent given up
 * ({@code dead_failed_revive} at once, one alert, no revive flow) and restarts it no more, unless a restart
 * command of a new revive (an operator's) asks for it;</li>
 * <li>the running agents' heartbeats go in batches of at most 25 ({@code POST .../heartbeats}), each renewing
 * one host lease (the host id for the first 25 agents of the list, {@code <hostId>.2} for the next, ...), with each
 * agent's time since its last local beat when a {@link LocalBeats} channel is given, and each agent's restarts in
 * the last hour ({@code stats.restartsLastHour}) when the count changed since the server last took it; an entry
 * the server answers with rejoinRequired
 * is joined again;</li>
 * <li>the host's pending commands ({@code GET .../hosts/{hostId}/commands}) are handled: a restart request is
 * acknowledged first, then the agent is restarted and joined. An acknowledgement refused with
 * {@code COMMAND_SUPERSEDED} means the revive flow that asked has ended (the agent is back, or the flow gave up
 * or was replaced): the agent is left alone. A request for an agent this daemon (re)started within
 * {@code restartDedupWindow} is acknowledged without a second restart: it is the revive flow answering a
 * crash the daemon already handled. A request for an agent waiting out its crash backoff is acknowledged and
 * the agent restarted when the backoff ends.</li>
 * </ol>
 * With {@code stallAfter} and a {@link LocalBeats} channel, every {@code progressSample} (between rounds) the
 * daemon judges each agent in a turn for progress ({@link ProgressWatch}): a stall is stopped abort-first and goes
 * through step 1 like any crash, and each batch entry carries the age of the agent's last progress.
 * {@link #leaveAll} is the graceful end of a stop: every agent leaves ({@code offline}), within a bound.
 *
 * <p>The daemon holds the lifecycle (rounds, exit passes, the stop) and the lock; what it knows of each agent is
 * that agent's {@link AgentSlot}, and the steps above are {@link CrashLoop} (1), {@link BeatRound} (2) and
 * {@link CommandInbox} (3), with {@link HookSessions} for what a runtime's hooks make it do between rounds. They
 * share {@link AgentActions} (restart, join) and write what they did into a {@link RoundLog}.
 */
public final class HostDaemon implements AutoCloseable {
    private final LifelineClient client;
    private final String hostId;
    private final List<String> agents;
    /** Everything the daemon knows of each agent, in the order of {@link #agents}. */
    private final Map<String, AgentSlot> slots;
    /** The builder's interval, or null to follow the server's advice. */
    private final Duration pinned;
    private final Duration restartDedupWindow;
    /** Whether an agent's command is started again after it ends: the default, and per agent. */
    private final RestartPolicy restartPolicy;
    private final Map<String, RestartPolicy> restartPolicies;
    private final Clock clock;
    private final Consumer<TickReport> onTick;
    private final AgentActions actions;
    private final CrashLoop crashLoop;
    private final BeatRound beats;
    private final CommandInbox inbox;
    /** The progress judge, or null when stalls are not watched (no stallAfter, or no hooks to say what a turn is). */
    private final ProgressWatch progress;
    private final Duration progressSample;
    private volatile ScheduledExecutorService executor;
    /** Runs exit passes: an exit is reported when it happens, between rounds; and what hooks make the daemon do. */
    private final ScheduledExecutorService exitExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lifeline-daemon-exits");
        t.setDaemon(true);
        return t;
    });

    private HostDaemon(Builder b) {
        this.client = Objects.requireNonNull(b.client);
        this.hostId = Objects.requireNonNull(b.hostId);
        AgentProcesses processes = Objects.requireNonNull(b.processes);
        this.agents = List.copyOf(new LinkedHashSet<>(b.agents));
        this.pinned = b.interval;
        this.restartDedupWindow = b.restartDedupWindow;
        this.restartPolicy = b.restartPolicy;
        this.restartPolicies = Map.copyOf(b.restartPolicies);
        this.clock = b.clock;
        this.onTick = b.onTick;
        Instant now = clock.instant();
        Map<String, AgentSlot> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < agents.size(); i++) {
            String a = agents.get(i);
            bySlot.put(a, new AgentSlot(a, i, restartPolicy(a), now));
        }
        this.slots = Collections.unmodifiableMap(bySlot);
        this.actions = new AgentActions(client, processes, b.localBeats, clock);
        this.crashLoop = new CrashLoop(client, processes, actions, clock, b.maxCrashes, b.crashWindow,
                b.restartBackoff, b.maxRestartBackoff);
        this.beats = new BeatRound(client, hostId, actions, clock, b.localBeats, b.waitingFields);
        this.inbox = new CommandInbox(client, hostId, processes, actions, clock, slots, this::restartDedupWindow);
        // Without ss and /proc (and no sampler given) the model connection cannot be read: stalls are not watched.
        boolean sampled = b.sampled || StreamSilence.available();
        this.progress = b.localBeats == null || b.stallAfter == null || !sampled ? null : new ProgressWatch(processes,
                b.localBeats, clock, b.stallAfter, b.restartOnStall, b.sampler);
        this.progressSample = b.progressSample;
        if (b.localBeats != null) {
            HookSessions hooks = new HookSessions(client, processes, actions, slots, exitExecutor, this, this::tell);
            b.localBeats.onHook(hooks::hooked);
        }
    }

    public static Builder builder(LifelineClient client, String hostId, AgentProcesses processes) {
        return new Builder(client, hostId, processes);
    }

    public List<String> agents() {
        return agents;
    }

    /** Whether the agent's command is started again after it ends. */
    public RestartPolicy restartPolicy(String agentId) {
        return restartPolicies.getOrDefault(agentId, restartPolicy);
    }

    /**
     * The time between rounds: the pinned interval, else the smallest the server advised for any of this
     * daemon's agents (one batch beats them all, so the most demanding one sets the pace), else
     * {@link HeartbeatManager#DEFAULT_INTERVAL} until the server has answered.
     */
    public Duration interval() {
        if (pinned != null) {
            return pinned;
        }
        return slots.values().stream().map(AgentSlot::advised).filter(Objects::nonNull).min(Long::compare)
                .map(Duration::ofSeconds).orElse(HeartbeatManager.DEFAULT_INTERVAL);
    }

    private Duration restartDedupWindow() {
        return restartDedupWindow != null ? restartDedupWindow : interval().multipliedBy(2);
    }

    /**
     * Joins every agent (as {@link #start()} does first); answers the ones that joined. One that did not is
     * joined by a later round (its heartbeat answers rejoinRequired), or the round reports the problem.
     */
    public List<String> joinAll() {
        List<String> joined = new ArrayList<>();
        for (AgentSlot s : slots.values()) {
            try {
                actions.joinAndAdvise(s);
                joined.add(s.id());
            } catch (LifelineException e) {
                // the round's heartbeat answers rejoinRequired and joins again, or reports the problem
            }
        }
        return joined;
    }

    /** Joins every agent, then runs a round now and every interval on a background thread. */
    public synchronized void start() {
        if (executor != null) {
            throw new IllegalStateException("already started");
        }
        joinAll();
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lifeline-daemon-" + hostId);
            t.setDaemon(true);
            return t;
        });
        executor.execute(this::round);
        if (progress != null) {
            long ms = progressSample.toMillis();
            exitExecutor.scheduleWithFixedDelay(this::progressPass, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /** One progress sample of every agent ({@link ProgressWatch}), told to onTick when it saw a stall or its end. */
    public void progressPass() {
        RoundLog log = new RoundLog();
        try {
            synchronized (this) {
                progress.pass(slots.values(), log);
                beats.beat(progress.toTell(slots.values()), clock.instant(), log); // a stall or its end, at once
            }
        } catch (RuntimeException e) {
            System.getLogger(HostDaemon.class.getName()).log(System.Logger.Level.WARNING, "progress sample", e);
        }
        if (!log.hooks.isEmpty()) {
            tell(log.report());
        }
    }

    /**
     * The time to the next round: the interval, or less when an agent's crash backoff ends sooner (its restart
     * is not left waiting for a round).
     */
    public Duration nextRoundIn() {
        Duration next = interval();
        Instant now = clock.instant();
        for (AgentSlot s : slots.values()) {
            Instant due = s.restartDue();
            if (due == null) {
                continue;
            }
            Duration d = Duration.between(now, due);
            if (d.isNegative()) {
                d = Duration.ZERO;
            }
            if (d.compareTo(next) < 0) {
                next = d;
            }
        }
        return next;
    }

    /** One background round, then the next one interval later (the interval as advised by now). */
    private void round() {
        try {
            TickReport report = runOnce();
            if (onTick != null) {
                onTick.accept(report);
            }
        } catch (RuntimeException e) {
            System.getLogger(HostDaemon.class.getName()).log(System.Logger.Level.WARNING, "daemon round", e);
        } finally {
            ScheduledExecutorService ex = executor;
            if (ex != null) {
                try {
                    ex.schedule(this::round, nextRoundIn().toMillis(), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException stopped) {
                    // stop() shut the executor down meanwhile
                }
            }
        }
    }

    /** No more rounds and no more exit passes (an exit after this is not reported: the stop is under way). */
    public void stop() {
        exitExecutor.shutdownNow();
        ScheduledExecutorService ex;
        synchronized (this) {
            ex = executor;
            executor = null;
        }
        if (ex != null) {
            ex.shutdownNow();
            try {
                ex.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        stop();
    }

    /** One round: crashes ({@link CrashLoop}), batched beats ({@link BeatRound}), commands ({@link CommandInbox}). */
    public synchronized TickReport runOnce() {
        RoundLog log = new RoundLog();
        Instant now = clock.instant();
        List<AgentSlot> running = new ArrayList<>();
        crashLoop.pass(slots.values(), now, log, running);
        beats.beat(running, now, log);
        inbox.handle(log);
        return log.report();
    }

    /**
     * An agent's process exited, seen at {@code seenAtNanos} ({@link System#nanoTime()}): an exit pass runs at
     * once on its own thread (not waiting for the next round), reporting it dead ({@code POST .../fail}) and going
     * on as a round would (restart, backoff, give-up). {@link CommandProcesses#onExit} is the usual caller.
     */
    public void processExited(String agentId, long seenAtNanos) {
        AgentSlot s = slots.get(agentId);
        if (s != null) {
            s.exitSeen(seenAtNanos);
        }
        try {
            exitExecutor.execute(this::exitPass);
        } catch (RejectedExecutionException closed) {
            // the daemon was closed: no more reports
        }
    }

    /** An exit pass: the processes' side of a round only (no batch, no command poll), told to onTick. */
    private void exitPass() {
        RoundLog log = new RoundLog();
        synchronized (this) {
            Instant now = clock.instant();
            crashLoop.pass(slots.values(), now, log, new ArrayList<>());
            if (log.quiet()) {
                return; // a round got there first
            }
            // A restart waiting out its backoff is made when it is due, not at the next round.
            for (AgentSlot s : slots.values()) {
                Instant due = s.restartDue();
                if (due == null) {
                    continue;
                }
                long ms = Math.max(0, Duration.between(now, due).toMillis());
                try {
                    exitExecutor.schedule(this::exitPass, ms, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException closed) {
                    break;
                }
            }
        }
        tell(log.report());
    }

    private void tell(TickReport r) {
        if (onTick != null) {
            onTick.accept(r);
        }
    }

    /** Since when each of the agent's running subagents runs (its runtime's SubagentStart not yet stopped). */
    public List<Instant> subagents(String agentId) {
        AgentSlot s = slots.get(agentId);
        return s == null ? List.of() : s.subagents();
    }

    /**
     * How often this daemon restarted the agent of its own accord (after an exit) in the hour before {@code now}; a
     * restart the revive flow asked for is the flow's, counted by its change to restarting.
     */
    public synchronized int restartsLastHour(String agentId) {
        AgentSlot s = slots.get(agentId);
        return s == null ? 0 : s.restartsLastHour(clock.instant());
    }

    /** The agents this daemon gave up on (crash loop), with the reason it reported. */
    public Map<String, String> givenUp() {
        Map<String, String> out = new LinkedHashMap<>();
        for (AgentSlot s : slots.values()) {
            String reason = s.givenUp();
            if (reason != null) {
                out.put(s.id(), reason);
            }
        }
        return Map.copyOf(out);
    }

    /**
     * The graceful end of a stop (the status model: leave -> offline): every agent this daemon hosts leaves, in
     * parallel, within {@code within}. Call it after the agents' processes are stopped (a process still running
     * could beat, be told to rejoin, and come back). An agent that crashed just before (dead or restarting) joins
     * and then leaves, which ends its revive flow: no restart is asked of a host that is gone. An agent given up
     * stays dead_failed_revive (it awaits a decision). Answers one line per agent: "left: ID", or "not left: ID: why".
     */
    public List<String> leaveAll(String reason, Duration within) {
        stop();
        List<String> lines = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(8, agents.size()), r -> {
            Thread t = new Thread(r, "lifeline-leave-" + hostId);
            t.setDaemon(true);
            return t;
        });
        try {
            Map<String, Future<String>> leaving = new LinkedHashMap<>();
            for (AgentSlot s : slots.values()) {
                String a = s.id();
                leaving.put(a, s.givenUp() != null ? CompletableFuture.completedFuture(
                        "not left: " + a + ": the daemon gave up on it (dead_failed_revive)")
                        : pool.submit(() -> leaveOne(a, reason)));
            }
            long deadline = System.nanoTime() + within.toNanos();
            for (Map.Entry<String, Future<String>> e : leaving.entrySet()) {
                try {
                    lines.add(e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (TimeoutException t) {
                    lines.add("not left: " + e.getKey() + ": no answer within " + within.toSeconds() + " s");
                } catch (ExecutionException x) {
                    lines.add("not left: " + e.getKey() + ": " + x.getCause().getMessage());
                } catch (InterruptedException i) {
                    Thread.currentThread().interrupt();
                    lines.add("not left: " + e.getKey() + ": interrupted");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return lines;
    }

    private String leaveOne(String agentId, String reason) {
        try {
            client.leave(agentId, reason);
            return "left: " + agentId;
        } catch (LifelineApiException e) {
            if ("offline".equals(e.agentStatus())) {
                return "left: " + agentId + " (already offline)";
            }
            if ("dead".equals(e.agentStatus()) || "restarting".equals(e.agentStatus())) {
                // It crashed just before the stop and waited for its restart: this host will not restart it now,
                // so it ends its revive (join) and leaves, rather than have restarts asked of a host that is gone.
                try {
                    client.join(agentId);
                    client.leave(agentId, reason + " (it had crashed)");
                    return "left: " + agentId + " (it had crashed: joined, then left)";
                } catch (LifelineException again) {
                    return "not left: " + agentId + ": " + again.getMessage();
                }
            }
            return "not left: " + agentId + ": " + e.code() + (e.agentStatus() == null ? "" : " (it is "
                    + e.agentStatus() + ")");
        } catch (LifelineException e) {
            return "not left: " + agentId + ": " + e.getMessage();
        }
    }

    /** Settings of a daemon. */
    public static final class Builder {
        private final LifelineClient client;
        private final String hostId;
        private final AgentProcesses processes;
        private final List<String> agents = new ArrayList<>();
        private Duration interval;
        private Duration restartDedupWindow;
        private RestartPolicy restartPolicy = RestartPolicy.ON_FAILURE;
        private final Map<String, RestartPolicy> restartPolicies = new HashMap<>();
        private int maxCrashes = 5;
        private Duration crashWindow = Duration.ofMinutes(10);
        private Duration restartBackoff = Duration.ofSeconds(2);
        private Duration maxRestartBackoff = Duration.ofMinutes(5);
        private Clock clock = Clock.systemUTC();
        private Consumer<TickReport> onTick;
        private LocalBeats localBeats;
        private boolean waitingFields = true;
        private Duration stallAfter;
        private boolean restartOnStall = true;
        private Duration progressSample = Duration.ofSeconds(3);
        private Function<Collection<Long>, Map<Long, Long>> sampler = StreamSilence::sample;
        private boolean sampled;

        private Builder(LifelineClient client, String hostId, AgentProcesses processes) {
            this.client = client;
            this.hostId = hostId;
            this.processes = processes;
        }

        public Builder agents(Collection<String> ids) {
            agents.addAll(ids);
            return this;
        }

        /**
         * Pins the time between rounds. Without it the daemon follows the server's advice, which keeps every
         * one of its agents alive; a pinned interval longer than half an agent's stale-after lets it die.
         */
        public Builder interval(Duration d) {
            if (d != null && (d.isNegative() || d.isZero())) {
                throw new IllegalArgumentException("interval must be positive");
            }
            this.interval = d;
            return this;
        }

        /** Default: two intervals. */
        public Builder restartDedupWindow(Duration d) {
            this.restartDedupWindow = d;
            return this;
        }

        /** True: {@link RestartPolicy#ON_FAILURE} (the default); false: {@link RestartPolicy#NO}. */
        public Builder restartOnExit(boolean b) {
            return restartPolicy(b ? RestartPolicy.ON_FAILURE : RestartPolicy.NO);
        }

        /** Whether a command is started again after it ends, for every agent without one of its own. */
        public Builder restartPolicy(RestartPolicy p) {
            this.restartPolicy = Objects.requireNonNull(p);
            return this;
        }

        /** The agent's own restart policy. */
        public Builder restartPolicy(String agentId, RestartPolicy p) {
            restartPolicies.put(agentId, Objects.requireNonNull(p));
            return this;
        }

        /**
         * The crash loop's limit: at {@code max} crashes within {@code window} (default 5 in 10 minutes) the daemon
         * gives the agent up ({@code dead_failed_revive}) instead of restarting it again.
         */
        public Builder giveUpAfter(int max, Duration window) {
            if (max < 1 || window == null || window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("give up after at least 1 crash in a positive window");
            }
            this.maxCrashes = max;
            this.crashWindow = window;
            return this;
        }

        /**
         * The wait before the restart after the second crash in the window (default 2 s); it doubles with each
         * further crash, up to {@code max} (default 5 min). The first crash restarts at once.
         */
        public Builder restartBackoff(Duration base, Duration max) {
            if (base == null || base.isNegative() || max == null || max.compareTo(base) < 0) {
                throw new IllegalArgumentException("backoff: 0 <= base <= max");
            }
            this.restartBackoff = base;
            this.maxRestartBackoff = max;
            return this;
        }

        public Builder clock(Clock c) {
            this.clock = c;
            return this;
        }

        /**
         * The local beat channel the agents beat on ({@link LocalBeats}): each batch then says how long ago each
         * agent last beat locally, so a hung agent whose process still runs goes stale on the server.
         */
        public Builder localBeats(LocalBeats b) {
            this.localBeats = b;
            return this;
        }

        /**
         * Whether batch entries carry what the hooks said of waiting ("input", "person", "none" when a wait ends)
         * and inTurn (default on; off for a server that does not take them).
         */
        public Builder waitingFields(boolean b) {
            this.waitingFields = b;
            return this;
        }

        /**
         * Watches its agents' progress (with a {@link LocalBeats} channel: the hooks say when a turn runs): an agent
         * in a turn whose model connections received nothing and whose hooks said nothing for longer than
         * {@code after} is stalled; {@code restart} (the default where a daemon runs the agent): stopped abort-first
         * and restarted on its session; else flagged until progress resumes. Null: not watched.
         */
        public Builder stallAfter(Duration after, boolean restart) {
            if (after != null && (after.isNegative() || after.isZero())) {
                throw new IllegalArgumentException("stallAfter must be positive");
            }
            this.stallAfter = after;
            this.restartOnStall = restart;
            return this;
        }

        /**
         * How often progress is sampled (default 3 s), and how (default: {@code ss} and {@code /proc}): a function
         * from session ids to the least time (ms) since their TCP connections received data.
         */
        public Builder progressSample(Duration every, Function<Collection<Long>, Map<Long, Long>> how) {
            if (every == null || every.isNegative() || every.isZero()) {
                throw new IllegalArgumentException("progress sample interval must be positive");
            }
            this.progressSample = every;
            this.sampler = Objects.requireNonNull(how);
            this.sampled = true;
            return this;
        }

        /** Told of every background round's report. */
        public Builder onTick(Consumer<TickReport> c) {
            this.onTick = c;
            return this;
        }

        public HostDaemon build() {
            if (agents.isEmpty()) {
                throw new IllegalArgumentException("a daemon needs at least one agent");
            }
            return new HostDaemon(this);
        }
    }
}
