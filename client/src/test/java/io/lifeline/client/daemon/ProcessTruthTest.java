package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.CountingProxy;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.TransitionView;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process is the truth: a command's exit (kill -9 here) is reported dead when it happens, not at the next round,
 * with real child processes and a real Lifeline Local; the daemon's requests are counted through a proxy.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class ProcessTruthTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    /** The daemon's client, through a proxy that counts its requests; no retries, so one call is one request. */
    private static LifelineClient through(CountingProxy proxy) {
        return LifelineClient.builder().url(proxy.url()).team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey())
                .retry(RetryPolicy.none()).build();
    }

    /** Polls the agent's status every 10 ms until it is {@code status}; answers ms from {@code t0}, less the last read. */
    private static long msUntil(String agentId, String status, long t0) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            long asked = System.nanoTime();
            if (status.equals(client.agent(agentId).status())) {
                return TimeUnit.NANOSECONDS.toMillis(asked - t0); // the read that saw it was sent by then
            }
            Thread.sleep(10);
        }
        throw new AssertionError(agentId + " was not " + status + " within 10 s: " + client.agent(agentId).status());
    }

    @Test
    void killMinus9_ofTheCommand_isDeadWithinOneSecond_inOneRequest_withoutWaitingForARound() throws Exception {
        String a = "pt-kill";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-pt"));
        List<TickReport> reports = new CopyOnWriteArrayList<>();
        try (CountingProxy proxy = new CountingProxy(local.url());
             CommandProcesses p = new CommandProcesses(Map.of(a, "exec sleep 300"), Map.of(), dir);
             HostDaemon d = HostDaemon.builder(through(proxy), "host-pt", p).agents(List.of(a))
                     .interval(Duration.ofMinutes(10)).restartOnExit(false).onTick(reports::add).build()) {
            p.onExit(d::processExited);
            p.startAll();
            d.start(); // joins, then one round; the next is 10 minutes away
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> proxy.seen().stream()
                    .anyMatch(s -> s.path().endsWith("/hosts/host-pt/commands"))), "the first round ran");
            assertEquals("ready", client.agent(a).status());
            int before = proxy.seen().size();

            long t0 = System.nanoTime();
            assertTrue(ProcessHandle.of(p.pid(a)).orElseThrow().destroyForcibly(), "SIGKILL sent");
            long ms = msUntil(a, "dead", t0);

            System.out.println("exit -> dead: " + ms + " ms (kill -9 to the status read that saw dead)");
            assertTrue(ms <= 1000, "dead " + ms + " ms after kill -9");
            assertEquals(List.of("POST /v1/teams/local/agents/pt-kill/fail"),
                    List.copyOf(proxy.seen().subList(before, proxy.seen().size())).stream().map(Object::toString)
                            .toList(), "one request: the crash report");
            TransitionView last = client.agent(a).lastTransition();
            assertEquals("reported_failure", last.trigger());
            assertEquals("failure reported: killed by signal 9 (KILL)", last.reason());
            // The exit pass tells of its report once the crash report is answered: a moment after the status read.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> reports.stream()
                    .flatMap(r -> r.exits().stream())
                    .anyMatch(e -> e.startsWith(a + ": killed by signal 9 (KILL); reported dead "))), reports::toString);
        }
    }

    @Test
    void killMinus9_withRestartOnExit_isReportedAtOnce_thenRestartedAndJoined_asBefore() throws Exception {
        String a = "pt-restart";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-pr"));
        try (CommandProcesses p = new CommandProcesses(Map.of(a, "exec sleep 300"), Map.of(), dir);
             HostDaemon d = HostDaemon.builder(client, "host-pr", p).agents(List.of(a))
                     .interval(Duration.ofMinutes(10)).build()) {
            p.onExit(d::processExited);
            p.startAll();
            d.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));
            long first = p.pid(a);
            ProcessHandle.of(first).orElseThrow().destroyForcibly();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> p.isRunning(a) && p.pid(a) != first
                    && "ready".equals(client.agent(a).status())), "restarted and joined without a round");
            assertEquals(1, d.restartsLastHour(a));
            // The history before the newest change comes from the outbox, a moment after the change: wait for it.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.allTransitions(a).stream()
                    .anyMatch(t -> "reported_failure".equals(t.trigger())
                            && t.reason().endsWith("killed by signal 9 (KILL)"))),
                    () -> client.allTransitions(a).toString());
        }
    }

    @Test
    void supervised_aCommandsWholeGroupIsStopped_andWhatItLeftBehindGoesWhenItExits() throws Exception {
        CommandProcesses probe = new CommandProcesses(Map.of(), Map.of(), dir);
        Assumptions.assumeTrue(probe.supervised() && ProcTable.available(),
                "needs Linux with setsid and setpriv");
        Path marker = dir.resolve("child.pid");
        // The command leaves a grandchild behind in its group, then waits.
        String cmd = "sleep 307 & echo $! > '" + marker + "'; wait";
        try (CommandProcesses p = new CommandProcesses(Map.of("g", cmd), Map.of(), dir)) {
            p.startAll();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> read(marker).endsWith("\n")));
            long leader = p.pid("g");
            long grandchild = Long.parseLong(Files.readString(marker).trim());
            ProcTable.Stat s = ProcTable.stat(grandchild).orElseThrow();
            assertEquals(leader, s.session(), "the command runs in a session of its own");
            assertEquals(leader, s.pgrp(), "and its group");
            // kill -9 of the leader alone: the grandchild it left is killed with its group when the exit is seen.
            ProcessHandle.of(leader).orElseThrow().destroyForcibly();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> ProcTable.stat(grandchild).isEmpty()),
                    "the leftover in the group is gone");
        }
    }

    @Test
    void reclaim_stopsALeftoverWithItsRecordedStartTime_andLeavesAReusedPidAlone() throws Exception {
        Assumptions.assumeTrue(ProcTable.available(), "needs /proc");
        Process leftover = new ProcessBuilder("setsid", "--", "sleep", "311").start();
        Process stranger = new ProcessBuilder("sleep", "312").start();
        try {
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> ProcTable.stat(leftover.pid())
                    .map(st -> st.session() == leftover.pid()).orElse(false)), "setsid made its session");
            long start = ProcTable.start(leftover.pid());
            Path state = dir.resolve("state");
            Files.createDirectories(state);
            // What a daemon killed with kill -9 left: one live command, and one whose pid now names another process.
            Files.writeString(state.resolve("commands.json"), "{\"commands\":{"
                    + "\"a\":{\"pid\":" + leftover.pid() + ",\"start\":" + start + ",\"group\":true,\"startedAt\":\"x\"},"
                    + "\"b\":{\"pid\":" + stranger.pid() + ",\"start\":" + (ProcTable.start(stranger.pid()) - 100)
                    + ",\"group\":true,\"startedAt\":\"y\"}}}");
            try (DaemonState ds = DaemonState.open(state, "h-reclaim")) {
                List<String> lines = ds.reclaim(Duration.ofSeconds(2));
                assertEquals(1, lines.size(), lines.toString());
                assertTrue(lines.get(0).contains(" for a: 1 process(es) of pid " + leftover.pid()), lines.get(0));
                assertTrue(leftover.waitFor(5, TimeUnit.SECONDS), "the leftover was stopped");
                assertTrue(stranger.isAlive(), "a pid whose start time differs is another process: left alone");
                // A second daemon for the same host is refused while this one holds the lock.
                DaemonState.Busy busy = Assertions.assertThrows(DaemonState.Busy.class,
                        () -> DaemonState.open(state, "h-reclaim"));
                assertTrue(busy.getMessage().startsWith("another lifeline daemon for host h-reclaim is running"),
                        busy.getMessage());
            }
        } finally {
            leftover.destroyForcibly();
            stranger.destroyForcibly();
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    void exitDescription_namesTheSignal() {
        assertEquals("killed by signal 9 (KILL)", CommandProcesses.describe(137));
        assertEquals("killed by signal 15 (TERM)", CommandProcesses.describe(143));
        assertEquals("exited with status 3", CommandProcesses.describe(3));
        assertNotEquals(CommandProcesses.describe(1), CommandProcesses.describe(129));
        assertFalse(CommandProcesses.describe(0).contains("signal"));
    }
}
