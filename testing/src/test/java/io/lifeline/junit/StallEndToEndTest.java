package io.lifeline.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.manager.ActivityState;
import io.lifeline.client.manager.HeartbeatManager;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.Pause;
import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Progress is not liveness, end to end on Lifeline Local and a test clock: an SDK agent whose work loop wedges while
 * its heartbeat manager keeps beating is stalled within its threshold plus one sweep (one {@code AgentStalled}), and
 * its next {@code progress()} resolves it (one {@code AgentProgressResumed}); with {@code onStall: restart} and no
 * daemon the stall is a death with trigger {@code stalled}, and its host is asked by the revive flow. The manager's
 * side-thread beats are sent by the test ({@link HeartbeatManager#beatNow}) every 15 s of the test clock, the sweep
 * runs every 15 s: nothing here waits out time.
 */
@Tag("e2e")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StallEndToEndTest {
    private static final Duration SWEEP = Duration.ofSeconds(15);
    private static final Duration STALL_AFTER = Duration.ofSeconds(120);

    @RegisterExtension
    static final LifelineLocalExtension LIFELINE = LifelineLocalExtension.builder()
            .parameter("StallAfterSeconds", Long.toString(STALL_AFTER.toSeconds())).build();

    @Test
    void aWedgedWorkLoop_whoseHeartbeatThreadBeats_isStalledWithinItsThresholdPlusOneSweep_thenResumes(
            LocalLifeline lifeline) throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("wedged", "Wedged", "worker"));
        client.join("wedged");
        HeartbeatManager manager = HeartbeatManager.builder(client, "wedged").clock(lifeline.clock()).build();
        manager.setState(ActivityState.PROCESSING);
        // The work loop runs for a minute, progressing every 15 s, then wedges; the manager keeps beating.
        for (int i = 0; i < 4; i++) {
            manager.progress();
            step(lifeline, manager);
        }
        manager.progress();
        Instant lastProgress = manager.lastProgress();
        manager.beatNow();
        assertEquals(lastProgress, client.agent("wedged").lastProgressAt(), "the beat carried the progress age");

        Instant stalledAt = null;
        for (int i = 0; i < 20 && stalledAt == null; i++) {
            step(lifeline, manager);
            AgentView a = client.agent("wedged");
            assertEquals("working", a.status(), "beating: alive, never dead for a stall under alert");
            if (a.stalled() != null) {
                stalledAt = a.stalled().since();
                assertEquals("no progress reported", a.stalled().reason());
            }
        }
        assertNotNull(stalledAt, "stalled");
        Duration toStall = Duration.between(lastProgress, stalledAt);
        System.out.println("stall: last progress to AgentStalled " + toStall.toMillis() + " ms (threshold "
                + STALL_AFTER.toMillis() + " ms, sweep " + SWEEP.toMillis() + " ms)");
        assertTrue(toStall.compareTo(STALL_AFTER) > 0, "not before its threshold: " + toStall);
        assertTrue(toStall.compareTo(STALL_AFTER.plus(SWEEP)) <= 0, "within threshold + one sweep: " + toStall);
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> events(client, "wedged", "AgentStalled") == 1));

        // Still wedged: no second event however long it lasts (the working allowance still bounds the silence).
        step(lifeline, manager);
        step(lifeline, manager);
        assertEquals(1, events(client, "wedged", "AgentStalled"));

        manager.progress();
        manager.beatNow();
        lifeline.sweep();
        assertNull(client.agent("wedged").stalled(), "progress resolved it");
        assertTrue(lifeline.eventually(Duration.ofSeconds(20),
                () -> events(client, "wedged", "AgentProgressResumed") == 1));
        EventView resumed = client.events(EventQuery.all().withAgent("wedged").withType("AgentProgressResumed"))
                .events().get(0);
        assertEquals("resumed", resumed.detail().path("state").asText());
        assertEquals(stalledAt.toString(), resumed.detail().path("since").asText(), "the pair's id");
        assertEquals(1, events(client, "wedged", "AgentStalled"));
    }

    @Test
    void onStallRestart_withoutADaemon_isADeathWithTriggerStalled_andTheReviveFlowAsksItsHost(
            LocalLifeline lifeline) throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("stuck", "Stuck", "worker").withHost("box-1").withOnStall("restart")
                .withStallAfterSeconds(30));
        client.join("stuck");
        HeartbeatManager manager = HeartbeatManager.builder(client, "stuck").clock(lifeline.clock()).build();
        manager.setState(ActivityState.PROCESSING);
        manager.progress();
        manager.beatNow();
        List<String> dead = List.of();
        for (int i = 0; i < 6 && dead.isEmpty(); i++) {
            lifeline.advance(SWEEP);
            manager.beatNow();
            dead = lifeline.sweep();
        }
        assertTrue(dead.contains("local/stuck"), "the sweep restarted it: " + dead);
        AgentView a = client.agent("stuck");
        assertFalse(a.alive());
        assertEquals("stalled", a.lastTransition().trigger());
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> events(client, "stuck", "AgentStalled") == 1));
        assertTrue(lifeline.eventually(Duration.ofSeconds(20),
                () -> !client.revivals("stuck", 10).revivals().isEmpty()), "a revive flow started for its host");
    }

    @Test
    void onStallRestart_ofAPausedAgent_isKeptToTheAlert(LocalLifeline lifeline) throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("paused", "Paused", "worker").withHost("box-2").withOnStall("restart")
                .withStallAfterSeconds(30));
        client.join("paused");
        client.pause("paused", Pause.lasting(Duration.ofHours(1), "maintenance"));
        HeartbeatManager manager = HeartbeatManager.builder(client, "paused").clock(lifeline.clock()).build();
        manager.setState(ActivityState.PROCESSING);
        manager.progress();
        manager.beatNow();
        for (int i = 0; i < 6; i++) {
            step(lifeline, manager);
        }
        AgentView a = client.agent("paused");
        assertEquals("working", a.status(), "a pause holds the restart's death");
        assertNotNull(a.stalled(), "the stall is still raised");
    }

    @Test
    void anAgentThatNeverReportsProgress_isNeverStalled(LocalLifeline lifeline) {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("plain", "Plain", "worker"));
        client.join("plain");
        HeartbeatManager manager = HeartbeatManager.builder(client, "plain").clock(lifeline.clock()).build();
        manager.setState(ActivityState.PROCESSING);
        for (int i = 0; i < 16; i++) {
            step(lifeline, manager);
        }
        AgentView a = client.agent("plain");
        assertEquals("working", a.status());
        assertNull(a.stalled());
        assertNull(a.lastProgressAt());
    }

    /** One sweep interval of the test clock: the manager's side thread beats, then the sweep runs. */
    private static void step(LocalLifeline lifeline, HeartbeatManager manager) {
        lifeline.advance(SWEEP);
        manager.beatNow();
        lifeline.sweep();
    }

    private static long events(LifelineClient client, String agentId, String type) {
        return client.events(EventQuery.all().withAgent(agentId).withType(type)).events().size();
    }
}
