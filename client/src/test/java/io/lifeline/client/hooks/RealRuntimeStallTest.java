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
import io.lifeline.client.model.AgentStalled;
import io.lifeline.client.model.AgentSubagent;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hung is not alive, with a real Claude Code (2.1.197, from the npm test tools) run by {@code lifeline daemon} in its
 * own JVM against a real Lifeline Local and the {@link FakeModel}, at a scaled stall threshold of
 * {@value #STALL_AFTER_S} s. A model stream that goes silent after its first event on an open socket is a stall within
 * the threshold and one 3 s progress sample: the daemon stops the process group, reports the agent dead for it, and
 * starts Claude Code again with {@code --resume} on its session, whose conversation reaches the model again. A slow
 * but legitimate stream (a ping every 6 s for five thresholds), a {@code sleep} tool call and a CPU-busy tool call of
 * five thresholds are no stall and no death: each test waits for the runtime's own end (its session ends, the agent
 * leaves) and then counts; waiting for a person and waiting for input, each for ten thresholds, are none either. The
 * stall's death has trigger {@code stalled} and raises one {@code AgentStalled}, which its new life's join ends. A
 * real subagent (Claude Code's {@code Agent} tool) whose own stream goes silent stalls its parent the same way, with
 * the reason {@code subagent silent}: its {@code SubagentStart} reaches the server first, and under {@code alert} the
 * parent is shown stalled and keeps running. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RealRuntimeStallTest {
    private static final int STALL_AFTER_S = 10;
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The reason a stall carries while a subagent runs. */
    private static final String SUBAGENT_SILENT = "subagent silent";
    /** Put in the subagent's prompt by the fake model: it tells the subagent's own request from the parent's. */
    private static final String SUBAGENT_MARKER = "[lifeline-test-subagent]";

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);

    @TempDir
    Path dir;

    private static void await(Duration wait, String what, BooleanSupplier condition, Supplier<String> detail)
            throws InterruptedException {
        RealRuntimes.await(wait, what, condition, detail);
    }

    private static Optional<ProcessHandle> claude(Path state, String agent, String bin) {
        return recordedPid(state, agent).flatMap(ProcessHandle::of).flatMap(h -> cmdline(h.pid()).startsWith(bin)
                ? Optional.of(h) : h.descendants().filter(d -> cmdline(d.pid()).startsWith(bin)).findFirst());
    }

    /** The run of one case: the daemon, its output, the model, the runtime's binary. */
    private record Case(String agent, Path state, Path out, FakeModel model, String bin, Process daemon,
                        Supplier<String> why) {
    }

    /**
     * {@code lifeline daemon} for one agent running {@code claude -p} against a fake model answering with a tool call
     * of {@code command} (set up by {@code modes}), at the scaled threshold, restarting on a stall.
     */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir) throws IOException {
        return start(a, command, modes, runtimeDir, false);
    }

    /**
     * As above; {@code interactive}: the TUI under {@code script} (a pty of its own), without skipping permissions, so
     * the tool call waits for a person at its permission prompt.
     */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir, boolean interactive)
            throws IOException {
        return start(a, command, modes, runtimeDir, interactive, "restart");
    }

    /** As above, with {@code --on-stall onStall} ({@code restart} or {@code alert}). */
    private Case start(String a, String command, Consumer<FakeModel> modes, Path runtimeDir, boolean interactive,
            String onStall) throws IOException {
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-" + a).withStaleAfterSeconds(600));
        FakeModel model = FakeModel.start(command, "Done.");
        modes.accept(model);
        RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CLAUDE_CODE, runtimeDir, model.url());
        Map<String, String> env = setup.env();
        try {
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "claude-code", "--agent", a,
                    "--via-daemon", "--no-check", "--project-dir=" + setup.work());
        } catch (Exception e) {
            model.close();
            throw new IOException(e);
        }
        String bin = RealRuntimes.bin(HookRuntime.CLAUDE_CODE).toString();
        Path state = dir.resolve("state-" + a);
        Path out = dir.resolve(a + ".out");
        if (interactive) {
            env.put("TERM", "xterm-256color");
        }
        String run = interactive ? "exec script -qefc \"'" + bin + "' 'Run the command.' $LIFELINE_RESUME_ARGS\" /dev/null"
                : "exec 0</dev/null '" + bin + "' -p 'Run the command.' --output-format json --dangerously-skip-permissions";
        Process daemon = RealRuntimes.daemon(local, dir, out, env, List.of("--host", "h-" + a, "--agent", a + "=cd '"
                + setup.work() + "' && " + run, "--runtime", a + "=claude-code", "--interval", "1s",
                "--stall-after", STALL_AFTER_S + "s", "--on-stall", onStall, "--state-dir", state.toString(),
                "--log-dir", dir.resolve("logs").toString()));
        Supplier<String> why = () -> read(out) + "\nclaude's log:\n" + read(dir.resolve("logs").resolve(a + ".log"))
                + "\nmodel: " + model.requests() + "\ntransitions: " + admin.allTransitions(a);
        return new Case(a, state, out, model, bin, daemon, why);
    }

    private static void stop(Case c) throws InterruptedException {
        stopDaemon(c.daemon(), c.state(), c.agent());
        c.model().close();
    }

    /** How many stalls the daemon saw for the agent. */
    private static long stalls(Case c) {
        return stallsLogged(c.out(), c.agent());
    }

    /** How many times the agent died (any trigger). */
    private static long deaths(Case c) {
        return admin.allTransitions(c.agent()).stream().filter(t -> t.to().startsWith("dead")).count();
    }

    @Test
    void silentStream_isStalledWithinTheThreshold_thenStoppedReportedDeadAndResumedOnItsSession(
            @TempDir Path runtimeDir) throws Exception {
        assumeReal();
        Case c = start("rs-silent", "echo step-one", m -> m.silentStreams(1), runtimeDir);
        try {
            String a = c.agent();
            await(WAIT, "the turn's answer goes silent after its first event", () -> c.model().silenced().size() == 1
                    && read(c.out()).contains("its claude-code session is "), c.why());
            Matcher sm = Pattern.compile("hook: " + Pattern.quote(a) + ": its claude-code session is ([0-9a-f-]{36})")
                    .matcher(read(c.out()));
            assertTrue(sm.find(), c.why().get());
            String session = sm.group(1);
            ProcessHandle first = claude(c.state(), a, c.bin()).orElseThrow(() -> new AssertionError(c.why().get()));
            Instant lastByte = c.model().lastByteBeforeSilence();

            Instant stalled = when(Duration.ofSeconds(STALL_AFTER_S + 30), "the daemon sees the stall",
                    () -> stalls(c) == 1, c.why());
            Instant restarted = when(Duration.ofSeconds(45), "claude again, with --resume " + session, () ->
                    claude(c.state(), a, c.bin()).filter(h -> h.pid() != first.pid()
                            && cmdline(h.pid()).endsWith("--resume " + session)).isPresent(), c.why());
            Instant resumed = when(Duration.ofSeconds(45), "the resumed conversation reaches the model, answered",
                    () -> c.model().answered().size() == 1, c.why());
            long toStall = Duration.between(lastByte, stalled).toMillis();
            long toRestart = Duration.between(stalled, restarted).toMillis();
            long toResumed = Duration.between(stalled, resumed).toMillis();
            System.out.println("real claude -p, silent model stream, stallAfter " + STALL_AFTER_S + " s: last byte -> "
                    + "stall seen " + toStall + " ms; stall -> new process with --resume " + toRestart + " ms; stall -> "
                    + "resumed conversation answered " + toResumed + " ms");
            assertTrue(toStall <= (STALL_AFTER_S + 5) * 1000L, "stalled " + toStall + " ms after the last byte");
            assertTrue(toRestart <= 30_000, "restarted " + toRestart + " ms after the stall");
            assertTrue(c.model().answered().get(0) >= c.model().silenced().get(0), "the resumed conversation carries "
                    + "the stalled turn: " + c.model().answered() + " vs " + c.model().silenced());
            await(WAIT, "dead for the stall: trigger stalled, with the daemon's reason", () -> admin
                    .allTransitions(a).stream().anyMatch(t -> "dead".equals(t.to()) && "stalled".equals(t.trigger())
                            && t.reason() != null && t.reason().contains("stalled (model stream silent)")), c.why());
            await(WAIT, "one AgentStalled, with its reason", () -> events(a, "AgentStalled") == 1, c.why());
            EventView raised = admin.events(EventQuery.all().withAgent(a).withType("AgentStalled")).events().get(0);
            assertEquals("model stream silent", raised.detail().path("reason").asText(), raised.toString());
            System.out.println("real claude -p, silent model stream: last byte -> AgentStalled (its since) "
                    + Duration.between(lastByte, Instant.parse(raised.detail().path("since").asText())).toMillis()
                    + " ms");
            await(WAIT, "offline after the resumed session ended", () -> "offline".equals(admin.agent(a).status()),
                    c.why());
            assertEquals(1, stalls(c), c.why().get());
            assertEquals(1, deaths(c), c.why().get());
            await(WAIT, "one AgentProgressResumed: the stall ended with its life", () ->
                    events(a, "AgentProgressResumed") == 1, c.why());
            assertEquals(1, events(a, "AgentStalled"), c.why().get());
            System.out.println("real claude -p, silent model stream: transitions (newest first) " + admin
                    .allTransitions(a).stream().map(t -> t.to() + "(" + t.trigger() + ")").toList());
        } finally {
            stop(c);
        }
    }

    /** What the parent's first answer starts: Claude Code's subagent tool; its stream goes silent after its first event. */
    private static Consumer<FakeModel> silentSubagent() {
        return m -> {
            m.subagents(SUBAGENT_MARKER);
            m.silentStreams(1);
        };
    }

    /** Waits for the subagent's stream to go silent and the server to show it running; answers its last byte. */
    private static Instant silentSubagentShown(Case c) throws InterruptedException {
        await(WAIT, "the parent starts a subagent whose stream goes silent after its first event", () ->
                c.model().silenced().size() == 1 && c.model().requests().contains("POST /v1/messages -> tool"),
                c.why());
        await(WAIT, "its SubagentStart reached the server: GET agent shows one subagent", () -> {
            List<AgentSubagent> subs = admin.agent(c.agent()).subagents();
            return subs != null && subs.size() == 1;
        }, c.why());
        AgentSubagent sub = admin.agent(c.agent()).subagents().get(0);
        assertEquals("general-purpose", sub.type(), sub.toString());
        return c.model().lastByteBeforeSilence();
    }

    @Test
    void silentSubagentStream_underAlert_showsTheParentStalledSubagentSilent_withinTheThreshold(
            @TempDir Path runtimeDir) throws Exception {
        assumeReal();
        Case c = start("rs-sub-alert", "echo unused", silentSubagent(), runtimeDir, false, "alert");
        try {
            String a = c.agent();
            Instant lastByte = silentSubagentShown(c);
            Instant shown = when(Duration.ofSeconds(STALL_AFTER_S + 30), "the server shows the parent stalled, "
                    + SUBAGENT_SILENT, () -> {
                        AgentStalled st = admin.agent(a).stalled();
                        return st != null && SUBAGENT_SILENT.equals(st.reason());
                    }, c.why());
            long toShown = Duration.between(lastByte, shown).toMillis();
            await(WAIT, "one AgentStalled", () -> events(a, "AgentStalled") == 1, c.why());
            EventView raised = admin.events(EventQuery.all().withAgent(a).withType("AgentStalled")).events().get(0);
            long toSince = Duration.between(lastByte, Instant.parse(raised.detail().path("since").asText())).toMillis();
            System.out.println("real claude -p, a real subagent (Agent tool) whose stream goes silent, stallAfter "
                    + STALL_AFTER_S + " s, alert: subagent's last byte -> parent shown stalled (" + SUBAGENT_SILENT
                    + ") " + toShown + " ms; -> AgentStalled (its since) " + toSince + " ms; status "
                    + admin.agent(a).statusWithWait());
            assertTrue(toShown <= (STALL_AFTER_S + 5) * 1000L, "shown stalled " + toShown + " ms after the last byte");
            assertEquals(SUBAGENT_SILENT, raised.detail().path("reason").asText(), raised.toString());
            assertTrue(read(c.out()).contains(a + ": stalled: " + SUBAGENT_SILENT + " for "), c.why().get());
            assertEquals(1, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(1, events(a, "AgentStalled"), c.why().get());
            assertTrue(claude(c.state(), a, c.bin()).isPresent(), "alert leaves it running: " + c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void silentSubagentStream_underRestart_isStoppedReportedDeadAndResumedOnItsSession(@TempDir Path runtimeDir)
            throws Exception {
        assumeReal();
        Case c = start("rs-sub-restart", "echo unused", silentSubagent(), runtimeDir);
        try {
            String a = c.agent();
            Instant lastByte = silentSubagentShown(c);
            Matcher sm = Pattern.compile("hook: " + Pattern.quote(a) + ": its claude-code session is ([0-9a-f-]{36})")
                    .matcher(read(c.out()));
            assertTrue(sm.find(), c.why().get());
            String session = sm.group(1);
            ProcessHandle first = claude(c.state(), a, c.bin()).orElseThrow(() -> new AssertionError(c.why().get()));
            Instant stalled = when(Duration.ofSeconds(STALL_AFTER_S + 30), "the daemon sees the stall",
                    () -> stalls(c) == 1, c.why());
            Instant restarted = when(Duration.ofSeconds(45), "claude again, with --resume " + session, () ->
                    claude(c.state(), a, c.bin()).filter(h -> h.pid() != first.pid()
                            && cmdline(h.pid()).endsWith("--resume " + session)).isPresent(), c.why());
            Instant resumed = when(Duration.ofSeconds(45), "the resumed conversation reaches the model, answered",
                    () -> c.model().answered().size() == 1, c.why());
            long toStall = Duration.between(lastByte, stalled).toMillis();
            System.out.println("real claude -p, a real subagent whose stream goes silent, stallAfter " + STALL_AFTER_S
                    + " s, restart: subagent's last byte -> stall seen " + toStall + " ms; stall -> new process with "
                    + "--resume " + Duration.between(stalled, restarted).toMillis() + " ms; stall -> resumed "
                    + "conversation answered " + Duration.between(stalled, resumed).toMillis() + " ms; model "
                    + c.model().requests() + " answered " + c.model().answered() + " silenced " + c.model().silenced());
            assertTrue(toStall <= (STALL_AFTER_S + 5) * 1000L, "stalled " + toStall + " ms after the last byte");
            assertTrue(read(c.out()).contains(a + ": stalled: " + SUBAGENT_SILENT + " for "), c.why().get());
            await(WAIT, "dead for the stall: trigger stalled, with the daemon's reason", () -> admin
                    .allTransitions(a).stream().anyMatch(t -> "dead".equals(t.to()) && "stalled".equals(t.trigger())
                            && t.reason() != null && t.reason().contains("stalled (" + SUBAGENT_SILENT + ")")),
                    c.why());
            await(WAIT, "one AgentStalled, with its reason", () -> events(a, "AgentStalled") == 1, c.why());
            EventView raised = admin.events(EventQuery.all().withAgent(a).withType("AgentStalled")).events().get(0);
            assertEquals(SUBAGENT_SILENT, raised.detail().path("reason").asText(), raised.toString());
            await(WAIT, "offline after the resumed session ended", () -> "offline".equals(admin.agent(a).status()),
                    c.why());
            assertEquals(1, stalls(c), c.why().get());
            assertEquals(1, deaths(c), c.why().get());
            assertEquals(1, events(a, "AgentStalled"), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void slowLegitimateStream_forFiveThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        assumeReal();
        Case c = start("rs-slow", "echo step-one", m -> m.slowStreams(Duration.ofSeconds(6),
                Duration.ofSeconds(5L * STALL_AFTER_S)), runtimeDir);
        try {
            long t0 = System.nanoTime();
            // The runtime's own end: the slow answer arrives, the session ends, the agent leaves.
            await(Duration.ofSeconds(5L * STALL_AFTER_S + 90), "offline after the slow turn ended", () ->
                    c.model().answered().size() == 1 && "offline".equals(admin.agent(c.agent()).status()), c.why());
            System.out.println("real claude -p, slow stream (a ping every 6 s for " + 5 * STALL_AFTER_S + " s), "
                    + "stallAfter " + STALL_AFTER_S + " s: turn ended after "
                    + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) + " s; stalls " + stalls(c) + ", deaths "
                    + deaths(c));
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void sleepToolOfFiveThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        Case c = start("rs-sleep", "sleep " + 5 * STALL_AFTER_S, m -> { }, runtimeDir);
        try {
            long t0 = System.nanoTime();
            await(Duration.ofSeconds(5L * STALL_AFTER_S + 90), "offline after the tool and the turn ended", () ->
                    c.model().answered().size() == 1 && "offline".equals(admin.agent(c.agent()).status()), c.why());
            long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            System.out.println("real claude -p, a sleep " + 5 * STALL_AFTER_S + " tool call, stallAfter "
                    + STALL_AFTER_S + " s: turn ended after " + took + " s; stalls " + stalls(c) + ", deaths "
                    + deaths(c));
            assertTrue(took >= 5L * STALL_AFTER_S, "the tool ran its whole time: " + took + " s");
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void cpuBusyToolOfFiveThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        // A tool that spins a core for five thresholds and says nothing: its PreToolUse makes it legitimate silence.
        Case c = start("rs-cpu", "timeout " + 5 * STALL_AFTER_S + " sh -c 'while :; do :; done'; echo spun", m -> { },
                runtimeDir);
        try {
            long t0 = System.nanoTime();
            await(Duration.ofSeconds(5L * STALL_AFTER_S + 90), "offline after the busy tool and the turn ended", () ->
                    c.model().answered().size() == 1 && "offline".equals(admin.agent(c.agent()).status()), c.why());
            long took = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            System.out.println("real claude -p, a CPU-busy " + 5 * STALL_AFTER_S + " s tool call, stallAfter "
                    + STALL_AFTER_S + " s: turn ended after " + took + " s; stalls " + stalls(c) + ", deaths "
                    + deaths(c) + ", AgentStalled " + events(c.agent(), "AgentStalled"));
            assertTrue(took >= 5L * STALL_AFTER_S, "the tool ran its whole time: " + took + " s");
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(c.agent(), "AgentStalled"), c.why().get());
        } finally {
            stop(c);
        }
    }

    @Test
    void waitingForInputForTenThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        // The TUI runs a read-only command (no permission prompt), answers, and waits for its next prompt.
        Case c = start("rs-input", "echo step-one", m -> { }, runtimeDir, true);
        try {
            String a = c.agent();
            await(WAIT, "the turn ended: waiting for input", () -> {
                var w = admin.agent(a).waiting();
                return w != null && "input".equals(w.kind()) && c.model().toolCalls() >= 1;
            }, c.why());
            Instant since = admin.agent(a).waiting().since();
            await(Duration.ofSeconds(10L * STALL_AFTER_S + 30), "waiting for ten thresholds", () -> {
                var w = admin.agent(a).waiting();
                return w != null && Duration.between(since, Instant.now()).toSeconds() >= 10L * STALL_AFTER_S;
            }, c.why());
            System.out.println("real claude interactive, waiting for input " + Duration.between(since,
                    Instant.now()).toSeconds() + " s, stallAfter " + STALL_AFTER_S + " s: stalls " + stalls(c)
                    + ", deaths " + deaths(c) + ", AgentStalled " + events(a, "AgentStalled") + ", still "
                    + admin.agent(a).statusWithWait());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertEquals(0, events(a, "AgentStalled"), c.why().get());
            assertTrue(claude(c.state(), a, c.bin()).isPresent(), "the same process still runs: " + c.why().get());
        } finally {
            stop(c);
        }
    }

    private static long events(String agent, String type) {
        return admin.events(EventQuery.all().withAgent(agent).withType(type)).events().size();
    }

    @Test
    void waitingForAPersonForTenThresholds_isNoStallAndNoDeath(@TempDir Path runtimeDir) throws Exception {
        RealRuntimes.assumeLongCasesWanted();
        assumeReal();
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        Case c = start("rs-wait", "mkdir made-by-the-model", m -> { }, runtimeDir, true);
        try {
            String a = c.agent();
            await(WAIT, "the permission prompt: waiting for a person", () -> {
                var w = admin.agent(a).waiting();
                return w != null && "person".equals(w.kind());
            }, c.why());
            // The server's own record of the wait is the clock: it has lasted ten thresholds once its since is that old.
            Instant since = admin.agent(a).waiting().since();
            await(Duration.ofSeconds(10L * STALL_AFTER_S + 30), "waiting for ten thresholds", () -> {
                var w = admin.agent(a).waiting();
                return w != null && Duration.between(since, Instant.now()).toSeconds() >= 10L * STALL_AFTER_S;
            }, c.why());
            System.out.println("real claude interactive, waiting for a person " + Duration.between(since,
                    Instant.now()).toSeconds() + " s, stallAfter " + STALL_AFTER_S + " s: stalls " + stalls(c)
                    + ", deaths " + deaths(c) + ", still " + admin.agent(a).statusWithWait());
            assertEquals(0, stalls(c), c.why().get());
            assertEquals(0, deaths(c), c.why().get());
            assertTrue(claude(c.state(), a, c.bin()).isPresent(), "the same process still runs: " + c.why().get());
        } finally {
            stop(c);
        }
    }

    private static void assumeReal() {
        RealRuntimes.assumeInstalled(HookRuntime.CLAUDE_CODE);
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to find the runtime's process");
        assumeTrue(RealRuntimes.onPath("ss"), "needs ss (iproute2) to sample the model connection");
    }
}
