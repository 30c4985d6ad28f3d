package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.StubServer;
import io.lifeline.client.daemon.AllRunning;
import io.lifeline.client.daemon.HostDaemon;
import io.lifeline.client.daemon.TickReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The CLI and the daemon retry a 502 as they retry a throttle: against a real HTTP server on loopback that answers
 * 502 twice and then 200, {@code lifeline beat} and a daemon round (with the retries {@code lifeline daemon} gives
 * its client) each take 3 attempts; the waits are recorded by the injected sleeper, not waited. The daemon keeps its
 * short per-call schedule and sends again next round what still failed.
 */
@Tag("e2e")
class TransientRetryCliTest {
    static final String BAD_GATEWAY = "{\"message\":\"Internal Server Error\"}";

    @TempDir
    Path dir;

    @Test
    void beat_answered502Twice_thenTaken_inThreeAttempts_sayingSoAtOnce() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.then(502, BAD_GATEWAY, null).then(502, BAD_GATEWAY, null).otherwise(200,
                    "{\"success\":true,\"agentId\":\"a1\",\"agentStatus\":\"ready\"}");
            Map<String, String> env = new HashMap<>(Map.of("LIFELINE_URL", stub.url().toString(), "LIFELINE_KEY", "k",
                    "XDG_CONFIG_HOME", dir.toString()));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            List<Duration> slept = new CopyOnWriteArrayList<>();
            CommandLine cl = new CommandLine(new LifelineCli(env, slept::add, dir));
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            int exit = cl.execute("beat", "a1", "--direct");
            System.out.println("CLI: 502, 502, 200 -> attempts " + stub.seen().size() + ", exit " + exit);
            assertEquals(0, exit, err.toString());
            assertEquals(3, stub.seen().size());
            assertEquals(2, slept.size(), slept.toString());
            List<String> lines = err.toString().lines().toList();
            assertEquals(2, lines.size(), err.toString());
            assertTrue(lines.get(0).startsWith("lifeline: Lifeline's function did not answer (502 HTTP_502), retrying in "
                    + "2 s (attempt 2 of 15)"), lines.get(0));
        }
    }

    @Test
    void aDaemonRound_answered502Twice_thenTaken_inThreeAttempts_andOneFailingThroughIsSentNextRound()
            throws Exception {
        String batch = "{\"results\":[{\"agentId\":\"a1\",\"success\":true,\"agentStatus\":\"ready\"}]}";
        try (StubServer stub = new StubServer()) {
            stub.then(502, BAD_GATEWAY, null).then(502, BAD_GATEWAY, null).otherwise(200, batch);
            List<Duration> slept = new CopyOnWriteArrayList<>();
            HostDaemon daemon = HostDaemon.builder(daemonClient(stub, slept), "h", new AllRunning())
                    .agents(List.of("a1")).build();
            TickReport round = daemon.runOnce();
            long beats = stub.seen().stream().filter(s -> s.path().endsWith("/heartbeats")).count();
            System.out.println("daemon: 502, 502, 200 -> attempts " + beats + ", problems " + round.problems());
            assertEquals(3, beats);
            assertEquals(List.of(), round.problems());
            assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4)), slept);
        }
        try (StubServer stub = new StubServer()) {
            for (int i = 0; i < 4; i++) {
                stub.then(504, "{\"message\":\"Endpoint request timed out\"}", null);
            }
            stub.otherwise(200, batch);
            List<Duration> slept = new CopyOnWriteArrayList<>();
            HostDaemon daemon = HostDaemon.builder(daemonClient(stub, slept), "h", new AllRunning())
                    .agents(List.of("a1")).build();
            TickReport first = daemon.runOnce();
            assertEquals(4, stub.seen().stream().filter(s -> s.path().endsWith("/heartbeats")).count(),
                    "one call held 14 s at most, not the ten minutes a command may wait");
            assertTrue(first.problems().stream().anyMatch(p -> p.startsWith("batch heartbeat failed")), first.problems()
                    .toString());
            TickReport next = daemon.runOnce();
            assertEquals(List.of(), next.problems());
            assertEquals(5, stub.seen().stream().filter(s -> s.path().endsWith("/heartbeats")).count());
        }
    }

    /** A client as {@code lifeline daemon} builds it: its retries, the test's sleeper. */
    private static LifelineClient daemonClient(StubServer stub, List<Duration> slept) {
        return LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                .retry(new DaemonCommand().retryPolicy().withJitter(() -> 0)).sleeper(slept::add).build();
    }
}
