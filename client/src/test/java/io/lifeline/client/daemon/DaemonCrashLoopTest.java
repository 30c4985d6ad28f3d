package io.lifeline.client.daemon;

import static io.lifeline.client.daemon.DaemonJvm.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.Revival;
import io.lifeline.client.model.TransitionView;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One story per crash loop (docs/alerts-noise.md), with the real daemon: {@code lifeline daemon} in its own JVM runs a
 * command that exits with status 1 at once, with the daemon's defaults (give up at the 5th crash in 10 minutes) and a
 * scaled backoff ({@code --restart-backoff 200ms}: none, 200, 400, 800 ms), against a real Lifeline Local with the
 * template's rules and transformers, the default flapping thresholds, a live revive flow, and every alert destination on
 * a loopback sink (Slack's webhook, PagerDuty's Events v2, the alert webhook; the alerts topic counted from the bus).
 * What people get, counted by rule once every delivery settled and every revive execution ended:
 * <ul>
 *   <li>one page for the loop: {@code AgentFlapping} (the topic, Slack, one PagerDuty trigger);</li>
 *   <li>one page for the give-up: its change to dead_failed_revive (the topic, Slack, one PagerDuty trigger);</li>
 *   <li>nothing else: no death or recovery alert, no digest, no burst resolve (the daemon's crash reports claimed
 *       their restarts: the changes carry {@code hostRestart});</li>
 *   <li>the revive flow never raced the daemon: no change to restarting, each execution stood down;</li>
 *   <li>{@code lifeline status} credits the 4 restarts to the host daemon and none to the revive flow.</li>
 * </ul>
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("e2e")
class DaemonCrashLoopTest {
    private static final String AGENT = "loopy";
    private static final String HOST = "h-loop";

    @TempDir
    Path dir;

    @Test
    void aCommandThatExitsAtOnce_underTheDaemonsDefaults_isOnePageForTheLoopAndOneForTheGiveUp() throws Exception {
        Assumptions.assumeTrue(new CommandProcesses(Map.of(), Map.of(), dir).supervised(), "needs setsid, setpriv");
        Process daemon = null;
        try (AlertSink sink = new AlertSink(); LifelineLocal local = sink.local(".daemon-crash-loop-")) {
            LifelineClient client = LocalHarness.client(local);
            client.register(RegisterAgent.of(AGENT, "Loopy", "worker").withHost(HOST));
            Path out = dir.resolve("daemon.out");
            // With its crash defaults and a scaled backoff.
            daemon = DaemonJvm.start(local, dir, out, HOST, AGENT, "echo 'cannot open config.yaml' >&2; exit 1",
                    "--restart-backoff", "200ms");

            assertTrue(LocalHarness.eventually(Duration.ofSeconds(60),
                    () -> "dead_failed_revive".equals(client.agent(AGENT).status())), () -> read(out));
            daemon.destroy();
            assertTrue(daemon.waitFor(60, TimeUnit.SECONDS), () -> read(out));

            // Every revive execution ended, every change published and every delivery settled.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(90), () -> {
                List<Revival> r = client.revivals(AGENT, 50).revivals();
                return !r.isEmpty() && r.stream().noneMatch(x -> "in_progress".equals(x.outcome()))
                        && local.bus().inFlight() == 0 && local.bus().delivered().stream()
                        .filter(d -> d.detailType().equals("AgentStatusChanged")).count()
                        == client.allTransitions(AGENT).size();
            }), () -> client.revivals(AGENT, 50) + " " + read(out));
            List<TransitionView> history = client.allTransitions(AGENT);
            assertEquals(List.of(), history.stream().filter(t -> "restarting".equals(t.to())).toList(),
                    "the revive flow never raced the daemon");
            // 4 crash reports, or 3 when the command's first exit came before the daemon's first join (the daemon
            // starts the commands, then joins): the agent was not alive yet, so that exit was no death and its report
            // is refused, though the daemon restarted it all the same.
            long reported = history.stream().filter(t -> "reported_failure".equals(t.trigger())).count();
            assertTrue(reported == 4 || reported == 3 && read(out).contains("loopy: crash report refused: "),
                    () -> history + "\n" + read(out));
            assertEquals("host_gave_up", history.get(0).trigger(), history::toString);

            Map<String, Integer> byRule = new TreeMap<>();
            local.bus().delivered().forEach(d -> d.rules().forEach(r -> byRule.merge(r, 1, Integer::sum)));
            List<String> pagerDuty = sink.at("/pagerduty").stream().map(b -> b.path("event_action").asText()
                    + " " + b.path("dedup_key").asText()).toList();
            List<String> slack = sink.at("/slack").stream().map(b -> b.path("text").asText()).toList();
            // One page for the loop: the flapping notice on each destination.
            assertEquals(1, byRule.getOrDefault("FlappingAlertRule", 0), byRule::toString);
            assertEquals(1, byRule.getOrDefault("SlackFlappingRule", 0), byRule::toString);
            // One page for the give-up: its change to dead_failed_revive, on each destination.
            assertEquals(1, byRule.getOrDefault("DeathAlertRule", 0), byRule::toString);
            assertEquals(1, byRule.getOrDefault("SlackRule", 0), byRule::toString);
            assertEquals(List.of("trigger lifeline/local/" + AGENT + "/flapping", "trigger lifeline/local/" + AGENT),
                    pagerDuty.stream().sorted((x, y) -> y.length() - x.length()).toList(), pagerDuty::toString);
            assertEquals(2, slack.size(), slack::toString);
            assertTrue(slack.stream().anyMatch(t -> t.contains("-> dead_failed_revive")
                    && t.contains("host gave up: 5 crashes in 10 min; exited with status 1: cannot open config.yaml")),
                    slack::toString);
            // Nothing else reaches a person.
            for (String none : List.of("RecoveryAlertRule", "DigestAlertRule", "BurstResolvedAlertRule",
                    "SlackDigestRule", "SlackBurstResolvedRule", "PagerDutyDigestRule", "PagerDutyBurstResolvedRule",
                    "PagerDutyResolveRule", "PagerDutyRevivingDeathRule")) {
                assertEquals(0, byRule.getOrDefault(none, 0), none + ": " + byRule);
            }
            // The record keeps everything: every change went to the alert webhook.
            assertEquals(history.size(), sink.at("/hook").stream()
                    .filter(b -> "AgentStatusChanged".equals(b.path("detail-type").asText())).count());
            assertEquals(List.of(), local.bus().deadLetters());

            String status = DaemonJvm.cli(local, dir, "status", AGENT);
            assertTrue(status.contains("status:          dead_failed_revive"), status);
            assertTrue(status.contains("restarts (1 h):  4 by its host daemon (as it reported), 0 by the revive flow"),
                    status);
            assertTrue(status.contains("reason:          host gave up: 5 crashes in 10 min; exited with status 1"),
                    status);
            System.out.println("crash loop under the daemon: " + history.size() + " changes; alerts by rule "
                    + byRule + "; Slack " + slack + "; PagerDuty " + pagerDuty + "\nlifeline status " + AGENT + ":\n"
                    + status + "\ndaemon output:\n" + read(out));
        } finally {
            if (daemon != null) {
                daemon.destroyForcibly();
            }
        }
    }
}
