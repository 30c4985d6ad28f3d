package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.daemon.AgentRuntime;
import io.lifeline.client.daemon.CommandProcesses;
import io.lifeline.client.daemon.DaemonState;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.LocalBeats;
import io.lifeline.client.daemon.TickReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What {@code lifeline daemon} runs on, built from its {@link DaemonSettings}: the state directory (its lock, the
 * old daemon's leftovers stopped), the local channel on 127.0.0.1 when one is wanted, the commands' processes with
 * each runtime's resume, and the {@link HostDaemon} over them. Closing it stops the processes, then the channel,
 * then lets the state go.
 */
final class DaemonSetup implements AutoCloseable {
    /** A setup that cannot be made: one line said why on stderr; the command ends with {@code code}. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;

        Refused(int code) {
            super(null, null, false, false);
            this.code = code;
        }
    }

    private final DaemonOptions options;
    private final DaemonSettings settings;
    private final PrintWriter out;
    final Path dir;
    final DaemonState state;
    /** The local channel, or null. */
    final LocalBeats channel;
    final CommandProcesses processes;

    private DaemonSetup(DaemonOptions options, DaemonSettings settings, PrintWriter out, Path dir, DaemonState state,
            LocalBeats channel, CommandProcesses processes) {
        this.options = options;
        this.settings = settings;
        this.out = out;
        this.dir = dir;
        this.state = state;
        this.channel = channel;
        this.processes = processes;
    }

    /**
     * Takes the state directory (stopping what a killed daemon left running), opens the local channel when one is
     * wanted, and makes the processes (not started yet).
     */
    static DaemonSetup open(DaemonOptions c, DaemonSettings settings, Map<String, String> env, String url,
            String team, PrintWriter out, PrintWriter err) throws Refused {
        Path dir = c.stateDir != null ? c.stateDir : defaultStateDir(env, c.host);
        DaemonState state;
        try {
            state = DaemonState.open(dir, c.host);
        } catch (DaemonState.Busy e) {
            err.println("lifeline: " + e.getMessage());
            throw new Refused(LifelineCli.REFUSED);
        } catch (IOException e) {
            err.println("lifeline: cannot use the state directory " + dir + ": " + e.getMessage()
                    + " (give another with --state-dir)");
            throw new Refused(LifelineCli.REFUSED);
        }
        for (String line : state.reclaim(Duration.ofSeconds(3))) {
            out.println(line);
        }
        Map<String, String> childEnv = new HashMap<>();
        childEnv.put("LIFELINE_URL", url);
        childEnv.put("LIFELINE_TEAM", team);
        childEnv.put(AgentRuntime.RESUME_ENV, "");
        LocalBeats channel = null;
        if (settings.localChannel(c)) {
            try {
                channel = LocalBeats.start(c.agents.keySet(), Clock.systemUTC(), c.localPort);
            } catch (IOException e) {
                state.close();
                err.println("lifeline: cannot listen on 127.0.0.1:" + c.localPort + " for the local channel: "
                        + e.getMessage() + (c.localPort == 0 ? "" : " (is another daemon using --local-port "
                        + c.localPort + "?)"));
                throw new Refused(LifelineCli.REFUSED);
            }
            channel.beatsFromProcesses(!c.localBeats);
            childEnv.put(LocalBeats.ENV, channel.url());
        }
        CommandProcesses processes;
        try {
            processes = new CommandProcesses(c.agents, childEnv, c.logDir).state(state);
        } catch (RuntimeException e) {
            closeBoth(channel, state);
            throw e;
        }
        return new DaemonSetup(c, settings, out, dir, state, channel, processes);
    }

    /** $XDG_STATE_HOME/lifeline/daemon/HOST, else ~/.local/state/lifeline/daemon/HOST. */
    static Path defaultStateDir(Map<String, String> env, String host) {
        String xdg = env.get("XDG_STATE_HOME");
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(home, ".local", "state");
        return base.resolve("lifeline").resolve("daemon").resolve(host.replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /**
     * The daemon over the processes, told of their exits; each runtime's command resumes its session: the first start
     * the one the previous daemon recorded, a restart the one its hooks last named.
     */
    HostDaemon daemon(LifelineClient client, Consumer<TickReport> onTick) {
        HostDaemon.Builder builder = HostDaemon.builder(client, options.host, processes)
                .agents(options.agents.keySet()).interval(settings.every()).restartPolicy(settings.policy())
                .giveUpAfter(options.maxCrashes, settings.window())
                .restartBackoff(settings.backoff(), DaemonSettings.MAX_BACKOFF).localBeats(channel).onTick(onTick);
        if (!settings.runtimes().isEmpty()) { // only a runtime's hooks say when a turn runs
            builder.stallAfter(settings.stallAfter(), settings.restartOnStall());
        }
        settings.policies().forEach(builder::restartPolicy);
        HostDaemon daemon = builder.build();
        processes.onExit(daemon::processExited);
        settings.runtimes().forEach(this::resume);
        return daemon;
    }

    private void resume(String id, AgentRuntime runtime) {
        String recorded = state.previous(id).map(DaemonState.Entry::session).orElse(null);
        if (AgentRuntime.validSession(recorded)) {
            // The previous daemon's process ran this session: the runtime starts again on it.
            channel.seedSession(id, recorded);
            processes.session(id, recorded);
            processes.firstCommand(id, runtime.resumeCommand(options.agents.get(id), recorded));
            out.println("resuming: " + id + "'s " + runtime.wire() + " session " + recorded
                    + " (recorded by the previous daemon for this host)");
        }
        LocalBeats hooks = channel;
        processes.restartCommand(id, () -> {
            String session = hooks.session(id);
            if (session == null) {
                return null;
            }
            String plain = options.agents.get(id);
            if (!plain.equals(processes.lastCommand(id)) && !hooks.heardSinceStart(id)) {
                // Its last start resumed the session and ended before any hook: the session may be gone.
                hooks.forgetSession(id);
                out.println("resume: " + id + "'s last start on session " + session + " ended before any "
                        + "hook; it starts afresh");
                out.flush();
                return null;
            }
            return runtime.resumeCommand(plain, session);
        });
    }

    /** Starts every command, and says how they run and where the channel and the state are. */
    void startCommands() {
        try {
            processes.startAll();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!processes.supervised()) {
            out.println("note: no setsid/setpriv here: the commands run under a plain sh -c; a daemon killed "
                    + "with kill -9 leaves them to the reaper, and a restarted daemon stops what is left");
        }
        if (channel != null) {
            out.println("local channel: " + channel.url() + " (LIFELINE_DAEMON): POST /v1/beat/ID, POST "
                    + "/hooks/RUNTIME with X-Lifeline-Agent: ID");
        }
        settings.runtimes().forEach((id, rt) -> out.println("runtime: " + id + " runs " + rt.wire() + "; its hooks "
                + "post to " + channel.url() + "/hooks/" + rt.wire() + "; a restart resumes its session ("
                + rt.resumeArgs("ID") + ")"));
        out.println("state: " + dir + " (pids of the commands, the lock)");
    }

    /** The processes stopped, then the channel, then the state let go (its lock released). */
    @Override
    public void close() {
        try {
            processes.close();
        } finally {
            closeBoth(channel, state);
        }
    }

    private static void closeBoth(LocalBeats channel, DaemonState state) {
        try {
            if (channel != null) {
                channel.close();
            }
        } finally {
            state.close();
        }
    }
}
