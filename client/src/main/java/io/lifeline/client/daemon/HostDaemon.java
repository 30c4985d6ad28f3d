package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.BatchResult;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.HostCommand;
import io.lifeline.client.manager.HeartbeatManager;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Daemon mode, for a host running many agents. Each round ({@link #runOnce()}, every interval once
 * {@link #start()}ed; the interval is the smallest {@code heartbeatIntervalSeconds} the server advised for any
 * of its agents, on join and on every heartbeat, unless the builder pinned one):
 * <ol>
 * <li>an agent whose process exited is reported at once ({@code POST .../fail}), then, with
 * {@code restartOnExit}, restarted and joined;</li>
 * <li>the running agents' heartbeats go in batches of at most 25 ({@code POST .../heartbeats}), each renewing
 * one host lease (the host id for the first 25 agents of the list, {@code <hostId>.2} for the next, ...), with each
 * agent's time since its last local beat when a {@link LocalBeats} channel is given; an entry the server answers
 * with rejoinRequired is joined again;</li>
 * <li>the host's pending commands ({@code GET .../hosts/{hostId}/commands}) are handled: a restart request is
 * acknowledged first, then the agent is restarted and joined. An acknowledgement refused with
 * {@code COMMAND_SUPERSEDED} means the revive flow that asked has ended (the agent is back, or the flow gave up
 * or was replaced): the agent is left alone. A request for an agent this daemon (re)started within
 * {@code restartDedupWindow} is acknowledged without a second restart: it is the revive flow answering a
 * crash the daemon already handled.</li>
 * </ol>
 */
public final class HostDaemon implements AutoCloseable {
    private final LifelineClient client;
    private final String hostId;
    private final AgentProcesses processes;
    private final List<String> agents;
    /** The builder's interval, or null to follow the server's advice. */
    private final Duration pinned;
    /** The server's latest advice per agent, in seconds. */
    private final Map<String, Long> advised = new ConcurrentHashMap<>();
    private final Duration restartDedupWindow;
    private final boolean restartOnExit;
    private final Clock clock;
    private final Consumer<TickReport> onTick;
    private final Set<String> crashReported = ConcurrentHashMap.newKeySet();
    private final Map<String, Instant> startedAt = new ConcurrentHashMap<>();
    /** The local beat channel, or null: the agents' processes running is then their sign of life. */
    private final LocalBeats localBeats;
    private volatile ScheduledExecutorService executor;

    private HostDaemon(Builder b) {
        this.client = Objects.requireNonNull(b.client);
        this.hostId = Objects.requireNonNull(b.hostId);
        this.processes = Objects.requireNonNull(b.processes);
        this.agents = List.copyOf(new LinkedHashSet<>(b.agents));
        this.pinned = b.interval;
        this.restartDedupWindow = b.restartDedupWindow;
        this.restartOnExit = b.restartOnExit;
        this.clock = b.clock;
        this.onTick = b.onTick;
        this.localBeats = b.localBeats;
        Instant now = clock.instant();
        agents.forEach(a -> startedAt.put(a, now));
    }

    public static Builder builder(LifelineClient client, String hostId, AgentProcesses processes) {
        return new Builder(client, hostId, processes);
    }

    public List<String> agents() {
        return agents;
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
        return advised.values().stream().min(Long::compare).map(Duration::ofSeconds)
                .orElse(HeartbeatManager.DEFAULT_INTERVAL);
    }

    private Duration restartDedupWindow() {
        return restartDedupWindow != null ? restartDedupWindow : interval().multipliedBy(2);
    }

    private void joinAndAdvise(String agentId) {
        AgentView joined = client.join(agentId);
        advise(agentId, joined == null ? null : joined.heartbeatIntervalSeconds());
    }

    private void advise(String agentId, Long seconds) {
        if (seconds != null && seconds >= 1) {
            advised.put(agentId, seconds);
        }
    }

    /** Joins every agent, then runs a round now and every interval on a background thread. */
    public synchronized void start() {
        if (executor != null) {
            throw new IllegalStateException("already started");
        }
        for (String a : agents) {
            try {
                joinAndAdvise(a);
            } catch (LifelineException e) {
                // the round's heartbeat answers rejoinRequired and joins again, or reports the problem
            }
        }
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lifeline-daemon-" + hostId);
            t.setDaemon(true);
            return t;
        });
        executor.execute(this::round);
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
                    ex.schedule(this::round, interval().toMillis(), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException stopped) {
                    // stop() shut the executor down meanwhile
                }
            }
        }
    }

    public void stop() {
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

    /** One round: crashes, batched heartbeats, commands. */
    public synchronized TickReport runOnce() {
        List<String> crashes = new ArrayList<>();
        List<String> restarted = new ArrayList<>();
        List<String> rejoined = new ArrayList<>();
        List<String> acked = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        List<String> running = new ArrayList<>();

        for (String a : agents) {
            if (processes.isRunning(a)) {
                crashReported.remove(a);
                running.add(a);
                continue;
            }
            if (crashReported.add(a)) {
                try {
                    client.fail(a, "process exited on host " + hostId);
                    crashes.add(a);
                } catch (LifelineApiException e) {
                    // already dead or offline: nothing to report
                    problems.add(a + ": crash report refused: " + e.code());
                } catch (LifelineException e) {
                    crashReported.remove(a); // try again next round
                    problems.add(a + ": crash report failed: " + e.getMessage());
                }
            }
            if (restartOnExit && restart(a, "process exited", problems)) {
                restarted.add(a);
                if (join(a, problems)) {
                    rejoined.add(a);
                }
                running.add(a);
            }
        }

        int calls = 0;
        List<HeartbeatResult> results = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> lease : leaseChunks(running).entrySet()) {
            List<BatchEntry> chunk = new ArrayList<>();
            for (String a : lease.getValue()) {
                chunk.add(new BatchEntry(a, Heartbeat.empty()));
            }
            String leaseId = leaseId(lease.getKey());
            try {
                calls++;
                BatchResult answer = leaseId == null ? client.heartbeats(chunk)
                        : client.hostHeartbeats(leaseId, chunk, localBeatAges(lease.getValue()));
                for (HeartbeatResult r : answer.results()) {
                    results.add(r);
                    advise(r.agentId(), r.heartbeatIntervalSeconds());
                    if (r.needsRejoin() && join(r.agentId(), problems)) {
                        rejoined.add(r.agentId());
                    } else if (!r.success()) {
                        problems.add(r.agentId() + ": heartbeat refused: " + r.code());
                    }
                }
            } catch (LifelineException e) {
                problems.add("batch heartbeat failed: " + e.getMessage());
            }
        }

        handleCommands(restarted, rejoined, acked, problems);
        return new TickReport(calls, results, crashes, restarted, rejoined, acked, problems);
    }

    /**
     * The running agents by host lease: each agent's lease is fixed by its place in the daemon's list (25 a lease),
     * so an agent that stops and starts stays on the same lease, and only running agents are sent.
     */
    private Map<Integer, List<String>> leaseChunks(List<String> running) {
        Map<Integer, List<String>> out = new java.util.TreeMap<>();
        for (String a : running) {
            out.computeIfAbsent(agents.indexOf(a) / LifelineClient.MAX_BATCH, k -> new ArrayList<>()).add(a);
        }
        return out;
    }

    /** The lease of chunk {@code k}: the host id, then {@code <hostId>.2}, ...; null if that is no valid id. */
    private String leaseId(int k) {
        String id = k == 0 ? hostId : hostId + "." + (k + 1);
        return id.length() <= 64 ? id : null;
    }

    /**
     * With a local beat channel: how long ago (ms) each agent last beat locally, or since its process was (re)started
     * if it has not beaten since; without one, none (the server takes the batch's time).
     */
    private Map<String, Long> localBeatAges(List<String> ids) {
        if (localBeats == null) {
            return Map.of();
        }
        Instant now = clock.instant();
        Map<String, Long> ages = new java.util.HashMap<>();
        for (String a : ids) {
            Instant started = startedAt.get(a);
            Instant last = localBeats.last(a).filter(t -> started == null || t.isAfter(started)).orElse(started);
            if (last != null) {
                ages.put(a, Math.max(0, Duration.between(last, now).toMillis()));
            }
        }
        return ages;
    }

    private void handleCommands(List<String> restarted, List<String> rejoined, List<String> acked,
            List<String> problems) {
        List<HostCommand> commands;
        try {
            commands = client.hostCommands(hostId).commands();
            if (commands == null) {
                commands = List.of();
            }
        } catch (LifelineException e) {
            problems.add("cannot read the host's commands: " + e.getMessage());
            return;
        }
        Set<String> known = new HashSet<>(agents);
        for (HostCommand c : commands) {
            if (!known.contains(c.agentId())) {
                problems.add("command " + c.commandId() + " is for agent " + c.agentId()
                        + ", which this daemon does not run");
                continue;
            }
            // Acknowledged first: the server accepts it only while the flow that asked still stands, so a
            // restart is never made for an agent that is already back or whose flow has ended.
            try {
                client.ackCommand(hostId, c.commandId());
                acked.add(c.commandId());
            } catch (LifelineApiException e) {
                if (!"ALREADY_ACKNOWLEDGED".equals(e.code()) && !"COMMAND_SUPERSEDED".equals(e.code())) {
                    problems.add("ack of " + c.commandId() + " refused: " + e.code());
                }
                continue;
            } catch (LifelineException e) {
                problems.add("ack of " + c.commandId() + " failed: " + e.getMessage());
                continue; // still pending; the next round tries again
            }
            Instant started = startedAt.get(c.agentId());
            boolean fresh = started != null && processes.isRunning(c.agentId())
                    && Duration.between(started, clock.instant()).compareTo(restartDedupWindow()) < 0;
            if (!fresh) {
                String reason = "restart requested" + (c.reason() == null ? "" : ": " + c.reason());
                if (!restart(c.agentId(), reason, problems)) {
                    continue; // the flow's next attempt asks again
                }
                restarted.add(c.agentId());
            }
            if (join(c.agentId(), problems)) {
                rejoined.add(c.agentId());
            }
        }
    }

    private boolean restart(String agentId, String reason, List<String> problems) {
        try {
            processes.restart(agentId, reason);
            startedAt.put(agentId, clock.instant());
            crashReported.remove(agentId);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problems.add(agentId + ": restart interrupted");
            return false;
        } catch (Exception e) {
            problems.add(agentId + ": restart failed: " + e.getMessage());
            return false;
        }
    }

    private boolean join(String agentId, List<String> problems) {
        try {
            joinAndAdvise(agentId);
            return true;
        } catch (LifelineApiException e) {
            if ("INVALID_TRANSITION".equals(e.code()) && ("ready".equals(e.agentStatus())
                    || "working".equals(e.agentStatus()))) {
                return false; // already alive
            }
            problems.add(agentId + ": join refused: " + e.code());
            return false;
        } catch (LifelineException e) {
            problems.add(agentId + ": join failed: " + e.getMessage());
            return false;
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
        private boolean restartOnExit = true;
        private Clock clock = Clock.systemUTC();
        private Consumer<TickReport> onTick;
        private LocalBeats localBeats;

        private Builder(LifelineClient client, String hostId, AgentProcesses processes) {
            this.client = client;
            this.hostId = hostId;
            this.processes = processes;
        }

        public Builder agents(java.util.Collection<String> ids) {
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

        public Builder restartOnExit(boolean b) {
            this.restartOnExit = b;
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
