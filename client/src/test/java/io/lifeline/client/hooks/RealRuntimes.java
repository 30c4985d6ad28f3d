package io.lifeline.client.hooks;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.cli.Main;
import io.lifeline.client.mcp.NpmTools;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.local.app.LifelineLocal;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The four real coding-agent runtimes from the npm test tools ({@code .ci/run} installs them pinned: Claude Code
 * 2.1.197, Codex CLI 0.171.0, Gemini CLI 0.61.0, opencode 1.18.33), each set up in its own HOME to talk to a
 * {@link FakeModel} and run one headless turn with no network. Tests skip, saying so, where a binary is absent.
 * Beside them, what the tests that run them against Lifeline share: bounded waits, kill -9 timed to the agent's
 * death, and {@code lifeline daemon} in its own JVM.
 */
final class RealRuntimes {
    private RealRuntimes() {
    }

    /** npm package and binary of each runtime. */
    static String npmPackage(HookRuntime r) {
        return switch (r) {
            case CLAUDE_CODE -> "@anthropic-ai/claude-code";
            case CODEX -> "@openai/codex";
            case GEMINI -> "@google/gemini-cli";
            case OPENCODE -> "opencode-ai";
        };
    }

    static Path bin(HookRuntime r) {
        String name = switch (r) {
            case CLAUDE_CODE -> "claude";
            case CODEX -> "codex";
            case GEMINI -> "gemini";
            case OPENCODE -> "opencode";
        };
        return NpmTools.DIR.resolve("node_modules").resolve(".bin").resolve(name);
    }

    static void assumeInstalled(HookRuntime r) {
        NpmTools.assumeInstalled(npmPackage(r));
        assumeTrue(Files.isExecutable(bin(r)), bin(r) + " is not installed: run .ci/run's npm step");
        assumeTrue(onPath("curl"), "curl is not installed: the hooks' forwarders use it");
    }

    /** The system property that runs the long legitimate cases (a minute or more each, mostly waiting). */
    static final String LONG_CASES = "lifeline.realRuntime.long";

    /**
     * A legitimate case that only waits, for five or ten stall thresholds (50 to 100 s of a real runtime doing its
     * work or waiting), runs with {@code -Dlifeline.realRuntime.long=true}; the build runs one such case per runtime
     * (the slow stream) and the stalls themselves, which keeps it within its time (BENCHMARKS.md, "Stalls measured").
     */
    static void assumeLongCasesWanted() {
        assumeTrue(Boolean.getBoolean(LONG_CASES), "a long legitimate case: run with -D" + LONG_CASES + "=true");
    }

