package io.lifeline.client.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.cli.LifelineCli;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.hooks.HookSignal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import picocli.CommandLine;

/**
 * Real third-party runtimes (Claude Code, Codex CLI, Gemini CLI, opencode from the npm test tools), each after
 * {@code lifeline hooks install RUNTIME --via-daemon}, run one real headless turn against the {@link FakeModel}
 * with a {@link HookRecorder} standing where the daemon's channel ({@code $LIFELINE_DAEMON}) would be: every hook
 * arrives there as the runtime's own JSON with the agent's header and no key, the hooks never stop the turn, and
 * the events read as a session start, a tool call, the turn's end and (but for opencode's {@code run}) the session's
 * end. Prints each runtime's turn time and hook events per turn.
 */
@Tag("real-third-party")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RealRuntimeForwardersTest {
    private static final String SECRET = "lifeline-forwarder-secret-5521";
    private static FakeModel model;
    private static HookRecorder recorder;

    @BeforeAll
    static void start() throws Exception {
        model = FakeModel.start("echo " + SECRET, "Done: the command printed it.");
        recorder = HookRecorder.start();
    }

    @AfterAll
    static void stop() {
        if (model != null) {
            model.close();
        }
        if (recorder != null) {
            recorder.close();
        }
    }

    static int install(Map<String, String> env, Path workDir, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }, workDir));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        assertEquals(0, exit, out + "\n" + err);
        return exit;
    }

    @ParameterizedTest
    @EnumSource(HookRuntime.class)
    void headlessTurn_viaTheDaemonsChannel_postsEveryHookAsTheAgentWithoutTheKey_andTheTurnFinishes(HookRuntime runtime,
            @TempDir Path dir) throws Exception {
        RealRuntimes.assumeInstalled(runtime);
        RealRuntimes.Setup setup = RealRuntimes.setup(runtime, dir, model.url());
        String agent = "fw-" + runtime.wire();
        Map<String, String> env = setup.env();
        // --no-check: a recorder stands where the daemon would; no Lifeline to ask.
        List<String> install = new ArrayList<>(List.of("hooks", "install", runtime.wire(), "--agent", agent,
                "--via-daemon", "--no-check"));
        install.add(runtime == HookRuntime.CODEX ? "--user" : "--project-dir=" + setup.work());
        install(env, setup.work(), install.toArray(String[]::new));

        env.put("LIFELINE_DAEMON", recorder.url().toString());
        env.put("LIFELINE_API_KEY", "key-that-must-stay-home");
        RealRuntimes.Run turn = RealRuntimes.run(setup.headless("Run the command, then say done."), env, setup.work(),
                240);

        assertEquals(0, turn.exit(), turn.stdout() + "\n" + turn.stderr());
        assertTrue(turn.stdout().contains("Done: the command printed it."), turn.stdout());
        List<HookRecorder.Post> posts = recorder.posts().stream()
                .filter(p -> agent.equals(p.headers().get("X-Lifeline-Agent"))).toList();
        List<String> events = new ArrayList<>();
        List<HookSignal> signals = new ArrayList<>();
        for (HookRecorder.Post p : posts) {
            assertEquals("/hooks/" + runtime.wire(), p.path());
            assertFalse(p.headers().containsKey("Authorization"), "the daemon holds the key");
            HookEvent e = HookReader.read(runtime, p.body().getBytes(StandardCharsets.UTF_8));
            events.add(e.event() + (e.detail() == null ? "" : "{" + e.detail() + "}"));
            signals.add(e.signal());
        }
        System.out.printf("hooks: %s headless turn %d ms, %d hook events: %s%n", runtime.wire(), turn.millis(),
                posts.size(), events);
        assertEquals(HookSignal.SESSION_STARTED, signals.get(0), events.toString());
        int tool = signals.indexOf(HookSignal.TOOL);
        assertTrue(tool > 0, "a tool call: " + events);
        assertTrue(signals.subList(tool, signals.size()).contains(HookSignal.TURN_ENDED), "then the turn's end: "
                + events);
        if (runtime == HookRuntime.OPENCODE) {
            assertFalse(signals.contains(HookSignal.SESSION_ENDED), "opencode run sends no exit event: " + events);
        } else {
            // Codex runs notify apart from its hooks: its agent-turn-complete may land after SessionEnd.
            List<HookSignal> hooks = new ArrayList<>(signals);
            int notify = events.indexOf("agent-turn-complete");
            if (runtime == HookRuntime.CODEX && notify >= 0) {
                hooks.remove(notify);
            }
            assertEquals(HookSignal.SESSION_ENDED, hooks.get(hooks.size() - 1), events.toString());
        }
    }
}
