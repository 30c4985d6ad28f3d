package io.lifeline.client.daemon;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs one shell command per agent ({@code sh -c}, or {@code cmd /c} on Windows) with {@code LIFELINE_AGENT_ID}
 * and the given environment set; output goes to {@code logDir/<agentId>.log} when a log directory is given,
 * else to this process's own output. Standard error passes through a reader that keeps its last non-blank
 * line, so a crash can be reported with its exit status and that line ({@link #exitDescription}).
 */
public final class CommandProcesses implements AgentProcesses, AutoCloseable {
    /** The most of the last stderr line kept (the crash report's reason is short). */
    static final int MAX_LINE = 120;

    private final Map<String, String> commands;
    private final Map<String, String> env;
    private final Path logDir;
    private final Map<String, Run> running = new ConcurrentHashMap<>();

    /** One start of an agent's command: the process and the thread copying its stderr. */
    private static final class Run {
        final Process process;
        final Thread stderrCopier;
        volatile String lastStderrLine;

        Run(Process process, Thread stderrCopier) {
            this.process = process;
            this.stderrCopier = stderrCopier;
        }
    }

    public CommandProcesses(Map<String, String> commands, Map<String, String> env, Path logDir) {
        this.commands = new LinkedHashMap<>(commands);
        this.env = Map.copyOf(env);
        this.logDir = logDir;
    }

    /** Starts every agent's command. */
    public void startAll() throws IOException {
        for (String agentId : commands.keySet()) {
            start(agentId);
        }
    }

    @Override
    public boolean isRunning(String agentId) {
        Run r = running.get(agentId);
        return r != null && r.process.isAlive();
    }

    /** The exit code of the agent's last process, or null while it runs or before it started. */
    public Integer exitCode(String agentId) {
        Run r = running.get(agentId);
        return r == null || r.process.isAlive() ? null : r.process.exitValue();
    }

    /** "exited with status 3: boom", boom being the last stderr line (once the copier has read to the end, at most 1 s). */
    @Override
    public String exitDescription(String agentId) {
        Run r = running.get(agentId);
        if (r == null || r.process.isAlive()) {
            return null;
        }
        try {
            r.stderrCopier.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String line = r.lastStderrLine;
        return "exited with status " + r.process.exitValue() + (line == null ? "" : ": " + line);
    }

    @Override
    public void restart(String agentId, String reason) throws IOException, InterruptedException {
        stop(agentId);
        start(agentId);
    }

    private void start(String agentId) throws IOException {
        String command = commands.get(agentId);
        if (command == null) {
            throw new IllegalArgumentException("No command for agent " + agentId);
        }
        boolean windows = System.getProperty("os.name", "").toLowerCase().startsWith("windows");
        ProcessBuilder pb = windows ? new ProcessBuilder("cmd", "/c", command) : new ProcessBuilder("sh", "-c", command);
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
        Process p = pb.start();
        Path logFile = log;
        Run[] self = new Run[1];
        Thread copier = new Thread(() -> copyStderr(p.getErrorStream(), logFile, self), "stderr-" + agentId);
        copier.setDaemon(true);
        Run run = new Run(p, copier);
        self[0] = run;
        running.put(agentId, run);
        copier.start();
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
        if (r != null && r.process.isAlive()) {
            Process p = r.process;
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    @Override
    public void close() {
        for (String agentId : commands.keySet()) {
            try {
                stop(agentId);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
