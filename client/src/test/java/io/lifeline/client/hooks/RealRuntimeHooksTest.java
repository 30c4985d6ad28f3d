package io.lifeline.client.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.CountingProxy;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentWaiting;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.TransitionView;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.testing.LogCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

/**
 * Real third-party runtimes against a real Lifeline Local, configured by {@code lifeline hooks install} alone
 * (direct: the hooks post to Lifeline's hook route with the agent key from the environment, through a proxy that
 * keeps Lifeline's answers). One real headless turn each (Claude Code 2.1.197, Codex CLI 0.171.0, Gemini CLI 0.61.0,
 * opencode 1.18.33, from the npm test tools, against the {@link FakeModel}) moves the agent join -> working ->
 * ready -> offline; a secret in the prompt, the tool's output and the model's last text is then in no table, no log
 * line and no event, and every answer the runtime got was empty or {@code {}}. Claude Code's and Gemini CLI's
 * interactive TUIs under a pseudo-terminal, stopped at a permission prompt, show the agent waiting for a person, and
 * it outlives ten stale-afters while the sweep runs. Every wait is a bounded poll.
 */
@Tag("real-third-party")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RealRuntimeHooksTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient admin = LocalHarness.client(local);
    private static final String agentKey = admin.createKey("agent", "runtime hooks").key();

    @RegisterExtension
    final LogCapture logs = new LogCapture();

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        assertTrue(LocalHarness.eventually(WAIT, condition), "within " + WAIT.toSeconds() + " s: " + what);
    }

    /** What the agent waits for ("input", "person"), or null. */
    private static String waiting(String agentId) {
        AgentWaiting w = admin.agent(agentId).waiting();
        return w == null ? null : w.kind();
    }

    private static List<TransitionView> transitions(String agentId) {
        List<TransitionView> all = new ArrayList<>(admin.allTransitions(agentId));
        all.sort(Comparator.comparingLong(TransitionView::seq));
        return all;
    }

    /** Whether {@code statuses} appear in this order (others may come between). */
    private static boolean inOrder(List<TransitionView> ts, List<String> statuses) {
        int i = 0;
        for (TransitionView t : ts) {
            if (i < statuses.size() && statuses.get(i).equals(t.to())) {
                i++;
            }
        }
        return i == statuses.size();
    }

    /** Installs {@code runtime}'s hooks in {@code setup}'s settings with the real CLI command, in-process. */
    private static void install(RealRuntimes.Setup setup, String agentId, String... connection) {
        List<String> args = new ArrayList<>(List.of("hooks", "install", setup.runtime().wire(), "--agent", agentId,
                "--team", LifelineLocal.LOCAL_TEAM, "--direct"));
        args.add(setup.runtime() == HookRuntime.CODEX ? "--user" : "--project-dir=" + setup.work());
        args.addAll(List.of(connection));
        Map<String, String> env = new HashMap<>(setup.env());
        env.put("XDG_CONFIG_HOME", setup.home().resolve(".config").toString());
        env.put("LIFELINE_API_KEY", agentKey); // the key the hooks will read: install checks Lifeline accepts it
        RealRuntimeForwardersTest.install(env, setup.work(), args.toArray(String[]::new));
    }

    /** The secret anywhere in either DynamoDB Local table, a log line or an event. */
    private void assertSecretNowhere(String secret) {
        for (String table : List.of(local.tables().live(), local.tables().ledger())) {
            for (Map<String, AttributeValue> item : local.dynamo().scanPaginator(ScanRequest.builder().tableName(table)
                    .build()).items()) {
                assertFalse(item.toString().contains(secret), table + " holds the secret: " + item);
            }
        }
        for (String line : List.copyOf(logs.lines())) {
            assertFalse(line.contains(secret), "a log line holds the secret: " + line);
        }
        for (EventView e : admin.events(EventQuery.all().withLimit(100)).events()) {
            assertFalse(String.valueOf(e.detail()).contains(secret), "an event holds the secret: " + e);
        }
    }

    /**
     * The turn's transitions name their sources: working from the prompt's activity ({@code sdk_session_updated}),
     * ready from the turn's end ({@code sdk_session_idle}), offline from the session's end (a leave), each with the
     * runtime's event.
     */
    private static void assertSources(List<TransitionView> ts, HookRuntime runtime) {
        TransitionView working = ts.stream().filter(t -> "working".equals(t.to())).findFirst().orElseThrow();
        assertTrue(working.reason().contains("sdk_session_updated") && working.reason().contains("hook "
                + runtime.wire()), working.toString());
        TransitionView ready = ts.stream().filter(t -> "ready".equals(t.to()) && t.seq() > working.seq()).findFirst()
                .orElseThrow();
        assertTrue(ready.reason().contains("sdk_session_idle") && ready.reason().contains("hook " + runtime.wire()),
                ready.toString());
        if (runtime != HookRuntime.OPENCODE) {
            TransitionView offline = ts.get(ts.size() - 1);
            assertEquals("offline", offline.to());
            assertEquals("leave", offline.trigger());
            assertTrue(offline.reason().contains("SessionEnd"), offline.toString());
        }
    }

    /** Every answer Lifeline gave a hook was 200 with an empty body or {@code {}}: a runtime never sees a block. */
    private static int assertHookAnswersEmpty(CountingProxy proxy, String runtime) {
        List<CountingProxy.Answer> hooks = proxy.answers().stream()
                .filter(a -> a.path().endsWith("/hooks/" + runtime)).toList();
        for (CountingProxy.Answer a : hooks) {
            assertEquals(200, a.status(), a.toString());
            assertTrue(a.body().isBlank() || a.body().strip().equals("{}"), a.toString());
        }
        return hooks.size();
    }

    @ParameterizedTest
    @EnumSource(HookRuntime.class)
    void oneRealHeadlessTurn_afterHooksInstall_movesTheAgentJoinWorkingReadyOffline_andTheSecretIsNowhere(
            HookRuntime runtime, @TempDir Path dir) throws Exception {
        RealRuntimes.assumeInstalled(runtime);
        String secret = "lifeline-secret-" + UUID.randomUUID();
        String agentId = "rt-" + runtime.wire();
        admin.register(RegisterAgent.of(agentId, agentId, "worker").withStaleAfterSeconds(600));
        try (FakeModel model = FakeModel.start("echo " + secret, "Done: " + secret);
             CountingProxy proxy = new CountingProxy(local.url())) {
            RealRuntimes.Setup setup = RealRuntimes.setup(runtime, dir, model.url());
            // Codex and Gemini CLI post to the heartbeat Function URL, Claude Code and opencode to the API's URL.
            boolean functionUrl = runtime == HookRuntime.CODEX || runtime == HookRuntime.GEMINI;
            install(setup, agentId, functionUrl ? new String[] {"--url=" + proxy.url(),
                    "--heartbeat-url=" + proxy.heartbeatUrl(local.heartbeatUrl())} : new String[] {"--url=" + proxy.url()});
            Map<String, String> env = setup.env();
            env.put("LIFELINE_API_KEY", agentKey);

            RealRuntimes.Run turn = RealRuntimes.run(setup.headless("Run the command for " + secret + "."), env,
                    setup.work(), 240);

            assertEquals(0, turn.exit(), turn.stdout() + "\n" + turn.stderr());
            assertTrue(turn.stdout().contains("Done: " + secret), turn.stdout());
            List<String> expected = runtime == HookRuntime.OPENCODE ? List.of("ready", "working", "ready")
                    : List.of("ready", "working", "ready", "offline");
            await(agentId + " " + expected, () -> inOrder(transitions(agentId), expected));
            List<TransitionView> ts = transitions(agentId);
            assertSources(ts, runtime);
            int posts = assertHookAnswersEmpty(proxy, runtime.wire());
            System.out.printf("hooks: %s via Lifeline Local: turn %d ms, %d hook posts, transitions %s%n",
                    runtime.wire(), turn.millis(), posts, ts.stream().map(t -> t.to() + "(" + t.trigger() + "/"
                            + t.reason() + ")").toList());
            assertTrue(proxy.count(s -> s.path().startsWith(functionUrl ? "/lambda-url/" : "/v1/")
                    && s.path().endsWith("/hooks/" + runtime.wire())) == posts, proxy.seen().toString());
            if (runtime == HookRuntime.OPENCODE) {
                assertEquals("ready", admin.agent(agentId).status(), "opencode run sends no exit event");
                assertEquals("input", waiting(agentId), "so it waits for its next prompt, under that allowance");
            }
            assertSecretNowhere(secret);
        }
    }

    @ParameterizedTest
    @EnumSource(value = HookRuntime.class, names = {"CLAUDE_CODE", "GEMINI"})
    void interactive_atAPermissionPrompt_waitsForAPerson_outlivesTenStaleAfters_thenLeavesOnExit(HookRuntime runtime,
            @TempDir Path dir) throws Exception {
        RealRuntimes.assumeInstalled(runtime);
        assumeTrue(RealRuntimes.onPath("script"), "script (util-linux) is not installed: it gives the TUI a pty");
        String agentId = "rt-tty-" + runtime.wire();
        String control = "rt-control-" + runtime.wire();
        admin.register(RegisterAgent.of(agentId, agentId, "worker").withStaleAfterSeconds(2));
        admin.register(RegisterAgent.of(control, control, "worker").withStaleAfterSeconds(2));
        try (FakeModel model = FakeModel.start("mkdir made-by-the-model", "Done.");
             CountingProxy proxy = new CountingProxy(local.url())) {
            RealRuntimes.Setup setup = RealRuntimes.setup(runtime, dir, model.url());
            install(setup, agentId, "--url=" + proxy.url());
            Map<String, String> env = setup.env();
            env.put("LIFELINE_API_KEY", agentKey);
            env.put("TERM", "xterm-256color");
            ProcessBuilder pb = new ProcessBuilder("script", "-qfc", setup.interactive("Make the directory."),
                    "/dev/null").directory(setup.work().toFile());
            pb.environment().clear();
            pb.environment().putAll(env);
            pb.redirectOutput(dir.resolve("tty.out").toFile()).redirectErrorStream(true);
            Process tui = pb.start(); // stdin: an idle pipe, held open and never written
            try {
                await("the permission prompt: waiting for a person", () ->
                        "person".equals(waiting(agentId)));
                admin.join(control);
                long sweepsBefore = sweeps();
                long since = System.nanoTime();
                Duration tenStaleAfters = Duration.ofSeconds(10 * 2);
                boolean[] killed = {false};
                assertTrue(LocalHarness.eventually(tenStaleAfters.plusSeconds(40), () -> {
                    String status = admin.agent(agentId).status();
                    killed[0] |= !("ready".equals(status) || "working".equals(status));
                    return killed[0] || System.nanoTime() - since >= tenStaleAfters.toNanos()
                            && !"ready".equals(admin.agent(control).status()) && sweeps() - sweepsBefore >= 10;
                }), "ten stale-afters passed, the silent control agent was found stale, the sweep ran");
                assertFalse(killed[0], "the agent waiting for a person was never marked dead: "
                        + transitions(agentId));
                assertEquals("person", waiting(agentId));
                System.out.printf("hooks: %s interactive: %d sweeps while waiting for a person, transitions %s%n",
                        runtime.wire(), sweeps() - sweepsBefore, transitions(agentId).stream()
                        .map(t -> t.to() + "(" + t.trigger() + ")").toList());

                tui.descendants().forEach(ProcessHandle::destroy); // SIGTERM: the runtime ends its session
                await("SessionEnd: offline", () -> "offline".equals(admin.agent(agentId).status()));
                assertHookAnswersEmpty(proxy, runtime.wire());
            } finally {
                tui.descendants().forEach(ProcessHandle::destroyForcibly);
                tui.destroyForcibly();
                tui.waitFor(10, TimeUnit.SECONDS);
            }
            assertFalse(Files.exists(setup.work().resolve("made-by-the-model")), "the tool never ran: nobody allowed it");
        }
    }

    /** The sweep's runs so far in this test (its one log line each). */
    private long sweeps() {
        return List.copyOf(logs.lines()).stream().filter(l -> l.contains("\"msg\":\"sweep\"")).count();
    }
}
