package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalBeat;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.cli.LifelineCli;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The daemon's local beat channel: agents prove they are not hung by local beats (the SDK's
 * {@link LocalBeat}, the CLI's {@code lifeline beat} under {@code LIFELINE_DAEMON}); the daemon's batch through its
 * host lease carries each agent's time since its last one. End to end against Lifeline Local at scaled time (stale
 * after 2 s, grace 2, sweeps every 500 ms), with bounded polls.
 */
@Tag("e2e")
class LocalBeatsTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    /** Every process runs: the daemon sees no crash, only what the local beats say. */
    private static final AgentProcesses ALL_RUNNING = new AllRunning();

    @Test
    void beat_ofTheSdk_isRecordedForItsAgent_andAnotherAgentIsRefused() throws Exception {
        try (LocalBeats channel = LocalBeats.start(List.of("lb-a"), Clock.systemUTC())) {
            LocalBeat beat = LocalBeat.fromEnvironment(Map.of(LocalBeat.ENV, channel.url())).orElseThrow();
            assertTrue(channel.last("lb-a").isEmpty());

            beat.beat("lb-a");

            assertTrue(channel.last("lb-a").isPresent());
            LifelineApiException refused = assertThrows(LifelineApiException.class, () -> beat.beat("lb-other"));
            assertEquals(404, refused.status());
            assertTrue(channel.last("lb-other").isEmpty());
        }
    }

    @Test
    void fromEnvironment_withoutLifelineDaemon_isEmpty() {
        assertTrue(LocalBeat.fromEnvironment(Map.of()).isEmpty());
        assertTrue(LocalBeat.fromEnvironment(Map.of(LocalBeat.ENV, " ")).isEmpty());
    }

    @Test
    void cliBeat_underLifelineDaemon_beatsLocally_andWithDirect_beatsTheServer() throws Exception {
        client.register(RegisterAgent.of("lb-cli", "lb-cli", "worker").withHost("host-cli"));
        client.join("lb-cli");
        try (LocalBeats channel = LocalBeats.start(List.of("lb-cli"), Clock.systemUTC())) {
            Map<String, String> env = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", local.adminKey(),
                    LocalBeats.ENV, channel.url(),
                    "XDG_CONFIG_HOME", Files.createTempDirectory("lb-cli").toString());
            Instant before = client.agent("lb-cli").heartbeatTs();

            assertEquals(0, cli(env, "beat", "lb-cli"));
            assertTrue(channel.last("lb-cli").isPresent(), "the beat went to the daemon");
            assertEquals(before, client.agent("lb-cli").heartbeatTs(), "and not to the server");

            Thread.sleep(5);
            assertEquals(0, cli(env, "beat", "--direct", "lb-cli"));
            assertTrue(client.agent("lb-cli").heartbeatTs().isAfter(before), "--direct beats the server");
        }
    }

    private static int cli(Map<String, String> env, String... args) {
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }));
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        return cl.execute(args);
    }

    private static boolean alive(String status) {
        return "ready".equals(status) || "working".equals(status);
    }

    @Test
    @Timeout(60)
    void daemonWithLocalBeats_hungAgentWithLiveProcess_dies_beatingOneStaysAlive_thenAKilledDaemonsAgentsDie()
            throws Exception {
        List<String> ids = List.of("lb-live", "lb-hung");
        for (String id : ids) {
            client.register(RegisterAgent.of(id, id, "worker").withHost("host-lb"));
        }
        AtomicInteger liveDeaths = new AtomicInteger();
        try (LocalBeats channel = LocalBeats.start(ids, Clock.systemUTC());
             HostDaemon daemon = HostDaemon.builder(client, "host-lb", ALL_RUNNING).agents(ids)
                     .interval(Duration.ofMillis(250)).localBeats(channel).build()) {
            LocalBeat beat = LocalBeat.fromEnvironment(Map.of(LocalBeat.ENV, channel.url())).orElseThrow();
            daemon.start();
            // Both beat locally for a while; then lb-hung stops (its process still runs), lb-live goes on.
            Instant hungStops = Instant.now().plusSeconds(1);
            Instant bound = Instant.now().plusSeconds(20);
            boolean hungDead = false;
            while (Instant.now().isBefore(bound) && !hungDead) {
                beat.beat("lb-live");
                if (Instant.now().isBefore(hungStops)) {
                    beat.beat("lb-hung");
                }
                if (!alive(client.agent("lb-live").status())) {
                    liveDeaths.incrementAndGet();
                }
                hungDead = !alive(client.agent("lb-hung").status()); // dead, then the revive flow moves it on
                Thread.sleep(150);
            }
            assertTrue(hungDead, "the hung agent (process alive, local beats stopped) was marked dead");
            assertEquals(0, liveDeaths.get(), "the agent that kept beating locally never left ready");
            // At least once: once dead, the revive flow has the daemon restart it, and a restarted agent that still
            // sends no local beat dies again after its stale-after (on a loaded machine, before this read).
            long hungDeaths = client.transitions("lb-hung", 100).transitions().stream()
                    .filter(t -> "heartbeat_expired".equals(t.trigger())).count();
            assertTrue(hungDeaths >= 1, "deaths of the hung agent: " + hungDeaths);
            assertEquals("ready", client.agent("lb-live").status());

            // The daemon is killed: its lease is no longer renewed, and lb-live dies as well.
            daemon.stop();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20),
                    () -> !alive(client.agent("lb-live").status())), "a silent daemon's agents die");
            assertEquals(1, client.transitions("lb-live", 100).transitions().stream()
                    .filter(t -> "heartbeat_expired".equals(t.trigger())).count());
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10),
                    () -> client.events("HostLeaseExpired", 10).events().stream()
                            .anyMatch(e -> "host-lb".equals(e.detail().path("hostId").asText()))),
                    "the silent host is one HostLeaseExpired");
        }
        assertFalse(liveDeaths.get() > 0);
    }
}
