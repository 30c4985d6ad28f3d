package io.lifeline.client.cli;

import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.bridge.RunningBridge;
import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.LocalBeats;
import io.lifeline.client.daemon.TickReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs a command per agent, heartbeats them in batches, restarts and reports them. */
@Command(name = "daemon", mixinStandardHelpOptions = true,
        description = {"Run one command per agent on this host and keep them alive in Lifeline:",
            "heartbeats for all of them in batches of 25 every interval; a command that exits is reported dead at "
                    + "once and started again; a restart request from Lifeline (the revive flow) restarts it.",
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
            "Register the agents first with --host set to this daemon's --host."})
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

    @Option(names = "--no-restart-on-exit", description = "Report an exited command but do not restart it")
    boolean noRestart;

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
        Map<String, String> childEnv = new HashMap<>();
        childEnv.put("LIFELINE_URL", global.url(env()));
        childEnv.put("LIFELINE_TEAM", global.team(env()));
        LocalBeats channel = null;
        if (localBeats) {
            try {
                channel = LocalBeats.start(agents.keySet(), java.time.Clock.systemUTC());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            childEnv.put(LocalBeats.ENV, channel.url());
        }
        try (LocalBeats ignored = channel;
             CommandProcesses processes = new CommandProcesses(agents, childEnv, logDir)) {
            try {
                processes.startAll();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            HostDaemon daemon = HostDaemon.builder(client(), host, processes).agents(agents.keySet())
                    .interval(every).restartOnExit(!noRestart).giveUpAfter(maxCrashes, window)
                    .restartBackoff(backoff, MAX_BACKOFF).localBeats(channel).onTick(this::report).build();
            current = daemon;
            AtomicBoolean ended = new AtomicBoolean();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    stop(daemon, processes);
                }
            };
            out().println("daemon on host " + host + ": " + agents.size() + " agent(s), a round every "
                    + (every == null ? "interval the server advises" : every.toMillis() + " ms"));
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
        StringBuilder s = new StringBuilder("round: " + ok + "/" + r.results().size() + " heartbeats ok in "
                + r.batchCalls() + " call(s)");
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
