package io.lifeline.client.daemon;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Runs one shell command per agent ({@code sh -c}, or {@code cmd /c} on Windows) with {@code LIFELINE_AGENT_ID}
 * and the given environment set; output goes to {@code logDir/<agentId>.log} when a log directory is given,
 * else to this process's own output. Standard error passes through a reader that keeps its last non-blank
 * line, so a crash can be reported with its exit status and that line ({@link #exitDescription}).
 *
 * <p><b>Supervised</b> (Linux with {@code setsid} and {@code setpriv}, {@link #supervised()}): each command runs in
 * a session (and process group) of its own, under a parent-death signal: {@code setsid -- setpriv --pdeathsig KILL
 * -- sh -c COMMAND}. Every command is started from one long-lived launcher thread, because the parent-death signal
 * fires when the thread that started the process ends, not the JVM. Stopping a command stops its whole group (TERM,
 * then KILL after 5 s), and when a command exits whatever it left in its group is killed, so a restart never finds a
 * copy still running. A small reaper ({@code sh}, in a session of its own) reads a pipe from this JVM; when the JVM
 * dies in any way (kill -9 included) the pipe closes and the reaper stops every group listed in the state
 * directory's {@code groups} file. With a {@link DaemonState}, each start and end is recorded so the next daemon
 * for the host can reclaim what a killed one left.
 *
 * <p>Each process's exit is noticed when it happens ({@link Process#onExit()}) and told to the exit listener
 * ({@link #onExit}) with the {@link System#nanoTime()} it was seen, so the daemon reports it at once.
 */
public final class CommandProcesses implements AgentProcesses, AutoCloseable {
    /** The most of the last stderr line kept (the crash report's reason is short). */
    static final int MAX_LINE = 120;
    /** How long a stop waits after TERM before it kills. */
    static final long STOP_GRACE_SECONDS = 5;

    private static final boolean WINDOWS = System.getProperty("os.name", "").toLowerCase().startsWith("windows");

    private final Map<String, String> commands;
    private final Map<String, String> env;
    private final Path logDir;
    private final Map<String, Run> running = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> generations = new ConcurrentHashMap<>();
    private final boolean supervised;
    private volatile BiConsumer<String, Long> exitListener;
    private volatile DaemonState state;
    /** Per agent, the command to run instead of its own on a restart (a runtime resuming its session), or null. */
    private final Map<String, Supplier<String>> restartCommands = new ConcurrentHashMap<>();
    private final Map<String, String> firstCommands = new ConcurrentHashMap<>();
    private final Map<String, String> sessions = new ConcurrentHashMap<>();
    private final Map<String, String> lastCommands = new ConcurrentHashMap<>();
    private final Launcher launcher = new Launcher();
    private Process reaper;

    /** One start of an agent's command: the process and the thread copying its stderr. */
    private static final class Run {
        final Process process;
        final Thread stderrCopier;
        final String command;
        volatile String lastStderrLine;

        Run(Process process, Thread stderrCopier, String command) {
            this.process = process;
            this.stderrCopier = stderrCopier;
            this.command = command;
        }
    }

    public CommandProcesses(Map<String, String> commands, Map<String, String> env, Path logDir) {
        this.commands = new LinkedHashMap<>(commands);
        this.env = Map.copyOf(env);
        this.logDir = logDir;
        this.supervised = !WINDOWS && onPath("setsid") && onPath("setpriv");
        commands.keySet().forEach(a -> generations.put(a, new AtomicLong()));
    }

    /**
     * Whether the commands run supervised: each in a session of its own under a parent-death signal, its whole
     * group stopped with it (Linux with {@code setsid} and {@code setpriv}). Otherwise they run under a plain
     * {@code sh -c}, and only the command itself and its descendants are stopped.
     */
    public boolean supervised() {
        return supervised;
    }

    /** Told of each exit of an agent's process that this object did not cause: (agentId, System.nanoTime()). */
    public CommandProcesses onExit(BiConsumer<String, Long> listener) {
        this.exitListener = listener;
        return this;
    }

    /**
     * Records each start and end in {@code s} and starts the reaper that stops the commands' groups if this
     * JVM dies. Call before {@link #startAll()}.
     */
    public CommandProcesses state(DaemonState s) {
        this.state = s;
        return this;
    }

    /** On a restart, runs what {@code command} supplies (null: the agent's own command) instead. */
    public CommandProcesses restartCommand(String agentId, Supplier<String> command) {
        restartCommands.put(agentId, command);
        return this;
    }

    /** The first start runs {@code command} instead of the agent's own (a runtime resuming a recorded session). */
    public CommandProcesses firstCommand(String agentId, String command) {
        firstCommands.put(agentId, command);
        return this;
    }

    /** Starts every agent's command. */
    public void startAll() throws IOException {
        if (state != null && reaper == null) {
            reaper = launcher.call(this::startReaper);
        }
        for (String agentId : commands.keySet()) {
            start(agentId, firstCommands.getOrDefault(agentId, commands.get(agentId)));
        }
    }

    @Override
    public void session(String agentId, String session) {
        if (session == null || session.equals(sessions.put(agentId, session))) {
            return;
        }
        DaemonState s = state;
        if (s != null) {
            s.session(agentId, session);
        }
    }

    @Override
    public boolean isRunning(String agentId) {
        Run r = running.get(agentId);
        return r != null && r.process.isAlive();
    }

    @Override
    public long generation(String agentId) {
        AtomicLong g = generations.get(agentId);
        return g == null ? 0 : g.get();
    }

    /** The pid of the agent's current process (the leader of its group when supervised), or -1. */
    public long pid(String agentId) {
        Run r = running.get(agentId);
        return r == null ? -1 : r.process.pid();
    }

    /** The command line the agent's current (or, once stopped, last) process was started with, or null. */
    public String lastCommand(String agentId) {
        return lastCommands.get(agentId);
    }

    /** The exit code of the agent's last process, or null while it runs or before it started. */
    @Override
    public Integer exitCode(String agentId) {
        Run r = running.get(agentId);
        return r == null || r.process.isAlive() ? null : r.process.exitValue();
    }

    /**
     * "exited with status 3: boom", boom being the last stderr line, or "killed by signal 9 (KILL)" (once the
     * copier has read to the end, at most 200 ms: the crash report is not held up by a pipe left open).
     */
    @Override
    public String exitDescription(String agentId) {
        Run r = running.get(agentId);
        if (r == null || r.process.isAlive()) {
            return null;
        }
        try {
            r.stderrCopier.join(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String line = r.lastStderrLine;
        return describe(r.process.exitValue()) + (line == null ? "" : ": " + line);
    }

    /** "exited with status 3", or for a shell's 128+N, "killed by signal N (NAME)". */
    static String describe(int status) {
        if (status > 128 && status < 160) {
            int sig = status - 128;
            String name = switch (sig) {
                case 1 -> " (HUP)";
                case 2 -> " (INT)";
                case 6 -> " (ABRT)";
                case 9 -> " (KILL)";
                case 11 -> " (SEGV)";
                case 15 -> " (TERM)";
                default -> "";
            };
            return "killed by signal " + sig + name;
        }
        return "exited with status " + status;
    }

    @Override
    public void restart(String agentId, String reason) throws IOException, InterruptedException {
        stop(agentId);
        generations.computeIfAbsent(agentId, k -> new AtomicLong()).incrementAndGet();
        Supplier<String> instead = restartCommands.get(agentId);
        String command = instead == null ? null : instead.get();
        start(agentId, command != null ? command : commands.get(agentId));
    }

    @Override
    public long sessionId(String agentId) {
        Run r = running.get(agentId);
        return r == null || !supervised ? -1 : r.process.pid(); // setsid: the leader's pid is the session's id
    }

    /** TERM to the group now, KILL after {@link #STOP_GRACE_SECONDS} if it still runs; the exit is reported as any. */
    @Override
    public void abort(String agentId) {
        Run r = running.get(agentId);
        if (r == null) {
            return;
        }
        Process p = r.process;
        if (supervised) {
            signalGroup(p.pid(), "TERM");
        } else {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
        }
        CompletableFuture.delayedExecutor(STOP_GRACE_SECONDS, TimeUnit.SECONDS).execute(() -> {
            if (running.get(agentId) == r && p.isAlive()) {
                if (supervised) {
                    signalGroup(p.pid(), "KILL");
                } else {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                }
            }
        });
    }

    private void start(String agentId, String command) throws IOException {
        if (command == null) {
            throw new IllegalArgumentException("No command for agent " + agentId);
        }
        List<String> argv = new ArrayList<>();
        if (WINDOWS) {
            argv.addAll(List.of("cmd", "/c", command));
        } else {
            if (supervised) {
                argv.addAll(List.of("setsid", "--", "setpriv", "--pdeathsig", "KILL", "--"));
            }
            argv.addAll(List.of("sh", "-c", command));
        }
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().putAll(env);
        pb.environment().put("LIFELINE_AGENT_ID", agentId);
        pb.redirectError(ProcessBuilder.Redirect.PIPE);
        Path log = null;
        if (logDir != null) {
            Files.createDirectories(logDir);
            log = logDir.resolve(agentId + ".log");
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        } else {
            pb.redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectInput(ProcessBuilder.Redirect.INHERIT);
        }
        Process p = launcher.call(pb::start);
        Path logFile = log;
        Run[] self = new Run[1];
        Thread copier = new Thread(() -> copyStderr(p.getErrorStream(), logFile, self), "stderr-" + agentId);
        copier.setDaemon(true);
        Run run = new Run(p, copier, command);
        lastCommands.put(agentId, command);
        self[0] = run;
        running.put(agentId, run);
        copier.start();
        DaemonState s = state;
        if (s != null) {
            s.started(agentId, p.pid(), supervised, sessions.get(agentId));
        }
        p.onExit().thenRun(() -> exited(agentId, run, System.nanoTime()));
    }

    /** The process ended: unless a stop of ours did it, its group's leftovers go, then the listener is told. */
    private void exited(String agentId, Run run, long seenAt) {
        if (running.get(agentId) != run) {
            return; // stopped by restart() or close(): not an exit to report
        }
        if (supervised) {
            signalGroup(run.process.pid(), "KILL");
        }
        DaemonState s = state;
        if (s != null) {
            s.ended(agentId);
        }
        BiConsumer<String, Long> l = exitListener;
        if (l != null) {
            l.accept(agentId, seenAt);
        }
    }

    /** Copies the child's stderr to the log (or this process's stderr), remembering the last non-blank line. */
    private static void copyStderr(InputStream in, Path log, Run[] self) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
             OutputStream sink = log == null ? null : Files.newOutputStream(log, StandardOpenOption.CREATE,
                     StandardOpenOption.APPEND)) {
            PrintStream out = sink == null ? System.err : new PrintStream(sink, true, StandardCharsets.UTF_8);
            String line;
            while ((line = reader.readLine()) != null) {
                out.println(line);
                String clean = line.replaceAll("\\p{Cntrl}", " ").strip();
                if (!clean.isEmpty()) {
                    self[0].lastStderrLine = clean.length() > MAX_LINE ? clean.substring(0, MAX_LINE - 3) + "..." : clean;
                }
            }
            out.flush();
        } catch (IOException e) {
            // the process's stderr closed under us (it was stopped): nothing more to copy
        }
    }

    private void stop(String agentId) throws InterruptedException {
        Run r = running.remove(agentId);
        if (r == null) {
            return;
        }
        Process p = r.process;
        if (supervised) {
            signalGroup(p.pid(), "TERM");
            if (!p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                signalGroup(p.pid(), "KILL");
                p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS);
            }
            signalGroup(p.pid(), "KILL"); // whatever else the group still holds
        } else if (p.isAlive()) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            if (!p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS);
            }
        }
        DaemonState s = state;
        if (s != null) {
            s.ended(agentId);
        }
    }

    /** {@code kill -s SIG -- -PGID}: the whole group (a group outlives its leader while members remain). */
    private static void signalGroup(long pgid, String signal) {
        try {
            Process k = new ProcessBuilder("kill", "-s", signal, "--", "-" + pgid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            k.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            // no kill(1): the leader is still stopped through its Process
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The reaper: {@code sh} in a session of its own reading a pipe from this JVM, deaf to the terminal's INT and
     * HUP. When the pipe closes (this JVM ended, however) it stops every group the groups file lists at that moment:
     * TERM, then KILL 2 s later.
     */
    private Process startReaper() throws IOException {
        // The groups file is read once, when the pipe closes: a daemon restarted within the 2 s writes its own
        // groups there, and they are not this daemon's to stop.
        String script = "trap '' INT HUP; while read -r _; do :; done; gs=$(cat \"$1\" 2>/dev/null); "
                + "for g in $gs; do kill -s TERM -- \"$g\" 2>/dev/null; done; sleep 2; "
                + "for g in $gs; do kill -s KILL -- \"$g\" 2>/dev/null; done";
        List<String> argv = new ArrayList<>();
        if (onPath("setsid")) {
            argv.addAll(List.of("setsid", "--"));
        }
        argv.addAll(List.of("sh", "-c", script, "lifeline-daemon-reaper", state.groupsFile().toString()));
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    @Override
    public void close() {
        for (String agentId : commands.keySet()) {
            try {
                stop(agentId);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (reaper != null) {
            try {
                reaper.getOutputStream().close(); // the groups file is empty now: it ends with nothing to do
            } catch (IOException e) {
                reaper.destroy();
            }
        }
        launcher.close();
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    /** Something to run on the launcher thread. */
    private interface Call<T> {
        T call() throws IOException;
    }

    /**
     * One thread, alive as long as this object, that starts every process: a parent-death signal is sent when the
     * thread that forked the process ends, so a short-lived thread would take its commands with it.
     */
    private static final class Launcher {
        private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
        private final Thread thread;

        Launcher() {
            thread = new Thread(() -> {
                try {
                    while (true) {
                        queue.take().run();
                    }
                } catch (InterruptedException e) {
                    // closed
                }
            }, "lifeline-daemon-launcher");
            thread.setDaemon(true);
            thread.start();
        }

        <T> T call(Call<T> c) throws IOException {
            CompletableFuture<T> f = new CompletableFuture<>();
            queue.add(() -> {
                try {
                    f.complete(c.call());
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            });
            try {
                return f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting a process", e);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof IOException io) {
                    throw io;
                }
                if (e.getCause() instanceof RuntimeException re) {
                    throw re;
                }
                throw new IOException(e.getCause());
            }
        }

        void close() {
            thread.interrupt();
        }
    }
}
