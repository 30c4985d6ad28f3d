package io.lifeline.client.daemon;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.TransitionView;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's lifecycle with real child processes against a real Lifeline Local: a crash loop backs
 * off and ends in one give-up, and a stop leaves every agent. The daemon's own clock is a test clock, so a
 * backoff passes by moving it; the children's exits are real, awaited with a bound.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class DaemonLifecycleTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    private static void awaitExit(CommandProcesses p, String agentId) throws InterruptedException {
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> !p.isRunning(agentId)),
                agentId + " did not exit");
    }

    @Test
    void runOnce_withACommandThatKeepsCrashing_backsOffThenGivesUpOnceWithItsExitStatusAndStderr() throws Exception {
        String a = "loop-1";
        client.register(RegisterAgent.of(a, "Looper", "worker").withHost("host-loop"));
        client.join(a);
        MutableClock clock = new MutableClock(Instant.now());
        try (CommandProcesses p = new CommandProcesses(Map.of(a, "echo 'cannot open config.yaml' >&2; exit 3"),
                Map.of(), dir)) {
            p.startAll();
            HostDaemon d = HostDaemon.builder(client, "host-loop", p).agents(List.of(a)).clock(clock)
                    .giveUpAfter(3, Duration.ofMinutes(10)).restartBackoff(Duration.ofSeconds(2), Duration.ofMinutes(5))
                    .build();

            awaitExit(p, a);
            TickReport first = d.runOnce();
            assertEquals(List.of(a), first.crashesReported(), first.toString());
            assertEquals(List.of(a), first.restarted(), "the first crash restarts at once: " + first);

            awaitExit(p, a);
            TickReport second = d.runOnce();
            assertEquals(List.of(a), second.crashesReported(), second.toString());
            assertTrue(second.restarted().isEmpty(), "the second waits out its backoff: " + second);
            assertTrue(second.backingOff().stream().anyMatch(b -> b.equals(a + " restarts in 2 s (crash 2 of 3 in 10 min)")),
                    second.toString());
            assertTrue(d.runOnce().restarted().isEmpty(), "still backing off while the clock stands");

            clock.advance(Duration.ofSeconds(2));
            TickReport third = d.runOnce();
            assertEquals(List.of(a), third.restarted(), "restarted once the backoff passed: " + third);
            assertEquals(2, d.restartsLastHour(a));
            assertEquals(2L, client.agent(a).stats().restartsLastHour(), "the count is shown on the agent");

            awaitExit(p, a);
            TickReport fourth = d.runOnce();
            assertEquals(List.of(a), fourth.gaveUp(), fourth.toString());
            assertTrue(fourth.crashesReported().isEmpty(), "the give-up is reported instead of a crash: " + fourth);
            assertEquals("dead_failed_revive", client.agent(a).status());
            TransitionView last = client.agent(a).lastTransition();
            assertEquals("host_gave_up", last.trigger());
            assertEquals("host gave up: 3 crashes in 10 min; exited with status 3: cannot open config.yaml",
                    last.reason());

            TickReport after = d.runOnce();
            assertTrue(after.restarted().isEmpty() && after.crashesReported().isEmpty() && after.gaveUp().isEmpty()
                    && after.batchCalls() == 0, "nothing more for a given-up agent: " + after);
            assertTrue(!p.isRunning(a));
        }
        // One alert: the give-up's change to dead_failed_revive, once.
        EventQuery changes = EventQuery.all().withAgent(a).withType("AgentStatusChanged").withLimit(100);
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.events(changes).events().stream()
                .anyMatch(e -> "dead_failed_revive".equals(e.detail().path("to").asText()))), "the give-up's event");
        long unrecoverable = client.events(changes).events().stream()
                .filter(e -> "dead_failed_revive".equals(e.detail().path("to").asText())).count();
        assertEquals(1, unrecoverable, () -> "events: " + client.events(changes).events());
        List<TransitionView> history = client.allTransitions(a);
        assertEquals(2, history.stream().filter(t -> "reported_failure".equals(t.trigger())).count(),
                () -> "two crash reports before the give-up: " + history);
        assertTrue(history.stream().filter(t -> "reported_failure".equals(t.trigger()))
                .allMatch(t -> t.reason().endsWith("exited with status 3: cannot open config.yaml")),
                () -> "each crash says how it ended: " + history);
    }

    @Test
    void leaveAll_afterTheProcessesStop_leavesEveryAgentOffline() throws Exception {
        List<String> ids = List.of("stop-1", "stop-2");
        for (String id : ids) {
            client.register(RegisterAgent.of(id, id, "worker").withHost("host-stop"));
        }
        try (CommandProcesses p = new CommandProcesses(Map.of("stop-1", "sleep 60", "stop-2", "sleep 60"), Map.of(),
                dir)) {
            p.startAll();
            HostDaemon d = HostDaemon.builder(client, "host-stop", p).agents(ids).build();
            assertEquals(ids, d.runOnce().rejoined());
            p.close();
            assertTrue(!p.isRunning("stop-1") && !p.isRunning("stop-2"), "the commands are stopped first");
            List<String> lines = d.leaveAll("daemon on host host-stop stopped", Duration.ofSeconds(10));
            assertEquals(List.of("left: stop-1", "left: stop-2"), lines);
        }
        for (String id : ids) {
            assertEquals("offline", client.agent(id).status(), id);
            assertEquals("leave", client.agent(id).lastTransition().trigger(), id);
        }
    }
}
