package io.lifeline.client.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * {@code lifeline mcp}: Lifeline's tools ({@link LifelineTools}) on the official MCP Java SDK, over stdio (one
 * client, the process that started us) or Streamable HTTP (embedded Tomcat on a loopback address, endpoint
 * {@code /mcp}, Origin and Host checked against loopback names so a web page cannot drive it).
 */
public final class LifelineMcpServer implements AutoCloseable {
    public static final String ENDPOINT = "/mcp";
    static final String NAME = "lifeline";
    static final String VERSION = "0.1.0";
    static final String INSTRUCTIONS = "Lifeline watches whether you are alive. Call join when you start, heartbeat "
            + "about every 30 seconds (and when you switch between working and idle), leave when you finish. If "
            + "heartbeat answers rejoinRequired: true, call join and carry on.";

    private final McpSyncServer server;
    private final Tomcat tomcat;
    private final int port;
    private final CountDownLatch closed;

    private LifelineMcpServer(McpSyncServer server, Tomcat tomcat, int port, CountDownLatch closed) {
        this.server = server;
        this.tomcat = tomcat;
        this.port = port;
        this.closed = closed;
    }

    private static McpSyncServer build(McpServer.SyncSpecification<?> spec, LifelineTools tools, McpJsonMapper mapper) {
        return spec.serverInfo(NAME, VERSION).instructions(INSTRUCTIONS)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools.tools(mapper)).build();
    }

    /**
     * Serves one client on {@code in}/{@code out} (the process's stdin and stdout); {@link #awaitClose()} returns
     * when {@code in} ends.
     */
    public static LifelineMcpServer stdio(LifelineTools tools, InputStream in, OutputStream out) {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        CountDownLatch ended = new CountDownLatch(1);
        InputStream watched = new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                return ended(super.read());
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return ended(super.read(b, off, len));
            }

            private int ended(int n) {
                if (n < 0) {
                    ended.countDown();
                }
                return n;
            }
        };
        McpSyncServer server = build(McpServer.sync(new StdioServerTransportProvider(mapper, watched, out)), tools,
                mapper);
        return new LifelineMcpServer(server, null, -1, ended);
    }

    /** Serves Streamable HTTP at {@code http://host:port/mcp}; {@code port} 0 takes a free one ({@link #port()}). */
    public static LifelineMcpServer http(LifelineTools tools, String host, int port) throws LifecycleException,
            IOException {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        DefaultServerTransportSecurityValidator loopbackOnly = DefaultServerTransportSecurityValidator.builder()
                .allowedOrigins(List.of("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"))
                .allowedHosts(List.of("127.0.0.1:*", "localhost:*", "[::1]:*", host + ":*"))
                .build();
        HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider
                .builder().jsonMapper(mapper).mcpEndpoint(ENDPOINT).securityValidator(loopbackOnly)
                .keepAliveInterval(Duration.ofSeconds(30)).build();
        McpSyncServer server = build(McpServer.sync(transport), tools, mapper);

        Path base = Files.createTempDirectory("lifeline-mcp-tomcat");
        base.toFile().deleteOnExit();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector();
        connector.setPort(port);
        connector.setProperty("address", host);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "mcp", transport).setAsyncSupported(true);
        context.addServletMappingDecoded(ENDPOINT, "mcp");
        try {
            tomcat.start();
        } catch (LifecycleException e) {
            server.closeGracefully();
            throw e;
        }
        if (connector.getLocalPort() <= 0) {
            server.closeGracefully();
            tomcat.stop();
            tomcat.destroy();
            throw new IOException("cannot listen on " + host + ":" + port);
        }
        return new LifelineMcpServer(server, tomcat, connector.getLocalPort(), new CountDownLatch(1));
    }

    /** The HTTP port, or -1 for stdio. */
    public int port() {
        return port;
    }

    /** Blocks until stdin ends (stdio) or {@link #close()} (HTTP). */
    public void awaitClose() throws InterruptedException {
        closed.await();
    }

    @Override
    public void close() {
        try {
            server.closeGracefully();
        } finally {
            if (tomcat != null) {
                try {
                    tomcat.stop();
                    tomcat.destroy();
                } catch (LifecycleException e) {
                    throw new IllegalStateException("cannot stop the MCP HTTP server", e);
                } finally {
                    closed.countDown();
                }
            }
        }
    }
}
