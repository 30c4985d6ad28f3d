package io.lifeline.client.bridge;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code opencode serve} (npm opencode-ai, from the npm test tools) on a loopback port, with its own HOME
 * (so no user config, and the same data on a restart) and project directory.
 */
final class OpencodeServer implements AutoCloseable {
    final Path home;
    final Path project;
    final int port;
    private Process process;

    private OpencodeServer(Path home, Path project, int port) {
        this.home = home;
        this.project = project;
        this.port = port;
    }

    static Path binary() {
        return Path.of(System.getenv().getOrDefault("LIFELINE_NPM_TOOLS", "/tmp/lifeline-npm-tools"))
                .resolve("node_modules/.bin/opencode");
    }

    /** A server in fresh directories; {@code opencodeJson} (or null) is written as the project's opencode.json. */
    static OpencodeServer start(String opencodeJson) throws Exception {
        Path root = Files.createTempDirectory("opencode-test");
        Path home = Files.createDirectories(root.resolve("home"));
        Path project = Files.createDirectories(root.resolve("project"));
        if (opencodeJson != null) {
            Files.writeString(project.resolve("opencode.json"), opencodeJson);
        }
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        OpencodeServer server = new OpencodeServer(home, project, port);
        server.startProcess();
        return server;
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Starts (or starts again, same port and HOME) and waits, bounded, until it answers. */
    void startProcess() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(binary().toString(), "serve", "--port", String.valueOf(port),
                "--hostname", "127.0.0.1").directory(project.toFile())
                .redirectOutput(home.resolve("opencode.out").toFile())
                .redirectError(home.resolve("opencode.err").toFile());
        pb.environment().put("HOME", home.toString());
        pb.environment().remove("XDG_CONFIG_HOME");
        pb.environment().remove("XDG_DATA_HOME");
        process = pb.start();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("opencode serve exited: " + Files.readString(home.resolve("opencode.err")));
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/session"))
                        .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("opencode serve did not answer on " + url() + " within 60 s");
    }

    /** Stops the process (and what it started), waiting for it to end. */
    void stopProcess() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        process = null;
    }

    @Override
    public void close() throws InterruptedException {
        stopProcess();
    }
}
