package io.lifeline.client.cli;

import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.TickReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
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
        Map<String, String> childEnv = new HashMap<>();
        childEnv.put("LIFELINE_URL", global.url(env()));
        childEnv.put("LIFELINE_TEAM", global.team(env()));
        try (CommandProcesses processes = new CommandProcesses(agents, childEnv, logDir)) {
            try {
                processes.startAll();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            HostDaemon daemon = HostDaemon.builder(client(), host, processes).agents(agents.keySet())
                    .interval(every).restartOnExit(!noRestart).giveUpAfter(maxCrashes, window)
                    .restartBackoff(backoff, MAX_BACKOFF).onTick(this::report).build();
            current = daemon;
            AtomicBoolean ended = new AtomicBoolean();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    stop(daemon, processes);
                }
            };
            out().println("daemon on host " + host + ": " + agents.size() + " agent(s), a round every "
                    + (every == null ? "interval the server advises" : every.toMillis() + " ms"));
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

    /** The stop: no more rounds, the commands stopped, then (unless --no-leave-on-stop) every agent leaves. */
    private void stop(HostDaemon daemon, CommandProcesses processes) {
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
