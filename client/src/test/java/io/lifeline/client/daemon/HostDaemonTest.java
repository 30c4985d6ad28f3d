package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.StubServer;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.LifelineLocal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class HostDaemonTest {
    private static LifelineLocal local;
    private static LifelineClient client;

    @BeforeAll
    static void startLocal() throws Exception {
        local = LocalHarness.start();
        client = LocalHarness.client(local);
    }

    @AfterAll
    static void stopLocal() throws Exception {
        local.close();
    }

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

    /** Issue 18: with a heartbeat URL, the daemon's batches go there and its command polls to the API URL. */
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
