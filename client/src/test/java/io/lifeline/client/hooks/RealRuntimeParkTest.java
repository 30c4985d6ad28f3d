package io.lifeline.client.hooks;

import static io.lifeline.client.hooks.RealRuntimes.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * Parked, not dead, at a usage limit, with a real Claude Code (2.1.197, from the npm test tools) run by
 * {@code lifeline daemon} in its own JVM against a real Lifeline Local and the {@link FakeModel}, which answers every
 * model request 429 until a reset {@value #RESET_S} s after the test starts (scaled: a real limit resets hours away).
 * Claude Code's own retries are off ({@code CLAUDE_CODE_MAX_RETRIES=0}), as they run out on a limit of hours: it gives
 * up at once with its {@code StopFailure} hook ({@code error: "rate_limit"}), whose message carries the reset; the
 * agent is parked until then (alive, not dead), and at the reset the daemon starts Claude Code again on its session
 * with the "continue" prompt, which the model answers. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RealRuntimeParkTest {
    private static final int RESET_S = 40;

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

    private static long deaths(String agentId) {
        return admin.allTransitions(agentId).stream().filter(t -> t.to().startsWith("dead")).count();
    }

    /** The text of the runtime's session transcripts under its HOME ("" while there are none). */
    private static String transcripts(Path home) {
        Path projects = home.resolve(".claude").resolve("projects");
        if (!Files.isDirectory(projects)) {
            return "";
        }
        try (Stream<Path> files = Files.walk(projects)) {
            StringBuilder all = new StringBuilder();
            files.filter(p -> p.toString().endsWith(".jsonl")).forEach(p -> all.append(read(p)));
            return all.toString();
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Test
    void usageLimit_parksTheAgent_thenTheDaemonResumesItsSessionAtTheReset(@TempDir Path runtimeDir)
            throws Exception {
        RealRuntimes.assumeInstalled(HookRuntime.CLAUDE_CODE);
        String a = "rp-limit";
        admin.register(RegisterAgent.of(a, a, "worker").withHost("h-" + a).withStaleAfterSeconds(20));
        Instant reset = Instant.now().plusSeconds(RESET_S);
        try (FakeModel model = FakeModel.start("echo step-one", "Done.")) {
            model.rateLimitedUntil(reset);
            RealRuntimes.Setup setup = RealRuntimes.setup(HookRuntime.CLAUDE_CODE, runtimeDir, model.url());
            Map<String, String> env = setup.env();
            env.put("CLAUDE_CODE_MAX_RETRIES", "0");
            RealRuntimeForwardersTest.install(env, setup.work(), "hooks", "install", "claude-code", "--agent", a,
                    "--via-daemon", "--no-check", "--project-dir=" + setup.work());
            String bin = RealRuntimes.bin(HookRuntime.CLAUDE_CODE).toString();
            Path out = dir.resolve(a + ".out");
            String run = "exec 0</dev/null '" + bin + "' -p \"${LIFELINE_RESUME_PROMPT:-Run the command.}\" "
                    + "--output-format json --dangerously-skip-permissions";
            Process daemon = RealRuntimes.daemon(local, dir, out, env, List.of("--host", "h-" + a, "--agent", a
                    + "=cd '" + setup.work() + "' && " + run, "--runtime", a + "=claude-code", "--interval", "1s",
                    "--state-dir", dir.resolve("state").toString(), "--log-dir", dir.resolve("logs").toString()));
            Supplier<String> why = () -> read(out) + "\nclaude's log:\n" + read(dir.resolve("logs").resolve(a
                    + ".log")) + "\nmodel: " + model.requests() + "\ntransitions: " + admin.allTransitions(a);
            try {
                Instant parkedSeen = when(Duration.ofSeconds(RESET_S), "parked before the reset",
                        () -> admin.agent(a).parked() != null, why);
                AgentView parked = admin.agent(a);
                assertTrue(parked.alive(), why.get());
                Instant until = parked.parked().until();
                // "Please try again in Ns." with N rounded up, read when the hook came: at or just after the reset.
                assertTrue(!until.isBefore(reset.minusSeconds(1)) && !until.isAfter(reset.plusSeconds(3)),
                        "parked until " + until + ", the reset is " + reset + "\n" + why.get());
                // Alive throughout the park: sampled until the reset.
                while (Instant.now().isBefore(reset)) {
                    AgentView v = admin.agent(a);
                    assertTrue(v.alive(), "alive while parked: " + v.status() + "\n" + why.get());
                    Thread.sleep(500);
                }
                Instant answered = when(Duration.ofSeconds(45), "the resumed session reaches the model, answered",
                        () -> model.requests().stream().anyMatch(r -> r.endsWith("-> tool") || r.endsWith("-> text")),
                        why);
                Instant resumed = when(Duration.ofSeconds(30), "the park ended",
                        () -> admin.agent(a).parked() == null, why);
                // The resumed runtime writes its prompt to the session's transcript as it starts: a bounded wait.
                when(Duration.ofSeconds(30), "the resumed session was given the continue prompt",
                        () -> transcripts(setup.home()).contains("\"content\":\"continue\""),
                        () -> why.get() + "\n" + transcripts(setup.home()));
                when(Duration.ofSeconds(30), "one AgentParked and one AgentResumed", () -> events(a, "AgentParked")
                        == 1 && events(a, "AgentResumed") == 1, why);
                long limitedTo = Duration.between(reset, answered).toMillis();
                long resumedAfter = Duration.between(reset, resumed).toMillis();
                System.out.println("real claude -p, a 429 usage limit with its reset " + RESET_S + " s away: parked "
                        + "seen " + Duration.between(model.limited().get(0), parkedSeen).toMillis() + " ms after the "
                        + "429 (" + model.limited().size() + " answered 429), until " + until + " (reset " + reset
                        + "); resumed session answered " + limitedTo + " ms after the reset, park ended "
                        + resumedAfter + " ms after it; deaths " + deaths(a));
                assertTrue(limitedTo <= 30_000, "resumed " + limitedTo + " ms after the reset");
                assertEquals(0, deaths(a), why.get());
                assertNotNull(admin.agent(a).status());
            } finally {
                daemon.destroy();
                if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
                    daemon.destroyForcibly();
                }
            }
        }
    }
}
