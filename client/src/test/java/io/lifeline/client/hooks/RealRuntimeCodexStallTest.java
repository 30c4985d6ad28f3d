package io.lifeline.client.hooks;

import static io.lifeline.client.hooks.RealRuntimes.recordedPid;
import static io.lifeline.client.hooks.RealRuntimes.stallsLogged;
import static io.lifeline.client.hooks.RealRuntimes.stopDaemon;
import static io.lifeline.client.hooks.RealRuntimes.when;
import static io.lifeline.client.hooks.RealRuntimes.cmdline;
import static io.lifeline.client.hooks.RealRuntimes.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hung is not alive, with a real Codex CLI (0.171.0, from the npm test tools; {@code codex exec}, headless) run by
 * {@code lifeline daemon} in its own JVM against a real Lifeline Local and the {@link FakeModel}'s OpenAI Responses
 * wire, at a scaled stall threshold of {@value #STALL_AFTER_S} s: the cases {@link RealRuntimeStallTest} runs with
 * Claude Code, where Codex's wire allows the same. A Responses stream that goes silent after its
 * {@code response.created} on an open socket (Codex's own stream idle timeout is 300 s) is a stall within the
 * threshold and one 3 s sample: the daemon stops the process group, reports the agent dead for it, and starts Codex
 * again as {@code codex exec resume <session>}, whose conversation reaches the model again. A slow but legitimate
 * stream (a {@code response.in_progress} every 6 s for five thresholds), a {@code sleep} and a CPU-busy command of five
 * thresholds are no stall and no death. Codex runs a long command as {@code exec_command}, which yields after 10 s
 * ("Process running with session ID N"), and the model then polls it with {@code write_stdin}: one tool call from
 * {@code PreToolUse} to {@code PostToolUse}, with a model request inside it. With Codex's own stream idle timeout
 * set below the threshold, Codex reconnects by itself and the answered retry is no stall. Each legitimate case waits
 * for the runtime's own end (its session ends, the agent leaves) and then counts. {@code codex exec} ends its session
 * with its turn and asks no one, so waiting for input and for a person at an approval prompt, each for ten thresholds,
 * run the TUI under {@code script}: no stall, no death either. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RealRuntimeCodexStallTest {
    private static final int STALL_AFTER_S = 10;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);

    @TempDir
    Path dir;

    /** The run of one case: the daemon, its output, the model. */
    private record Case(String agent, Path state, Path out, FakeModel model, Process daemon, Supplier<String> why) {
    }

    /**
     * {@code lifeline daemon} for one agent running {@code codex exec} against a fake model answering with a tool call
     * of {@code command} (set up by {@code modes}), at the scaled threshold, restarting on a stall. The command is
     * written word by word in quotes, as a person pastes a path: the daemon's resume words go after its {@code 'exec'}.
     */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir) throws IOException {
        return start(a, command, modes, runtimeDir, List.of());
    }

    /** As above, with {@code options} after {@code exec} (e.g. {@code -c key=value}). */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir, List<String> options)
            throws IOException {
        return start(a, command, modes, runtimeDir, setup -> {
            List<String> words = new ArrayList<>(setup.headless("Run the command."));
            words.addAll(2, options);
            StringBuilder run = new StringBuilder("exec 0</dev/null");
            for (String w : words) {
                run.append(" '").append(w).append('\'');
            }
            return run.toString();
        });
    }

    /**
     * The TUI ({@code codex 'Run the command.'}) with {@code flags}, under {@code script} (a pty of its own): after its
     * turn it waits for its next prompt, or at an approval prompt for a person.
     */
    private Case startTui(String a, String command, Consumer<FakeModel> modes, Path runtimeDir, String flags)
            throws IOException {
        return start(a, command, modes, runtimeDir, setup -> "export TERM=xterm-256color; exec script -qefc \"'"
                + RealRuntimes.bin(HookRuntime.CODEX) + "' --dangerously-bypass-hook-trust " + flags
                + " 'Run the command.'\" /dev/null");
    }

    /** The daemon running {@code cd WORK && RUN} for the runtime set up against the model. */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir,
            Function<RealRuntimes.Setup, String> runOf) throws IOException {
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-" + a).withStaleAfterSeconds(600));
        FakeModel model = FakeModel.start(command, "Done.");
        modes.accept(model);
        RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CODEX, runtimeDir, model.url());
        Map<String, String> env = setup.env();
        try {
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "codex", "--agent", a,
                    "--via-daemon", "--no-check", "--user");
        } catch (RuntimeException | AssertionError e) {
            model.close();
            throw e;
        }
        String run = "cd '" + setup.work() + "' && " + runOf.apply(setup);
        Path state = dir.resolve("state-" + a);
        Path out = dir.resolve(a + ".out");
        Process daemon = RealRuntimes.daemon(local, dir, out, env, List.of("--host", "h-" + a, "--agent", a + "="
                + run, "--runtime", a + "=codex", "--interval", "1s", "--stall-after", STALL_AFTER_S + "s",
                "--on-stall", "restart", "--state-dir", state.toString(), "--log-dir", dir.resolve("logs").toString()));
        Supplier<String> why = () -> read(out) + "\ncodex's log:\n" + read(dir.resolve("logs").resolve(a + ".log"))
                + "\nmodel: " + model.requests() + "\ntransitions: " + admin.allTransitions(a);
        return new Case(a, state, out, model, daemon, why);
    }

    /**
     * A process of the agent's command (the recorded one or a descendant) whose command line passes {@code test}: the
     * npm {@code codex} is a node launcher whose child is the native program, and both carry Codex's arguments.
     */
    private static Optional<ProcessHandle> codex(Case c, Predicate<String> test) {
        return recordedPid(c.state(), c.agent()).flatMap(ProcessHandle::of).flatMap(h -> Stream.concat(Stream.of(h),
                h.descendants()).filter(d -> test.test(cmdline(d.pid()))).findFirst());
    }

    /** The native Codex program's command line ({@code .../vendor/.../bin/codex exec ...}). */
    private static boolean nativeCodex(String cmdline) {
        return cmdline.contains("/vendor/") && cmdline.contains("/bin/codex ");
    }

    private static void stop(Case c) throws InterruptedException {
        stopDaemon(c.daemon(), c.state(), c.agent());
        c.model().close();
    }

    /** How many stalls the daemon saw for the agent. */
    private static long stalls(Case c) {
        return stallsLogged(c.out(), c.agent());
    }

    /** Whether the server saw the agent in its turn ({@code working}): the hooks reached the daemon, it was judged. */
    private static boolean turnSeen(Case c) {
        return admin.allTransitions(c.agent()).stream().anyMatch(t -> "working".equals(t.to()));
    }

    /** How many times the agent died (any trigger). */
    private static long deaths(Case c) {
        return admin.allTransitions(c.agent()).stream().filter(t -> t.to().startsWith("dead")).count();
    }

    private static long events(String agent, String type) {
        return admin.events(EventQuery.all().withAgent(agent).withType(type)).events().size();
    }

    @Test
    void silentStream_isStalledWithinTheThreshold_thenStoppedReportedDeadAndResumedWithCodexExecResume(
            @TempDir Path runtimeDir) throws Exception {
        assumeReal();
        Case c = start("rcs-silent", "echo step-one", m -> m.silentStreams(1), runtimeDir);
        try {
            String a = c.agent();
            RealRuntimes.await(WAIT, "the turn's answer goes silent after response.created", () -> c.model().silenced()
                    .size() == 1 && read(c.out()).contains("its codex session is "), c.why());
            Matcher sm = Pattern.compile("hook: " + Pattern.quote(a) + ": its codex session is ([0-9a-f-]{36})")
                    .matcher(read(c.out()));
            assertTrue(sm.find(), c.why().get());
            String session = sm.group(1);
            ProcessHandle first = codex(c, RealRuntimeCodexStallTest::nativeCodex)
                    .orElseThrow(() -> new AssertionError("no codex process: " + c.why().get()));
            Instant lastByte = c.model().lastByteBeforeSilence();

            Instant stalled = when(Duration.ofSeconds(STALL_AFTER_S + 30), "the daemon sees the stall",
                    () -> stalls(c) == 1, c.why());
            Instant restarted = when(Duration.ofSeconds(45), "codex again, as codex exec resume " + session, () ->
                    codex(c, l -> nativeCodex(l) && l.contains(" exec resume " + session + " "))
                            .filter(h -> h.pid() != first.pid()).isPresent(), c.why());
            Instant resumed = when(Duration.ofSeconds(45), "the resumed conversation reaches the model, answered",
                    () -> c.model().answered().size() == 1, c.why());
            long toStall = Duration.between(lastByte, stalled).toMillis();
            long toRestart = Duration.between(stalled, restarted).toMillis();
            long toResumed = Duration.between(stalled, resumed).toMillis();
            System.out.println("real codex exec, silent model stream, stallAfter " + STALL_AFTER_S + " s: last byte -> "
                    + "stall seen " + toStall + " ms; stall -> new process as codex exec resume " + toRestart + " ms; "
                    + "stall -> resumed conversation answered " + toResumed + " ms");
            assertTrue(toStall <= (STALL_AFTER_S + 5) * 1000L, "stalled " + toStall + " ms after the last byte");
            assertTrue(toRestart <= 30_000, "restarted " + toRestart + " ms after the stall");
            assertTrue(c.model().answered().get(0) >= c.model().silenced().get(0), "the resumed conversation carries "
                    + "the stalled turn: " + c.model().answered() + " vs " + c.model().silenced());
            RealRuntimes.await(WAIT, "dead for the stall: trigger stalled, with the daemon's reason", () -> admin
                    .allTransitions(a).stream().anyMatch(t -> "dead".equals(t.to()) && "stalled".equals(t.trigger())
                            && t.reason() != null && t.reason().contains("stalled (model stream silent)")), c.why());
            RealRuntimes.await(WAIT, "one AgentStalled, with its reason", () -> events(a, "AgentStalled") == 1,
                    c.why());
            EventView raised = admin.events(EventQuery.all().withAgent(a).withType("AgentStalled")).events().get(0);
            assertEquals("model stream silent", raised.detail().path("reason").asText(), raised.toString());
            System.out.println("real codex exec, silent model stream: last byte -> AgentStalled (its since) "
                    + Duration.between(lastByte, Instant.parse(raised.detail().path("since").asText())).toMillis()
                    + " ms");
            RealRuntimes.await(WAIT, "offline after the resumed session ended", () ->
                    "offline".equals(admin.agent(a).status()), c.why());
            assertEquals(1, stalls(c), c.why().get());
            assertEquals(1, deaths(c), c.why().get());
            RealRuntimes.await(WAIT, "one AgentProgressResumed: the stall ended with its life", () ->
                    events(a, "AgentProgressResumed") == 1, c.why());
            assertEquals(1, events(a, "AgentStalled"), c.why().get());
            System.out.println("real codex exec, silent model stream: transitions (newest first) " + admin
                    .allTransitions(a).stream().map(t -> t.to() + "(" + t.trigger() + ")").toList());
        } finally {
            stop(c);
        }
    }

    /**
     * Codex's own stream idle timeout ({@code stream_idle_timeout_ms}, 300 s by default) set below the threshold, at
     * 4 s: Codex drops the silent stream and asks again by itself ("Reconnecting... 1/5"), the model answers the
     * retry, and the turn ends. The runtime's timer acted first; Lifeline sees its new request's bytes as progress: no
     * stall, no death.
     */
    @Test
    void silentStream_codexsOwnIdleTimeoutBelowTheThreshold_retriesItself_noStallAndNoDeath(@TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        Case c = start("rcs-idle", "echo step-one", m -> m.silentStreams(1), runtimeDir,
                List.of("-c", "model_providers.fake.stream_idle_timeout_ms=4000"));
        try {
            String a = c.agent();
            RealRuntimes.await(WAIT, "offline after the retried turn ended", () -> c.model().silenced().size() == 1
                    && c.model().answered().size() == 1 && "offline".equals(admin.agent(a).status()), c.why());
            System.out.println("real codex exec, silent model stream, its own stream_idle_timeout_ms 4000, stallAfter "
                    + STALL_AFTER_S + " s: silent at conversation size " + c.model().silenced() + ", its retry answered"
                    + " at " + c.model().answered() + "; stalls " + stalls(c) + ", deaths " + deaths(c)
                    + ", AgentStalled " + events(a, "AgentStalled"));
            assertEquals(c.model().silenced(), c.model().answered(), "the same request, asked again: " + c.why().get());
            assertTrue(turnSeen(c), c.why().get());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(a, "AgentStalled"), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void slowLegitimateStream_forFiveThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        assumeReal();
        Case c = start("rcs-slow", "echo step-one", m -> m.slowStreams(Duration.ofSeconds(6),
                Duration.ofSeconds(5L * STALL_AFTER_S)), runtimeDir);
        try {
            long t0 = System.nanoTime();
            // The runtime's own end: the slow answer arrives, the session ends, the agent leaves.
            RealRuntimes.await(Duration.ofSeconds(5L * STALL_AFTER_S + 90), "offline after the slow turn ended", () ->
                    c.model().answered().size() == 1 && "offline".equals(admin.agent(c.agent()).status()), c.why());
            System.out.println("real codex exec, slow stream (a response.in_progress every 6 s for "
                    + 5 * STALL_AFTER_S + " s), stallAfter " + STALL_AFTER_S + " s: turn ended after "
                    + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) + " s; stalls " + stalls(c) + ", deaths "
                    + deaths(c) + ", AgentStalled " + events(c.agent(), "AgentStalled"));
            assertTrue(turnSeen(c), c.why().get());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(c.agent(), "AgentStalled"), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void sleepCommandOfFiveThresholds_yieldedAndPolled_isNoStallAndNoDeath(@TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        longCommand("rcs-sleep", "sleep " + 5 * STALL_AFTER_S + "; echo slept", "a sleep " + 5 * STALL_AFTER_S,
                runtimeDir);
    }

    @Test
    void cpuBusyCommandOfFiveThresholds_yieldedAndPolled_isNoStallAndNoDeath(@TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        // A command that spins a core for five thresholds and says nothing: its PreToolUse makes it legitimate silence.
        longCommand("rcs-cpu", "timeout " + 5 * STALL_AFTER_S + " sh -c 'while :; do :; done'; echo spun",
                "a CPU-busy " + 5 * STALL_AFTER_S + " s", runtimeDir);
    }

    /**
     * A command of five thresholds: {@code exec_command} yields after 10 s, the model polls it with
     * {@code write_stdin} until it exits, then answers; the turn ends, the agent leaves, and then it is counted.
     */
    private void longCommand(String a, String command, String what, Path runtimeDir) throws Exception {
        Case c = start(a, command, m -> { }, runtimeDir);
        try {
            long t0 = System.nanoTime();
            RealRuntimes.await(Duration.ofSeconds(5L * STALL_AFTER_S + 90), "offline after the command and the turn "
                    + "ended", () -> c.model().answered().size() == 1 && "offline".equals(admin.agent(a).status()),
                    c.why());
            long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            long polls = c.model().requests().stream().filter(r -> r.endsWith(" -> poll")).count();
            System.out.println("real codex exec, " + what + " command (exec_command, then " + polls + " write_stdin "
                    + "poll(s)), stallAfter " + STALL_AFTER_S + " s: turn ended after " + took + " s; stalls "
                    + stalls(c) + ", deaths " + deaths(c) + ", AgentStalled " + events(a, "AgentStalled"));
            assertTrue(took >= 5L * STALL_AFTER_S, "the command ran its whole time: " + took + " s");
            assertTrue(polls >= 1, "the command outlived exec_command's yield and was polled: " + c.why().get());
            assertTrue(turnSeen(c), c.why().get());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(a, "AgentStalled"), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void waitingForInputForTenThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        // The TUI runs the command, answers, and waits for its next prompt: its turn's end named by notify.
        Case c = startTui("rcs-input", "echo step-one", m -> { }, runtimeDir,
                "--dangerously-bypass-approvals-and-sandbox");
        waitsTenThresholds(c, "input", "waiting for input after its turn", () -> c.model().answered().size() == 1
                && Pattern.compile("its codex session is ").matcher(read(c.out())).results().count() == 1);
    }

    @Test
    void waitingForAPersonForTenThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        // Asked to run outside its read-only sandbox, under -a on-request it waits at an approval prompt.
        Case c = startTui("rcs-wait", "mkdir made-by-the-model", FakeModel::escalated, runtimeDir,
                "-a on-request -s read-only");
        waitsTenThresholds(c, "person", "waiting for a person at the approval prompt", () -> true);
    }

    /** Waits until the agent waits ({@code kind}), then for ten thresholds on the server's clock, then counts. */
    private void waitsTenThresholds(Case c, String kind, String what, BooleanSupplier also) throws Exception {
        try {
            String a = c.agent();
            RealRuntimes.await(WAIT, what, () -> {
                var w = admin.agent(a).waiting();
                return w != null && kind.equals(w.kind()) && also.getAsBoolean();
            }, c.why());
            // The server's own record of the wait is the clock: it has lasted ten thresholds once its since is that old.
            Instant since = admin.agent(a).waiting().since();
            RealRuntimes.await(Duration.ofSeconds(10L * STALL_AFTER_S + 30), "waiting for ten thresholds", () -> {
                var w = admin.agent(a).waiting();
                return w != null && Duration.between(since, Instant.now()).toSeconds() >= 10L * STALL_AFTER_S;
            }, c.why());
            System.out.println("real codex TUI, " + what + " " + Duration.between(since, Instant.now()).toSeconds()
                    + " s, stallAfter " + STALL_AFTER_S + " s: stalls " + stalls(c) + ", deaths " + deaths(c)
                    + ", AgentStalled " + events(a, "AgentStalled") + ", still " + admin.agent(a).statusWithWait());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(a, "AgentStalled"), c.why().get());
            assertTrue(codex(c, RealRuntimeCodexStallTest::nativeCodex).isPresent(), "the same process still runs: "
                    + c.why().get());
        } finally {
            stop(c);
        }
    }

    private static void assumeReal() {
        RealRuntimes.assumeInstalled(HookRuntime.CODEX);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        assumeTrue(RealRuntimes.onPath("ss"), "needs ss (iproute2) to sample the model connection");
    }
}
