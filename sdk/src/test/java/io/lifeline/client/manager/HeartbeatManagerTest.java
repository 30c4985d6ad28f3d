package io.lifeline.client.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.StubServer;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("e2e")
class HeartbeatManagerTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    @Test
    void start_onAnUnregisteredAgent_failsAtOnceSayingToRegisterFirst_andBeatsNoMore() {
        HeartbeatManager m = HeartbeatManager.builder(client, "m-never-registered").build();
        LifelineApiException e = Assertions.assertThrows(
                LifelineApiException.class, m::start);
        assertEquals(404, e.status());
        assertEquals("AGENT_NOT_FOUND", e.code());
        assertTrue(e.getMessage().contains("not registered in team 'local': register it first"), e.getMessage());
        assertEquals(ActivityState.STOPPED, m.state());
    }

    @Test
    void start_onRegisteredAgent_joinsAndBeatsAtStartThenEveryInterval() throws Exception {
        client.register(RegisterAgent.of("m-int", "Interval", "worker"));
        List<HeartbeatEvent> events = new CopyOnWriteArrayList<>();
        try (HeartbeatManager m = HeartbeatManager.builder(client, "m-int").interval(Duration.ofMillis(200)).build()) {
            m.onHeartbeat(events::add);
            HeartbeatEvent first = m.start();
            assertTrue(first.ok());
            assertTrue(first.rejoined(), "an offline agent is joined on the first beat");
            assertEquals("ready", client.agent("m-int").status());
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> events.size() >= 4));
            assertTrue(events.stream().allMatch(HeartbeatEvent::ok));
        }
    }

    @Test
    void start_withoutInterval_followsTheServersAdvice_andKeepsAShortLivedAgentAlive() throws Exception {
        // LocalHarness: stale after 2 s, a sweep every 500 ms, 2 grace misses. The server advises 1 s; the old
        // fixed 30 s would let the agent die within about 3 s.
        client.register(RegisterAgent.of("m-follow", "Follow", "worker"));
        List<HeartbeatEvent> events = new CopyOnWriteArrayList<>();
        try (HeartbeatManager m = HeartbeatManager.builder(client, "m-follow").build()) {
            assertEquals(HeartbeatManager.DEFAULT_INTERVAL, m.interval(), "30 s until the server has answered");
            m.onHeartbeat(events::add);
            HeartbeatEvent first = m.start();
            assertTrue(first.ok(), String.valueOf(first.failure()));
            assertEquals(1L, first.result().heartbeatIntervalSeconds());
            assertEquals(Duration.ofSeconds(1), m.interval(), "the manager took the server's advice");
            // Five stale-after periods: the agent must beat about 10 times and never die.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> events.size() >= 8),
                    "beats: " + events.size());
            assertTrue(events.stream().allMatch(HeartbeatEvent::ok), events.toString());
            assertEquals("ready", client.agent("m-follow").status());
            assertTrue(client.transitions("m-follow", 10).transitions().stream()
                    .noneMatch(t -> "dead".equals(t.to())), "never marked dead");
            assertEquals(1, events.stream().filter(HeartbeatEvent::rejoined).count(), "joined once, at start");
        }
    }

    @Test
    void beatNow_forAgentWithOwnStaleAfter10_adoptsFiveSeconds_unlessPinned() {
        client.register(RegisterAgent.of("m-ten", "Ten", "worker").withStaleAfterSeconds(10));
        client.join("m-ten");
        HeartbeatManager following = HeartbeatManager.builder(client, "m-ten").build();
        following.beatNow();
        assertEquals(Duration.ofSeconds(5), following.interval());
        HeartbeatManager pinned = HeartbeatManager.builder(client, "m-ten").interval(Duration.ofSeconds(7)).build();
        assertEquals(5L, pinned.beatNow().result().heartbeatIntervalSeconds());
        assertEquals(Duration.ofSeconds(7), pinned.interval(), "a pinned interval is the caller's choice");
    }

    @Test
    void beatNow_withStateAndActivity_sendsStatusAndStats() {
        client.register(RegisterAgent.of("m-stats", "Stats", "worker"));
        client.join("m-stats");
        HeartbeatManager m = HeartbeatManager.builder(client, "m-stats").build();
        m.setState(ActivityState.PROCESSING);
        m.recordActivity(Activity.MESSAGE);
        m.recordActivity(Activity.MESSAGE);
        m.recordActivity(Activity.TOOL_CALL);
        HeartbeatEvent e = m.beatNow();
        assertEquals("working", e.result().agentStatus());
        var stats = client.agent("m-stats").stats();
        assertEquals(2L, stats.messagesProcessed());
        assertEquals(1L, stats.toolCallsExecuted());
        assertEquals(0L, stats.errorsEncountered());

        m.setState(ActivityState.WAITING_INPUT);
        assertEquals("ready", m.beatNow().result().agentStatus());

        m.setState(ActivityState.ERROR);
        m.setState(ActivityState.ERROR);
        HeartbeatEvent err = m.beatNow();
        assertTrue(err.ok(), "an agent in error keeps reporting");
        assertEquals("ready", err.result().agentStatus(), "error reports no status; the server keeps ready");
        assertEquals(1L, client.agent("m-stats").stats().errorsEncountered(), "entering error counts once");
    }

    @Test
    void heartbeat_afterAgentMarkedDead_rejoinsWithinOneInterval() throws Exception {
        client.register(RegisterAgent.of("m-heal", "Heal", "worker"));
        Duration interval = Duration.ofMillis(500);
        List<HeartbeatEvent> events = new CopyOnWriteArrayList<>();
        try (HeartbeatManager m = HeartbeatManager.builder(client, "m-heal").interval(interval).build()) {
            m.onHeartbeat(events::add);
            m.start();
            assertEquals("dead", client.fail("m-heal", "marked dead by the test").status());
            long deadAt = System.nanoTime();
            // The status model: healthy again within one interval (plus the time a beat and a join take).
            assertTrue(LocalHarness.eventually(interval.plusSeconds(1),
                    () -> "ready".equals(client.agent("m-heal").status())));
            long tookMillis = (System.nanoTime() - deadAt) / 1_000_000;
            assertTrue(tookMillis <= interval.toMillis() + 1000, "healed in " + tookMillis + " ms");
            assertTrue(events.stream().anyMatch(HeartbeatEvent::rejoined));
            var last = client.transitions("m-heal", 1).transitions().get(0);
            assertEquals("join", last.trigger());
            assertEquals("dead", last.from());
        }
    }

    @Test
    void stop_afterStart_sendsNoMoreBeatsAndPersistsStopped() throws Exception {
        client.register(RegisterAgent.of("m-stop", "Stop", "worker"));
        Path state = dir.resolve("state.json");
        List<HeartbeatEvent> events = new CopyOnWriteArrayList<>();
        HeartbeatManager m = HeartbeatManager.builder(client, "m-stop").interval(Duration.ofMillis(100))
                .statePath(state).build();
        m.onHeartbeat(events::add);
        m.start();
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(3), () -> events.size() >= 2));
        m.stop();
        int after = events.size();
        // No sleep to prove the silence: once stop() returns, the scheduler has terminated, so no beat is scheduled
        // or running, and none can be sent.
        assertTrue(m.schedulerTerminated(), "stop() leaves a terminated scheduler");
        assertEquals(after, events.size());
        assertFalse(m.running());
        assertEquals("stopped", new StateStore(state).load().state());
        m.stop(); // idempotent
    }

    @Test
    void setState_stopped_stopsTheManager() {
        client.register(RegisterAgent.of("m-stop2", "Stop2", "worker"));
        HeartbeatManager m = HeartbeatManager.builder(client, "m-stop2").interval(Duration.ofSeconds(30)).build();
        m.start();
        m.setState(ActivityState.STOPPED);
        assertFalse(m.running());
    }

    @Test
    void beatNow_onInjected503s_backsOffThenSucceeds() throws Exception {
        try (StubServer stub = new StubServer()) {
            stub.then(503, "{\"success\":false,\"code\":\"THROTTLED\",\"error\":\"x\"}", "1")
                    .then(503, "{\"success\":false,\"code\":\"THROTTLED\",\"error\":\"x\"}", "1")
                    .otherwise(200, "{\"success\":true,\"agentStatus\":\"ready\"}");
            List<Duration> slept = new ArrayList<>();
            LifelineClient c = LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                    .retry(RetryPolicy.defaults().withJitter(() -> 0)).sleeper(slept::add).build();
            HeartbeatEvent e = HeartbeatManager.builder(c, "a1").build().beatNow();
            assertTrue(e.ok());
            assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4)), slept);
        }
    }

    @Test
    void beatNow_whenServerStaysDown_reportsFailureWithoutThrowing() throws Exception {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(503, "{\"success\":false,\"code\":\"STORE_UNAVAILABLE\",\"error\":\"x\"}");
            List<Duration> slept = new ArrayList<>();
            LifelineClient c = LifelineClient.builder().url(stub.url()).team("t").apiKey("k")
                    .retry(RetryPolicy.defaults().withJitter(() -> 0)).sleeper(slept::add).build();
            HeartbeatEvent e = HeartbeatManager.builder(c, "a1").build().beatNow();
            assertFalse(e.ok());
            assertEquals("STORE_UNAVAILABLE", ((LifelineApiException) e.failure()).code());
            assertEquals(3, slept.size());
        }
    }

    @Test
    void beatNow_withCheckpointSent_serverOffersItBackAfterDeath() throws Exception {
        client.register(RegisterAgent.of("m-cp", "Checkpoint", "worker"));
        Path state = dir.resolve("cp.json");
        HeartbeatManager m = HeartbeatManager.builder(client, "m-cp").statePath(state)
                .checkpoint(() -> Map.of("step", 7), true).build();
        assertTrue(m.beatNow().ok());
        assertEquals(7, new StateStore(state).load().checkpoint().get("step"));
        client.fail("m-cp", "test");
        var answer = client.recovery("m-cp", null);
        assertTrue(answer.available());
        assertEquals(7, answer.checkpoint().get("step").asInt());
        assertNotNull(answer.savedAt());
    }

    @Test
    void save_thenLoad_roundTripsAndLeavesNoTempFile() throws Exception {
        StateStore store = new StateStore(dir.resolve("s/state.json"));
        store.save(new PersistedState("a", "t", "idle", null, new HeartbeatStats(1, 2, 3, 4), Map.of("k", "v"),
                "/tmp", Instant.parse("2026-03-01T12:00:00Z")));
        store.save(new PersistedState("a", "t", "processing", null, new HeartbeatStats(1, 2, 3, 5), null,
                "/tmp", Instant.parse("2026-03-01T12:00:01Z")));
        PersistedState loaded = store.load();
        assertEquals("processing", loaded.state());
        assertEquals(5, loaded.stats().uptimeSeconds());
        try (var files = Files.list(dir.resolve("s"))) {
            assertEquals(List.of("state.json"), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void load_corruptFile_answersNoState() throws Exception {
        Path p = dir.resolve("bad.json");
        Files.writeString(p, "{not json");
        assertEquals(null, new StateStore(p).load());
    }
}
