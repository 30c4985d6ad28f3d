package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.StubServer;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.testing.MutableClock;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("e2e")
class HostDaemonTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    /** Processes the test switches on and off; records restarts. */
    static final class FakeProcesses implements AgentProcesses {
        final Set<String> down = ConcurrentHashMap.newKeySet();
        final List<String> restarts = new CopyOnWriteArrayList<>();

        @Override
        public boolean isRunning(String agentId) {
            return !down.contains(agentId);
        }

        @Override
        public void restart(String agentId, String reason) {
            restarts.add(agentId + ": " + reason);
            down.remove(agentId);
        }
    }

    @Test
    void runOnce_with30Agents_sendsTwoBatchCallsOf25And5() throws Exception {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(200, "{\"results\":[],\"count\":0,\"commands\":[]}");
            LifelineClient c = LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                    .retry(RetryPolicy.none()).build();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                ids.add("agent-" + i);
            }
            TickReport r = HostDaemon.builder(c, "h", new FakeProcesses()).agents(ids).build().runOnce();
            assertEquals(2, r.batchCalls());
            List<Integer> sizes = new ArrayList<>();
            for (StubServer.Seen s : stub.seen()) {
                if (s.path().endsWith("/heartbeats")) {
                    JsonNode body = LifelineClient.mapper().readTree(s.body());
                    sizes.add(body.get("heartbeats").size());
                }
            }
            assertEquals(List.of(25, 5), sizes);
            assertTrue(stub.seen().stream().anyMatch(s -> s.path().equals("/v1/teams/t/hosts/h/commands")));
        }
    }

    /** With a heartbeat URL, the daemon's batches go there and its command polls to the API URL. */
    @Test
    void runOnce_withAHeartbeatUrl_sendsBatchesThere_andPollsCommandsAtTheApiUrl() throws Exception {
        for (String a : List.of("du-1", "du-2")) {
            client.register(RegisterAgent.of(a, a, "worker").withHost("host-url").withStaleAfterSeconds(600));
            client.join(a);
        }
        try (StubServer api = new StubServer()) {
            api.otherwise(200, "{\"commands\":[]}");
            LifelineClient split = LifelineClient.builder().url(api.url()).heartbeatUrl(local.heartbeatUrl())
                    .team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey()).retry(RetryPolicy.none()).build();
            TickReport r = HostDaemon.builder(split, "host-url", new FakeProcesses()).agents(List.of("du-1", "du-2"))
                    .build().runOnce();
            assertEquals(1, r.batchCalls());
            assertTrue(r.results().stream().allMatch(HeartbeatResult::success), r.toString());
            assertTrue(api.seen().stream().noneMatch(s -> s.path().endsWith("/heartbeats")), "no beat at the API URL");
            assertTrue(api.seen().stream().anyMatch(s -> s.path().endsWith("/hosts/host-url/commands")),
                    "commands polled at the API URL: " + api.seen());
        }
    }

    @Test
    void runOnce_withRunningAgents_keepsThemAliveInOneBatch() {
        for (String a : List.of("d-1", "d-2", "d-3")) {
            client.register(RegisterAgent.of(a, a, "worker").withHost("host-a"));
        }
        HostDaemon d = HostDaemon.builder(client, "host-a", new FakeProcesses()).agents(List.of("d-1", "d-2", "d-3"))
                .build();
        TickReport first = d.runOnce();
        assertEquals(1, first.batchCalls());
        assertEquals(List.of("d-1", "d-2", "d-3"), first.rejoined(), "offline agents are joined");
        TickReport second = d.runOnce();
        assertTrue(second.results().stream().allMatch(r -> r.success()), second.toString());
        assertEquals("ready", client.agent("d-2").status());
    }

    @Test
    void interval_withoutOne_isTheSmallestTheServerAdvisedForItsAgents() {
        client.register(RegisterAgent.of("d-int-slow", "Slow", "worker").withHost("host-int")
                .withStaleAfterSeconds(600));
        client.register(RegisterAgent.of("d-int-fast", "Fast", "worker").withHost("host-int")
                .withStaleAfterSeconds(6));
        HostDaemon d = HostDaemon.builder(client, "host-int", new FakeProcesses())
                .agents(List.of("d-int-slow", "d-int-fast")).build();
        assertEquals(Duration.ofSeconds(30), d.interval(), "30 s until the server has answered");
        TickReport r = d.runOnce();
        assertEquals(List.of("d-int-slow", "d-int-fast"), r.rejoined());
        assertEquals(Duration.ofSeconds(3), d.interval(), "half of the fast agent's 6 s sets the pace");
        assertEquals(Duration.ofSeconds(20), HostDaemon.builder(client, "host-int", new FakeProcesses())
                .agents(List.of("d-int-fast")).interval(Duration.ofSeconds(20)).build().interval(), "pinned");
    }

    @Test
    void start_withoutInterval_keepsShortLivedAgentsAlive() throws Exception {
        // LocalHarness: stale after 2 s, sweeps every 500 ms; the server advises 1 s, the old fixed 30 s killed.
        List<String> ids = List.of("d-follow-1", "d-follow-2");
        for (String a : ids) {
            client.register(RegisterAgent.of(a, a, "worker").withHost("host-follow"));
        }
        List<TickReport> rounds = new CopyOnWriteArrayList<>();
        try (HostDaemon d = HostDaemon.builder(client, "host-follow", new FakeProcesses()).agents(ids)
                .onTick(rounds::add).build()) {
            d.start();
            assertEquals(Duration.ofSeconds(1), d.interval());
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> rounds.size() >= 8),
                    "rounds: " + rounds.size());
            for (String a : ids) {
                assertEquals("ready", client.agent(a).status(), a);
                assertTrue(client.transitions(a, 10).transitions().stream().noneMatch(t -> "dead".equals(t.to())),
                        a + " never marked dead");
            }
        }
    }

    @Test
    void runOnce_whenProcessExited_reportsCrashOnceAtOnce() throws Exception {
        client.register(RegisterAgent.of("d-crash", "Crash", "worker").withHost("host-b"));
        client.join("d-crash");
        FakeProcesses p = new FakeProcesses();
        HostDaemon d = HostDaemon.builder(client, "host-b", p).agents(List.of("d-crash")).restartOnExit(false).build();
        p.down.add("d-crash");
        TickReport r = d.runOnce();
        assertEquals(List.of("d-crash"), r.crashesReported());
        // dead at once; the revive flow (the agent has a host) may already have moved it on to restarting, and
        // its restart command may even have reached this same round, which honours it (restart, join)
        String status = client.agent("d-crash").status();
        Set<String> expected = r.restarted().contains("d-crash") ? Set.of("ready") : Set.of("dead", "restarting");
        assertTrue(expected.contains(status), () -> status + " " + r + " " + client.transitions("d-crash", 5));
        // Changes before the newest are recorded by the outbox a moment later: wait for the death's record.
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.transitions("d-crash", 5).transitions()
                .stream().anyMatch(t -> "reported_failure".equals(t.trigger()) && "dead".equals(t.to()))),
                () -> "no reported_failure in " + client.transitions("d-crash", 5));
        assertTrue(d.runOnce().crashesReported().isEmpty(), "a crash is reported once");
    }

    @Test
    void runOnce_whenProcessExitedAndRestartOnExit_reportsRestartsAndJoins() {
        client.register(RegisterAgent.of("d-restart", "Restart", "worker").withHost("host-c"));
        client.join("d-restart");
        FakeProcesses p = new FakeProcesses();
        HostDaemon d = HostDaemon.builder(client, "host-c", p).agents(List.of("d-restart")).build();
        p.down.add("d-restart");
        TickReport r = d.runOnce();
        assertEquals(List.of("d-restart"), r.crashesReported());
        assertEquals(List.of("d-restart"), r.restarted());
        assertEquals("ready", client.agent("d-restart").status());
        assertEquals(1, p.restarts.size());
    }

    @Test
    void runOnce_withRestartCommand_restartsJoinsAndAcks() throws Exception {
        client.register(RegisterAgent.of("d-cmd", "Cmd", "worker").withHost("host-d"));
        client.join("d-cmd");
        client.fail("d-cmd", "host lost it"); // the death starts the revive flow, which sends a restart command
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20),
                () -> client.hostCommands("host-d").count() > 0), "a restart command arrives");
        FakeProcesses p = new FakeProcesses();
        p.down.add("d-cmd"); // the host lost it: its process is gone, and only the revive flow asks for it back
        HostDaemon d = HostDaemon.builder(client, "host-d", p).agents(List.of("d-cmd"))
                .restartOnExit(false).restartDedupWindow(Duration.ZERO).build();
        TickReport r = d.runOnce();
        assertEquals(1, r.commandsAcked().size(), r.toString());
        assertEquals(1, p.restarts.size());
        assertTrue(p.restarts.get(0).startsWith("d-cmd: restart requested"));
        assertEquals("ready", client.agent("d-cmd").status());
        assertEquals(0, client.hostCommands("host-d").count());
    }

    @Test
    void runOnce_withRestartCommandForARunningAgent_rejoinsItAndRestartsNothing() throws Exception {
        client.register(RegisterAgent.of("d-alive", "Alive", "worker").withHost("host-e"));
        client.join("d-alive");
        client.fail("d-alive", "reported by mistake");
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20),
                () -> client.hostCommands("host-e").count() > 0), "a restart command arrives");
        FakeProcesses p = new FakeProcesses(); // the process still runs
        HostDaemon d = HostDaemon.builder(client, "host-e", p).agents(List.of("d-alive"))
                .restartDedupWindow(Duration.ZERO).build();

        TickReport r = d.runOnce();

        // Its beat asks it to rejoin; the join ends the revive flow, and with it the flow's command.
        assertEquals(List.of("d-alive"), r.rejoined(), r.toString());
        assertTrue(p.restarts.isEmpty(), "an agent that is back is not restarted: " + p.restarts);
        assertTrue(r.commandsAcked().isEmpty(), r.toString());
        assertTrue(r.problems().isEmpty(), r.toString());
        assertEquals("ready", client.agent("d-alive").status());
        assertEquals(0, client.hostCommands("host-e").count());
    }

    @Test
    void runOnce_whenTheAckAnswersCommandSuperseded_leavesTheAgentAloneWithoutAProblem() throws Exception {
        try (StubServer stub = new StubServer()) {
            // The command was listed, then the flow ended before the daemon acknowledged it.
            stub.then(200, "{\"results\":[{\"agentId\":\"a1\",\"success\":true,\"agentStatus\":\"ready\"}]}", null)
                    .then(200, "{\"count\":1,\"commands\":[{\"commandId\":\"restart-a1-2-1\",\"hostId\":\"h\","
                            + "\"type\":\"restart\",\"agentId\":\"a1\",\"attempt\":1,\"state\":\"pending\"}]}", null)
                    .then(409, "{\"success\":false,\"error\":\"Command 'restart-a1-2-1' is superseded: agent 'a1' is"
                            + " ready again; do not restart it\",\"code\":\"COMMAND_SUPERSEDED\",\"agentStatus\":\"ready\","
                            + "\"rejoinRequired\":false}", null);
            LifelineClient c = LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                    .retry(RetryPolicy.none()).build();
            FakeProcesses p = new FakeProcesses();

            TickReport r = HostDaemon.builder(c, "h", p).agents(List.of("a1")).restartDedupWindow(Duration.ZERO)
                    .build().runOnce();

            assertTrue(p.restarts.isEmpty(), p.restarts::toString);
            assertTrue(r.commandsAcked().isEmpty(), r.toString());
            assertTrue(r.problems().isEmpty(), r.toString());
            List<String> calls = stub.seen().stream().map(s -> s.method() + " " + s.path()).toList();
            assertEquals(List.of("POST /v1/teams/t/heartbeats", "GET /v1/teams/t/hosts/h/commands",
                    "POST /v1/teams/t/hosts/h/commands/restart-a1-2-1/ack"), calls, "acknowledged before any restart");
        }
    }

    /**
     * Between the daemon and Local's heartbeat URL: forwards each request as it came and keeps the batch bodies, so
     * the test sees exactly what each beat carried.
     */
    static final class Recorder implements AutoCloseable {
        final List<JsonNode> batches = new CopyOnWriteArrayList<>();
        private final HttpServer server;
        private final HttpClient http = HttpClient.newHttpClient();

        Recorder(URI target) throws IOException {
            server = HttpServer.create(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", ex -> {
                byte[] body = ex.getRequestBody().readAllBytes();
                if (ex.getRequestURI().getPath().endsWith("/heartbeats")) {
                    batches.add(LifelineClient.mapper().readTree(body));
                }
                HttpRequest.Builder b = HttpRequest.newBuilder(
                        target.resolve(ex.getRequestURI().getRawPath()))
                        .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
                for (String h : List.of("Authorization", "Content-Type")) {
                    String v = ex.getRequestHeaders().getFirst(h);
                    if (v != null) {
                        b.header(h, v);
                    }
                }
                try {
                    HttpResponse<byte[]> r = http.send(b.build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    ex.getResponseHeaders().add("Content-Type", "application/json");
                    ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
                    try (OutputStream out = ex.getResponseBody()) {
                        out.write(r.body());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ex.sendResponseHeaders(502, -1);
                    ex.close();
                }
            });
            server.start();
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        }

        /** How many entries of the batches from {@code from} on carried stats, per batch. */
        List<Integer> statsPerBatch(int from) {
            List<Integer> out = new ArrayList<>();
            for (JsonNode b : batches.subList(from, batches.size())) {
                int n = 0;
                for (JsonNode e : b.get("heartbeats")) {
                    n += e.has("stats") ? 1 : 0;
                }
                out.add(n);
            }
            return out;
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /**
     * A beat with stats writes the agent's item, a plain hosted beat only the host's lease. The daemon sends
     * {@code restartsLastHour} once when it changes (the restart, then the 0 once the restart leaves the hour), not on
     * every beat while it is nonzero; the server still shows the count.
     */
    @Test
    void runOnce_afterARestart_sendsRestartsLastHourOnlyWhenTheCountChanges() throws Exception {
        String a = "d-stats";
        // No host of its own (no revive flow to send restart commands), and a long stale-after: only the daemon acts.
        client.register(RegisterAgent.of(a, "Stats", "worker").withStaleAfterSeconds(600));
        MutableClock clock = new MutableClock(Instant.now());
        try (Recorder recorder = new Recorder(local.heartbeatUrl())) {
            LifelineClient viaRecorder = LifelineClient.builder().url(local.url()).heartbeatUrl(recorder.url())
                    .team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey()).build();
            FakeProcesses p = new FakeProcesses();
            HostDaemon d = HostDaemon.builder(viaRecorder, "host-stats", p).agents(List.of(a)).clock(clock).build();
            d.runOnce(); // joins the agent
            assertEquals("ready", client.agent(a).status());

            int before = recorder.batches.size();
            p.down.add(a);
            TickReport crash = d.runOnce();
            assertEquals(List.of(a), crash.restarted(), crash.toString());
            for (int i = 0; i < 4; i++) {
                assertTrue(d.runOnce().results().stream().allMatch(HeartbeatResult::success));
            }
            assertEquals(List.of(1, 0, 0, 0, 0), recorder.statsPerBatch(before),
                    "the count once, with the restart's beat; then plain beats");
            JsonNode sent = recorder.batches.get(before).get("heartbeats").get(0).get("stats");
            assertEquals(1, sent.get("restartsLastHour").asInt(), sent::toString);
            assertEquals(1L, client.agent(a).stats().restartsLastHour(), "the server has the count");

            int later = recorder.batches.size();
            clock.advance(Duration.ofMinutes(61));
            for (int i = 0; i < 3; i++) {
                assertTrue(d.runOnce().results().stream().allMatch(HeartbeatResult::success));
            }
            assertEquals(List.of(1, 0, 0), recorder.statsPerBatch(later), "the 0 once the restart left the hour");
            assertEquals(0, recorder.batches.get(later).get("heartbeats").get(0).get("stats")
                    .get("restartsLastHour").asInt());
            assertEquals(0L, client.agent(a).stats().restartsLastHour());
        }
    }

    @Test
    void start_thenStop_runsRoundsInTheBackground() throws Exception {
        client.register(RegisterAgent.of("d-bg", "Bg", "worker"));
        List<TickReport> reports = new CopyOnWriteArrayList<>();
        try (HostDaemon d = HostDaemon.builder(client, "host-e", new FakeProcesses()).agents(List.of("d-bg"))
                .interval(Duration.ofMillis(200)).onTick(reports::add).build()) {
            d.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> reports.size() >= 2));
            assertEquals("ready", client.agent("d-bg").status());
        }
    }
}
