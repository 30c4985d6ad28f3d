package io.lifeline.client.daemon;

import static io.lifeline.client.daemon.HookedDaemon.claude;
import static io.lifeline.client.daemon.HookedDaemon.post;
import static io.lifeline.client.daemon.RuntimeStandIn.lines;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.CountingProxy;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's hook sink: a runtime's hooks post to the daemon's loopback channel, answered {@code 200 {}} at once,
 * and what they say (working, ready, waiting, a session's end, a failure) reaches Lifeline in the daemon's batch or
 * its own calls, not one write per hook. A restart of a runtime resumes the session the hooks named.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class HookSinkTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    @Test
    void hooks_areAnswered200_andFoldIntoTheNextBatch_noRequestPerHook() throws Exception {
        String a = "hs-fold";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-hs"));
        try (CountingProxy proxy = new CountingProxy(local.url());
             HookedDaemon h = new HookedDaemon(LifelineClient.builder().url(proxy.url()).team(LifelineLocal.LOCAL_TEAM)
                     .apiKey(local.adminKey()).retry(RetryPolicy.none()).build(), "host-hs", a, Duration.ofMinutes(10),
                     dir).startProcess()) {
            LocalBeats channel = h.channel;
            HostDaemon d = h.daemon;
            assertEquals(List.of(a), d.joinAll());
            int before = proxy.seen().size();
            HttpResponse<String> r = post(channel, "claude-code", a, claude("PreToolUse",
                    ",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo secret-tool-input\"}"));
            assertEquals(200, r.statusCode());
            assertEquals("{}", r.body());
            assertEquals(200, post(channel, "claude-code", null, claude("PostToolUse",
                    ",\"tool_response\":{\"stdout\":\"x\"}")).statusCode(), "one agent: the header may be left out");
            assertEquals(before, proxy.seen().size(), "no request per hook");
            assertEquals("3f1c0d52-7a7e-4c43-9a55-0c6a3b1f0e11", channel.session(a));

            TickReport round = d.runOnce();
            assertEquals(1, round.batchCalls());
            assertEquals("working", client.agent(a).status(), "the tool call went with the batch");

            post(channel, "claude-code", a, claude("Stop", ",\"last_assistant_message\":\"secret\""));
            d.runOnce();
            assertEquals("ready", client.agent(a).status(), "the turn's end went with the next batch");
            assertEquals("input", channel.hookState(a).waiting());
            assertEquals("input", client.agent(a).waiting().kind(), "and its wait for the next prompt");

            post(channel, "claude-code", a, claude("UserPromptSubmit", ",\"prompt\":\"secret\""));
            d.runOnce();
            assertEquals("working", client.agent(a).status());
            assertTrue(client.agent(a).waiting() == null || client.agent(a).waiting().kind() == null,
                    "a new turn ends the wait: " + client.agent(a).waiting());
        }
    }

    @Test
    void hooks_refuseAnUnknownRuntimeOrAgent_andAskForTheAgentWhenTheDaemonRunsSeveral() throws Exception {
        try (LocalBeats channel = LocalBeats.start(List.of("x1", "x2"), Clock.systemUTC())) {
            assertEquals(404, post(channel, "cursor", "x1", "{}").statusCode());
            assertEquals(404, post(channel, "codex", "nobody", "{}").statusCode());
            HttpResponse<String> noAgent = post(channel, "codex", null, "{}");
            assertEquals(400, noAgent.statusCode());
            assertTrue(noAgent.body().contains("AGENT_REQUIRED"), noAgent.body());
            assertEquals(200, post(channel, "codex", "x2", "{\"type\":\"agent-turn-complete\",\"thread-id\":\"t-1\","
                    + "\"last-assistant-message\":\"secret\"}").statusCode());
            assertEquals("ready", channel.hookState("x2").status());
            assertEquals("t-1", channel.session("x2"));
            assertEquals(200, post(channel, "codex", "x2", "{\"hook_event_name\":\"UserPromptSubmit\","
                    + "\"session_id\":\"t-1\"}").statusCode());
            // Codex's TUI asks the model apart on a side thread as a turn starts; its notify names that thread.
            assertEquals(200, post(channel, "codex", "x2",
                    "{\"type\":\"agent-turn-complete\",\"thread-id\":\"t-side\"}").statusCode());
            assertEquals("working", channel.hookState("x2").status(), "another thread's turn end: the turn goes on");
            assertTrue(channel.hookState("x2").inTurn());
            assertEquals("t-1", channel.session("x2"), "the session to resume stays the agent's own");
            assertNull(channel.hookState("x1").status());
        }
    }

    @Test
    void waitingForAPerson_staysAliveWhileTheProcessLives_evenPastItsStaleAfter() throws Exception {
        String a = "hs-wait";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-hw"));
        try (HookedDaemon h = new HookedDaemon(client, "host-hw", a, Duration.ofMillis(300), dir).startProcess()) {
            LocalBeats channel = h.channel;
            HostDaemon d = h.daemon;
            post(channel, "claude-code", a, claude("UserPromptSubmit", ",\"prompt\":\"secret\""));
            post(channel, "claude-code", a, claude("Notification", ",\"notification_type\":\"permission_prompt\","
                    + "\"message\":\"Claude needs your permission\""));
            d.start();
            // Stale after 2 s, grace 2, sweeps every 500 ms (LocalHarness): 6 s waiting with no hook is three times it.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            while (System.nanoTime() < until) {
                String status = client.agent(a).status();
                assertTrue("ready".equals(status) || "working".equals(status), "alive while waiting: " + status);
                Thread.sleep(200);
            }
            assertEquals("person", channel.hookState(a).waiting());
            assertEquals("person", client.agent(a).waiting().kind(), "the view says what it waits for");
        }
    }

    @Test
    void sessionEnded_leaves_andTheExitAfterItIsNoCrash_failedSendsOnlyItsCategory() throws Exception {
        String a = "hs-end";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-he"));
        try (HookedDaemon h = new HookedDaemon(client, "host-he", a, Duration.ofMinutes(10), dir).startProcess()) {
            LocalBeats channel = h.channel;
            CommandProcesses p = h.processes;
            HostDaemon d = h.daemon;
            d.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));

            post(channel, "claude-code", a, claude("StopFailure", ",\"error\":\"overloaded: secret-error-text 529\""));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> client.agent(a).lastError() != null));
            var stored = client.agent(a).lastError();
            assertEquals("claude-code StopFailure: transient (rate limit, timeout or overload) (reported by the "
                    + "runtime's hook; its text is not kept)", stored.path("message").asText());
            assertEquals("transient", stored.path("category").asText());
            assertFalse(stored.toString().contains("secret"), "only the category is stored: " + stored);

            post(channel, "claude-code", a, claude("SessionEnd", ",\"reason\":\"prompt_input_exit\""));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> "offline".equals(client.agent(a).status())),
                    "the agent left when its session ended");
            long pid = p.pid(a);
            ProcessHandle.of(pid).orElseThrow().destroy();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> !p.isRunning(a)));
            TickReport r = d.runOnce();
            assertTrue(r.crashesReported().isEmpty() && r.restarted().isEmpty() && r.batchCalls() == 0, r.toString());
            assertEquals("offline", client.agent(a).status());
            assertTrue(client.allTransitions(a).stream().noneMatch(t -> "reported_failure".equals(t.trigger())));
        }
    }

    @Test
    void aRuntimesRestart_resumesTheSessionItsHooksNamed() throws Exception {
        String a = "hs-resume";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-hr"));
        Path args = dir.resolve("args");
        Path fake = dir.resolve("claude");
        RuntimeStandIn.write(fake, args, "exec sleep 300\n");
        String command = "'" + fake + "' -p go";
        try (HookedDaemon h = new HookedDaemon(client, "host-hr", a, command, Duration.ofMinutes(10), dir,
                hooked -> hooked.processes.restartCommand(a, () -> hooked.channel.session(a) == null ? null
                        : AgentRuntime.CLAUDE_CODE.resumeCommand(command, hooked.channel.session(a)))).startProcess()) {
            LocalBeats channel = h.channel;
            CommandProcesses p = h.processes;
            HostDaemon d = h.daemon;
            d.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));
            post(channel, "claude-code", a, claude("SessionStart", ",\"source\":\"startup\""));
            long first = p.pid(a);
            ProcessHandle.of(first).orElseThrow().destroyForcibly();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> p.isRunning(a) && p.pid(a) != first
                    && lines(args).size() == 2), "restarted");
            assertEquals(List.of("-p go", "-p go --resume 3f1c0d52-7a7e-4c43-9a55-0c6a3b1f0e11"),
                    Files.readAllLines(args));
        }
    }

    @Test
    void resumeCommand_perRuntime() {
        String id = "3f1c0d52-7a7e-4c43-9a55-0c6a3b1f0e11";
        assertEquals("claude -p hi --resume " + id, AgentRuntime.CLAUDE_CODE.resumeCommand("claude -p hi", id));
        assertEquals("gemini -p hi --yolo --resume " + id, AgentRuntime.GEMINI.resumeCommand("gemini -p hi --yolo", id));
        assertEquals("opencode run hi --session ses_1", AgentRuntime.OPENCODE.resumeCommand("opencode run hi", "ses_1"));
        assertEquals("codex exec resume " + id + " --json go", AgentRuntime.CODEX.resumeCommand("codex exec --json go", id));
        assertEquals("cd /w && codex resume " + id + " --yolo", AgentRuntime.CODEX.resumeCommand("cd /w && codex --yolo", id));
        assertEquals("cd '/w' && exec '/n/.bin/codex' 'exec' resume " + id + " '--json' 'go'", AgentRuntime.CODEX
                .resumeCommand("cd '/w' && exec '/n/.bin/codex' 'exec' '--json' 'go'", id), "quoted words");
        assertEquals("/opt/codex/bin/codex e resume " + id + " go", AgentRuntime.CODEX
                .resumeCommand("/opt/codex/bin/codex e go", id), "the program's word, not a directory's");
        assertEquals("export LIFELINE_RESUME_ARGS='--resume " + id + "'; script -qfc \"claude $LIFELINE_RESUME_ARGS\"",
                AgentRuntime.CLAUDE_CODE.resumeCommand("script -qfc \"claude $LIFELINE_RESUME_ARGS\"", id));
        assertEquals("claude", AgentRuntime.CLAUDE_CODE.resumeCommand("claude", "bad id; rm -rf /"), "not an id");
    }
}
