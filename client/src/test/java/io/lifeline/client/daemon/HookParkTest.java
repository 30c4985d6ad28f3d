package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parked at a usage limit under the daemon, with a stand-in command and hooks posted to its channel as Claude Code
 * posts them: a {@code StopFailure} of a {@code rate_limit} parks the agent until the reset its message names (one
 * write, sent with its next beat), its {@code SessionEnd} is no leave and its exit no crash, and at the reset the
 * daemon starts the command again and ends the park (one {@code AgentParked}, one {@code AgentResumed}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class HookParkTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    private static long events(String agent, String type) {
        return client.events(EventQuery.all().withAgent(agent).withType(type)).events().size();
    }

    @Test
    void aUsageLimit_parksTheAgent_itsEndIsNoLeaveNorCrash_andTheResetRestartsIt() throws Exception {
        String a = "hp-limit";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-hp"));
        try (HookedDaemon h = new HookedDaemon(client, "host-hp", a, Duration.ofMinutes(10), dir).startProcess()) {
            CommandProcesses p = h.processes;
            HostDaemon d = h.daemon;
            d.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));
            h.hook("UserPromptSubmit", ",\"prompt\":\"work\"");
            Instant reported = Instant.now();
            h.hook("StopFailure", ",\"error\":\"rate_limit\",\"last_assistant_message\":\"API Error: "
                    + "Request rejected (429) \\u00b7 Rate limit reached. Please try again in 4s.\"");
            h.hook("SessionEnd", ",\"reason\":\"other\"");
            d.runOnce();
            AgentView parked = client.agent(a);
            assertNotNull(parked.parked(), "parked by the daemon's beat");
            Duration wait = Duration.between(reported, parked.parked().until());
            assertTrue(wait.compareTo(Duration.ofSeconds(3)) >= 0 && wait.compareTo(Duration.ofSeconds(6)) <= 0,
                    "until the reset its message names: " + wait);
            assertTrue(parked.alive(), "its SessionEnd is no leave while parked: " + parked.status());

            long pid = p.pid(a);
            ProcessHandle.of(pid).orElseThrow().destroy();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> !p.isRunning(a)));
            // The daemon's own rounds run beside the test's (it was started), so either may make the restart at the
            // reset: the test asserts what happened, not which round did it.
            TickReport r = d.runOnce();
            assertTrue(r.crashesReported().isEmpty(), "its exit is no crash: " + r);
            assertTrue(client.agent(a).alive());

            assertTrue(LocalHarness.eventually(Duration.ofSeconds(15), () -> {
                d.runOnce();
                return p.isRunning(a) && p.pid(a) != pid;
            }), "restarted at the reset");
            Instant started = ProcessHandle.of(p.pid(a)).flatMap(ph -> ph.info().startInstant()).orElseThrow();
            assertTrue(!started.isBefore(parked.parked().until().minusMillis(1_000)),
                    "not before the reset (a process start time is known to the second: the boot time is): " + started);
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> client.agent(a).parked() == null),
                    "the park ended with the restart's beat");
            assertTrue(client.allTransitions(a).stream().noneMatch(t -> t.to().startsWith("dead")
                    || "offline".equals(t.to())), "never dead nor offline: " + client.allTransitions(a));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> events(a, "AgentParked") == 1
                    && events(a, "AgentResumed") == 1));
        }
    }
}
