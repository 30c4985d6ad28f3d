package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.local.LifelineLocal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class LifelineCliTest {
    private static LifelineLocal local;
    private static LifelineClient client;

    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    @BeforeAll
    static void startLocal() throws Exception {
        local = LocalHarness.start();
        client = LocalHarness.client(local);
    }

    @AfterAll
    static void stopLocal() throws Exception {
        local.close();
    }

    private static Run run(String... args) {
        return runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", local.adminKey()), args);
    }

    private static Run runWith(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<java.time.Duration> slept = new java.util.concurrent.CopyOnWriteArrayList<>();
        CommandLine cl = new CommandLine(new LifelineCli(env, slept::add));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void help_onEveryCommand_printsUsageAndExitsZero() {
        for (String c : List.of("create-team", "register", "join", "beat", "leave", "status", "agents", "watch",
                "events", "revive", "pause", "resume", "daemon", "wake")) {
            Run r = run(c, "--help");
            assertEquals(0, r.exit(), c);
            assertTrue(r.out().contains("Usage: lifeline " + c), c + ": " + r.out());
        }
        assertTrue(run("--help").out().contains("Exit codes"));
    }

    @Test
    void registerJoinBeatStatusLeave_againstLocal_walksTheAgent() {
        Run reg = run("register", "cli-1", "--name", "CLI one", "--host", "h-cli");
        assertEquals(0, reg.exit(), reg.err());
        assertTrue(reg.out().contains("registered cli-1 (offline)"));
        assertTrue(run("join", "cli-1").out().contains("cli-1 ready"));
        Run beat = run("beat", "cli-1", "--status", "working");
        assertTrue(beat.out().contains("cli-1 working"), beat.out());
        Run status = run("status", "cli-1");
        assertTrue(status.out().contains("status:          working"), status.out());
        assertTrue(status.out().contains("host:            h-cli"));
        Run json = run("status", "cli-1", "--json");
        assertTrue(json.out().contains("\"agentId\" : \"cli-1\""), json.out());
        assertTrue(run("leave", "cli-1", "--reason", "done").out().contains("cli-1 offline"));
    }

    @Test
    void beat_onOfflineAgent_rejoinsUnlessToldNot() {
        run("register", "cli-2");
        Run refused = run("beat", "cli-2", "--no-rejoin");
        assertEquals(LifelineCli.REFUSED, refused.exit());
        assertTrue(refused.err().contains("REJOIN_REQUIRED"), refused.err());
        Run healed = run("beat", "cli-2");
        assertEquals(0, healed.exit());
        assertTrue(healed.out().contains("(rejoined)"), healed.out());
    }

    @Test
    void agents_listsATableWithStatusAgeAndHost() {
        run("register", "cli-3", "--host", "h-3");
        run("join", "cli-3");
        Run r = run("agents");
        assertEquals(0, r.exit());
        assertTrue(r.out().startsWith("ID"), r.out());
        assertTrue(r.out().contains("LAST BEAT"));
        String line = r.out().lines().filter(l -> l.startsWith("cli-3 ")).findFirst().orElseThrow();
        assertTrue(line.contains("ready") && line.contains("ago") && line.contains("h-3"), line);
        assertTrue(run("agents", "--status", "offline").out().lines().noneMatch(l -> l.startsWith("cli-3 ")));
    }

    @Test
    void watch_withIterations_refreshesThatManyTimes() {
        run("register", "cli-w");
        Run r = run("watch", "--iterations", "2", "--interval", "50ms", "--no-clear");
        assertEquals(0, r.exit());
        assertEquals(2, r.out().lines().filter(l -> l.startsWith("lifeline watch")).count());
        assertTrue(r.out().contains("cli-w"));
    }

    @Test
    void pauseResumeEventsRevive_againstLocal_answer() throws Exception {
        run("register", "cli-p", "--host", "h-p");
        run("join", "cli-p");
        assertTrue(run("pause", "cli-p", "--for", "60", "--reason", "deploy").out().contains("paused until"));
        assertTrue(run("resume", "cli-p").out().contains("resumed"));
        assertEquals(2, run("pause").exit());
        Run revive = run("revive", "cli-p");
        assertEquals(LifelineCli.REFUSED, revive.exit(), "a ready agent cannot be revived");
        assertTrue(LocalHarness.eventually(java.time.Duration.ofSeconds(10),
                () -> run("events").out().contains("cli-p offline -> ready")));
    }

    @Test
    void createTeam_pointsToLifelineLocal() {
        Run r = run("create-team", "acme");
        assertEquals(LifelineCli.REFUSED, r.exit());
        assertTrue(r.err().contains("lifeline-local.jar create-team acme"), r.err());
    }

    @Test
    void anyCommand_whenLifelineUnreachable_exitsThree() {
        Run r = runWith(Map.of("LIFELINE_URL", "http://127.0.0.1:1", "LIFELINE_KEY", "k"), "agents");
        assertEquals(LifelineCli.UNREACHABLE, r.exit());
    }

    @Test
    void anyCommand_withBadKey_exitsOneWithCode() {
        Run r = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", "wrong"), "agents");
        assertEquals(LifelineCli.REFUSED, r.exit());
        assertTrue(r.err().contains("UNAUTHENTICATED"), r.err());
    }

    @Test
    void daemon_withAnExitingCommand_reportsCrashRestartsAndKeepsOthersAlive() {
        run("register", "cli-d1", "--host", "h-d");
        run("register", "cli-d2", "--host", "h-d");
        // A full second between the two rounds: on a busy machine `exit 3` may not have exited 300 ms after start.
        Run r = run("daemon", "--host", "h-d", "--agent", "cli-d1=sleep 30", "--agent", "cli-d2=exit 3",
                "--interval", "1s", "--iterations", "2", "--log-dir", dir.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("crash reported: cli-d2"), r.out());
        assertTrue(r.out().contains("restarted: cli-d2"), r.out());
        assertTrue(r.out().contains("joined: cli-d1"), r.out());
        assertEquals("ready", client.agent("cli-d1").status());
        assertTrue(client.transitions("cli-d2", 10).transitions().stream()
                .anyMatch(t -> "reported_failure".equals(t.trigger())));
    }

    @Test
    void wake_withDueShellAction_runsItWritesItBackAndHeartbeatsUntilTheNextWake() throws Exception {
        assertEquals(0, run("register", "wake-1", "--name", "Waker").exit());
        Path file = dir.resolve("heartbeat.md");
        java.nio.file.Files.writeString(file, String.join("\n",
                "---", "version: 1", "status: idle", "---", "", "# Heartbeat", "", "## Pending Actions", "",
                "### [HIGH] Say hello", "- **id**: hello-1", "- **type**: shell", "- **command**: echo hello",
                "- **schedule**: every:1h", "- **status**: pending", ""));
        java.time.Instant before = java.time.Instant.now();
        Run r = run("wake", file.toString(), "--agent", "wake-1");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("ok     hello-1"), r.out());
        String written = java.nio.file.Files.readString(file);
        assertTrue(written.contains("- **status**: completed"), written);
        assertTrue(written.contains("next_wake:"), written);
        // The agent was joined by the wake's heartbeat and is expected back at the next wake (an hour away).
        var agent = client.agent("wake-1");
        assertEquals("ready", agent.status());
        java.time.Duration ahead = java.time.Duration.between(before, agent.deadline());
        assertTrue(ahead.compareTo(java.time.Duration.ofMinutes(59)) > 0
                && ahead.compareTo(java.time.Duration.ofMinutes(61)) < 0, "deadline " + agent.deadline());
    }

    @Test
    void wake_withMalformedFile_namesTheLineAndLeavesTheFileAlone() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        String text = String.join("\n", "---", "version: 1", "---", "", "## Pending Actions", "",
                "### [URGENT] Bad", "- **id**: bad-1", "- **type**: shell", "");
        java.nio.file.Files.writeString(file, text);
        Run r = run("wake", file.toString());
        assertEquals(LifelineCli.REFUSED, r.exit());
        assertTrue(r.err().contains("line 7"), r.err());
        assertEquals(text, java.nio.file.Files.readString(file));
    }
}
