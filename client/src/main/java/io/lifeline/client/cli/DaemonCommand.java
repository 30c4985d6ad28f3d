package io.lifeline.client.cli;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.bridge.RunningBridge;
import io.lifeline.client.daemon.AgentRuntime;
import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.DaemonState;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.LocalBeats;
import io.lifeline.client.daemon.RestartPolicy;
import io.lifeline.client.daemon.TickReport;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs a command per agent, heartbeats them in batches, restarts and reports them. */
@Command(name = "daemon", mixinStandardHelpOptions = true,
        description = {"Run one command per agent on this host and keep them alive in Lifeline:",
            "heartbeats for all of them in batches of 25 every interval; a command that crashes (a non-zero exit "
                    + "status, a signal) is reported dead at once and started again; a command that exits with status 0 "
                    + "finished: its agent leaves (offline), and --restart always starts it again; a restart request "
                    + "from Lifeline (the revive flow) restarts it.",
            "A command that keeps crashing is restarted after a growing backoff (none, then 2 s, 4 s, ...) and given "
                    + "up after --max-crashes crashes in --crash-window: the agent ends dead_failed_revive with one "
                    + "alert, and the reason carries the exit status and the last stderr line.",
            "Stopping the daemon (Ctrl-C, SIGTERM, or the end of --iterations) stops the commands, then every agent "
                    + "leaves (offline), within 10 s; --no-leave-on-stop leaves them to be marked dead instead.",
            "Each command runs under sh -c with LIFELINE_AGENT_ID, LIFELINE_URL and LIFELINE_TEAM set.",
            "With --opencode (or opencode_url in the config file) the daemon also runs the opencode bridge "
                    + "(lifeline bridge opencode) in the daemon's process, with the same connection settings: it starts "
                    + "with the daemon, reconnects with backoff when opencode's event stream drops, and stops first "
                    + "when the daemon stops.",
            "Each agent is read first: one registered on another host is refused; one not registered is registered "
                    + "on --host when the key is an admin key, else refused. An exit is reported dead within a second "
                    + "(not at the next round). On Linux each command runs in its own session under a parent-death "
                    + "signal, so a daemon killed with kill -9 takes its commands with it; --state-dir keeps their "
                    + "pids so a restarted daemon stops leftovers instead of starting second copies.",
            "With --runtime ID=RUNTIME the command is a coding-agent runtime whose hooks post to the daemon "
                    + "($LIFELINE_DAEMON/hooks/RUNTIME): its status and waiting go with the batch, its session's end "
                    + "makes it leave, and a restart resumes its session. Details: docs/daemon.md."})
final class DaemonCommand extends BaseCommand {
    @Option(names = "--host", required = true, description = "This host's id (the agents' hostId)")
    String host;

    @Option(names = "--agent", required = true, paramLabel = "ID=COMMAND",
            description = "An agent and the command that runs it, e.g. a1='python agent.py'; repeat per agent")
    LinkedHashMap<String, String> agents;

    @Option(names = "--interval", description = "Round interval, e.g. 10s (default: the server's advice, the "
            + "smallest heartbeatIntervalSeconds of the agents, which keeps each of them alive)")
    String interval;

    @Option(names = "--iterations", description = "Stop after this many rounds (default: until stopped)")
    Integer iterations;

    @Option(names = "--no-restart-on-exit", description = "Report an exited command but do not restart it (the same "
            + "as --restart no)")
    boolean noRestart;

    @Option(names = "--restart", paramLabel = "POLICY|ID=POLICY", description = "When a command is started again, in "
            + "systemd's words: on-failure (the default: after a crash, a non-zero exit status or a signal), always "
            + "(after an exit with status 0 too: the agent leaves, then joins again), no; POLICY for every agent, "
            + "ID=POLICY for one; repeatable")
    List<String> restart = new ArrayList<>();

    @Option(names = "--log-dir", description = "Write each agent's output to DIR/<id>.log")
    Path logDir;

    @Option(names = "--local-beats", description = "Agents prove they are not hung by local beats: the daemon "
            + "listens on 127.0.0.1 and sets LIFELINE_DAEMON for them ('lifeline beat ID' sends one there); an agent "
            + "whose process runs but that stops beating goes stale like any silent agent")
    boolean localBeats;

    @Option(names = "--no-leave-on-stop", description = "On stop, do not leave: the agents stay ready or working "
            + "until their deadlines pass and they are marked dead (and revived)")
    boolean noLeaveOnStop;

    @Option(names = "--max-crashes", description = "Give an agent up after this many crashes in --crash-window "
            + "(default ${DEFAULT-VALUE})")
    int maxCrashes = 5;

