package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.cli.LifelineCli;
import io.lifeline.client.cli.Main;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.Revival;
import io.lifeline.client.model.TransitionView;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

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
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    record Received(String path, JsonNode body) {
    }

    @Test
    void aCommandThatExitsAtOnce_underTheDaemonsDefaults_isOnePageForTheLoopAndOneForTheGiveUp() throws Exception {
        Assumptions.assumeTrue(new CommandProcesses(Map.of(), Map.of(), dir).supervised(), "needs setsid, setpriv");
        List<Received> received = new CopyOnWriteArrayList<>();
        HttpServer sink = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        sink.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                received.add(new Received(exchange.getRequestURI().getPath(),
                        JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8))));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        sink.start();
        String sinkUrl = "http://127.0.0.1:" + sink.getAddress().getPort();
        Path template = Path.of(System.getProperty("lifeline.template", "../template.yaml")).toAbsolutePath();
        Path copy = Files.createTempFile(template.getParent(), ".daemon-crash-loop-", ".yaml");
        copy.toFile().deleteOnExit();
        Files.writeString(copy, Files.readString(template)
                .replace("https://events.pagerduty.com/v2/enqueue", sinkUrl + "/pagerduty"));
        Map<String, String> parameters = Map.of("StaleAfterSeconds", "10", "SweepIntervalMillis", "500",
                "SlackWebhookUrl", sinkUrl + "/slack", "AlertWebhookUrl", sinkUrl + "/hook",
                "PagerDutyRoutingKey", "0123456789abcdef0123456789abcdef");
        Process daemon = null;
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.read(copy),
                parameters, Clock.systemUTC()))) {
            LifelineClient client = LocalHarness.client(local);
            client.register(RegisterAgent.of(AGENT, "Loopy", "worker").withHost(HOST));
            Path out = dir.resolve("daemon.out");
            daemon = daemonJvm(local, out, "echo 'cannot open config.yaml' >&2; exit 1");

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
            List<String> pagerDuty = at(received, "/pagerduty").stream().map(b -> b.path("event_action").asText()
                    + " " + b.path("dedup_key").asText()).toList();
            List<String> slack = at(received, "/slack").stream().map(b -> b.path("text").asText()).toList();
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
            assertEquals(history.size(), at(received, "/hook").stream()
                    .filter(b -> "AgentStatusChanged".equals(b.path("detail-type").asText())).count());
            assertEquals(List.of(), local.bus().deadLetters());

            String status = cli(local, "status", AGENT);
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
            sink.stop(0);
        }
    }

    /** {@code lifeline daemon} in its own JVM with its crash defaults and a scaled backoff. */
    private Process daemonJvm(LifelineLocal local, Path out, String command) throws IOException {
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "daemon", "--host", HOST,
                "--agent", AGENT + "=" + command, "--interval", "1s", "--restart-backoff", "200ms",
                "--state-dir", dir.resolve("state").toString()));
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().putAll(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", local.adminKey(),
                "XDG_CONFIG_HOME", dir.resolve("no-config").toString()));
        return pb.start();
    }

    private String cli(LifelineLocal local, String... args) {
        Map<String, String> env = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY",
                local.adminKey(), "XDG_CONFIG_HOME", dir.resolve("no-config").toString(), "XDG_STATE_HOME",
                dir.resolve("cli-state").toString());
        StringWriter o = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }));
        cl.setOut(new PrintWriter(o, true));
        cl.setErr(new PrintWriter(o, true));
        int code = cl.execute(args);
        assertEquals(0, code, o::toString);
        return o.toString();
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static List<JsonNode> at(List<Received> received, String path) {
        return received.stream().filter(r -> r.path().equals(path)).map(Received::body).toList();
    }
}
