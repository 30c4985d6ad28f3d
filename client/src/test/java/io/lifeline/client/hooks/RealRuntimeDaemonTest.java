package io.lifeline.client.hooks;

import static io.lifeline.client.hooks.RealRuntimes.cmdline;
import static io.lifeline.client.hooks.RealRuntimes.read;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Claude Code (2.1.197, from the npm test tools) run by {@code lifeline daemon} in its own JVM, against a real
 * Lifeline Local on loopback and the {@link FakeModel}, configured by {@code lifeline hooks install claude-code
 * --via-daemon} alone. The model holds the turn open after the tool's result; the runtime is killed with kill -9 in
 * that model call. The agent is dead within a second and the one request that reports it; the revive flow's restart
 * command (the daemon runs with {@code --no-restart-on-exit}, so only the flow brings it back) reaches the daemon,
 * which starts Claude Code again with {@code --resume} on the session its hooks named; the resumed conversation
 * reaches the model carrying the killed turn, the agent joins again, and the released turn ends the session (offline).
 * The same for the interactive TUI under {@code script} (a pty of its own, as the daemon's commands have no
 * controlling terminal), killed while it waits for a person at a permission prompt. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RealRuntimeDaemonTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);

    @TempDir
    Path dir;

    private static void await(String what, BooleanSupplier condition, Supplier<String> detail)
            throws InterruptedException {
        RealRuntimes.await(WAIT, what, condition, detail);
    }

    /** The pid commands.json records for {@code agent}, if any. */
    private static Optional<Long> recordedPid(Path state, String agent) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(agent) + "\"\\s*:\\s*\\{[^}]*\"pid\"\\s*:\\s*(\\d+)")
                .matcher(read(state.resolve("commands.json")));
        return m.find() ? Optional.of(Long.parseLong(m.group(1))) : Optional.empty();
    }

    /**
     * The Claude Code process the daemon runs for the agent: the recorded pid or one of its descendants (under
     * {@code script}), the one whose program is the runtime's binary.
     */
    private static Optional<ProcessHandle> claude(Path state, String agent, String bin) {
        return recordedPid(state, agent).flatMap(ProcessHandle::of).flatMap(h -> cmdline(h.pid()).startsWith(bin)
                ? Optional.of(h) : h.descendants().filter(d -> cmdline(d.pid()).startsWith(bin)).findFirst());
    }

    /** {@code lifeline daemon} in its own JVM for one agent running {@code command} as Claude Code. */
    private Process daemon(Path out, Path state, String host, String a, String command, Map<String, String> env)
            throws IOException {
        return RealRuntimes.daemon(local, dir, out, env, List.of("--host", host, "--agent", a + "=" + command,
                "--runtime", a + "=claude-code", "--interval", "1s",
                // Only the revive flow's restart command brings the runtime back.
                "--no-restart-on-exit", "--state-dir", state.toString(), "--log-dir", dir.resolve("logs").toString()));
    }

    /**
     * Kills the runtime with kill -9 and polls the agent every 10 ms until it is neither working nor ready (dead, or
     * already moved on by the revive flow: dead by then either way); answers ms from the kill to the read that saw it.
     */
    private static long killAndTimeDead(ProcessHandle runtime, String a, Supplier<String> why)
            throws InterruptedException {
        return RealRuntimes.killAndTimeDead(admin, runtime, a, 10, why);
    }

    /** The session id the daemon's hook line named. */
    private static String session(Path out, String a, Supplier<String> why) {
        Matcher sm = Pattern.compile("hook: " + Pattern.quote(a) + ": its claude-code session is ([0-9a-f-]{36})")
                .matcher(read(out));
        assertTrue(sm.find(), why.get());
        return sm.group(1);
    }

    /** The daemon's "reported dead N ms after the exit" figure for the kill. */
    private static String reportedAfter(Path out, String a, Supplier<String> why) throws InterruptedException {
        Pattern p = Pattern.compile("exited: " + Pattern.quote(a) + ": killed by signal 9 \\(KILL\\); reported dead "
                + "(\\d+) ms");
        await("the daemon's exit line", () -> p.matcher(read(out)).find(), why);
        Matcher m = p.matcher(read(out));
        assertTrue(m.find());
        return m.group(1);
    }

    private static void stop(Process daemon, Path state, String a) throws InterruptedException {
        if (daemon != null) {
            daemon.destroy();
            if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
                daemon.destroyForcibly();
            }
        }
        // Kill the runtime's whole tree and wait for each process to end (bounded): a resumed runtime still writing
        // into its home while JUnit removes the temp dir fails the cleanup, not the test.
        List<ProcessHandle> tree = new ArrayList<>();
        recordedPid(state, a).flatMap(ProcessHandle::of).ifPresent(h -> {
            h.descendants().forEach(tree::add);
            tree.add(h);
        });
        tree.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : tree) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                System.out.println("the runtime's process " + h.pid() + " did not end within 10 s: " + e);
            }
        }
    }

    @Test
    void headless_killedMinus9MidTurn_isDeadWithinASecond_thenTheReviveFlowsRestartResumesItsSession(
            @TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeInstalled(HookRuntime.CLAUDE_CODE);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        String a = "rd-claude";
        Path state = dir.resolve("state");
        Path out = dir.resolve("daemon.out");
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-real-claude").withStaleAfterSeconds(600));
        Process daemon = null;
        try (FakeModel model = FakeModel.start("echo step-one", "Done.")) {
            model.holdTurns();
            RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CLAUDE_CODE, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "claude-code", "--agent", a,
                    "--via-daemon", "--no-check", "--project-dir=" + setup.work()); // the daemon checks its agents
            String bin = RealRuntimes.bin(HookRuntime.CLAUDE_CODE).toString();
            // stdin from /dev/null (claude -p would read a pipe); the daemon adds --resume SESSION at the end.
            daemon = daemon(out, state, "h-real-claude", a, "cd '" + setup.work() + "' && exec 0</dev/null '" + bin
                    + "' -p 'Run the command.' --output-format json --dangerously-skip-permissions", env);
            Supplier<String> why = () -> read(out) + "\nclaude's log:\n" + read(dir.resolve("logs").resolve(a + ".log"))
                    + "\nmodel: " + model.requests() + "\ntransitions: " + admin.allTransitions(a);

            // The turn: the tool ran, the model holds its answer; the hooks said working, with the session's id.
            await("the turn is open in its model call, the agent working", () -> model.held().size() == 1
                    && "working".equals(admin.agent(a).status()) && read(out).contains("its claude-code session is "),
                    why);
            String session = session(out, a, why);
            ProcessHandle first = claude(state, a, bin).orElseThrow(() -> new AssertionError("no claude: " + why.get()));

            long ms = killAndTimeDead(first, a, why);
            System.out.println("real claude -p under the daemon: kill -9 mid-turn -> dead: " + ms
                    + " ms (kill -9 to the status read that saw it)");
            assertTrue(ms <= 1000, "dead " + ms + " ms after kill -9");
            // The history before the newest change comes from the outbox, a moment after the change: wait for it.
            await("working -> dead with the daemon's reason", () -> admin.allTransitions(a).stream().anyMatch(t ->
                    "dead".equals(t.to()) && "working".equals(t.from()) && "reported_failure".equals(t.trigger())
                    && "failure reported: killed by signal 9 (KILL)".equals(t.reason())), why);
            System.out.println("real claude -p under the daemon: the daemon reported it dead "
                    + reportedAfter(out, a, why) + " ms after the exit");

            // The revive flow's restart command: the daemon starts claude again on its session.
            await("the restart command, acknowledged", () -> read(out).contains("command acknowledged: "), why);
            await("claude again, with --resume " + session, () -> claude(state, a, bin).filter(h -> h.pid()
                    != first.pid() && cmdline(h.pid()).endsWith("--resume " + session)).isPresent(), why);
            await("the resumed conversation reaches the model with the killed turn in it", () ->
                    model.held().size() == 2 && model.held().get(1) > model.held().get(0), why);
            String status = admin.agent(a).status();
            assertTrue("ready".equals(status) || "working".equals(status), status + "\n" + why.get());
            List<TransitionView> ts = admin.allTransitions(a);
            assertTrue(ts.stream().anyMatch(t -> "restarting".equals(t.from()) && "ready".equals(t.to())),
                    "joined again after the restart: " + ts);

            // The turn ends: the session's end makes it leave, and that exit is no crash.
            model.releaseTurns();
            await("offline after the resumed session ended", () -> "offline".equals(admin.agent(a).status()), why);
            System.out.println("real claude -p under the daemon: held conversations " + model.held()
                    + " message(s), transitions (newest first) " + admin.allTransitions(a).stream()
                    .map(t -> t.to() + "(" + t.trigger() + ")").toList());
        } finally {
            stop(daemon, state, a);
        }
    }

    @Test
    void interactive_underScript_killedMinus9WhileWaitingForAPerson_isDeadWithinASecond_andResumes(
            @TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeInstalled(HookRuntime.CLAUDE_CODE);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        String a = "rd-claude-tty";
        Path state = dir.resolve("state-tty");
        Path out = dir.resolve("daemon-tty.out");
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-real-claude-tty").withStaleAfterSeconds(600));
        Process daemon = null;
        try (FakeModel model = FakeModel.start("mkdir made-by-the-model", "Done.")) {
            RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CLAUDE_CODE, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            env.put("TERM", "xterm-256color");
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "claude-code", "--agent", a,
                    "--via-daemon", "--no-check", "--project-dir=" + setup.work()); // the daemon checks its agents
            String bin = RealRuntimes.bin(HookRuntime.CLAUDE_CODE).toString();
            // Under setsid the TUI has no controlling terminal: script gives it a pty (stdin: the daemon's idle pipe);
            // -e passes the runtime's end on. A restart sets LIFELINE_RESUME_ARGS to --resume SESSION.
            daemon = daemon(out, state, "h-real-claude-tty", a, "cd '" + setup.work() + "' && exec script -qefc \"'"
                    + bin + "' 'Make the directory.' $LIFELINE_RESUME_ARGS\" /dev/null", env);
            Supplier<String> why = () -> read(out) + "\nclaude's log:\n" + read(dir.resolve("logs").resolve(a + ".log"))
                    .replaceAll("\u001b\\[[0-9;?]*[A-Za-z]", "") + "\nmodel: " + model.requests() + "\ntransitions: "
                    + admin.allTransitions(a);

            await("the permission prompt: waiting for a person", () -> {
                var w = admin.agent(a).waiting();
                return w != null && "person".equals(w.kind()) && read(out).contains("its claude-code session is ");
            }, why);
            String session = session(out, a, why);
            ProcessHandle first = claude(state, a, bin).orElseThrow(() -> new AssertionError("no claude: " + why.get()));

            long ms = killAndTimeDead(first, a, why);
            System.out.println("real claude interactive under the daemon: kill -9 while waiting for a person -> dead: "
                    + ms + " ms (kill -9 to the status read that saw it)");
            assertTrue(ms <= 1000, "dead " + ms + " ms after kill -9");
            await("-> dead with the daemon's reason", () -> admin.allTransitions(a).stream().anyMatch(t ->
                    "dead".equals(t.to()) && "reported_failure".equals(t.trigger())
                    && "failure reported: killed by signal 9 (KILL)".equals(t.reason())), why);
            System.out.println("real claude interactive under the daemon: the daemon reported it dead "
                    + reportedAfter(out, a, why) + " ms after the exit");

            await("the revive flow's restart: claude again, with --resume " + session, () -> read(out)
                    .contains("command acknowledged: ") && claude(state, a, bin).filter(h -> h.pid() != first.pid()
                    && cmdline(h.pid()).endsWith("--resume " + session)).isPresent(), why);
            await("joined again", () -> admin.allTransitions(a).stream().anyMatch(t -> "restarting".equals(t.from())
                    && "ready".equals(t.to())), why);
            System.out.println("real claude interactive under the daemon: transitions (newest first) "
                    + admin.allTransitions(a).stream().map(t -> t.to() + "(" + t.trigger() + ")").toList());
            assertTrue(!Files.exists(setup.work().resolve("made-by-the-model")), "the tool never ran: nobody allowed it");
        } finally {
            stop(daemon, state, a);
        }
    }
}
