package io.lifeline.client.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.Readme;
import io.lifeline.client.Sleeper;
import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.mcp.NpmTools;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bridge against a real {@code opencode serve} (npm opencode-ai 1.18.33, offline: no model provider is
 * reachable, so a prompt goes busy and then retries with a real "Cannot connect" error) and a real Lifeline Local.
 * Intervals are scaled down (300 ms); every wait is a bounded poll.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("real-third-party")
class OpencodeBridgeOpencodeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static LifelineLocal local;
    private static LifelineClient admin;
    /**
     * One opencode server for the bridge's tests (a first start in a fresh HOME costs it about 40 s of CPU here);
     * the MCP test starts its own with the opencode.json entry.
     */
    private static OpencodeServer server;

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

    /**
     * docs/mcp.md's opencode.json entry, as written there, with its jar path
     * replaced by this build's classes and its environment's values by this Local's.
     */
    private static String opencodeJson() throws Exception {
        ObjectNode config = null;
        for (String block : Readme.blocks(Readme.page("docs/mcp.md"), "json")) {
            if (block.contains("https://opencode.ai/config.json")) {
                config = (ObjectNode) JSON.readTree(block);
            }
        }
        assertTrue(config != null, "docs/mcp.md has an opencode.json entry");
        ObjectNode lifeline = (ObjectNode) config.path("mcp").path("lifeline");
        assertEquals("local", lifeline.path("type").asText());
        assertTrue(lifeline.path("enabled").asBoolean(), lifeline.toString());
        List<String> readme = JSON.convertValue(lifeline.path("command"), List.class);
        assertEquals(List.of("java", "-jar"), readme.subList(0, 2), readme.toString());
        assertTrue(readme.get(2).endsWith("client/target/lifeline.jar"), readme.toString());
        List<String> command = NpmTools.lifeline(readme.subList(3, readme.size()).toArray(String[]::new));
        command.forEach(lifeline.putArray("command")::add);
        ObjectNode env = (ObjectNode) lifeline.path("environment");
        assertEquals(List.of("LIFELINE_API_KEY", "LIFELINE_TEAM", "LIFELINE_URL"),
                JSON.convertValue(env, Map.class).keySet().stream().sorted().toList());
        env.put("LIFELINE_URL", local.url().toString()).put("LIFELINE_API_KEY", local.adminKey());
        assertEquals(LifelineLocal.LOCAL_TEAM, env.path("LIFELINE_TEAM").asText());
        return JSON.writeValueAsString(config);
    }

    /** A bridge running on its own thread with a flush timer, as {@code lifeline bridge opencode} runs it. */
    static final class Running implements AutoCloseable {
        final OpencodeBridge bridge;
        private final Thread thread;
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

        Running(OpencodeServer server, Map<String, AgentRef> given) {
            bridge = new OpencodeBridge(new OpencodeApi(server.url(), null), team -> admin, given,
                    Duration.ofMillis(300), Clock.systemUTC(), Sleeper.REAL, line -> System.err.println("bridge: " + line));
            thread = new Thread(bridge::run, "bridge-under-test");
            thread.start();
            timer.scheduleWithFixedDelay(bridge::flushDue, 100, 100, TimeUnit.MILLISECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            bridge.close();
            timer.shutdownNow();
            thread.join(10_000);
        }
    }

    private static void register(String agentId) {
        admin.register(RegisterAgent.of(agentId, agentId, "worker").withStaleAfterSeconds(3600));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        assertTrue(LocalHarness.eventually(WAIT, condition), "within " + WAIT.toSeconds() + " s: " + what);
    }

    private static String status(String agentId) {
        return admin.agent(agentId).status();
    }

    private static void abort(OpencodeServer server, String session) throws Exception {
        HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(HttpRequest.newBuilder(URI.create(server.url()
                + "/session/" + session + "/abort")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void bridge_followingARealOpencodeServer_movesTheAgentReadyWorkingReadyAndRecordsItsRetryError()
            throws Exception {
        register("oc-a1");
        try (Running running = new Running(server, Map.of())) {
            OpencodeApi opencode = new OpencodeApi(server.url(), null);
            await("the bridge is connected", () -> running.bridge.stats().connections() >= 1);
            String session = opencode.createSession("teams::local::agent::oc-a1::role::worker");
            String scratch = opencode.createSession("scratch work");
            await("a new session joins its agent: ready", () -> status("oc-a1").equals("ready"));

            opencode.promptAsync(session, "hello from the test");
            opencode.promptAsync(scratch, "nobody maps this one");
            await("busy: working", () -> status("oc-a1").equals("working"));
            await("the retry's error is reported", () -> admin.agent("oc-a1").lastError() != null);
            JsonNode lastError = admin.agent("oc-a1").lastError();
            assertTrue(lastError.path("message").asText().contains("Cannot connect"), lastError.toString());
            assertEquals("unknown", lastError.path("category").asText(), lastError.toString());

            abort(server, session);
            await("idle: ready", () -> status("oc-a1").equals("ready"));
            assertEquals(1, admin.agent("oc-a1").errorsReported(), "repeated retries of one error: one report");
            assertTrue(running.bridge.agentOf(scratch).isEmpty());
            assertTrue(admin.agents().agents().stream().noneMatch(a -> a.agentId().contains("scratch")));
            abort(server, scratch);
        }
    }

    @Test
    void bridge_whenOpencodeRestartsMidStream_reconnectsAndResumesBeats() throws Exception {
        register("oc-r1");
        try (Running running = new Running(server, Map.of())) {
            OpencodeApi opencode = new OpencodeApi(server.url(), null);
            await("connected", () -> running.bridge.stats().connections() >= 1);
            String session = opencode.createSession("teams::local::agent::oc-r1");
            await("ready", () -> status("oc-r1").equals("ready"));

            server.stopProcess();
            server.startProcess();
            await("the bridge reconnected", () -> running.bridge.stats().connections() >= 2);
            opencode.promptAsync(session, "after the restart");
            await("beats resume: working", () -> status("oc-r1").equals("working"));
            abort(server, session);
            await("ready again", () -> status("oc-r1").equals("ready"));
        }
    }

    @Test
    void bridge_onAContextLimitError_rotatesTheSessionThroughOpencodeAndRecordsIt() throws Exception {
        register("oc-x1");
        try (Running running = new Running(server, Map.of())) {
            OpencodeApi opencode = new OpencodeApi(server.url(), null);
            await("connected", () -> running.bridge.stats().connections() >= 1);
            String title = "teams::local::agent::oc-x1::role::worker";
            String old = opencode.createSession(title);
            opencode.promptAsync(old, "remember the word pelican");
            await("working", () -> status("oc-x1").equals("working"));
            abort(server, old);
            await("ready", () -> status("oc-x1").equals("ready"));

            // No model runs here, so the one context-limit error is handed to the bridge in opencode's shape.
            running.bridge.handle(JSON.readTree("{\"type\":\"session.error\",\"properties\":{\"sessionID\":\"" + old
                    + "\",\"error\":{\"name\":\"APIError\",\"data\":{\"message\":\"prompt is too long: 212000 tokens "
                    + "> 200000 maximum context length\",\"isRetryable\":false}}}}"));

            String rotated = running.bridge.sessionOf(new AgentRef("local", "oc-x1")).orElseThrow();
            assertNotEquals(old, rotated);
            assertEquals(1, running.bridge.stats().rotations());
            JsonNode sessions = opencode.sessions();
            boolean found = false;
            for (JsonNode s : sessions) {
                found |= s.path("id").asText().equals(rotated) && s.path("title").asText().equals(title);
            }
            assertTrue(found, "opencode has the new session, same title: " + sessions);
            await("the continuation prompt reached the new session", () -> continuation(opencode, rotated) != null);
            String prompt = continuation(opencode, rotated);
            assertTrue(prompt.contains("pelican"), "it carries the old session's tail: " + prompt);

            AgentView agent = admin.agent("oc-x1");
            assertEquals(1, agent.sessionRotations());
            await("Lifeline recorded the rotation as an event", () -> admin.events("SessionRotationRequested", 50)
                    .events().stream().anyMatch(e -> e.detail().toString().contains("oc-x1")));
            assertEquals(rotated, agent.metadata().path("opencodeSessionId").asText(), agent.metadata().toString());
            await("the new session's activity beats the same agent", () -> status("oc-x1").equals("working"));
            abort(server, rotated);
            // The retired session's events map to nobody now.
            long ignored = running.bridge.stats().ignoredEvents();
            opencode.promptAsync(old, "the old session again");
            await("the old session's events are ignored", () -> running.bridge.stats().ignoredEvents() > ignored);
            abort(server, old);
            await("ready", () -> status("oc-x1").equals("ready"));
        }
    }

    private static String continuation(OpencodeApi opencode, String session) {
        try {
            for (JsonNode m : opencode.messages(session)) {
                for (JsonNode part : m.path("parts")) {
                    String text = part.path("text").asText("");
                    if (text.contains("continuing from a previous session")) {
                        return text;
                    }
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    @Test
    void opencode_withLifelineMcpInItsOpencodeJson_reportsTheServerConnected() throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (OpencodeServer withMcp = OpencodeServer.start(opencodeJson())) {
            await("opencode reports lifeline connected", () -> {
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(withMcp.url() + "/mcp"))
                            .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
                    return JSON.readTree(r.body()).path("lifeline").path("status").asText().equals("connected");
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }
}
