package io.lifeline.client.daemon;

import static io.lifeline.client.daemon.RuntimeStandIn.lines;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.cli.LifelineCli;
import io.lifeline.client.cli.Main;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code lifeline daemon} as a person runs it: the agents it refuses or registers before starting anything, and a
 * daemon in its own JVM killed with kill -9, whose commands must not run on unsupervised, and whose successor must
 * not start second copies. Against a real Lifeline Local.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("e2e")
class DaemonCliTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    private Run cli(String key, String... args) {
        Map<String, String> env = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", key,
                "XDG_CONFIG_HOME", dir.resolve("no-config").toString(), "XDG_STATE_HOME", dir.resolve("state").toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void daemon_withAnUnknownAgentAndAnAgentKey_refusesInOneLine_andStartsNothing() {
        String agentKey = client.createKey("agent", "daemon-cli").key();
        Path ran = dir.resolve("ran");
        Run r = cli(agentKey, "daemon", "--host", "h-unknown", "--agent", "dc-ghost=touch '" + ran + "'",
                "--iterations", "1", "--interval", "1s");
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("lifeline: agent dc-ghost is not registered in team local, and this key may not "
                + "register it"), r.err());
        assertTrue(!Files.exists(ran), "no command ran");
    }

    @Test
    void daemon_withAnUnknownAgentAndAnAdminKey_registersItOnItsHost_andSaysSo() {
        Run r = cli(local.adminKey(), "daemon", "--host", "h-reg", "--agent", "dc-new=sleep 30", "--iterations", "1",
                "--interval", "1s");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("registered: dc-new on host h-reg (it was not registered; the daemon's key is an "
                + "admin key)"), r.out());
        assertEquals("h-reg", client.agent("dc-new").hostId());
        assertTrue(r.out().contains("daemon stopped: 1 of 1 agent(s) left (offline)"), r.out());
    }

    @Test
    void daemon_withAnAgentOfAnotherHost_refusesInOneLine() {
        client.register(RegisterAgent.of("dc-elsewhere", "x", "worker").withHost("h-other"));
        Run r = cli(local.adminKey(), "daemon", "--host", "h-mine", "--agent", "dc-elsewhere=sleep 30",
                "--iterations", "1");
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
        assertEquals("lifeline: agent dc-elsewhere is registered on host h-other, not h-mine: the revive flow asks "
                + "h-other to restart it; run this daemon with --host h-other, or register the agent on h-mine",
                r.err().strip());
        assertEquals("offline", client.agent("dc-elsewhere").status(), "nothing joined");
    }

    @Test
    void daemon_withALocalPortInUse_refusesInOneLine() throws Exception {
        client.register(RegisterAgent.of("dc-port", "x", "worker").withHost("h-port"));
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Run r = cli(local.adminKey(), "daemon", "--host", "h-port", "--agent", "dc-port=sleep 30", "--local-port",
                    String.valueOf(taken.getLocalPort()), "--iterations", "1");
            assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
            assertTrue(r.err().startsWith("lifeline: cannot listen on 127.0.0.1:" + taken.getLocalPort()), r.err());
        }
        Run free = cli(local.adminKey(), "daemon", "--host", "h-port", "--agent", "dc-port=sleep 30", "--local-port",
                "0", "--runtime", "dc-port=codex", "--iterations", "1", "--interval", "1s");
        assertEquals(0, free.exit(), free.out() + free.err());
        assertTrue(free.out().contains("runtime: dc-port runs codex; its hooks post to http://127.0.0.1:"),
                free.out());
    }

    @Test
    void daemon_withAnUnknownRuntime_isAUsageError() {
        Run r = cli(local.adminKey(), "daemon", "--host", "h-rt", "--agent", "dc-rt=sleep 1", "--runtime",
                "dc-rt=cursor");
        assertEquals(LifelineCli.USAGE, r.exit());
        assertTrue(r.err().contains("the runtime is one of claude-code, codex, gemini, opencode"), r.err());
    }

    /** A daemon in its own JVM, as a person or a service manager starts it. */
    private Process daemonJvm(Path out, Path state, String host, String agent, String command, String... more)
            throws Exception {
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "daemon", "--host", host,
                "--agent", agent + "=" + command, "--interval", "1s", "--state-dir", state.toString()));
        argv.addAll(List.of(more));
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> env = new HashMap<>(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY",
                local.adminKey(), "XDG_CONFIG_HOME", dir.resolve("no-config").toString()));
        pb.environment().putAll(env);
        return pb.start();
    }

    /** The processes whose command line holds {@code marker}. */
    private static List<ProcessHandle> running(String marker) {
        return ProcessHandle.allProcesses().filter(h -> h.info().commandLine().map(c -> c.contains(marker))
                .orElse(false)).toList();
    }

    @Test
    void killMinus9_ofTheDaemon_takesItsCommandsWithIt_andARestartedDaemonRunsOneCopy() throws Exception {
        Assumptions.assumeTrue(new CommandProcesses(Map.of(), Map.of(), dir).supervised() && ProcTable.available(),
                "needs Linux with setsid and setpriv");
        client.register(RegisterAgent.of("dc-k9", "k9", "worker").withHost("h-k9"));
        Path state = dir.resolve("k9-state");
        // The command and a grandchild it leaves in its group, both findable by their marker.
        String command = "sleep $((3140+1)) & sleep $((3140+2)); wait";
        Process first = daemonJvm(dir.resolve("first.out"), state, "h-k9", "dc-k9", command);
        Process second = null;
        try {
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(60), () -> "ready".equals(client.agent("dc-k9")
                    .status()) && running("sleep 3141").size() == 1 && running("sleep 3142").size() == 1),
                    () -> "the daemon runs its command: " + read(dir.resolve("first.out")));
            first.destroyForcibly(); // kill -9 of the daemon's JVM
            assertTrue(first.waitFor(10, TimeUnit.SECONDS));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> running("sleep 3141").isEmpty()
                    && running("sleep 3142").isEmpty()), "its command and what the command started went with it: "
                    + running("sleep 314"));

            second = daemonJvm(dir.resolve("second.out"), state, "h-k9", "dc-k9", command);
            Process s = second;
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(60), () -> running("sleep 3142").size() == 1
                    && running("sleep 3141").size() == 1 && read(dir.resolve("second.out")).contains("round:")),
                    () -> "the restarted daemon runs it again: " + read(dir.resolve("second.out")));
            assertEquals(1, running("sleep 3141").size(), "one copy");
            // Its own state records the one command it runs, with the start time the system gives it.
            String recorded = Files.readString(state.resolve("commands.json"));
            long pid = ProcessHandle.of(s.pid()).orElseThrow().children()
                    .filter(h -> h.info().commandLine().map(c -> c.contains("3140+2")).orElse(false))
                    .findFirst().map(ProcessHandle::pid).orElse(-1L);
            assertTrue(pid > 0 && recorded.contains("\"pid\" : " + pid), recorded);
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.destroy();
                second.waitFor(30, TimeUnit.SECONDS);
                second.destroyForcibly();
            }
            running("sleep 314").forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** POSTs a hook to the daemon's channel, as a runtime's forwarder does; answers the status and body. */
    private static String hook(String channel, String agent, String body) throws Exception {
        var r = HTTP.send(HttpRequest.newBuilder(URI.create(channel + "/hooks/claude-code"))
                .header(LocalBeats.AGENT_HEADER, agent).POST(HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + " " + r.body();
    }

    /** The channel's URL from the daemon's "local channel:" line, once it printed it. */
    private static String channel(Path out) throws InterruptedException {
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(60), () -> read(out).contains("local channel: ")),
                () -> "no channel line: " + read(out));
        String line = read(out).lines().filter(l -> l.startsWith("local channel: ")).findFirst().orElseThrow();
        return line.substring("local channel: ".length()).split(" ")[0];
    }

    @Test
    void aRuntimeUnderTheDaemon_itsHooksGoWithTheBatch_aKill9ResumesItsSession_soDoesARestartedDaemon_noContentPrinted()
            throws Exception {
        Assumptions.assumeTrue(new CommandProcesses(Map.of(), Map.of(), dir).supervised(), "needs setsid, setpriv");
        String a = "dc-rt1";
        String session = "0b5e3c1a-1111-4a2b-9c3d-2e4f5a6b7c8d";
        client.register(RegisterAgent.of(a, a, "worker").withHost("h-rt1"));
        Path args = dir.resolve("claude-args");
        Path fake = dir.resolve("claude");
        // A stand-in for the runtime: it records how it was started, then runs until killed.
        RuntimeStandIn.write(fake, args, "exec sleep 2718\n");
        String command = "'" + fake + "' -p go";
        Path state = dir.resolve("rt-state");
        Path out1 = dir.resolve("rt1.out");
        Process first = daemonJvm(out1, state, "h-rt1", a, command, "--runtime", a + "=claude-code");
        Process second = null;
        try {
            String ch = channel(out1);
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(30), () -> "ready".equals(client.agent(a).status())
                    && lines(args).size() == 1), () -> read(out1));
            String secret = "top-secret-prompt-text";
            assertEquals("200 {}", hook(ch, a, "{\"session_id\":\"" + session + "\",\"hook_event_name\":"
                    + "\"SessionStart\",\"source\":\"startup\",\"transcript_path\":\"/" + secret + "\"}"));
            assertEquals("200 {}", hook(ch, a, "{\"session_id\":\"" + session + "\",\"hook_event_name\":"
                    + "\"UserPromptSubmit\",\"prompt\":\"" + secret + "\"}"));
            assertEquals("200 {}", hook(ch, a, "{\"session_id\":\"" + session + "\",\"hook_event_name\":"
                    + "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"" + secret + "\"}}"));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> "working".equals(client.agent(a).status())),
                    "the tool call went with a batch");

            // kill -9 of the runtime mid-turn: dead at once, restarted on its session.
            ProcessHandle runtime = running("sleep 2718").get(0);
            runtime.destroyForcibly();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> lines(args).size() == 2), () -> read(out1));
            assertEquals("-p go --resume " + session, lines(args).get(1));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> read(out1).contains("exited: " + a
                    + ": killed by signal 9 (KILL)")), () -> read(out1));
            // The history before the newest change comes from the outbox, a moment after the change: wait for it.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.allTransitions(a).stream()
                    .anyMatch(t -> "reported_failure".equals(t.trigger()))), () -> client.allTransitions(a).toString());

            // kill -9 of the daemon: the next one stops nothing left (the reaper did) and resumes the session.
            first.destroyForcibly();
            assertTrue(first.waitFor(10, TimeUnit.SECONDS));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> running("sleep 2718").isEmpty()));
            Path out2 = dir.resolve("rt2.out");
            second = daemonJvm(out2, state, "h-rt1", a, command, "--runtime", a + "=claude-code");
            String ch2 = channel(out2);
            assertTrue(read(out2).contains("resuming: " + a + "'s claude-code session " + session), read(out2));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> lines(args).size() == 3), () -> read(out2));
            assertEquals("-p go --resume " + session, lines(args).get(2));
            // The stand-in writes its arguments, then becomes its long sleep: one copy once it has.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> running("sleep 2718").size() == 1),
                    () -> "one copy: " + running("sleep 2718"));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(30), () -> "ready".equals(client.agent(a).status())),
                    () -> read(out2));

            // The session ends: the agent leaves, and the runtime's exit after it is no crash.
            assertEquals("200 {}", hook(ch2, a, "{\"session_id\":\"" + session + "\",\"hook_event_name\":"
                    + "\"SessionEnd\",\"reason\":\"prompt_input_exit\"}"));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> "offline".equals(client.agent(a).status())),
                    () -> read(out2));
            running("sleep 2718").forEach(ProcessHandle::destroy);
            second.destroy();
            assertTrue(second.waitFor(30, TimeUnit.SECONDS));
            assertEquals(3, lines(args).size(), "not restarted after its session ended");
            assertEquals("offline", client.agent(a).status());
            for (Path out : List.of(out1, out2)) {
                assertTrue(!read(out).contains(secret), "no hook content in the daemon's output: " + read(out));
            }
            assertTrue(read(out1).contains("hook: " + a + ": its claude-code session is " + session), read(out1));
            assertTrue(read(out2).contains("hook: " + a + ": its runtime's session ended; it left (offline)"),
                    read(out2));
            // A hook reported between rounds is headed as an exit is ("hook: reported at once"), never by a bare
            // "hooks:" line.
            assertTrue(read(out1).lines().noneMatch("hooks:"::equals), read(out1));
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.destroyForcibly();
            }
            running("sleep 2718").forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aResumeThatEndsBeforeAnyHook_isFollowedByAFreshStart() throws Exception {
        Assumptions.assumeTrue(new CommandProcesses(Map.of(), Map.of(), dir).supervised(), "needs setsid, setpriv");
        String a = "dc-rt2";
        String session = "9d0c2b7e-2222-4b3c-8d4e-5f6a7b8c9d0e";
        client.register(RegisterAgent.of(a, a, "worker").withHost("h-rt2"));
        Path args = dir.resolve("claude2-args");
        Path fake = dir.resolve("claude2");
        // A stand-in whose sessions cannot be resumed: started with --resume, it fails at once.
        RuntimeStandIn.write(fake, args, "case \"$*\" in *--resume*) echo 'No conversation found' >&2; exit 1;; esac\n"
                + "exec sleep 2719\n");
        Path out = dir.resolve("rt-fresh.out");
        Process d = daemonJvm(out, dir.resolve("fresh-state"), "h-rt2", a, "'" + fake + "' -p go", "--runtime",
                a + "=claude-code", "--restart-backoff", "0s");
        try {
            String ch = channel(out);
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(30), () -> lines(args).size() == 1
                    && running("sleep 2719").size() == 1), () -> read(out));
            assertEquals("200 {}", hook(ch, a, "{\"session_id\":\"" + session + "\",\"hook_event_name\":"
                    + "\"SessionStart\"}"));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> read(out).contains("session is " + session)));
            running("sleep 2719").forEach(ProcessHandle::destroyForcibly);
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> lines(args).size() == 3
                    && running("sleep 2719").size() == 1), () -> read(out) + lines(args));
            assertEquals(List.of("-p go", "-p go --resume " + session, "-p go"), lines(args));
            assertTrue(read(out).contains("resume: " + a + "'s last start on session " + session + " ended before any "
                    + "hook; it starts afresh"), read(out));
        } finally {
            d.destroy();
            d.waitFor(30, TimeUnit.SECONDS);
            d.destroyForcibly();
            running("sleep 2719").forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }
}
