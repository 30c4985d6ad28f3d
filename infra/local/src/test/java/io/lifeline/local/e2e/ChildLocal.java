package io.lifeline.local.e2e;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A real Lifeline Local in a JVM of its own ({@code LocalMain} on the test classpath, as {@code java -jar} runs
 * it), its console kept line by line: for tests that kill, freeze or inspect the process itself.
 */
public final class ChildLocal implements AutoCloseable {
    static final String RUNNING = "Lifeline Local is running at ";
    static final String ADMIN_KEY = "admin key: ";

    private final Process process;
    private final List<String> output = new CopyOnWriteArrayList<>();

    private ChildLocal(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    output.add(line);
                }
            } catch (IOException e) {
                // the process ended or was killed
            }
        }, "local-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** The command line of a child Local with a heap of {@code heap} (such as 384m) and Local's own arguments. */
    public static List<String> command(String heap, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap, "-cp", System.getProperty("java.class.path"), "io.lifeline.local.app.LocalMain"));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Starts a child Local (stdout and stderr as one console) and answers at once; see {@link #awaitRunning}. */
    public static ChildLocal start(String heap, String... args) throws IOException {
        return new ChildLocal(new ProcessBuilder(command(heap, args)).redirectErrorStream(true).start());
    }

    /** Waits, with a bound, for the line that gives the URL (and the admin key, when asked); fails if it exits. */
    public ChildLocal awaitRunning(Duration max, boolean withAdminKey) throws InterruptedException {
        CrashRestartTest.poll(max, "Lifeline Local to start; output: " + output, () -> {
            if (!process.isAlive()) {
                throw new AssertionError("Lifeline Local exited: " + output);
            }
            return url() != null && (!withAdminKey || adminKey() != null);
        });
        return this;
    }

    public Process process() {
        return process;
    }

    /** The console so far, a line an entry; it keeps growing while the process runs. */
    public List<String> output() {
        return output;
    }

    /** The front door's URL, once printed; null before. */
    public URI url() {
        for (String line : output) {
            if (line.startsWith(RUNNING)) {
                return URI.create(line.substring(RUNNING.length()).split(" ")[0]);
            }
        }
        return null;
    }

    /** The printed admin key of the {@code local} team; null before (or when not printed). */
    public String adminKey() {
        for (String line : output) {
            int k = line.indexOf(ADMIN_KEY);
            if (k >= 0) {
                return line.substring(k + ADMIN_KEY.length()).trim();
            }
        }
        return null;
    }

    /** SIGKILL on Unix: no shutdown hook runs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError("Lifeline Local did not die");
        }
    }

    /** A polite stop (SIGTERM, shutdown hooks run), then SIGKILL if it does not end in time. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
