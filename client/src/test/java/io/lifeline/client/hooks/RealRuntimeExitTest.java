package io.lifeline.client.hooks;

import static io.lifeline.client.hooks.RealRuntimes.cmdline;
import static io.lifeline.client.hooks.RealRuntimes.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.TransitionView;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * kill -9 of a real runtime (Claude Code 2.1.197, Codex CLI 0.171.0, from the npm test tools, against the
 * {@link FakeModel} holding the turn open after the tool's result) against a real Lifeline Local, in both modes:
 * <ul>
 *   <li>direct, started by hand with no {@code lifeline daemon}, after {@code lifeline hooks install}: the watcher
 *       its session start left reports the process gone, and the agent is dead by a reported failure, not by the
 *       sweep when the working allowance (900 s) runs out;</li>
 *   <li>under {@code lifeline daemon} ({@code --via-daemon}): the daemon sees its command end and reports it.</li>
 * </ul>
 * Each kill's time to {@code dead} (kill to the status read that saw it) is printed for BENCHMARKS.md. A session
 * that ends by itself is {@code offline} once its watcher has reported and gone: the watcher never turns a clean
 * exit into a death. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RealRuntimeExitTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int KILLS = 3;

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);
    private static final String agentKey = admin.createKey("agent", "runtime exit").key();

    @TempDir
    Path dir;

    private static void await(String what, BooleanSupplier condition, Supplier<String> detail)
            throws InterruptedException {
        RealRuntimes.await(WAIT, what, condition, detail);
    }

    /**
     * The runtime's own process under {@code root} (itself or a descendant): the one that runs the hooks. Claude
     * Code's binary is native; Codex's npm binary is a node launcher whose child is the native program.
     */
    private static Optional<ProcessHandle> runtimeProcess(ProcessHandle root, HookRuntime runtime) {
        return Stream.concat(Stream.of(root), root.descendants()).filter(h -> {
            String c = cmdline(h.pid());
            return runtime == HookRuntime.CLAUDE_CODE ? c.startsWith(RealRuntimes.bin(runtime).toString())
                    : c.contains("/vendor/") && c.contains("/bin/codex ");
        }).findFirst();
    }

    /** Kills with SIGKILL and polls every 10 ms until neither working nor ready; ms from the kill to that read. */
    private static long killAndTimeDead(ProcessHandle runtime, String a, Supplier<String> why)
            throws InterruptedException {
        return RealRuntimes.killAndTimeDead(admin, runtime, a, 20, why);
    }

    private static String dead(String a) {
        List<TransitionView> ts = admin.allTransitions(a);
        return ts.stream().filter(t -> "dead".equals(t.to())).map(t -> t.trigger() + ": " + t.reason()).findFirst()
                .orElse("");
    }

    private static Process start(List<String> command, Map<String, String> env, Path work, Path log)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().clear();
        pb.environment().putAll(env);
        return pb.start();
    }

    private static void stop(Process p) {
        if (p != null) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static boolean noWatcher(Path tmp) {
        try (Stream<Path> locks = Files.list(tmp)) {
            return locks.noneMatch(f -> f.getFileName().toString().startsWith("lifeline-watch."));
        } catch (IOException e) {
            return false;
        }
    }

    /** A runtime started by hand, no daemon: the watcher reports its kill; a turn that ends is offline. */
    @ParameterizedTest
    @EnumSource(value = HookRuntime.class, names = {"CLAUDE_CODE", "CODEX"})
    void withoutTheDaemon_killMinus9MidTurn_isDeadInSeconds_byTheWatcher_andACleanExitStaysOffline(
            HookRuntime runtime, @TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeInstalled(runtime);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        List<Long> figures = new ArrayList<>();
        try (FakeModel model = FakeModel.start("echo step-one", "Done.")) {
            RealRuntimes.Setup setup = RealRuntimes.setup(runtime, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            env.put("LIFELINE_API_KEY", agentKey);
            env.put("TMPDIR", tmp.toString());
            for (int i = 0; i < KILLS + 1; i++) {
                String a = "rx-" + runtime.wire() + "-" + i;
                admin.register(RegisterAgent.of(a, a, "worker").withStaleAfterSeconds(600));
                Map<String, String> installEnv = new HashMap<>(env);
                installEnv.put("XDG_CONFIG_HOME", dir.resolve("no-config").toString());
                RealRuntimeForwardersTest.install(installEnv, setup.work(), "hooks", "install", runtime.wire(),
                        "--agent", a, "--direct", "--url=" + local.url(),
                        runtime == HookRuntime.CODEX ? "--user" : "--project-dir=" + setup.work());
                boolean kill = i < KILLS;
                if (kill) {
                    model.holdTurns();
                } else {
                    model.releaseTurns();
                }
                Path log = dir.resolve(a + ".log");
                Process p = start(setup.headless("Run the command."), env, setup.work(), log);
                try {
                    Supplier<String> why = () -> read(log) + "\nmodel: " + model.requests() + "\ntransitions: "
                            + admin.allTransitions(a);
                    if (!kill) {
                        assertTrue(p.waitFor(120, TimeUnit.SECONDS), why.get());
                        await("offline, and the watcher gone", () -> "offline".equals(admin.agent(a).status())
                                && noWatcher(tmp), why);
                        List<TransitionView> ts = admin.allTransitions(a);
                        assertEquals("offline", ts.get(0).to(), "a clean exit stays offline: " + ts);
                        assertTrue(ts.stream().noneMatch(t -> "dead".equals(t.to())), ts.toString());
                        continue;
                    }
                    int before = model.held().size();
                    await("the turn open in its model call, the agent working", () -> model.held().size() > before
                            && "working".equals(admin.agent(a).status()) && !noWatcher(tmp), why);
                    ProcessHandle proc = runtimeProcess(p.toHandle(), runtime).orElseThrow(() ->
                            new AssertionError("no runtime process: " + why.get()));
                    long ms = killAndTimeDead(proc, a, why);
                    figures.add(ms);
                    await("the watcher's report as the death's reason", () -> dead(a).contains("reported_failure: "
                            + "failure reported: the runtime's process exited without ending its session"), why);
                    await("the watcher gone", () -> noWatcher(tmp), why);
                } finally {
                    stop(p);
                }
            }
        }
        System.out.println("real " + runtime.wire() + " started without the daemon (hooks install, direct): kill -9 "
                + "mid-turn -> dead: " + figures + " ms (kill to the status read that saw it)");
    }

    /** {@code lifeline daemon} in its own JVM for one agent running {@code command} as {@code runtime}. */
    private Process daemon(Path out, String a, HookRuntime runtime, String command, Map<String, String> env)
            throws IOException {
        return RealRuntimes.daemon(local, dir, out, env, List.of("--host", "h-" + a, "--agent", a + "=" + command,
                "--runtime", a + "=" + runtime.wire(), "--interval", "1s", "--no-restart-on-exit", "--state-dir",
                dir.resolve("state-" + a).toString()));
    }

    /** The same runtime under the daemon: the daemon reports the end of its command. */
    @ParameterizedTest
    @EnumSource(value = HookRuntime.class, names = {"CLAUDE_CODE", "CODEX"})
    void underTheDaemon_killMinus9MidTurn_isDeadByTheDaemonsReport(HookRuntime runtime, @TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeInstalled(runtime);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        List<Long> figures = new ArrayList<>();
        try (FakeModel model = FakeModel.start("echo step-one", "Done.")) {
            model.holdTurns();
            RealRuntimes.Setup setup = RealRuntimes.setup(runtime, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            String bin = RealRuntimes.bin(runtime).toString();
            StringBuilder command = new StringBuilder("cd '" + setup.work() + "' && exec 0</dev/null");
            for (String w : setup.headless("Run the command.")) {
                command.append(" '").append(w).append('\'');
            }
            assertTrue(command.toString().contains(bin));
            for (int i = 0; i < KILLS; i++) {
                String a = "rxd-" + runtime.wire() + "-" + i;
                // No host: the revive flow cannot restart it, so each kill is one death and nothing after it.
                admin.register(RegisterAgent.of(a, a, "worker").withStaleAfterSeconds(600));
                RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", runtime.wire(), "--agent", a,
                        "--via-daemon", "--no-check",
                        runtime == HookRuntime.CODEX ? "--user" : "--project-dir=" + setup.work());
                Path out = dir.resolve(a + ".out");
                Process daemon = daemon(out, a, runtime, command.toString(), env);
                try {
                    Supplier<String> why = () -> read(out) + "\nmodel: " + model.requests() + "\ntransitions: "
                            + admin.allTransitions(a);
                    int before = model.held().size();
                    await("the turn open in its model call, the agent working", () -> model.held().size() > before
                            && "working".equals(admin.agent(a).status()), why);
                    ProcessHandle proc = runtimeProcess(daemon.toHandle(), runtime).orElseThrow(() ->
                            new AssertionError("no runtime process: " + why.get()));
                    long ms = killAndTimeDead(proc, a, why);
                    figures.add(ms);
                    await("the daemon's report as the death's reason", () -> dead(a).startsWith("reported_failure: "
                            + "failure reported: "), why);
                } finally {
                    daemon.destroy();
                    if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
                        stop(daemon);
                    }
                }
            }
        }
        System.out.println("real " + runtime.wire() + " under lifeline daemon (--via-daemon): kill -9 mid-turn -> dead: "
                + figures + " ms (kill to the status read that saw it)");
    }
}
