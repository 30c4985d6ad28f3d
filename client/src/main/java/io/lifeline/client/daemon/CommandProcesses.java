package io.lifeline.client.daemon;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs one shell command per agent ({@code sh -c}, or {@code cmd /c} on Windows) with {@code LIFELINE_AGENT_ID}
 * and the given environment set; output goes to {@code logDir/<agentId>.log} when a log directory is given,
 * else to this process's own output.
 */
public final class CommandProcesses implements AgentProcesses, AutoCloseable {
    private final Map<String, String> commands;
    private final Map<String, String> env;
    private final Path logDir;
    private final Map<String, Process> running = new ConcurrentHashMap<>();

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
        Process p = running.get(agentId);
        return p != null && p.isAlive();
    }

    /** The exit code of the agent's last process, or null while it runs or before it started. */
    public Integer exitCode(String agentId) {
        Process p = running.get(agentId);
        return p == null || p.isAlive() ? null : p.exitValue();
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
        if (logDir != null) {
            Files.createDirectories(logDir);
            File log = logDir.resolve(agentId + ".log").toFile();
            pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log));
        } else {
            pb.inheritIO();
        }
        running.put(agentId, pb.start());
    }

    private void stop(String agentId) throws InterruptedException {
        Process p = running.remove(agentId);
        if (p != null && p.isAlive()) {
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
