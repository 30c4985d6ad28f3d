package io.lifeline.engine;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * moto's server (<code>python3 -m moto.server</code>) on a free loopback port, started by a test and stopped by its
 * process id. {@link #start()} answers null when python3 or moto is missing, so the caller skips with a message.
 */
final class MotoServer implements AutoCloseable {
    private final Process process;
    final URI endpoint;

    private MotoServer(Process process, URI endpoint) {
        this.process = process;
        this.endpoint = endpoint;
    }

    /** Why moto cannot run here, or null when it can. */
    static String missing() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import moto.server, moto; print(moto.__version__)")
                    .redirectErrorStream(true).start();
            boolean done = p.waitFor(60, TimeUnit.SECONDS);
            if (!done || p.exitValue() != 0) {
                p.destroyForcibly();
                return "python3 has no moto (pip install 'moto[server]==5.2.1')";
            }
            return null;
        } catch (IOException e) {
            return "no python3 on PATH";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    static MotoServer start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        File log = File.createTempFile("moto", ".log");
        log.deleteOnExit();
        Process p = new ProcessBuilder("python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", Integer.toString(port))
                .redirectErrorStream(true).redirectOutput(log).start();
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("moto exited with " + p.exitValue() + "; see " + log);
            }
            try {
                HttpURLConnection c = (HttpURLConnection) endpoint.resolve("/moto-api/").toURL().openConnection();
                c.setConnectTimeout(500);
                c.setReadTimeout(2000);
                if (c.getResponseCode() > 0) {
                    c.disconnect();
                    return new MotoServer(p, endpoint);
                }
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IOException("moto did not answer on " + endpoint + " within 60 s; see " + log);
    }

    @Override
    public void close() throws InterruptedException {
        ProcessHandle h = process.toHandle();
        h.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            h.destroyForcibly();
        }
    }
}
