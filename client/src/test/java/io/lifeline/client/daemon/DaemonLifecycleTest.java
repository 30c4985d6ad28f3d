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
            // The crash report claimed the restart: the revive flow, started by the death, stands down.
            long secondDeath = client.agent(a).lastTransition().seq();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.revivals(a, 10).revivals().stream()
                    .anyMatch(r -> r.startSeq() == secondDeath && r.steps().stream()
                            .anyMatch(st -> "host_restarting".equals(st.outcome())))),
                    () -> "the flow waits out the daemon's claim: " + client.revivals(a, 10));
            assertEquals("dead", client.agent(a).status(), "nothing but the daemon moves it meanwhile");

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

            assertEquals(2L, client.agent(a).stats().restartsLastHour(), "the give-up carries the daemon's count");

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
        assertTrue(history.stream().noneMatch(t -> "restarting".equals(t.to())),
                () -> "the revive flow never raced the daemon: " + history);
    }

    @Test
    void aCommandThatExitsWithStatus0_leavesOffline_noCrash_andIsNotStartedAgainByDefault() throws Exception {
        String a = "done-1";
        client.register(RegisterAgent.of(a, "Done", "worker").withHost("host-done"));
        client.join(a);
        try (CommandProcesses p = new CommandProcesses(Map.of(a, "echo 'all done' >&2; exit 0"), Map.of(), dir)) {
            p.startAll();
            HostDaemon d = HostDaemon.builder(client, "host-done", p).agents(List.of(a)).build();
            assertEquals(RestartPolicy.ON_FAILURE, d.restartPolicy(a));

            awaitExit(p, a);
            TickReport r = d.runOnce();
            assertTrue(r.crashesReported().isEmpty() && r.restarted().isEmpty() && r.gaveUp().isEmpty(), r.toString());
            assertEquals(List.of(a + ": its command finished: exited with status 0: all done; it left (offline)"),
                    r.exits(), r.toString());
            assertEquals("offline", client.agent(a).status());
            TickReport again = d.runOnce();
            assertTrue(again.exits().isEmpty() && again.restarted().isEmpty() && again.batchCalls() == 0,
                    "it stays down, and nothing more is sent: " + again);
        }
        // The outbox records transitions after the change it follows: wait for both records, in any order of arrival.
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.allTransitions(a).size() >= 2),
                () -> "two transitions recorded: " + client.allTransitions(a));
        List<TransitionView> history = client.allTransitions(a);
        assertEquals(List.of("leave", "join"), history.stream().map(TransitionView::trigger).toList(),
                history::toString); // newest first
        assertEquals("its command finished: exited with status 0: all done", history.get(0).reason());
    }

    @Test
    void underRestartAlways_aCommandThatFinishes_leavesThenStartsAgainAndJoins_neverADeath() throws Exception {
        String a = "again-1";
        client.register(RegisterAgent.of(a, "Again", "worker").withHost("host-again"));
        client.join(a);
        try (CommandProcesses p = new CommandProcesses(Map.of(a, "exit 0"), Map.of(), dir)) {
            p.startAll();
            HostDaemon d = HostDaemon.builder(client, "host-again", p).agents(List.of(a))
                    .restartPolicy(a, RestartPolicy.ALWAYS).build();

            awaitExit(p, a);
            TickReport r = d.runOnce();
            assertEquals(List.of(a), r.restarted(), "the first end in the window starts it again at once: " + r);
            assertEquals(List.of(a), r.rejoined(), r.toString());
            assertTrue(r.crashesReported().isEmpty(), r.toString());
            assertTrue(r.exits().get(0).endsWith("it left (offline), and starts again (--restart always)"),
                    r.toString());
            assertEquals(1, d.restartsLastHour(a), "a restart of the daemon's own");
        }
        // The outbox records transitions after the change it follows: wait for all three records.
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> client.allTransitions(a).size() >= 3),
                () -> "three transitions recorded: " + client.allTransitions(a));
        List<TransitionView> history = client.allTransitions(a);
        assertEquals(List.of("join", "leave", "join"), history.stream().map(TransitionView::trigger).toList(),
                history::toString);
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
