package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.client.cli.LifelineCli;
import io.lifeline.client.cli.Main;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/** {@code lifeline daemon} in its own JVM, and the CLI beside it, for the daemon's end-to-end tests. */
final class DaemonJvm {
    private DaemonJvm() {
    }

    /**
     * {@code lifeline daemon} in its own JVM for one agent running {@code command}, beating every second, with
     * {@code flags} (its crash settings), its state under {@code dir}, its output to {@code out}.
     */
    static Process start(LifelineLocal local, Path dir, Path out, String host, String agent, String command,
            String... flags) throws IOException {
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "daemon", "--host", host,
                "--agent", agent + "=" + command, "--interval", "1s"));
        argv.addAll(List.of(flags));
        argv.addAll(List.of("--state-dir", dir.resolve("state").toString()));
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().putAll(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", local.adminKey(),
                "XDG_CONFIG_HOME", dir.resolve("no-config").toString()));
        return pb.start();
    }

    /** {@code lifeline ARGS} in this JVM as an admin of {@code local}; it must succeed. Its output. */
    static String cli(LifelineLocal local, Path dir, String... args) {
        Map<String, String> env = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY",
                local.adminKey(), "XDG_CONFIG_HOME", dir.resolve("no-config").toString(), "XDG_STATE_HOME",
                dir.resolve("cli-state").toString());
        StringWriter o = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }));
        cl.setOut(new PrintWriter(o, true));
        cl.setErr(new PrintWriter(o, true));
        int code = cl.execute(args);
        assertEquals(0, code, o::toString);
        return o.toString();
    }

    /** The file's text, "" while it is not there or cannot be read (for a poll's message). */
    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }
}