    @Option(names = "--crash-window", description = "The window of --max-crashes, e.g. 10m (default ${DEFAULT-VALUE})")
    String crashWindow = "10m";

    @Option(names = "--restart-backoff", description = "The wait before restarting after a second crash in the "
            + "window, doubling with each further one up to 5m (default ${DEFAULT-VALUE}; the first restarts at once)")
    String restartBackoff = "2s";

    @Option(names = "--runtime", paramLabel = "ID=RUNTIME", description = "The agent's command runs a coding-agent "
            + "runtime (claude-code, codex, gemini, opencode) whose hooks post to this daemon: the daemon listens on "
            + "127.0.0.1 (LIFELINE_DAEMON, as --local-beats), takes POST /hooks/RUNTIME there, and a restart resumes the "
            + "session the hooks last named; repeat per agent")
    LinkedHashMap<String, String> runtimes = new LinkedHashMap<>();

    @Option(names = "--local-port", paramLabel = "PORT", description = "The local channel's port on 127.0.0.1 "
            + "(default: a free one, printed at start and given to the commands in LIFELINE_DAEMON); a fixed port lets "
            + "a hook name the daemon in a literal URL")
    int localPort;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "Where the daemon keeps its lock and its "
            + "commands' pids, so a daemon restarted after a kill -9 stops what the old one left running "
            + "(default: $XDG_STATE_HOME/lifeline/daemon/HOST, else ~/.local/state/lifeline/daemon/HOST)")
    Path stateDir;

    @Option(names = "--opencode", paramLabel = "URL", description = "Also bridge the opencode server at URL "
            + "(config opencode_url): its sessions' events become heartbeats, error reports and rotations of the "
            + "agents they map to, as 'lifeline bridge opencode' does (default: no bridge)")
    String opencodeUrl;

    @Option(names = "--opencode-map", paramLabel = "SESSION=AGENT", description = "With the bridge: map a session "
            + "to an agent (AGENT or TEAM/AGENT); repeatable; wins over the title teams::<team>::agent::<id>")
    List<String> opencodeMaps = new ArrayList<>();

    @Option(names = "--opencode-interval", description = "With the bridge: at most one beat per agent per interval, "
            + "status changes excepted (default ${DEFAULT-VALUE})")
    String opencodeInterval = "10s";

    /** How long a stop waits for the leaves. */
    static final Duration LEAVE_WITHIN = Duration.ofSeconds(10);
    static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

    /** The daemon runs for hours and rides out a restart of Lifeline: its reads keep their retries. */
    @Override
    boolean readsFailFast() {
        return false;
    }

    /**
     * A round's calls retry 2 s, 4 s, 8 s whatever failed, 502 and 504 included, and what still fails is kept and
     * sent again next round ({@link HostDaemon}): one call held for the ten minutes a SnapStart version may take
     * would hold the host's beats, and its lease would run out.
     */
    @Override
    RetryPolicy retryPolicy() {
        return RetryPolicy.perRound();
    }

    @Override
    int run() {
        Duration every;
        Duration window;
        Duration backoff;
        try {
            every = interval == null ? null : duration(interval);
            window = duration(crashWindow);
            backoff = duration(restartBackoff);
        } catch (NumberFormatException e) {
            err().println("lifeline: --interval, --crash-window and --restart-backoff take a duration such as 2s or 10m");
            return LifelineCli.USAGE;
        }
        if (localPort < 0 || localPort > 65535) {
            err().println("lifeline: --local-port is a port number, 1 to 65535 (0: a free one)");
            return LifelineCli.USAGE;
        }
        if (maxCrashes < 1 || window.isZero() || window.isNegative() || backoff.isNegative()
                || backoff.compareTo(MAX_BACKOFF) > 0) {
            err().println("lifeline: --max-crashes must be at least 1, --crash-window positive, --restart-backoff "
                    + "between 0 and 5m");
            return LifelineCli.USAGE;
        }
        Map<String, String> env = env();
        String opencode = GlobalOptions.first(opencodeUrl, global.file(env).get("opencode_url"));
        URI opencodeUri = null;
        Map<String, AgentRef> opencodeGiven = Map.of();
        Duration opencodeEvery = null;
        if (opencode != null) { // a bad bridge setting is refused before any command starts
            opencodeUri = BridgeCommand.opencodeUrl(opencode);
            opencodeGiven = BridgeCommand.maps(opencodeMaps, global.team(env), "--opencode-map", spec);
            opencodeEvery = BridgeCommand.interval(opencodeInterval, "--opencode-interval", spec);
        } else if (!opencodeMaps.isEmpty()) {
            err().println("lifeline: --opencode-map needs the bridge: give --opencode URL (or opencode_url in the "
                    + "config file)");
            return LifelineCli.USAGE;
        }
        Map<String, AgentRuntime> runtimeOf = new LinkedHashMap<>();
        for (Map.Entry<String, String> r : runtimes.entrySet()) {
            if (!agents.containsKey(r.getKey())) {
                err().println("lifeline: --runtime " + r.getKey() + "=" + r.getValue() + " names no --agent: give "
                        + "--agent " + r.getKey() + "=COMMAND too");
                return LifelineCli.USAGE;
            }
            AgentRuntime rt = AgentRuntime.fromWire(r.getValue()).orElse(null);
            if (rt == null) {
                err().println("lifeline: --runtime " + r.getKey() + "=" + r.getValue() + ": the runtime is one of "
                        + "claude-code, codex, gemini, opencode");
                return LifelineCli.USAGE;
            }
            runtimeOf.put(r.getKey(), rt);
        }
        RestartPolicy policy = noRestart ? RestartPolicy.NO : RestartPolicy.ON_FAILURE;
        Map<String, RestartPolicy> policyOf = new LinkedHashMap<>();
        for (String r : restart) {
            int eq = r.indexOf('=');
            String id = eq < 0 ? null : r.substring(0, eq);
            RestartPolicy p = RestartPolicy.fromWire(eq < 0 ? r : r.substring(eq + 1)).orElse(null);
            if (p == null || id != null && !agents.containsKey(id)) {
                err().println("lifeline: --restart " + r + ": give on-failure, always or no, for every agent or as "
                        + "ID=POLICY for an --agent");
                return LifelineCli.USAGE;
            }
            if (id == null) {
                policy = p;
            } else {
                policyOf.put(id, p);
            }
        }
        // The daemon never runs an agent it cannot watch: each is registered, on this host, before anything starts.
        Integer refused = checkAgents();
        if (refused != null) {
            return refused;
        }
        Path dir = stateDir != null ? stateDir : defaultStateDir(env, host);
        DaemonState state;
        try {
            state = DaemonState.open(dir, host);
        } catch (DaemonState.Busy e) {
            err().println("lifeline: " + e.getMessage());
            return LifelineCli.REFUSED;
        } catch (IOException e) {
            err().println("lifeline: cannot use the state directory " + dir + ": " + e.getMessage()
                    + " (give another with --state-dir)");
            return LifelineCli.REFUSED;
        }
        for (String line : state.reclaim(Duration.ofSeconds(3))) {
            out().println(line);
        }
        Map<String, String> childEnv = new HashMap<>();
        childEnv.put("LIFELINE_URL", global.url(env()));
        childEnv.put("LIFELINE_TEAM", global.team(env()));
        childEnv.put(AgentRuntime.RESUME_ENV, "");
        LocalBeats channel = null;
        if (localBeats || !runtimeOf.isEmpty() || localPort != 0) {
            try {
                channel = LocalBeats.start(agents.keySet(), Clock.systemUTC(), localPort);
            } catch (IOException e) {
                state.close();
                err().println("lifeline: cannot listen on 127.0.0.1:" + localPort + " for the local channel: "
                        + e.getMessage() + (localPort == 0 ? "" : " (is another daemon using --local-port "
                        + localPort + "?)"));
                return LifelineCli.REFUSED;
            }
            channel.beatsFromProcesses(!localBeats);
            childEnv.put(LocalBeats.ENV, channel.url());
        }
        try (DaemonState ignoredState = state; LocalBeats ignored = channel;
             CommandProcesses processes = new CommandProcesses(agents, childEnv, logDir).state(state)) {
            HostDaemon.Builder builder = HostDaemon.builder(client(), host, processes).agents(agents.keySet())
                    .interval(every).restartPolicy(policy).giveUpAfter(maxCrashes, window)
                    .restartBackoff(backoff, MAX_BACKOFF).localBeats(channel).onTick(this::report);
            policyOf.forEach(builder::restartPolicy);
            HostDaemon daemon = builder.build();
            current = daemon;
            processes.onExit(daemon::processExited);
            LocalBeats hooks = channel;
            for (Map.Entry<String, AgentRuntime> r : runtimeOf.entrySet()) {
                String id = r.getKey();
                String recorded = state.previous(id).map(DaemonState.Entry::session).orElse(null);
                if (AgentRuntime.validSession(recorded)) {
                    // The previous daemon's process ran this session: the runtime starts again on it.
                    channel.seedSession(id, recorded);
                    processes.session(id, recorded);
                    processes.firstCommand(id, r.getValue().resumeCommand(agents.get(id), recorded));
                    out().println("resuming: " + id + "'s " + r.getValue().wire() + " session " + recorded
                            + " (recorded by the previous daemon for this host)");
                }
                processes.restartCommand(id, () -> {
                    String session = hooks.session(id);
                    if (session == null) {
                        return null;
                    }
                    String plain = agents.get(id);
                    if (!plain.equals(processes.lastCommand(id)) && !hooks.heardSinceStart(id)) {
                        // Its last start resumed the session and ended before any hook: the session may be gone.
                        hooks.forgetSession(id);
                        out().println("resume: " + id + "'s last start on session " + session + " ended before any "
                                + "hook; it starts afresh");
                        out().flush();
                        return null;
                    }
                    return r.getValue().resumeCommand(plain, session);
                });
            }
            try {
                processes.startAll();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (!processes.supervised()) {
                out().println("note: no setsid/setpriv here: the commands run under a plain sh -c; a daemon killed "
                        + "with kill -9 leaves them to the reaper, and a restarted daemon stops what is left");
            }
            if (channel != null) {
                out().println("local channel: " + channel.url() + " (LIFELINE_DAEMON): POST /v1/beat/ID, POST "
                        + "/hooks/RUNTIME with X-Lifeline-Agent: ID");
            }
            runtimeOf.forEach((id, rt) -> out().println("runtime: " + id + " runs " + rt.wire() + "; its hooks post to "
                    + hooks.url() + "/hooks/" + rt.wire() + "; a restart resumes its session (" + rt.resumeArgs("ID")
                    + ")"));
            out().println("state: " + dir + " (pids of the commands, the lock)");
            AtomicBoolean ended = new AtomicBoolean();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    stop(daemon, processes);
                }
            };
            StringBuilder restarts = new StringBuilder(policy.wire());
            policyOf.forEach((id, p) -> restarts.append(", ").append(id).append(": ").append(p.wire()));
            out().println("daemon on host " + host + ": " + agents.size() + " agent(s), a round every "
                    + (every == null ? "interval the server advises" : every.toMillis() + " ms") + "; restart "
                    + restarts);
            if (opencodeUri != null) {
                bridge = RunningBridge.start(BridgeCommand.bridge(global, env, sleeper(), opencodeUri, opencodeGiven,
                        opencodeEvery, this::bridgeSays), opencodeEvery, "lifeline-daemon-opencode-bridge",
                        this::bridgeSays);
                out().println("opencode bridge: following " + opencodeUri + "/event (at most one beat per agent per "
                        + opencodeEvery.toMillis() + " ms)");
            }
            out().flush();
            if (iterations != null) {
                List<String> joined = daemon.joinAll();
                if (!joined.isEmpty()) {
                    out().println("joined: " + String.join(", ", joined));
                }
                for (int i = 0; i < iterations; i++) {
                    report(daemon.runOnce());
                    if (i + 1 < iterations) {
                        sleep(daemon.nextRoundIn());
                    }
                }
                end.run();
                return 0;
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Thread hook = new Thread(() -> {
                end.run();
                stopped.countDown();
            });
            Runtime.getRuntime().addShutdownHook(hook);
            daemon.start();
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            end.run();
            return 0;
        }
    }

    /** The opencode bridge this daemon runs, or null. */
    private RunningBridge bridge;

    private void bridgeSays(String line) {
        err().println("lifeline daemon: opencode bridge: " + line);
        err().flush();
    }

    /**
     * The stop: the opencode bridge first (nothing more from it once the stop has begun; its sessions' agents are
     * not this daemon's and do not leave), then no more rounds, the commands stopped, then (unless
     * --no-leave-on-stop) every agent leaves.
     */
    private void stop(HostDaemon daemon, CommandProcesses processes) {
        if (bridge != null) {
            boolean ended = bridge.close(RunningBridge.STOP_WITHIN);
            var s = bridge.bridge().stats();
            out().println("opencode bridge stopped" + (ended ? "" : " (its reader did not end within "
                    + RunningBridge.STOP_WITHIN.toSeconds() + " s)") + ": " + s.beats() + " beat(s), "
                    + s.errorsReported() + " error report(s), " + s.rotations() + " rotation(s), " + s.connections()
                    + " connection(s)");
            out().flush();
        }
        daemon.stop();
        processes.close();
        if (noLeaveOnStop) {
            out().println("daemon stopped; its agents did not leave (--no-leave-on-stop): they are marked dead when "
                    + "their deadlines pass");
            out().flush();
            return;
        }
        List<String> lines = daemon.leaveAll("daemon on host " + host + " stopped", LEAVE_WITHIN);
        long left = lines.stream().filter(l -> l.startsWith("left: ")).count();
        StringBuilder s = new StringBuilder("daemon stopped: " + left + " of " + lines.size() + " agent(s) left "
                + "(offline)");
        lines.forEach(l -> s.append("\n  ").append(l));
        out().println(s);
        out().flush();
    }

    private void report(TickReport r) {
        long ok = r.results().stream().filter(x -> x.success()).count();
        boolean between = r.batchCalls() == 0 && r.results().isEmpty() && (!r.exits().isEmpty()
                || !r.hooks().isEmpty() || !r.crashesReported().isEmpty() || !r.gaveUp().isEmpty());
        // Between rounds the heading says what was reported at once (an exit, a hook's signal, a crash); each
        // item follows on its own line, so no heading stands alone.
        String at = !r.exits().isEmpty() ? "exit" : !r.hooks().isEmpty() ? "hook" : "crash";
        StringBuilder s = new StringBuilder(between ? at + ": reported at once"
                : "round: " + ok + "/" + r.results().size() + " heartbeats ok in " + r.batchCalls() + " call(s)");
        r.exits().forEach(a -> s.append("\n  exited: ").append(a));
        r.hooks().forEach(a -> s.append("\n  hook: ").append(a));
        r.crashesReported().forEach(a -> s.append("\n  crash reported: ").append(a));
        r.restarted().forEach(a -> s.append("\n  restarted: ").append(a));
        r.rejoined().forEach(a -> s.append("\n  joined: ").append(a));
        r.commandsAcked().forEach(c -> s.append("\n  command acknowledged: ").append(c));
        r.backingOff().forEach(b -> s.append("\n  crash backoff: ").append(b));
        r.gaveUp().forEach(a -> s.append("\n  gave up: ").append(a).append(" (dead_failed_revive): ")
                .append(gaveUpReason(a)));
        r.problems().forEach(p -> s.append("\n  problem: ").append(p));
        out().println(s);
        out().flush();
    }

    private HostDaemon current;

    /**
     * Reads each agent (GET): one unknown to Lifeline is registered on this host when the daemon's key may (an admin
     * key), else refused; one registered on another host is refused (that host's daemon is the one the revive flow
     * asks). Answers null when every agent may run here, else the exit code after one line on stderr.
     */
    private Integer checkAgents() {
        for (String id : agents.keySet()) {
            AgentView agent;
            try {
                agent = client().agent(id);
            } catch (LifelineApiException e) {
                if (e.status() != 404) {
                    throw e;
                }
                try {
                    client().register(RegisterAgent.of(id, id, "worker").withHost(host));
                } catch (LifelineApiException r) {
                    if (r.status() == 403 || r.status() == 401) {
                        err().println("lifeline: agent " + id + " is not registered in team " + global.team(env())
                                + ", and this key may not register it: register it first (lifeline register " + id
                                + " --host " + host + ", with an admin key), or run the daemon with an admin key");
                        return LifelineCli.REFUSED;
                    }
                    if (!"AGENT_EXISTS".equals(r.code())) {
                        throw r;
                    }
                    continue; // registered meanwhile by someone else: read again on the next start
                }
                out().println("registered: " + id + " on host " + host + " (it was not registered; the daemon's key "
                        + "is an admin key)");
                continue;
            }
            if (agent.hostId() == null) {
                out().println("note: agent " + id + " is registered with no host: this daemon reports and restarts it, "
                        + "but the revive flow cannot ask a host to restart it (register it with --host " + host + ")");
            } else if (!host.equals(agent.hostId())) {
                err().println("lifeline: agent " + id + " is registered on host " + agent.hostId() + ", not " + host
                        + ": the revive flow asks " + agent.hostId() + " to restart it; run this daemon with --host "
                        + agent.hostId() + ", or register the agent on " + host);
                return LifelineCli.REFUSED;
            }
        }
        return null;
    }

    /** $XDG_STATE_HOME/lifeline/daemon/HOST, else ~/.local/state/lifeline/daemon/HOST. */
    static Path defaultStateDir(Map<String, String> env, String host) {
        String xdg = env.get("XDG_STATE_HOME");
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(home, ".local", "state");
        return base.resolve("lifeline").resolve("daemon").resolve(host.replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    private String gaveUpReason(String agentId) {
        return current == null ? "" : current.givenUp().getOrDefault(agentId, "");
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
