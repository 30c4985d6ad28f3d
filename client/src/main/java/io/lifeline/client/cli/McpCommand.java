package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.mcp.LifelineMcpServer;
import io.lifeline.client.mcp.LifelineTools;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lifeline mcp}: an MCP server with Lifeline's tools (README "Use it from your agent runtime"). stdio by
 * default, the way agent runtimes start local MCP servers; {@code --http} serves Streamable HTTP on loopback.
 */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = {"Serve Lifeline's tools (heartbeat, join, leave, claim_task, complete_task, report_error, "
                + "check_recovery, agent_status, list_agents) to an agent over the Model Context Protocol.",
                "stdio by default (for opencode.json's \"mcp\" section and other MCP clients); --http serves "
                        + "Streamable HTTP at http://HOST:PORT/mcp. Connection settings as every command's."})
final class McpCommand extends BaseCommand {
    @Option(names = "--http", description = "Serve Streamable HTTP instead of stdio")
    boolean http;

    @Option(names = "--host", description = "Address to listen on with --http (default 127.0.0.1)")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "Port with --http (default 8788; 0 takes a free one and prints it)")
    int port = 8788;

    @Override
    int run() throws LifelineException {
        Map<String, String> env = env();
        String defaultTeam = global.team(env);
        String apiKey = global.key(env);
        global.client(env, sleeper(), defaultTeam, apiKey); // a bad URL is a usage error before serving
        // A tool call waits for at most one quick retry: a model should hear "Failed to update heartbeat" soon.
        RetryPolicy quick = new RetryPolicy(1, Duration.ofMillis(500), 0.2, Duration.ofSeconds(5),
                () -> ThreadLocalRandom.current().nextDouble());
        Map<String, LifelineClient> byTeam = new ConcurrentHashMap<>();
        LifelineTools tools = new LifelineTools(team -> byTeam.computeIfAbsent(team, t -> LifelineClient.builder()
                .url(global.url(env)).heartbeatUrl(global.heartbeatUrl(env)).team(t).apiKey(apiKey).retry(quick)
                .sleeper(sleeper())
                .requestTimeout(Duration.ofSeconds(10)).build()), defaultTeam);
        try {
            if (http) {
                return serveHttp(tools);
            }
            return serveStdio(tools);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private int serveStdio(LifelineTools tools) throws InterruptedException {
        // stdout carries the protocol only: anything else printed by accident goes to stderr.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        System.setOut(System.err);
        try (LifelineMcpServer server = LifelineMcpServer.stdio(tools, new FileInputStream(FileDescriptor.in),
                protocol)) {
            server.awaitClose();
        }
        return 0;
    }

    private int serveHttp(LifelineTools tools) throws InterruptedException {
        LifelineMcpServer server;
        try {
            server = LifelineMcpServer.http(tools, host, port);
        } catch (Exception e) {
            err().println("lifeline: cannot serve MCP on " + host + ":" + port + ": " + e.getMessage());
            err().flush();
            return LifelineCli.USAGE;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "lifeline-mcp-stop"));
        out().println("lifeline mcp: Streamable HTTP on http://" + hostForUrl() + ":" + server.port()
                + LifelineMcpServer.ENDPOINT);
        out().flush();
        server.awaitClose();
        return 0;
    }

    private String hostForUrl() {
        return host.contains(":") ? "[" + host + "]" : host;
    }
}