    static boolean onPath(String command) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, command))) {
                return true;
            }
        }
        return false;
    }

    /** One runtime's HOME and project directory, set up for {@code model}. */
    record Setup(HookRuntime runtime, Path home, Path work, URI model) {
        /** The environment the runtime runs with (PATH, HOME and its own switches), before Lifeline's variables. */
        Map<String, String> env() {
            Map<String, String> env = new HashMap<>();
            env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
            env.put("HOME", home.toString());
            env.put("LANG", "C.UTF-8");
            switch (runtime) {
                case CLAUDE_CODE -> {
                    env.put("ANTHROPIC_BASE_URL", model.toString());
                    env.put("ANTHROPIC_API_KEY", "dummy");
                    env.put("DISABLE_AUTOUPDATER", "1");
                    env.put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
                    env.put("DISABLE_TELEMETRY", "1");
                    env.put("DISABLE_ERROR_REPORTING", "1");
                    env.put("IS_SANDBOX", "1"); // as root, the binary refuses bypass mode without it
                }
                case CODEX -> {
                    env.put("CODEX_HOME", home.resolve(".codex").toString());
                    env.put("FAKE_API_KEY", "dummy");
                }
                case GEMINI -> {
                    env.put("GOOGLE_GEMINI_BASE_URL", model.toString());
                    env.put("GEMINI_API_KEY", "dummy");
                    env.put("GEMINI_CLI_NO_RELAUNCH", "true");
                }
                case OPENCODE -> {
                    for (String s : List.of("AUTOUPDATE", "MODELS_FETCH", "DEFAULT_PLUGINS", "LSP_DOWNLOAD", "SHARE")) {
                        env.put("OPENCODE_DISABLE_" + s, "1");
                    }
                }
            }
            return env;
        }

        /** The headless command for one turn with {@code prompt}. */
        List<String> headless(String prompt) {
            String b = bin(runtime).toString();
            return switch (runtime) {
                case CLAUDE_CODE -> List.of(b, "-p", prompt, "--output-format", "json",
                        "--dangerously-skip-permissions");
                case CODEX -> List.of(b, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                        "--dangerously-bypass-hook-trust", "--json", prompt);
                case GEMINI -> List.of(b, "-p", prompt, "--yolo", "--output-format", "json");
                case OPENCODE -> List.of(b, "run", "--model", "fake/fake-model", prompt);
            };
        }

        /** The interactive TUI started with {@code prompt} as one shell word list, for {@code script -qfc}. */
        String interactive(String prompt) {
            String b = "'" + bin(runtime) + "'";
            String p = "'" + prompt.replace("'", "'\\''") + "'";
            return switch (runtime) {
                case CLAUDE_CODE -> b + " " + p;
                case GEMINI -> b + " -i " + p;
                case CODEX, OPENCODE -> throw new UnsupportedOperationException("not driven interactively here");
            };
        }
    }

    /** A HOME and project directory under {@code dir} with the runtime's own settings for {@code model}. */
    static Setup setup(HookRuntime runtime, Path dir, URI model) throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path work = Files.createDirectories(dir.resolve("work"));
        switch (runtime) {
            case CLAUDE_CODE -> Files.writeString(home.resolve(".claude.json"), """
                    {"hasCompletedOnboarding": true, "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
                     "projects": {"%s": {"hasTrustDialogAccepted": true}}}
                    """.formatted(work));
            case CODEX -> Files.writeString(Files.createDirectories(home.resolve(".codex")).resolve("config.toml"), """
                    model = "fake-model"
                    model_provider = "fake"

                    [model_providers.fake]
                    name = "fake"
                    base_url = "%s/v1"
                    wire_api = "responses"
                    env_key = "FAKE_API_KEY"

                    [analytics]
                    enabled = false
                    """.formatted(model));
            case GEMINI -> Files.writeString(Files.createDirectories(home.resolve(".gemini")).resolve("settings.json"),
                    """
                    {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
                     "telemetry": {"enabled": false}, "privacy": {"usageStatisticsEnabled": false},
                     "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}
                    """);
            case OPENCODE -> Files.writeString(work.resolve("opencode.json"), """
                    {"model": "fake/fake-model", "autoupdate": false, "share": "disabled",
                     "permission": {"bash": "allow", "edit": "allow", "webfetch": "allow"},
                     "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                       "options": {"baseURL": "%s/v1", "apiKey": "dummy"},
                       "models": {"fake-model": {"name": "Fake model", "tool_call": true}}}}}
                    """.formatted(model));
        }
        return new Setup(runtime, home, work, model);
    }

    record Run(int exit, String stdout, String stderr, long millis) {
    }

    /**
     * Runs {@code command} in {@code dir} with exactly {@code env}, stdin closed, for at most {@code seconds}; a
     * command still running then is killed with its children and fails the test.
     */
    static Run run(List<String> command, Map<String, String> env, Path dir, long seconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Path out = Files.createTempFile(dir, "run", ".out");
        Path err = Files.createTempFile(dir, "run", ".err");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        long start = System.nanoTime();
        Process p = pb.start();
        p.getOutputStream().close();
        boolean done = p.waitFor(seconds, TimeUnit.SECONDS);
        long millis = (System.nanoTime() - start) / 1_000_000;
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        Run r = new Run(done ? p.exitValue() : -1, Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8), millis);
        if (!done) {
            throw new AssertionError("still running after " + seconds + " s: " + command + "\nstdout:\n" + r.stdout()
                    + "\nstderr:\n" + r.stderr());
        }
        return r;
    }

    static List<String> concat(List<String> a, String... more) {
        List<String> all = new ArrayList<>(a);
        all.addAll(List.of(more));
        return all;
    }

    /** Fails the test unless {@code condition} holds within {@code wait}, saying {@code what} and the detail. */
    static void await(Duration wait, String what, BooleanSupplier condition, Supplier<String> detail)
            throws InterruptedException {
        assertTrue(LocalHarness.eventually(wait, condition), () -> "within " + wait.toSeconds() + " s: " + what + "\n"
                + detail.get());
    }

    /** Polls every 50 ms for at most {@code wait}; answers when the condition first held, fails the test if never. */
    static Instant when(Duration wait, String what, BooleanSupplier condition, Supplier<String> why)
            throws InterruptedException {
        long end = System.nanoTime() + wait.toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return Instant.now();
            }
            Thread.sleep(50);
        }
        throw new AssertionError("within " + wait.toSeconds() + " s: " + what + "\n" + why.get());
    }

    /** The process id the daemon recorded for {@code agent}'s command in its state directory's commands.json. */
    static Optional<Long> recordedPid(Path state, String agent) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(agent) + "\"\\s*:\\s*\\{[^}]*\"pid\"\\s*:\\s*(\\d+)")
                .matcher(read(state.resolve("commands.json")));
        return m.find() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
    }

    /** Stops a test's daemon (TERM, then KILL after 30 s), then the agent's command it recorded and its children. */
    static void stopDaemon(Process daemon, Path state, String agent) throws InterruptedException {
        daemon.destroy();
        if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
            daemon.destroyForcibly();
        }
        recordedPid(state, agent).flatMap(ProcessHandle::of).ifPresent(h -> {
            h.descendants().forEach(ProcessHandle::destroyForcibly);
            h.destroyForcibly();
        });
    }

    /** How many stalls a daemon's output (its log file {@code out}) says it saw for {@code agent}. */
    static long stallsLogged(Path out, String agent) {
        return Pattern.compile(Pattern.quote(agent) + ": stalled: ").matcher(read(out)).results().count();
    }

    /** The file's text, "" while it is not there (what went wrong when it cannot be read). */
    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** The command line of {@code pid}, its arguments joined by spaces ("" once it is gone). */
    static String cmdline(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip();
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * Kills the runtime with kill -9 and polls the agent every 10 ms, for at most {@code seconds}, until it is neither
     * working nor ready; answers ms from the kill to the read that saw it.
     */
    static long killAndTimeDead(LifelineClient admin, ProcessHandle runtime, String a, int seconds,
            Supplier<String> why) throws InterruptedException {
        long t0 = System.nanoTime();
        assertTrue(runtime.destroyForcibly(), "SIGKILL sent");
        long deadline = t0 + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            long asked = System.nanoTime();
            String s = admin.agent(a).status();
            if (!"working".equals(s) && !"ready".equals(s)) {
                return TimeUnit.NANOSECONDS.toMillis(asked - t0);
            }
            Thread.sleep(10);
        }
        throw new AssertionError("not dead within " + seconds + " s of the kill: " + why.get());
    }

    /**
     * {@code lifeline daemon ARGS} in its own JVM against {@code local} as its admin, with exactly {@code env} beside
     * that (and {@code dir}'s empty config), its output to {@code out}.
     */
    static Process daemon(LifelineLocal local, Path dir, Path out, Map<String, String> env, List<String> args)
            throws IOException {
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", System.getProperty("java.class.path"), Main.class.getName(), "daemon"));
        argv.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> daemonEnv = new HashMap<>(env);
        daemonEnv.put("LIFELINE_URL", local.url().toString());
        daemonEnv.put("LIFELINE_API_KEY", local.adminKey());
        daemonEnv.put("XDG_CONFIG_HOME", dir.resolve("no-config").toString());
        pb.environment().clear();
        pb.environment().putAll(daemonEnv);
        return pb.start();
    }
}
