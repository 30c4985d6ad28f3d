package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.Readme;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code lifeline mcp}, {@code lifeline bridge opencode} and {@code lifeline daemon --opencode}: usage and refusals
 * before anything is served or started.
 */
@Tag("unit")
class AgentRuntimeCommandsTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) throws Exception {
        Map<String, String> env = Map.of("XDG_CONFIG_HOME", Files.createTempDirectory("no-config").toString(),
                "LIFELINE_URL", "http://127.0.0.1:1", "LIFELINE_API_KEY", "k");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }, Path.of("")));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    @Test
    void help_onTheAgentRuntimeCommands_printsUsageAndExitsZero() throws Exception {
        for (String c : List.of("mcp", "bridge", "bridge opencode")) {
            List<String> args = new ArrayList<>(List.of(c.split(" ")));
            args.add("--help");
            Run r = run(args.toArray(String[]::new));
            assertEquals(0, r.exit(), c);
            assertTrue(r.out().contains("Usage: lifeline " + c), c + ": " + r.out());
        }
        assertTrue(run("mcp", "--help").out().contains("heartbeat, join, leave, claim_task"));
    }

    @Test
    void bridge_withoutARuntimeOrWithABadMap_isBadUsage() throws Exception {
        Run alone = run("bridge");
        assertEquals(LifelineCli.USAGE, alone.exit());
        assertTrue(alone.err().contains("bridge opencode"), alone.err());
        Run badMap = run("bridge", "opencode", "--map", "no-equals-sign");
        assertEquals(LifelineCli.USAGE, badMap.exit());
        assertTrue(badMap.err().contains("SESSION=AGENT"), badMap.err());
        Run badInterval = run("bridge", "opencode", "--interval", "soon");
        assertEquals(LifelineCli.USAGE, badInterval.exit());
        assertTrue(badInterval.err().contains("--interval"), badInterval.err());
    }

    @Test
    void mcpHttp_onAPortInUse_saysSoAndExitsTwo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Run r = run("mcp", "--http", "--port", String.valueOf(taken.getLocalPort()));
            assertEquals(LifelineCli.USAGE, r.exit(), r.out() + r.err());
            assertTrue(r.err().contains("cannot serve MCP on 127.0.0.1:" + taken.getLocalPort()), r.err());
        }
    }

    @Test
    void daemon_withABadOpencodeSetting_refusesBeforeStartingAnyCommand() throws Exception {
        Path dir = Files.createTempDirectory("daemon-bad-opencode");
        Path marker = dir.resolve("started");
        for (List<String> bad : List.of(List.of("--opencode", "not a url"),
                List.of("--opencode", "http://127.0.0.1:4096", "--opencode-map", "no-equals-sign"),
                List.of("--opencode", "http://127.0.0.1:4096", "--opencode-interval", "soon"),
                List.of("--opencode-map", "ses_1=a1"))) {
            List<String> args = new ArrayList<>(List.of("daemon", "--host", "h", "--agent",
                    "a1=touch '" + marker + "'", "--iterations", "1"));
            args.addAll(bad);
            Run r = run(args.toArray(String[]::new));
            assertEquals(LifelineCli.USAGE, r.exit(), bad + ": " + r.out() + r.err());
            assertTrue(r.err().contains("--opencode") || r.err().contains("not a URL"), bad + ": " + r.err());
        }
        assertTrue(Files.notExists(marker), "no command was started");
    }

    @Test
    void daemonHelp_namesTheBridgeOptions() throws Exception {
        Run r = run("daemon", "--help");
        assertEquals(0, r.exit());
        for (String option : List.of("--opencode=URL", "--opencode-map", "--opencode-interval")) {
            assertTrue(r.out().contains(option), option + ": " + r.out());
        }
    }

    /**
     * docs/mcp.md: every {@code java -jar client/target/lifeline.jar ...} line of its
     * shell blocks is a command line the CLI accepts (the bridge's and the daemon's included; their behaviour is
     * {@code OpencodeBridgeOpencodeTest}'s and {@code DaemonBridgeOpencodeTest}'s).
     */
    @Test
    void readme_agentRuntimeCommandLines_areAcceptedByTheCli() throws Exception {
        List<List<String>> lines = Readme.commandLines(Readme.blocks(
                Readme.page("docs/mcp.md"), "bash"));
        List<String> commands = new ArrayList<>();
        for (List<String> words : lines) {
            if (!words.get(0).equals("java")) {
                continue; // npx (the Inspector: McpServerTest.inspectorCli_*) and opencode serve
            }
            assertEquals(List.of("java", "-jar", "client/target/lifeline.jar"), words.subList(0, 3), words.toString());
            List<String> args = words.subList(3, words.size());
            CommandLine cl = new CommandLine(new LifelineCli(Map.of(), d -> { }, Path.of("")));
            CommandLine.ParseResult parsed = cl.parseArgs(args.toArray(String[]::new));
            while (parsed.hasSubcommand()) {
                parsed = parsed.subcommand();
            }
            commands.add(parsed.commandSpec().qualifiedName(" "));
            assertTrue(parsed.unmatched().isEmpty(), words + ": " + parsed.unmatched());
        }
        assertTrue(commands.contains("lifeline bridge opencode"), commands.toString());
        assertTrue(commands.contains("lifeline daemon"), commands.toString());
    }
}
