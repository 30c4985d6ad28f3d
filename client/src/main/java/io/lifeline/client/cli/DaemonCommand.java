package io.lifeline.client.cli;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.bridge.RunningBridge;
import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.TickReport;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

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
    @Mixin
    DaemonOptions options;

    /** How long a stop waits for the leaves. */
    static final Duration LEAVE_WITHIN = Duration.ofSeconds(10);

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
        Map<String, String> env = env();
        DaemonSettings settings = DaemonSettings.read(options, global, spec, env, err());
        if (settings == null) {
            return LifelineCli.USAGE;
        }
        // The daemon never runs an agent it cannot watch: each is registered, on this host, before anything starts.
        Integer refused = checkAgents();
        if (refused != null) {
            return refused;
        }
        DaemonSetup setup;
        try {
            setup = DaemonSetup.open(options, settings, env, global.url(env()), global.team(env()), out(), err());
        } catch (DaemonSetup.Refused e) {
            return e.code;
        }
        try (setup) {
            HostDaemon daemon = setup.daemon(client(), this::report);
            current = daemon;
            setup.startCommands();
            AtomicBoolean ended = new AtomicBoolean();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    stop(daemon, setup.processes);
                }
            };
            out().println("daemon on host " + options.host + ": " + options.agents.size() + " agent(s), a round every "
                    + (settings.every() == null ? "interval the server advises" : settings.every().toMillis() + " ms")
                    + "; restart " + settings.restarts());
            startBridge(settings.bridge(), env);
            out().flush();
            if (options.iterations != null) {
                runRounds(daemon, options.iterations);
            } else {
                runUntilStopped(daemon, end);
            }
            end.run();
            return 0;
        }
    }

    /** With --opencode: the bridge, in the daemon's process. */
    private void startBridge(DaemonSettings.Bridge b, Map<String, String> env) {
        if (b == null) {
            return;
        }
        bridge = RunningBridge.start(BridgeCommand.bridge(global, env, sleeper(), b.url(), b.maps(), b.every(),
                this::bridgeSays), b.every(), "lifeline-daemon-opencode-bridge", this::bridgeSays);
        out().println("opencode bridge: following " + b.url() + "/event (at most one beat per agent per "
                + b.every().toMillis() + " ms)");
    }

    /** --iterations: the agents join, then that many rounds on this thread, each told. */
    private void runRounds(HostDaemon daemon, int rounds) {
        List<String> joined = daemon.joinAll();
        if (!joined.isEmpty()) {
            out().println("joined: " + String.join(", ", joined));
        }
        for (int i = 0; i < rounds; i++) {
            report(daemon.runOnce());
            if (i + 1 < rounds) {
                sleep(daemon.nextRoundIn());
            }
        }
    }

    /** Rounds on the daemon's thread until the process is told to stop (Ctrl-C, SIGTERM): the stop runs then. */
    private static void runUntilStopped(HostDaemon daemon, Runnable end) {
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
        if (options.noLeaveOnStop) {
            out().println("daemon stopped; its agents did not leave (--no-leave-on-stop): they are marked dead when "
                    + "their deadlines pass");
            out().flush();
            return;
        }
        List<String> lines = daemon.leaveAll("daemon on host " + options.host + " stopped", LEAVE_WITHIN);
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
        String host = options.host;
        for (String id : options.agents.keySet()) {
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
