package io.lifeline.client.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("e2e")
class RecoveryManagerTest {
    private static final Duration MAX_AGE = Duration.ofHours(24);
    private static final Duration STALE = Duration.ofSeconds(60);
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    @Test
    void checkForRecovery_noFileAndNoCheckpoint_answersNoSavedState() {
        client.register(RegisterAgent.of("r-none", "None", "worker"));
        RecoveryCheck c = recovery("r-none", Clock.systemUTC()).checkForRecovery();
        assertFalse(c.available());
        assertEquals(RecoveryCheck.NO_SAVED_STATE, c.reason());
    }

    @Test
    void checkForRecovery_fileOlderThanMaxAge_answersStateTooOld() {
        client.register(RegisterAgent.of("r-old", "Old", "worker"));
        new StateStore(dir.resolve("r-old.json")).save(state("r-old", Instant.now().minus(Duration.ofHours(25))));
        RecoveryCheck c = recovery("r-old", Clock.systemUTC()).checkForRecovery();
        assertEquals(RecoveryCheck.STATE_TOO_OLD, c.reason());
    }

    @Test
    void checkForRecovery_agentStillBeating_answersSessionStillActive() {
        client.register(RegisterAgent.of("r-live", "Live", "worker"));
        HeartbeatManager m = HeartbeatManager.builder(client, "r-live").statePath(dir.resolve("r-live.json"))
                .checkpoint(() -> Map.of("step", 1), true).build();
        assertTrue(m.beatNow().ok());
        RecoveryCheck c = recovery("r-live", Clock.systemUTC()).checkForRecovery();
        assertFalse(c.available());
        assertEquals(RecoveryCheck.SESSION_STILL_ACTIVE, c.reason());
    }

    @Test
    void checkForRecovery_agentCrashed_answersAvailableWithSavedState() {
        client.register(RegisterAgent.of("r-dead", "Dead", "worker"));
        HeartbeatManager m = HeartbeatManager.builder(client, "r-dead").statePath(dir.resolve("r-dead.json"))
                .checkpoint(() -> Map.of("step", 42), true).build();
        m.recordActivity(Activity.MESSAGE);
        assertTrue(m.beatNow().ok());
        client.fail("r-dead", "crashed");
        RecoveryCheck c = recovery("r-dead", Clock.systemUTC()).checkForRecovery();
        assertTrue(c.available(), String.valueOf(c.reason()));
        assertEquals(42, c.state().checkpoint().get("step"));
        assertEquals(1, c.state().stats().messagesProcessed());
        assertEquals(42, c.server().checkpoint().get("step").asInt());
    }

    @Test
    void checkForRecovery_noLocalFileButServerCheckpoint_answersAvailableFromServer() {
        client.register(RegisterAgent.of("r-srv", "Server", "worker"));
        HeartbeatManager.builder(client, "r-srv").checkpoint(() -> Map.of("step", 3), true).build().beatNow();
        client.fail("r-srv", "crashed");
        RecoveryCheck c = recovery("r-srv", Clock.systemUTC()).checkForRecovery();
        assertTrue(c.available());
        // One shape wherever the checkpoint came from: state() as for a local file.
        assertNotNull(c.state());
        assertEquals(3, c.state().checkpoint().get("step"));
        assertEquals(c.state().checkpoint(), c.checkpoint());
        assertEquals("r-srv", c.state().agentId());
        assertEquals(c.server().savedAt(), c.state().savedAt());
        assertEquals(3, c.server().checkpoint().get("step").asInt());
    }

    @Test
    void checkForRecovery_serverUnreachable_decidesFromLocalHeartbeatAge() {
        Instant now = Instant.parse("2026-03-01T12:00:00Z");
        LifelineClient down = LifelineClient.builder().url("http://127.0.0.1:1").team("local").apiKey("k")
                .retry(RetryPolicy.none()).build();
        StateStore store = new StateStore(dir.resolve("offline.json"));
        store.save(state("x", now.minusSeconds(10)));
        RecoveryManager fresh = new RecoveryManager(store, down, "x", MAX_AGE, STALE,
                Clock.fixed(now, ZoneOffset.UTC));
        assertEquals(RecoveryCheck.SESSION_STILL_ACTIVE, fresh.checkForRecovery().reason());
        RecoveryManager later = new RecoveryManager(store, down, "x", MAX_AGE, STALE,
                Clock.fixed(now.plusSeconds(120), ZoneOffset.UTC));
        RecoveryCheck c = later.checkForRecovery();
        assertTrue(c.available());
        assertNotNull(c.state());
        assertEquals(null, c.server());
    }

    private RecoveryManager recovery(String agentId, Clock clock) {
        return new RecoveryManager(new StateStore(dir.resolve(agentId + ".json")), client, agentId, MAX_AGE, STALE,
                clock);
    }

    private static PersistedState state(String agentId, Instant at) {
        return new PersistedState(agentId, "local", "processing", at, new HeartbeatStats(1, 0, 0, 5),
                Map.of("step", 1), "/tmp", at);
    }
}
