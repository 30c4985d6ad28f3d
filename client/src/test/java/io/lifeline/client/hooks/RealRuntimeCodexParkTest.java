package io.lifeline.client.hooks;

import static io.lifeline.client.hooks.RealRuntimes.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parked, not dead nor gone, at a usage limit, with a real Codex CLI (0.171.0, from the npm test tools) run headless
 * ({@code codex exec --json}) by {@code lifeline daemon} in its own JVM against a real Lifeline Local and the
 * {@link FakeModel}, which answers every Responses request 429 {@code usage_limit_reached} (with {@code resets_at})
 * until a reset 40 to 100 s away. Codex makes one request, fires no failure hook and ends its session
 * ({@code SessionEnd}, then exit 1); the daemon reads the session's rollout file the hook names, finds its last turn
 * ended at {@code usage_limit_exceeded}, parks the agent until the reset, and at the reset runs
 * {@code codex exec resume <session>} with the "continue" prompt, which the model answers.
 *
 * <p>Codex words the reset to the minute, rounded down ("Try again at 5:49 PM."), so the daemon resumes at the end of
 * the minute it names: up to 60 s after the provider's reset. The test puts the reset at a minute's last second, so
 * "answered within 30 s of the reset" measures the daemon, not Codex's rounding. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class RealRuntimeCodexParkTest {
    private static final int MIN_RESET_S = 40;

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);

    @TempDir
    Path dir;

    /** Polls every 50 ms for at most {@code wait}; answers when the condition first held. */
    private static Instant when(Duration wait, String what, BooleanSupplier condition, Supplier<String> why)
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

    private static long events(String agentId, String type) {
        return admin.events(EventQuery.all().withAgent(agentId).withType(type)).events().size();
    }

    private static long transitionsTo(String agentId, String state) {
        return admin.allTransitions(agentId).stream().filter(t -> t.to().startsWith(state)).count();
    }

    /** The text of Codex's rollout files under its CODEX_HOME ("" while there are none). */
    private static String rollouts(Path home) {
        Path sessions = home.resolve(".codex").resolve("sessions");
        if (!Files.isDirectory(sessions)) {
            return "";
        }
        try (Stream<Path> files = Files.walk(sessions)) {
            StringBuilder all = new StringBuilder();
            files.filter(p -> p.toString().endsWith(".jsonl")).forEach(p -> all.append(read(p)));
            return all.toString();
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Test
    void usageLimit_parksTheCodexAgent_thenTheDaemonResumesItsSessionAtTheReset(@TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeInstalled(HookRuntime.CODEX);
        String bin = RealRuntimes.bin(HookRuntime.CODEX).toString();
        assumeTrue(bin.matches("[A-Za-z0-9_./-]+"), "the codex path is one plain shell word: " + bin);
        String a = "rp-codex-limit";
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-" + a).withStaleAfterSeconds(20));
        // The reset: a minute's last second, at least 40 s away (Codex names the minute; the daemon, its end).
        Instant minuteEnd = Instant.now().plusSeconds(MIN_RESET_S + 1).truncatedTo(ChronoUnit.MINUTES).plusSeconds(60);
        Instant reset = minuteEnd.minusSeconds(1);
        try (FakeModel model = FakeModel.start("echo step-one", "Done.")) {
            model.usageLimitedUntil(reset);
            RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CODEX, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "codex", "--agent", a,
                    "--via-daemon", "--no-check", "--user");
            Path out = dir.resolve(a + ".out");
            // As a person writes it: the daemon adds "resume <session>" after "codex exec" and sets the prompt.
            String run = "exec 0</dev/null " + bin + " exec --skip-git-repo-check "
                    + "--dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust --json "
                    + "\"${LIFELINE_RESUME_PROMPT:-Run the command.}\"";
            Process daemon = RealRuntimes.daemon(local, dir, out, env, List.of("--host", "h-" + a, "--agent", a
                    + "=cd '" + setup.work() + "' && " + run, "--runtime", a + "=codex", "--interval", "1s",
                    "--state-dir", dir.resolve("state").toString(), "--log-dir", dir.resolve("logs").toString()));
            Supplier<String> why = () -> read(out) + "\ncodex's log:\n" + read(dir.resolve("logs").resolve(a
                    + ".log")) + "\nmodel: " + model.requests() + "\ntransitions: " + admin.allTransitions(a);
            try {
                Instant parkedSeen = when(Duration.ofSeconds(MIN_RESET_S), "parked before the reset",
                        () -> admin.agent(a).parked() != null, why);
                AgentView parked = admin.agent(a);
                assertTrue(parked.alive(), why.get());
                Instant until = parked.parked().until();
                assertEquals(minuteEnd, until, "parked until the end of the minute Codex named\n" + why.get());
                assertEquals(1, model.limited().size(), "Codex asked once\n" + why.get());
                while (Instant.now().isBefore(reset)) {
                    AgentView v = admin.agent(a);
                    assertTrue(v.alive(), "alive while parked: " + v.status() + "\n" + why.get());
                    Thread.sleep(500);
                }
                assertEquals(0, transitionsTo(a, "offline"), "its SessionEnd at the limit is no leave\n" + why.get());
                assertEquals(0, transitionsTo(a, "dead"), "its exit at the limit is no crash\n" + why.get());
                Instant answered = when(Duration.ofSeconds(45), "the resumed session reaches the model, answered",
                        () -> model.requests().stream().anyMatch(r -> r.endsWith("-> tool") || r.endsWith("-> text")),
                        why);
                Instant resumed = when(Duration.ofSeconds(30), "the park ended",
                        () -> admin.agent(a).parked() == null, why);
                when(Duration.ofSeconds(30), "the resumed session was given the continue prompt",
                        () -> rollouts(setup.home()).contains("\"text\":\"continue\""),
                        () -> why.get() + "\n" + rollouts(setup.home()));
                when(Duration.ofSeconds(30), "one AgentParked and one AgentResumed", () -> events(a, "AgentParked")
                        == 1 && events(a, "AgentResumed") == 1, why);
                long answeredAfter = Duration.between(reset, answered).toMillis();
                long resumedAfter = Duration.between(reset, resumed).toMillis();
                System.out.println("real codex exec, a 429 usage_limit_reached with its reset "
                        + Duration.between(model.limited().get(0), reset).toSeconds() + " s away: parked seen "
                        + Duration.between(model.limited().get(0), parkedSeen).toMillis() + " ms after the 429 ("
                        + model.limited().size() + " answered 429), until " + until + " (reset " + reset
                        + "); resumed session answered " + answeredAfter + " ms after the reset, park ended "
                        + resumedAfter + " ms after it; deaths " + transitionsTo(a, "dead") + "; the daemon: "
                        + read(out).lines().filter(l -> l.contains("usage limit")).toList());
                assertTrue(answeredAfter <= 30_000, "resumed " + answeredAfter + " ms after the reset");
                assertEquals(0, transitionsTo(a, "dead"), why.get());
            } finally {
                daemon.destroy();
                if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
                    daemon.destroyForcibly();
                }
            }
        }
    }
}
