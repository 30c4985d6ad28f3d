package io.lifeline.client.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.CountingProxy;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.mcp.NpmTools;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The opencode bridge as the CLI runs it, in its own JVM (so SIGTERM stops it as a service manager would), against
 * a real {@code opencode serve} and a real Lifeline Local: inside {@code lifeline daemon --opencode} (the bridge
 * inside the daemon), and as {@code lifeline bridge opencode}. Lifeline is reached through a {@link CountingProxy},
 * which counts the requests per path: with a heartbeat URL configured the bridge's beats take Local's Function URL path
 * and its joins and error reports the API's; without one, beats take the API path. Every wait is a
 * bounded poll.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("real-third-party")
class BridgeCliOpencodeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static LifelineLocal local;
    private static LifelineClient admin;
    private static OpencodeServer server;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        NpmTools.assumeInstalled("opencode-ai");
        local = LocalHarness.start();
        admin = LocalHarness.client(local);
        server = OpencodeServer.start(null);
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (local != null) {
            local.close();
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        assertTrue(LocalHarness.eventually(WAIT, condition), "within " + WAIT.toSeconds() + " s: " + what);
    }

    private static String status(String agentId) {
        return admin.agent(agentId).status();
    }

    private static void abort(String session) throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(
                HttpRequest.newBuilder(URI.create(server.url() + "/session/" + session + "/abort"))
                        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
    }

    /** The real {@code lifeline} CLI in its own JVM, its stdout and stderr in one file. */
    private static final class Cli implements AutoCloseable {
        final Process process;
        final Path output;

        /** {@code lifeline daemon args...} */
        static Cli daemon(Path dir, Map<String, String> env, String... args) throws Exception {
            return new Cli(dir, env, List.of("daemon"), args);
        }

        Cli(Path dir, Map<String, String> env, List<String> command, String... args) throws Exception {
            List<String> cmd = new ArrayList<>(NpmTools.lifeline(command.toArray(String[]::new)));
            cmd.addAll(List.of(args));
            output = dir.resolve("daemon.out");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile());
            pb.environment().keySet().removeIf(k -> k.startsWith("LIFELINE_") || k.startsWith("OPENCODE_"));
            pb.environment().put("HOME", dir.toString());
            pb.environment().put("XDG_CONFIG_HOME", dir.resolve("config").toString());
            pb.environment().putAll(env);
            process = pb.start();
        }

        String out() {
            try {
                return Files.readString(output);
            } catch (IOException e) {
                return "";
            }
        }

        /** How many lines of the output contain {@code text}. */
        long lines(String text) {
            return out().lines().filter(l -> l.contains(text)).count();
        }

        /** SIGTERM, and the exit it brings within 30 s. */
        void terminate() throws InterruptedException {
            process.destroy();
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the process exits after SIGTERM:\n" + out());
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void registerHosted(String agentId, String host) {
        admin.register(RegisterAgent.of(agentId, agentId, "host command").withHost(host).withStaleAfterSeconds(3600));
    }

    private static void register(String agentId) {
        admin.register(RegisterAgent.of(agentId, agentId, "worker").withStaleAfterSeconds(3600));
    }

    @Test
    void daemon_withOpencodeAndAHeartbeatUrlInItsConfigFile_bridgesReadyWorkingReadyThroughTheFunctionUrlPath()
            throws Exception {
        registerHosted("dh-cmd", "dh-host");
        register("oc-d1");
        try (CountingProxy proxy = new CountingProxy(local.url())) {
            Path config = Files.createDirectories(dir.resolve("config").resolve("lifeline")).resolve("config");
            Files.writeString(config, String.join("\n",
                    "url = " + proxy.url(),
                    "heartbeat_url = " + proxy.heartbeatUrl(local.heartbeatUrl()),
                    "team = " + LifelineLocal.LOCAL_TEAM,
                    "api_key = " + local.adminKey(),
                    "opencode_url = " + server.url(), ""));
            try (Cli daemon = Cli.daemon(dir, Map.of(), "--host", "dh-host", "--agent", "dh-cmd=exec sleep 300",
                    "--interval", "1s", "--opencode-interval", "300ms")) {
                await("the daemon's bridge is connected", () -> daemon.lines("(connection 1)") == 1);
                assertTrue(daemon.out().contains("opencode bridge: following " + server.url() + "/event"),
                        daemon.out());
                OpencodeApi opencode = new OpencodeApi(server.url(), null);
                String session = opencode.createSession("teams::local::agent::oc-d1::role::worker");
                await("a mapped session joins its agent: ready", () -> status("oc-d1").equals("ready"));

                server.stopProcess();
                server.startProcess();
                await("the daemon's bridge reconnected", () -> daemon.lines("(connection 2)") == 1);
                opencode.promptAsync(session, "hello from the daemon test");
                await("busy: working", () -> status("oc-d1").equals("working"));
                await("the retry's error is reported", () -> admin.agent("oc-d1").lastError() != null);
                abort(session);
                await("idle: ready", () -> status("oc-d1").equals("ready"));
                assertEquals("ready", status("dh-cmd"), "the daemon's own agent is kept alive beside the bridge");

                daemon.terminate();
                String out = daemon.out();
                assertTrue(out.contains("opencode bridge stopped: "), out);
                assertTrue(out.indexOf("opencode bridge stopped: ") < out.indexOf("daemon stopped: "),
                        "the bridge stops first:\n" + out);
                assertTrue(out.contains("daemon stopped: 1 of 1 agent(s) left (offline)"), out);
                assertEquals("offline", status("dh-cmd"));
                assertEquals("ready", status("oc-d1"), "the bridge's agents are not the daemon's: they do not leave");
            }
            // Counted, not timed: every beat of the bridge took the heartbeat URL; the rest took the API URL.
            long beats = proxy.viaHeartbeatUrl("/agents/oc-d1/heartbeat");
            assertTrue(beats >= 3, "ready, working, ready at least: " + beats + " in " + proxy.seen());
            assertEquals(0, proxy.viaApi("/agents/oc-d1/heartbeat"), proxy.seen().toString());
            assertEquals(1, proxy.viaApi("/agents/oc-d1/join"), "the first beat answered rejoinRequired: "
                    + proxy.seen());
            assertEquals(1, proxy.viaApi("/agents/oc-d1/errors"), proxy.seen().toString());
            assertEquals(0, proxy.count(s -> s.path().startsWith("/lambda-url/")
                    && !s.path().endsWith("/heartbeat") && !s.path().endsWith("/heartbeats")), proxy.seen().toString());
            assertTrue(proxy.viaHeartbeatUrl("/heartbeats") >= 1, "the daemon's batches too: " + proxy.seen());
            assertEquals(0, proxy.viaApi("/heartbeats"), proxy.seen().toString());
        }
    }

    @Test
    void daemon_withOpencodeOnItsCommandLineAndNoHeartbeatUrl_bridgesBeatsThroughTheApiPath() throws Exception {
        registerHosted("dn-cmd", "dn-host");
        register("oc-d2");
        try (CountingProxy proxy = new CountingProxy(local.url())) {
            OpencodeApi opencode = new OpencodeApi(server.url(), null);
            String session = opencode.createSession("no title convention here");
            try (Cli daemon = Cli.daemon(dir, Map.of("LIFELINE_URL", proxy.url().toString(),
                    "LIFELINE_API_KEY", local.adminKey()), "--host", "dn-host", "--agent", "dn-cmd=exec sleep 300",
                    "--interval", "1s", "--opencode", server.url().toString(), "--opencode-map", session + "=oc-d2",
                    "--opencode-interval", "300ms")) {
                await("the map joins the session's agent: ready", () -> status("oc-d2").equals("ready"));
                opencode.promptAsync(session, "hello again");
                await("busy: working", () -> status("oc-d2").equals("working"));
                abort(session);
                await("idle: ready", () -> status("oc-d2").equals("ready"));
                daemon.terminate();
                assertTrue(daemon.out().contains("opencode bridge stopped: "), daemon.out());
            }
            long beats = proxy.viaApi("/agents/oc-d2/heartbeat");
            assertTrue(beats >= 3, "ready, working, ready at least: " + beats + " in " + proxy.seen());
            assertEquals(0, proxy.count(s -> s.path().startsWith("/lambda-url/")), proxy.seen().toString());
            assertTrue(proxy.viaApi("/heartbeats") >= 1, "the daemon's batches: " + proxy.seen());
        }
    }

    @Test
    void bridgeCommand_withHeartbeatUrlFlag_beatsThroughTheFunctionUrlPath_andStopsOnSigterm() throws Exception {
        register("oc-b1");
        try (CountingProxy proxy = new CountingProxy(local.url())) {
            OpencodeApi opencode = new OpencodeApi(server.url(), null);
            try (Cli bridge = new Cli(dir, Map.of("LIFELINE_API_KEY", local.adminKey(),
                    "OPENCODE_URL", server.url().toString()), List.of("bridge", "opencode"), "--url", proxy.url().toString(),
                    "--heartbeat-url", proxy.heartbeatUrl(local.heartbeatUrl()).toString(), "--interval", "300ms")) {
                await("the bridge is connected", () -> bridge.lines("(connection 1)") == 1);
                String session = opencode.createSession("teams::local::agent::oc-b1");
                await("a mapped session joins its agent: ready", () -> status("oc-b1").equals("ready"));
                opencode.promptAsync(session, "hello from the bridge command test");
                await("busy: working", () -> status("oc-b1").equals("working"));
                abort(session);
                await("idle: ready", () -> status("oc-b1").equals("ready"));
                bridge.terminate();
                assertTrue(bridge.out().contains("lifeline bridge: following " + server.url() + "/event"), bridge.out());
            }
            long beats = proxy.viaHeartbeatUrl("/agents/oc-b1/heartbeat");
            assertTrue(beats >= 3, "ready, working, ready at least: " + beats + " in " + proxy.seen());
            assertEquals(0, proxy.viaApi("/agents/oc-b1/heartbeat"), proxy.seen().toString());
            assertEquals(1, proxy.viaApi("/agents/oc-b1/join"), proxy.seen().toString());
        }
    }
}
