package io.lifeline.client.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.CountingProxy;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.Readme;
import io.lifeline.client.model.NewTask;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code lifeline mcp} against a real Lifeline Local, driven by real third-party MCP clients: the TypeScript MCP
 * SDK's {@code Client} over stdio and over Streamable HTTP (it also checks every structured answer against the
 * tool's output schema), and the MCP Inspector CLI. The server runs as the real CLI in its own JVM.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("real-third-party")
class McpServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The Inspector's CLI proper (its bin, cli.js, is a launcher that also wants the web UI's package). */
    private static final Path INSPECTOR = NpmTools.DIR.resolve(
            "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
    private static LifelineLocal local;
    private static LifelineClient admin;
    /** The key the MCP server uses: agent scope, as the README advises for agents. */
    private static String agentKey;

    @BeforeAll
    static void start() throws Exception {
        NpmTools.assumeInstalled("@modelcontextprotocol/sdk");
        local = LocalHarness.start();
        admin = LocalHarness.client(local);
        agentKey = admin.createKey("agent", "mcp tests").key();
    }

    @AfterAll
    static void stop() throws Exception {
        if (local != null) {
            local.close();
        }
    }

    private static void register(String agentId) {
        admin.register(new RegisterAgent(agentId, agentId, "worker", null, 3600L, null, null, null));
    }

    private static ObjectNode call(String name, Object... kv) {
        ObjectNode c = JSON.createObjectNode().put("name", name);
        ObjectNode args = c.putObject("arguments");
        for (int i = 0; i < kv.length; i += 2) {
            args.set((String) kv[i], JSON.valueToTree(kv[i + 1]));
        }
        return c;
    }

    private static String[] serverArgs(String url) {
        return new String[] {"mcp", "--url", url, "--team", LifelineLocal.LOCAL_TEAM, "--key", agentKey};
    }

    private static JsonNode drive(ObjectNode plan) throws Exception {
        Path planFile = Files.createTempFile("mcp-plan", ".json");
        Files.writeString(planFile, JSON.writeValueAsString(plan));
        NpmTools.Run r = NpmTools.run(List.of("node", NpmTools.script("mcp/drive.mjs").toString(),
                planFile.toString()), Map.of(), 120);
        Files.deleteIfExists(planFile);
        assertEquals(0, r.exit(), "the TypeScript client failed:\n" + r.stderr() + r.stdout());
        String[] lines = r.stdout().strip().split("\n");
        return JSON.readTree(lines[lines.length - 1]);
    }

    private static ObjectNode stdioPlan(String url, List<ObjectNode> calls) {
        ObjectNode plan = JSON.createObjectNode().put("transport", "stdio");
        List<String> cmd = NpmTools.lifeline(serverArgs(url));
        plan.put("command", cmd.get(0));
        ArrayNode args = plan.putArray("args");
        cmd.subList(1, cmd.size()).forEach(args::add);
        ObjectNode env = plan.putObject("env");
        env.put("PATH", System.getenv("PATH"));
        env.put("HOME", System.getProperty("java.io.tmpdir")); // no user config file
        plan.set("calls", JSON.valueToTree(calls));
        return plan;
    }

    /** Every tool, called in a lifecycle an agent lives through, the heartbeat protocol's error table included. */
    private static List<ObjectNode> lifecycle(String a, String dead, String task) {
        String team = LifelineLocal.LOCAL_TEAM;
        List<ObjectNode> calls = new ArrayList<>();
        calls.add(call("heartbeat", "agentId", "ghost-" + a, "teamName", team));                       // 0
        calls.add(call("join", "agentId", a));                                                          // 1
        calls.add(call("heartbeat", "agentId", a, "teamName", team, "status", "active",
                "metadata", Map.of("task", "reading")));                                                 // 2
        calls.add(call("heartbeat", "agentId", a, "teamName", team, "status", "idle",
                "checkpoint", Map.of("step", 3), "stats", Map.of("messagesProcessed", 4)));             // 3
        calls.add(call("claim_task", "agentId", a, "taskId", task));                                    // 4
        calls.add(call("complete_task", "agentId", a, "taskId", task, "result", "done well"));          // 5
        calls.add(call("report_error", "agentId", a, "message", "prompt is too long: context window exceeded")); // 6
        calls.add(call("report_error", "agentId", a, "message", "429 rate limit reached"));             // 7
        calls.add(call("check_recovery", "agentId", a));                                                // 8
        calls.add(call("agent_status", "agentId", a, "teamName", team));                                // 9
        calls.add(call("list_agents"));                                                                 // 10
        calls.add(call("leave", "agentId", a, "reason", "finished"));                                   // 11
        calls.add(call("heartbeat", "agentId", a, "teamName", team));                                   // 12
        calls.add(call("heartbeat", "agentId", dead, "teamName", team));                                // 13
        calls.add(call("join", "agentId", dead, "teamName", team));                                     // 14
        calls.add(call("heartbeat", "agentId", dead, "teamName", team));                                // 15
        calls.add(call("claim_task", "agentId", a, "taskId", "no-such-task"));                          // 16
        calls.add(call("check_recovery", "agentId", a));                                                // 17
        return calls;
    }

    private static void prepare(String a, String dead, String task) {
        register(a);
        register(dead);
        admin.join(dead);
        admin.fail(dead, "crashed in the test");
        admin.createTask(new NewTask(task, "a task for " + a, null));
    }

    private static void assertLifecycle(JsonNode out, String a, String dead, String task) {
        assertEquals("lifeline", out.path("server").path("name").asText());
        List<String> names = new ArrayList<>();
        out.path("tools").forEach(t -> names.add(t.path("name").asText()));
        assertEquals(LifelineTools.names(), names);
        for (JsonNode t : out.path("tools")) {
            assertEquals("object", t.path("inputSchema").path("type").asText(), t.path("name").asText());
            assertFalse(t.path("description").asText().isBlank(), t.path("name").asText());
        }
        JsonNode heartbeatTool = out.path("tools").get(0);
        assertEquals(List.of("agentId", "teamName"), JSON.convertValue(heartbeatTool.path("inputSchema")
                .path("required"), List.class));
        assertEquals(List.of("success", "heartbeatTs", "nextDeadline", "agentStatus"), JSON.convertValue(
                heartbeatTool.path("outputSchema").path("required"), List.class));

        JsonNode r = out.path("results");
        for (JsonNode one : r) {
            assertTrue(one.path("protocolError").isMissingNode(), "a tool answered a protocol error: " + one);
        }
        assertFailure(r.get(0), "Agent 'ghost-" + a + "' not found", false);
        assertEquals("ready", r.get(1).path("structuredContent").path("status").asText());
        assertBeat(r.get(2), "working");
        assertBeat(r.get(3), "ready");
        assertEquals("working", r.get(4).path("structuredContent").path("agentStatus").asText());
        assertEquals("in_progress", r.get(4).path("structuredContent").path("task").path("status").asText());
        assertEquals("ready", r.get(5).path("structuredContent").path("agentStatus").asText());
        assertEquals("done", r.get(5).path("structuredContent").path("task").path("status").asText());
        assertEquals("context_limit", r.get(6).path("structuredContent").path("category").asText());
        assertEquals("rotate_session", r.get(6).path("structuredContent").path("action").asText());
        assertEquals("transient", r.get(7).path("structuredContent").path("category").asText());
        assertEquals("[2,4,8]", r.get(7).path("structuredContent").path("retryDelaysSeconds").toString());
        assertFalse(r.get(8).path("structuredContent").path("available").asBoolean(), "alive: " + r.get(8));
        assertTrue(r.get(17).path("structuredContent").path("available").asBoolean(), "offline: " + r.get(17));
        assertEquals(3, r.get(17).path("structuredContent").path("checkpoint").path("step").asInt());
        assertEquals("ready", r.get(9).path("structuredContent").path("status").asText());
        boolean listed = false;
        for (JsonNode agent : r.get(10).path("structuredContent").path("agents")) {
            listed |= agent.path("agentId").asText().equals(a);
        }
        assertTrue(listed, "list_agents lists " + a + ": " + r.get(10));
        assertEquals("offline", r.get(11).path("structuredContent").path("status").asText());
        assertFailure(r.get(12), "Cannot heartbeat for terminated agent", true);
        assertFailure(r.get(13), "Agent is inactive. Requires re-spawn.", true);
        assertEquals("dead", r.get(13).path("structuredContent").path("agentStatus").asText());
        assertEquals("ready", r.get(14).path("structuredContent").path("status").asText());
        assertBeat(r.get(15), "ready");
        assertTrue(r.get(16).path("isError").asBoolean(), r.get(16).toString());
        assertEquals("TASK_NOT_FOUND", r.get(16).path("structuredContent").path("code").asText(), r.get(16).toString());
        assertEquals("ready", admin.agent(dead).status());
    }

    /** The heartbeat protocol's success answer, field for field. */
    private static void assertBeat(JsonNode result, String status) {
        assertFalse(result.path("isError").asBoolean(), result.toString());
        JsonNode s = result.path("structuredContent");
        assertTrue(s.path("success").asBoolean(), result.toString());
        Instant ts = Instant.parse(s.path("heartbeatTs").asText());
        Instant deadline = Instant.parse(s.path("nextDeadline").asText());
        assertTrue(deadline.isAfter(ts), result.toString());
        assertEquals(status, s.path("agentStatus").asText());
        assertTrue(s.path("error").isMissingNode(), result.toString());
        assertEquals(s, readText(result), "the text content is the structured answer");
    }

    /**
     * The heartbeat protocol's failure answer: success false, empty times, the error table's text; isError, not a
     * protocol error.
     */
    private static void assertFailure(JsonNode result, String error, boolean rejoin) {
        assertTrue(result.path("isError").asBoolean(), result.toString());
        JsonNode s = result.path("structuredContent");
        assertFalse(s.path("success").asBoolean(), result.toString());
        assertEquals("", s.path("heartbeatTs").asText(), result.toString());
        assertEquals("", s.path("nextDeadline").asText(), result.toString());
        assertTrue(s.has("agentStatus"), result.toString());
        assertEquals(error, s.path("error").asText());
        assertEquals(rejoin, s.path("rejoinRequired").asBoolean(false), result.toString());
        if (rejoin) {
            assertTrue(s.path("hint").asText().contains("join"), result.toString());
        }
    }

    private static JsonNode readText(JsonNode result) {
        try {
            return JSON.readTree(result.path("text").asText());
        } catch (Exception e) {
            throw new AssertionError("text content is not JSON: " + result, e);
        }
    }

    @Test
    void stdio_typeScriptSdkClientCallsEveryTool_answersFollowSeed000AndJoinHealsADeadAgent() throws Exception {
        prepare("mcp-s1", "mcp-s-dead", "mcp-s-task");
        JsonNode out = drive(stdioPlan(local.url().toString(), lifecycle("mcp-s1", "mcp-s-dead", "mcp-s-task")));
        assertLifecycle(out, "mcp-s1", "mcp-s-dead", "mcp-s-task");
    }

    @Test
    void streamableHttp_typeScriptSdkClientCallsEveryTool_answersFollowSeed000AndJoinHealsADeadAgent()
            throws Exception {
        prepare("mcp-h1", "mcp-h-dead", "mcp-h-task");
        try (HttpServer server = HttpServer.start(local.url().toString())) {
            ObjectNode plan = JSON.createObjectNode().put("transport", "http").put("url", server.url());
            plan.set("calls", JSON.valueToTree(lifecycle("mcp-h1", "mcp-h-dead", "mcp-h-task")));
            JsonNode out = drive(plan);
            assertFalse(out.path("sessionId").asText().isBlank(), "Streamable HTTP gave the client a session");
            assertLifecycle(out, "mcp-h1", "mcp-h-dead", "mcp-h-task");
        }
    }

    /**
     * docs/mcp.md: the generic MCP client entry ({@code mcpServers}), run as written
     * (its jar path replaced by this build's classes, its environment's values by this Local's): a stdio client
     * lists the tools and a heartbeat through it lands.
     */
    @Test
    void readmeMcpServersEntry_runAsWritten_servesTheToolsToAStdioClient() throws Exception {
        register("mcp-readme");
        admin.join("mcp-readme");
        JsonNode entry = null;
        for (String block : Readme.blocks(Readme.page("docs/mcp.md"), "json")) {
            if (block.contains("\"mcpServers\"")) {
                entry = JSON.readTree(block).path("mcpServers").path("lifeline");
            }
        }
        assertTrue(entry != null && entry.isObject(), "docs/mcp.md has an mcpServers entry for lifeline");
        assertEquals("java", entry.path("command").asText());
        List<String> args = JSON.convertValue(entry.path("args"), List.class);
        assertEquals("-jar", args.get(0));
        assertTrue(args.get(1).endsWith("client/target/lifeline.jar"), args.toString());
        Map<String, String> given = JSON.convertValue(entry.path("env"), Map.class);
        assertEquals(List.of("LIFELINE_API_KEY", "LIFELINE_TEAM", "LIFELINE_URL"), given.keySet().stream().sorted()
                .toList());
        assertEquals(LifelineLocal.LOCAL_TEAM, given.get("LIFELINE_TEAM"));
        List<String> cmd = NpmTools.lifeline(args.subList(2, args.size()).toArray(String[]::new));
        ObjectNode plan = JSON.createObjectNode().put("transport", "stdio").put("command", cmd.get(0));
        ArrayNode planArgs = plan.putArray("args");
        cmd.subList(1, cmd.size()).forEach(planArgs::add);
        plan.putObject("env").put("PATH", System.getenv("PATH")).put("HOME", System.getProperty("java.io.tmpdir"))
                .put("LIFELINE_URL", local.url().toString()).put("LIFELINE_TEAM", given.get("LIFELINE_TEAM"))
                .put("LIFELINE_API_KEY", agentKey);
        plan.set("calls", JSON.valueToTree(List.of(call("heartbeat", "agentId", "mcp-readme", "teamName",
                LifelineLocal.LOCAL_TEAM, "status", "active"))));
        JsonNode out = drive(plan);
        assertEquals(LifelineTools.names().size(), out.path("tools").size(), out.toString());
        assertBeat(out.path("results").get(0), "working");
        assertEquals("working", admin.agent("mcp-readme").status());
    }

    /**
     * With a heartbeat URL (from LIFELINE_HEARTBEAT_URL, as an opencode.json "environment" sets it,
     * and from --heartbeat-url) the heartbeat tool's calls take Local's Function URL path, and join, report_error and
     * agent_status the API URL; without one, heartbeats take the API path. Counted per path by a proxy in front of
     * Local.
     */
    @Test
    void heartbeatTool_withAHeartbeatUrl_beatsThroughTheFunctionUrlPath_andEverythingElseThroughTheApi()
            throws Exception {
        register("mcp-u1");
        String team = LifelineLocal.LOCAL_TEAM;
        List<ObjectNode> calls = List.of(call("join", "agentId", "mcp-u1"),
                call("heartbeat", "agentId", "mcp-u1", "teamName", team, "status", "active"),
                call("heartbeat", "agentId", "mcp-u1", "teamName", team, "status", "idle"),
                call("report_error", "agentId", "mcp-u1", "message", "429 rate limit reached"),
                call("agent_status", "agentId", "mcp-u1"));
        for (String how : List.of("environment", "flag")) {
            try (CountingProxy proxy = new CountingProxy(local.url())) {
                ObjectNode plan = stdioPlan(proxy.url().toString(), calls);
                String beats = proxy.heartbeatUrl(local.heartbeatUrl()).toString();
                if (how.equals("environment")) {
                    ((ObjectNode) plan.path("env")).put("LIFELINE_HEARTBEAT_URL", beats);
                } else {
                    ((ArrayNode) plan.path("args")).add("--heartbeat-url").add(beats);
                }
                JsonNode r = drive(plan).path("results");
                assertBeat(r.get(1), "working");
                assertBeat(r.get(2), "ready");
                assertEquals("transient", r.get(3).path("structuredContent").path("category").asText(), how + r);
                assertEquals(2, proxy.viaHeartbeatUrl("/agents/mcp-u1/heartbeat"), how + proxy.seen());
                assertEquals(0, proxy.viaApi("/agents/mcp-u1/heartbeat"), how + proxy.seen());
                assertEquals(1, proxy.viaApi("/agents/mcp-u1/join"), how + proxy.seen());
                assertEquals(1, proxy.viaApi("/agents/mcp-u1/errors"), how + proxy.seen());
                assertEquals(1, proxy.viaApi("/agents/mcp-u1"), how + proxy.seen());
                assertEquals(2, proxy.count(s -> s.path().startsWith("/lambda-url/")), how + proxy.seen());
            }
        }
        try (CountingProxy proxy = new CountingProxy(local.url())) {
            JsonNode r = drive(stdioPlan(proxy.url().toString(), calls)).path("results");
            assertBeat(r.get(1), "working");
            assertBeat(r.get(2), "ready");
            assertEquals(2, proxy.viaApi("/agents/mcp-u1/heartbeat"), proxy.seen().toString());
            assertEquals(0, proxy.count(s -> s.path().startsWith("/lambda-url/")), proxy.seen().toString());
            assertEquals(1, proxy.viaApi("/agents/mcp-u1/join"), proxy.seen().toString());
            assertEquals(1, proxy.viaApi("/agents/mcp-u1/errors"), proxy.seen().toString());
        }
    }

    @Test
    void heartbeat_whenLifelineIsUnreachable_answersFailedToUpdateHeartbeatAsAToolResult() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        JsonNode out = drive(stdioPlan("http://127.0.0.1:" + closedPort, List.of(
                call("heartbeat", "agentId", "a1", "teamName", LifelineLocal.LOCAL_TEAM))));
        JsonNode r = out.path("results").get(0);
        assertTrue(r.path("isError").asBoolean(), r.toString());
        assertTrue(r.path("structuredContent").path("error").asText().startsWith("Failed to update heartbeat: "),
                r.toString());
        assertEquals("", r.path("structuredContent").path("heartbeatTs").asText());
    }

    @Test
    void heartbeat_withArgumentsOutsideTheSchema_isRefusedAndWritesNothing() throws Exception {
        register("mcp-bad");
        admin.join("mcp-bad");
        Instant before = admin.agent("mcp-bad").heartbeatTs();
        JsonNode out = drive(stdioPlan(local.url().toString(), List.of(
                call("heartbeat", "agentId", "mcp-bad"),
                call("heartbeat", "agentId", "mcp-bad", "teamName", LifelineLocal.LOCAL_TEAM, "status", "asleep"))));
        for (JsonNode r : out.path("results")) {
            boolean refused = r.path("isError").asBoolean() || r.has("protocolError");
            assertTrue(refused, r.toString());
            String why = r.path("protocolError").asText("") + r.path("text").asText("");
            assertTrue(why.contains("teamName") || why.contains("status"), "names the bad argument: " + r);
        }
        assertEquals(before, admin.agent("mcp-bad").heartbeatTs());
        assertEquals("ready", admin.agent("mcp-bad").status());
    }

    @Test
    void streamableHttp_requestFromAWebPageOrigin_isRefusedBeforeAnyTool() throws Exception {
        try (HttpServer server = HttpServer.start(local.url().toString())) {
            String initialize = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"page\","
                    + "\"version\":\"1\"}}}";
            HttpClient http = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(
                    URI.create(server.url())).header("Origin", "http://attacker.example")
                    .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(initialize)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(403, refused.statusCode(), refused.body());
            HttpResponse<String> local = http.send(HttpRequest.newBuilder(
                    URI.create(server.url())).header("Origin", "http://127.0.0.1:3000")
                    .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString(initialize)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, local.statusCode(), local.body());
        }
    }

    @Test
    void inspectorCli_listsToolsAndCallsHeartbeatOverStdioAndHttp() throws Exception {
        NpmTools.assumeInstalled("@modelcontextprotocol/inspector-cli");
        register("mcp-i1");
        admin.join("mcp-i1");
        // The server's command line first, the Inspector's options after it. The Inspector reads its own
        // package.json relative to the working directory (0.17.5), so it runs from its build directory.
        List<String> list = new ArrayList<>(List.of("node", INSPECTOR.toString()));
        list.addAll(NpmTools.lifeline(serverArgs(local.url().toString())));
        list.addAll(List.of("--method", "tools/list"));
        NpmTools.Run listed = NpmTools.run(list, Map.of(), 120, INSPECTOR.getParent());
        assertEquals(0, listed.exit(), listed.stderr() + listed.stdout());
        JsonNode tools = JSON.readTree(listed.stdout()).path("tools");
        assertEquals(LifelineTools.names().size(), tools.size(), listed.stdout());

        try (HttpServer server = HttpServer.start(local.url().toString())) {
            NpmTools.Run called = NpmTools.run(List.of("node", INSPECTOR.toString(), server.url(), "--transport", "http", "--method", "tools/call", "--tool-name", "heartbeat",
                    "--tool-arg", "agentId=mcp-i1", "--tool-arg", "teamName=" + LifelineLocal.LOCAL_TEAM,
                    "--tool-arg", "status=active"), Map.of(), 120, INSPECTOR.getParent());
            assertEquals(0, called.exit(), called.stderr() + called.stdout());
            JsonNode answer = JSON.readTree(called.stdout());
            assertEquals("working", answer.path("structuredContent").path("agentStatus").asText(), called.stdout());
        }
        assertEquals("working", admin.agent("mcp-i1").status());
    }

    /** {@code lifeline mcp --http --port 0} in its own JVM; the URL is read from its first line. */
    static final class HttpServer implements AutoCloseable {
        private final Process process;
        private final String url;

        private HttpServer(Process process, String url) {
            this.process = process;
            this.url = url;
        }

        static HttpServer start(String lifelineUrl) throws Exception {
            return start(lifelineUrl, agentKey);
        }

        /** With the API key {@code key}. */
        static HttpServer start(String lifelineUrl, String key) throws Exception {
            List<String> cmd = new ArrayList<>(NpmTools.lifeline("mcp", "--url", lifelineUrl, "--team",
                    LifelineLocal.LOCAL_TEAM, "--key", key));
            cmd.addAll(List.of("--http", "--port", "0"));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
            Map<String, String> env = new HashMap<>(pb.environment());
            pb.environment().put("HOME", System.getProperty("java.io.tmpdir"));
            Process p = pb.start();
            BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = lines.readLine();
            Matcher m = Pattern.compile("(http://\\S+/mcp)").matcher(first == null ? "" : first);
            if (!m.find()) {
                p.destroyForcibly();
                throw new AssertionError("lifeline mcp --http printed '" + first + "' (env " + env.size() + ")");
            }
            return new HttpServer(p, m.group(1));
        }

        String url() {
            return url;
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
