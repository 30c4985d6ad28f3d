package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.manager.HeartbeatManager;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.BatchResult;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.HostCommand;
import io.lifeline.client.model.Stats;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

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
 * {@link #leaveAll} is the graceful end of a stop: every agent leaves ({@code offline}), within a bound.
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
    /** Whether an agent's command is started again after it ends: the default, and per agent. */
    private final RestartPolicy restartPolicy;
    private final Map<String, RestartPolicy> restartPolicies;
    private final Clock clock;
    private final Consumer<TickReport> onTick;
    private final int maxCrashes;
    private final Duration crashWindow;
    private final Duration restartBackoff;
    private final Duration maxRestartBackoff;
    /** Agents whose current exit has been counted (cleared when the agent runs again). */
    private final Set<String> exitCounted = ConcurrentHashMap.newKeySet();
    /** Crash reports not yet accepted by the server: agent -> reason. */
    private final Map<String, String> failPending = new ConcurrentHashMap<>();
    /** Each agent's crashes within {@code crashWindow}, oldest first. */
    private final Map<String, Deque<Instant>> crashes = new ConcurrentHashMap<>();
    /** Each agent's exits within {@code crashWindow}, crashes and finishes alike (the restart backoff's count). */
    private final Map<String, Deque<Instant>> ends = new ConcurrentHashMap<>();
    /** Leaves not yet accepted by the server, of agents whose command finished (exit status 0): agent -> reason. */
    private final Map<String, String> leavePending = new ConcurrentHashMap<>();
    /** Each agent's restarts within the last hour, oldest first. */
    private final Map<String, Deque<Instant>> restarts = new ConcurrentHashMap<>();
    /** When an agent in crash backoff is to be restarted. */
    private final Map<String, Instant> restartDue = new ConcurrentHashMap<>();
    /** Agents the daemon gave up on, with the give-up's reason; true once the server has it. */
    private final Map<String, String> givenUp = new ConcurrentHashMap<>();
    private final Set<String> giveUpReported = ConcurrentHashMap.newKeySet();
    /** The restarts-in-the-last-hour count the server last took, per agent (sent again only when it changes). */
    private final Map<String, Long> restartsSent = new ConcurrentHashMap<>();
    private final Map<String, Instant> startedAt = new ConcurrentHashMap<>();
    /** The local beat channel, or null: the agents' processes running is then their sign of life. */
    private final LocalBeats localBeats;
    private volatile ScheduledExecutorService executor;
    /** Agents whose runtime session ended (SESSION_ENDED): they left, get no beat, and their exit is no crash. */
    private final Set<String> sessionLeft = ConcurrentHashMap.newKeySet();
    /** The runtime session each agent's hooks last named. */
    private final Map<String, String> sessions = new ConcurrentHashMap<>();
    /** What the hooks said that the server last took, per agent: status, waiting, inTurn. */
    private final Map<String, List<Object>> hookSent = new ConcurrentHashMap<>();
    /** Whether batch entries carry the hooks' waiting and inTurn (the server takes them). */
    private final boolean waitingFields;
    /** When each agent's not yet reported exit was seen ({@link System#nanoTime()}). */
    private final Map<String, Long> exitSeen = new ConcurrentHashMap<>();
    /** Runs exit passes: an exit is reported when it happens, between rounds. */
    private final ScheduledExecutorService exitExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lifeline-daemon-exits");
        t.setDaemon(true);
        return t;
    });

    private HostDaemon(Builder b) {
        this.client = Objects.requireNonNull(b.client);
        this.hostId = Objects.requireNonNull(b.hostId);
        this.processes = Objects.requireNonNull(b.processes);
        this.agents = List.copyOf(new LinkedHashSet<>(b.agents));
        this.pinned = b.interval;
        this.restartDedupWindow = b.restartDedupWindow;
        this.restartPolicy = b.restartPolicy;
        this.restartPolicies = Map.copyOf(b.restartPolicies);
        this.maxCrashes = b.maxCrashes;
        this.crashWindow = b.crashWindow;
        this.restartBackoff = b.restartBackoff;
        this.maxRestartBackoff = b.maxRestartBackoff;
        this.clock = b.clock;
        this.onTick = b.onTick;
        this.localBeats = b.localBeats;
        this.waitingFields = b.waitingFields;
        if (localBeats != null) {
            localBeats.onHook(this::hooked);
        }
        Instant now = clock.instant();
        agents.forEach(a -> startedAt.put(a, now));
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
        return advised.values().stream().min(Long::compare).map(Duration::ofSeconds)
                .orElse(HeartbeatManager.DEFAULT_INTERVAL);
    }

    private Duration restartDedupWindow() {
        return restartDedupWindow != null ? restartDedupWindow : interval().multipliedBy(2);
    }

    private void joinAndAdvise(String agentId) {
        AgentView joined = client.join(agentId);
        hookSent.remove(agentId); // the server's status is ready again: what the hooks say is sent anew
        advise(agentId, joined == null ? null : joined.heartbeatIntervalSeconds());
    }

    private void advise(String agentId, Long seconds) {
        if (seconds != null && seconds >= 1) {
            advised.put(agentId, seconds);
        }
    }

    /**
     * Joins every agent (as {@link #start()} does first); answers the ones that joined. One that did not is
     * joined by a later round (its heartbeat answers rejoinRequired), or the round reports the problem.
     */
    public List<String> joinAll() {
        List<String> joined = new ArrayList<>();
        for (String a : agents) {
            try {
                joinAndAdvise(a);
                joined.add(a);
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
    }

    /**
     * The time to the next round: the interval, or less when an agent's crash backoff ends sooner (its restart
     * is not left waiting for a round).
     */
    public Duration nextRoundIn() {
        Duration next = interval();
        Instant now = clock.instant();
        for (Instant due : restartDue.values()) {
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

    /** A restart due this close to a round's start is made in that round (the round was scheduled for it). */
    private static final Duration DUE_TOLERANCE = Duration.ofMillis(100);

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

    /** One round: crashes, batched heartbeats, commands. */
    public synchronized TickReport runOnce() {
        List<String> crashesReported = new ArrayList<>();
        List<String> restarted = new ArrayList<>();
        List<String> rejoined = new ArrayList<>();
        List<String> acked = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        List<String> running = new ArrayList<>();
        List<String> gaveUp = new ArrayList<>();
        List<String> backingOff = new ArrayList<>();
        List<String> exits = new ArrayList<>();
        Instant now = clock.instant();

        exits(now, crashesReported, restarted, rejoined, problems, running, gaveUp, backingOff, exits);

        int calls = 0;
        List<HeartbeatResult> results = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> lease : leaseChunks(running).entrySet()) {
            List<BatchEntry> chunk = new ArrayList<>();
            Map<String, List<Object>> signatures = new HashMap<>();
            for (String a : lease.getValue()) {
                if (localBeats != null) {
                    signatures.put(a, hookSignature(a)); // what this entry says, before a hook changes it
                }
                chunk.add(entry(a, now, signatures.get(a)));
            }
            String leaseId = leaseId(lease.getKey());
            try {
                calls++;
                BatchResult answer = leaseId == null ? client.heartbeats(chunk)
                        : client.hostHeartbeats(leaseId, chunk, localBeatAges(lease.getValue()));
                Set<String> accepted = new HashSet<>();
                answer.results().stream().filter(HeartbeatResult::success).forEach(r -> accepted.add(r.agentId()));
                for (BatchEntry sent : chunk) {
                    // Only what the server took: a refused entry (not alive) wrote nothing, so it is sent again.
                    if (sent.heartbeat().stats() != null && accepted.contains(sent.agentId())) {
                        restartsSent.put(sent.agentId(), sent.heartbeat().stats().restartsLastHour());
                    }
                    if (accepted.contains(sent.agentId()) && localBeats != null) {
                        hookSent.put(sent.agentId(), signatures.get(sent.agentId()));
                    }
                }
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

        handleCommands(restarted, rejoined, acked, problems, backingOff);
        return new TickReport(calls, results, crashesReported, restarted, rejoined, acked, problems, gaveUp,
                backingOff, exits, List.of());
    }

    /**
     * The processes' side of a round (and the whole of an exit pass): an exited process is counted and reported
     * (or given up), and restarted when its backoff allows; {@code running} gets the agents whose process runs.
     */
    private void exits(Instant now, List<String> crashesReported, List<String> restarted, List<String> rejoined,
            List<String> problems, List<String> running, List<String> gaveUp, List<String> backingOff,
            List<String> exits) {
        for (String a : agents) {
            if (givenUp.containsKey(a)) {
                reportGiveUp(a, gaveUp, problems);
                continue;
            }
            if (sessionLeft.contains(a)) {
                exitSeen.remove(a); // its session ended and it left: no beat, and its exit is the end, not a crash
                continue;
            }
            if (processes.isRunning(a)) {
                exitCounted.remove(a);
                running.add(a);
                continue;
            }
            if (exitCounted.add(a)) {
                onExit(a, now, problems);
            }
            if (givenUp.containsKey(a)) {
                reportGiveUp(a, gaveUp, problems);
                continue;
            }
            reportFinished(a, problems, exits);
            String reason = failPending.get(a);
            if (reason != null) {
                try {
                    // The daemon restarts it itself (when its backoff ends): the report claims that restart, so the
                    // revive flow stands down meanwhile; and it carries the daemon's own restarts of it.
                    Instant due = restartDue.get(a);
                    Duration restartIn = due == null ? null : due.isBefore(now) ? Duration.ZERO
                            : Duration.between(now, due);
                    Long own = ownRestarts(a, now);
                    client.fail(a, reason, restartIn, own);
                    if (own != null) {
                        restartsSent.put(a, own);
                    }
                    crashesReported.add(a);
                    failPending.remove(a);
                    Long seen = exitSeen.remove(a);
                    exits.add(a + ": " + reason + (seen == null ? "" : "; reported dead "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - seen) + " ms after the exit"));
                } catch (LifelineApiException e) {
                    if (e.isTransient()) {
                        // Throttled past the client's own retries: kept, and sent again next round.
                        problems.add(a + ": crash report throttled (" + e.status() + "), sent again next round");
                    } else {
                        failPending.remove(a); // already dead or offline: nothing to report
                        exitSeen.remove(a);
                        problems.add(a + ": crash report refused: " + e.code());
                    }
                } catch (LifelineException e) {
                    problems.add(a + ": crash report failed: " + e.getMessage()); // tried again next round
                }
            }
            Instant due = restartDue.get(a);
            if (due == null) {
                continue;
            }
            if (due.isAfter(now.plus(DUE_TOLERANCE))) {
                Duration left = Duration.between(now, due);
                backingOff.add(a + " restarts in " + (left.toSeconds() > 0 ? left.toSeconds() + " s" : left.toMillis()
                        + " ms") + " (crash "
                        + crashesInWindow(a, now) + " of " + maxCrashes + " in " + span(crashWindow) + ")");
                continue;
            }
            if (restart(a, "process exited", problems, true)) {
                restartDue.remove(a);
                restarted.add(a);
                if (join(a, problems)) {
                    rejoined.add(a);
                }
                running.add(a);
            }
        }
    }

    /**
     * An agent's process exited, seen at {@code seenAtNanos} ({@link System#nanoTime()}): an exit pass runs at
     * once on its own thread (not waiting for the next round), reporting it dead ({@code POST .../fail}) and going
     * on as a round would (restart, backoff, give-up). {@link CommandProcesses#onExit} is the usual caller.
     */
    public void processExited(String agentId, long seenAtNanos) {
        exitSeen.putIfAbsent(agentId, seenAtNanos);
        try {
            exitExecutor.execute(this::exitPass);
        } catch (RejectedExecutionException closed) {
            // the daemon was closed: no more reports
        }
    }

    /** An exit pass: the processes' side of a round only (no batch, no command poll), told to onTick. */
    private void exitPass() {
        TickReport report;
        synchronized (this) {
            List<String> crashesReported = new ArrayList<>();
            List<String> restarted = new ArrayList<>();
            List<String> rejoined = new ArrayList<>();
            List<String> problems = new ArrayList<>();
            List<String> gaveUp = new ArrayList<>();
            List<String> backingOff = new ArrayList<>();
            List<String> exits = new ArrayList<>();
            Instant now = clock.instant();
            exits(now, crashesReported, restarted, rejoined, problems, new ArrayList<>(), gaveUp, backingOff, exits);
            if (crashesReported.isEmpty() && restarted.isEmpty() && gaveUp.isEmpty() && problems.isEmpty()
                    && exits.isEmpty()) {
                return; // a round got there first
            }
            report = new TickReport(0, List.of(), crashesReported, restarted, rejoined, List.of(), problems, gaveUp,
                    backingOff, exits, List.of());
            // A restart waiting out its backoff is made when it is due, not at the next round.
            for (Instant due : restartDue.values()) {
                long ms = Math.max(0, Duration.between(now, due).toMillis());
                try {
                    exitExecutor.schedule(this::exitPass, ms, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException closed) {
                    break;
                }
            }
        }
        if (onTick != null) {
            onTick.accept(report);
        }
    }

    /**
     * An exit seen for the first time: counted; a command that finished (exit status 0) leaves, and is started again
     * only under {@link RestartPolicy#ALWAYS}; a crash is either a crash report and a restart due, or the give-up.
     */
    private void onExit(String agentId, Instant now, List<String> problems) {
        Integer code = processes.exitCode(agentId);
        boolean finished = code != null && code == 0;
        RestartPolicy policy = restartPolicy(agentId);
        String how = processes.exitDescription(agentId);
        String ended = how != null ? how : finished ? "exited with status 0" : "process exited";
        ends.computeIfAbsent(agentId, k -> new ArrayDeque<>()).addLast(now);
        Duration wait = backoff(inWindow(ends, agentId, now));
        if (finished) {
            leavePending.put(agentId, reason("its command finished: " + ended));
            if (policy.restarts(true)) {
                restartDue.put(agentId, now.plus(wait));
            }
            return;
        }
        crashes.computeIfAbsent(agentId, k -> new ArrayDeque<>()).addLast(now);
        int k = crashesInWindow(agentId, now);
        // Short, the essentials first: the server keeps the first 100 bytes of a reason on the agent.
        if (policy != RestartPolicy.NO && k >= maxCrashes) {
            restartDue.remove(agentId);
            failPending.remove(agentId);
            givenUp.put(agentId, reason(k + " crashes in " + span(crashWindow) + "; " + ended));
            return;
        }
        failPending.put(agentId, reason((k > 1 ? "crash " + k + " of " + maxCrashes + " in " + span(crashWindow) + ": "
                : "") + ended));
        if (policy.restarts(false)) {
            restartDue.put(agentId, now.plus(wait));
        }
    }

    /**
     * A command that finished (exit status 0): its agent leaves ({@code offline}), once, which is no death and starts
     * no revive flow. A refusal other than a throttle (it was not alive) drops the leave; the rest are sent again.
     */
    private void reportFinished(String agentId, List<String> problems, List<String> exits) {
        String reason = leavePending.get(agentId);
        if (reason == null) {
            return;
        }
        try {
            client.leave(agentId, reason);
            leavePending.remove(agentId);
            exitSeen.remove(agentId);
            exits.add(agentId + ": " + reason + "; it left (offline)" + (restartDue.containsKey(agentId)
                    ? ", and starts again (--restart always)" : ""));
        } catch (LifelineApiException e) {
            if (e.isTransient()) {
                problems.add(agentId + ": leave throttled (" + e.status() + "), sent again next round");
                return;
            }
            leavePending.remove(agentId);
            exitSeen.remove(agentId);
            problems.add(agentId + ": leave after its command finished refused: " + e.code());
        } catch (LifelineException e) {
            problems.add(agentId + ": leave after its command finished failed: " + e.getMessage());
        }
    }

    /** The daemon's own restarts of the agent in the last hour, to report: null while it never restarted it. */
    private Long ownRestarts(String agentId, Instant now) {
        long n = restartsLastHour(agentId, now);
        return n > 0 || restartsSent.containsKey(agentId) ? n : null;
    }

    /** "10 min", "90 s". */
    static String span(Duration d) {
        return d.toSeconds() % 60 == 0 && d.toMinutes() > 0 ? d.toMinutes() + " min" : d.toSeconds() + " s";
    }

    /** The server takes reasons of at most 160 characters. */
    private static String reason(String text) {
        return text.length() <= 160 ? text : text.substring(0, 157) + "...";
    }

    private void reportGiveUp(String agentId, List<String> gaveUp, List<String> problems) {
        if (giveUpReported.contains(agentId)) {
            return;
        }
        try {
            Long own = ownRestarts(agentId, clock.instant());
            client.giveUp(agentId, givenUp.get(agentId), own);
            if (own != null) {
                restartsSent.put(agentId, own);
            }
            giveUpReported.add(agentId);
            gaveUp.add(agentId);
        } catch (LifelineApiException e) {
            if (e.isTransient()) {
                problems.add(agentId + ": give-up throttled (" + e.status() + "), sent again next round");
                return;
            }
            giveUpReported.add(agentId); // offline or unknown: nothing to end
            problems.add(agentId + ": give-up refused: " + e.code());
        } catch (LifelineException e) {
            problems.add(agentId + ": give-up report failed: " + e.getMessage()); // tried again next round
        }
    }

    /** The wait before restarting after the k-th crash in the window: none, then the backoff, doubling. */
    Duration backoff(int k) {
        if (k <= 1) {
            return Duration.ZERO;
        }
        Duration d = restartBackoff;
        for (int i = 2; i < k && d.compareTo(maxRestartBackoff) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(maxRestartBackoff) > 0 ? maxRestartBackoff : d;
    }

    private int crashesInWindow(String agentId, Instant now) {
        return inWindow(crashes, agentId, now);
    }

    /** How many of the agent's times in {@code times} fall in the crash window before {@code now}. */
    private int inWindow(Map<String, Deque<Instant>> all, String agentId, Instant now) {
        Deque<Instant> times = all.get(agentId);
        if (times == null) {
            return 0;
        }
        while (!times.isEmpty() && !times.peekFirst().isAfter(now.minus(crashWindow))) {
            times.pollFirst();
        }
        return times.size();
    }

    /**
     * How often this daemon restarted the agent of its own accord (after an exit) in the hour before {@code now}; a
     * restart the revive flow asked for is the flow's, counted by its change to restarting.
     */
    public synchronized int restartsLastHour(String agentId) {
        return restartsLastHour(agentId, clock.instant());
    }

    private int restartsLastHour(String agentId, Instant now) {
        Deque<Instant> times = restarts.get(agentId);
        if (times == null) {
            return 0;
        }
        while (!times.isEmpty() && !times.peekFirst().isAfter(now.minus(Duration.ofHours(1)))) {
            times.pollFirst();
        }
        return times.size();
    }

    /**
     * The agent's beat: its restarts in the last hour when that count differs from the one the server last took
     * (the first restart, each later one, each that leaves the hour, down to the 0), else a plain beat. A beat
     * that carries stats writes the agent's item, while a plain one through the host lease does not, so sending
     * an unchanged count every beat would cost a write per agent per beat.
     */
    private Heartbeat beat(String agentId, Instant now) {
        long n = restartsLastHour(agentId, now);
        Long sent = restartsSent.get(agentId);
        if (sent == null ? n == 0 : sent == n) {
            return Heartbeat.empty();
        }
        return Heartbeat.empty().withStats(Stats.restarts(n));
    }

    /**
     * The agent's batch entry: {@link #beat}, plus what its runtime's hooks said (status and source, and with
     * {@code waitingFields} waiting and inTurn) when that changed since the server last took it: a change of status
     * writes the agent's item, an unchanged one would cost nothing but is not sent either.
     */
    private BatchEntry entry(String agentId, Instant now, List<Object> sig) {
        Heartbeat hb = beat(agentId, now);
        if (sig == null || sig.get(0) == null || sig.equals(hookSent.get(agentId))) {
            return new BatchEntry(agentId, hb);
        }
        Heartbeat withStatus = new Heartbeat((String) sig.get(0), (String) sig.get(3), hb.metadata(), hb.stats(),
                hb.checkpoint(), hb.nextHeartbeatWithinSeconds());
        if (!waitingFields) {
            return new BatchEntry(agentId, withStatus);
        }
        // Waiting for input or a person; else in a turn; else waiting for nothing ("none" ends a wait).
        String waiting = (String) sig.get(1);
        if (waiting != null) {
            return new BatchEntry(agentId, withStatus, waiting, null);
        }
        return Boolean.TRUE.equals(sig.get(2)) ? new BatchEntry(agentId, withStatus, null, Boolean.TRUE)
                : new BatchEntry(agentId, withStatus, "none", null);
    }

    /** What the hooks say now, as one value: status, waiting and inTurn (with {@code waitingFields}), source. */
    private List<Object> hookSignature(String agentId) {
        LocalBeats.HookState st = localBeats.hookState(agentId);
        return Arrays.asList(st.status(), waitingFields ? st.waiting() : null,
                waitingFields && st.inTurn(), st.source());
    }

    /**
     * A hook arrived (told by the local channel after its 200): status, waiting and inTurn wait for the next batch;
     * a session's end (the agent leaves), a new session after it (it joins again) and a failure (the errors route,
     * with its category only) are sent from the exit thread at once, unless the hook came from a process that has
     * been replaced since (one the daemon was stopping).
     */
    private void hooked(LocalBeats.Hook h) {
        String a = h.agentId();
        long generation = processes.generation(a);
        if (h.session() != null && !h.session().equals(sessions.put(a, h.session()))) {
            processes.session(a, h.session());
            String line = a + ": its " + h.runtime().wire() + " session is " + h.session();
            try {
                exitExecutor.execute(() -> tell(new TickReport(0, List.of(), List.of(), List.of(), List.of(), List.of(),
                        List.of(), List.of(), List.of(), List.of(), List.of(line))));
            } catch (RejectedExecutionException closed) {
                // stopping
            }
        }
        Runnable action = switch (h.signal()) {
            case SESSION_ENDED -> () -> sessionEnded(a, generation);
            case SESSION_STARTED -> () -> sessionStarted(a, generation);
            case FAILED, TOOL_FAILED -> h.errorCategory() == null ? null
                    : () -> runtimeFailed(a, generation, h);
            default -> null;
        };
        if (action == null) {
            return;
        }
        try {
            exitExecutor.execute(action);
        } catch (RejectedExecutionException closed) {
            // stopping: nothing more is sent
        }
    }

    private synchronized void sessionEnded(String agentId, long generation) {
        if (generation != processes.generation(agentId) || givenUp.containsKey(agentId)) {
            return;
        }
        sessionLeft.add(agentId);
        List<String> problems = new ArrayList<>();
        List<String> left = new ArrayList<>();
        try {
            client.leave(agentId, "its runtime's session ended");
            left.add(agentId);
        } catch (LifelineException e) {
            problems.add(agentId + ": leave after its session ended: " + e.getMessage());
        }
        tell(new TickReport(0, List.of(), List.of(), List.of(), List.of(), List.of(), problems, List.of(), List.of(),
                List.of(), left.stream().map(x -> x + ": its runtime's session ended; it left (offline)").toList()));
    }

    private synchronized void sessionStarted(String agentId, long generation) {
        if (generation != processes.generation(agentId) || !sessionLeft.remove(agentId)) {
            return;
        }
        List<String> problems = new ArrayList<>();
        List<String> joined = new ArrayList<>();
        hookSent.remove(agentId);
        if (join(agentId, problems)) {
            joined.add(agentId);
        }
        tell(new TickReport(0, List.of(), List.of(), List.of(), joined, List.of(), problems, List.of(), List.of(),
                List.of(), joined.stream().map(x -> x + ": a new session of its runtime started; it joined again")
                        .toList()));
    }

    private synchronized void runtimeFailed(String agentId, long generation, LocalBeats.Hook h) {
        if (generation != processes.generation(agentId)) {
            return;
        }
        String category = h.errorCategory() == null ? HookSignals.UNKNOWN : h.errorCategory();
        List<String> problems = new ArrayList<>();
        try {
            client.reportError(agentId, HookSignals.errorMessage(h.runtime(), h.event(), category));
        } catch (LifelineException e) {
            problems.add(agentId + ": error report failed: " + e.getMessage());
        }
        tell(new TickReport(0, List.of(), List.of(), List.of(), List.of(), List.of(), problems, List.of(), List.of(),
                List.of(), problems.isEmpty() ? List.of(agentId + ": its runtime reported a failure (" + category
                        + "); sent to the errors route") : List.of()));
    }

    private void tell(TickReport r) {
        if (onTick != null) {
            onTick.accept(r);
        }
    }

    /** The agents this daemon gave up on (crash loop), with the reason it reported. */
    public Map<String, String> givenUp() {
        return Map.copyOf(givenUp);
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
            for (String a : agents) {
                leaving.put(a, givenUp.containsKey(a) ? CompletableFuture.completedFuture(
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

    /**
     * The running agents by host lease: each agent's lease is fixed by its place in the daemon's list (25 a lease),
     * so an agent that stops and starts stays on the same lease, and only running agents are sent.
     */
    private Map<Integer, List<String>> leaseChunks(List<String> running) {
        Map<Integer, List<String>> out = new TreeMap<>();
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
        Map<String, Long> ages = new HashMap<>();
        for (String a : ids) {
            if (!localBeats.judgedBySigns(a)) {
                continue; // its process running is its sign of life
            }
            LocalBeats.HookState st = localBeats.hookState(a);
            if (st.waiting() != null || st.inTurn()) {
                // Waiting (for input or a person), or in a tool call or turn, while its process lives: alive for as
                // long as it waits or works (no allowance applies to a hosted beat: the daemon's word is the process).
                ages.put(a, 0L);
                continue;
            }
            Instant started = startedAt.get(a);
            Instant last = localBeats.last(a).filter(t -> started == null || t.isAfter(started)).orElse(started);
            if (last != null) {
                ages.put(a, Math.max(0, Duration.between(last, now).toMillis()));
            }
        }
        return ages;
    }

    private void handleCommands(List<String> restarted, List<String> rejoined, List<String> acked,
            List<String> problems, List<String> backingOff) {
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
            if (givenUp.remove(c.agentId()) != null) {
                // The give-up ended every flow before it, so this is a new revive (an operator's): start afresh.
                giveUpReported.remove(c.agentId());
                crashes.remove(c.agentId());
                exitCounted.remove(c.agentId());
            } else if (restartDue.containsKey(c.agentId())) {
                backingOff.add(c.agentId() + " was asked for by the revive flow; it restarts when its crash backoff "
                        + "ends, at " + restartDue.get(c.agentId()));
                continue;
            } else if (restartPolicy(c.agentId()) != RestartPolicy.NO && !processes.isRunning(c.agentId())
                    && !exitCounted.contains(c.agentId())) {
                // It exited again since this round looked: the next round counts the crash and restarts it after its
                // backoff, so a revive flow's request never bypasses the crash loop's accounting.
                backingOff.add(c.agentId() + " exited again; the next round restarts it (crash backoff applies)");
                continue;
            }
            Instant started = startedAt.get(c.agentId());
            boolean fresh = started != null && processes.isRunning(c.agentId())
                    && Duration.between(started, clock.instant()).compareTo(restartDedupWindow()) < 0;
            if (!fresh) {
                String reason = "restart requested" + (c.reason() == null ? "" : ": " + c.reason());
                if (!restart(c.agentId(), reason, problems, false)) {
                    continue; // the flow's next attempt asks again
                }
                restarted.add(c.agentId());
            }
            if (join(c.agentId(), problems)) {
                rejoined.add(c.agentId());
            }
        }
    }

    /** Restarts the agent's command; {@code own}: of the daemon's accord (counted as its restart), not asked for. */
    private boolean restart(String agentId, String reason, List<String> problems, boolean own) {
        try {
            processes.restart(agentId, reason);
            sessionLeft.remove(agentId);
            hookSent.remove(agentId);
            if (localBeats != null) {
                localBeats.reset(agentId);
            }
            Instant now = clock.instant();
            startedAt.put(agentId, now);
            if (own) {
                restarts.computeIfAbsent(agentId, k -> new ArrayDeque<>()).addLast(now);
            }
            exitCounted.remove(agentId);
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
