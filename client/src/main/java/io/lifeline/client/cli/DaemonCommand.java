package io.lifeline.client.cli;

import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.LocalBeats;
import io.lifeline.client.daemon.TickReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs a command per agent, heartbeats them in batches, restarts and reports them. */
@Command(name = "daemon", mixinStandardHelpOptions = true,
        description = {"Run one command per agent on this host and keep them alive in Lifeline:",
            "heartbeats for all of them in batches of 25 every interval; a command that exits is reported dead at "
                    + "once and started again; a restart request from Lifeline (the revive flow) restarts it.",
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

    @Option(names = "--local-beats", description = "Agents prove they are not hung by local beats: the daemon "
            + "listens on 127.0.0.1 and sets LIFELINE_DAEMON for them ('lifeline beat ID' sends one there); an agent "
            + "whose process runs but that stops beating goes stale like any silent agent")
    boolean localBeats;

    @Override
    int run() {
        Duration every = interval == null ? null : duration(interval);
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
                    .interval(every).restartOnExit(!noRestart).localBeats(channel).onTick(this::report).build();
            out().println("daemon on host " + host + ": " + agents.size() + " agent(s), a round every "
                    + (every == null ? "interval the server advises" : every.toMillis() + " ms"));
            out().flush();
            if (iterations != null) {
                for (int i = 0; i < iterations; i++) {
                    report(daemon.runOnce());
                    if (i + 1 < iterations) {
                        sleep(daemon.interval());
                    }
                }
                return 0;
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Thread hook = new Thread(() -> {
                daemon.stop();
                processes.close();
                stopped.countDown();
            });
            Runtime.getRuntime().addShutdownHook(hook);
            daemon.start();
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            daemon.stop();
            return 0;
        }
    }

    private void report(TickReport r) {
        long ok = r.results().stream().filter(x -> x.success()).count();
        StringBuilder s = new StringBuilder("round: " + ok + "/" + r.results().size() + " heartbeats ok in "
                + r.batchCalls() + " call(s)");
        r.crashesReported().forEach(a -> s.append("\n  crash reported: ").append(a));
        r.restarted().forEach(a -> s.append("\n  restarted: ").append(a));
        r.rejoined().forEach(a -> s.append("\n  joined: ").append(a));
        r.commandsAcked().forEach(c -> s.append("\n  command acknowledged: ").append(c));
        r.problems().forEach(p -> s.append("\n  problem: ").append(p));
        out().println(s);
        out().flush();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
