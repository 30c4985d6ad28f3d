package io.lifeline.client.heartbeatmd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code type: shell}: runs {@code command} (a field, or a param) with {@code /bin/sh -c} in heartbeat.md's folder.
 * Each param is also passed as an environment variable {@code HB_PARAM_<KEY>} (upper case). Exit 0 is success
 * ({@code OK (exit 0)}); otherwise the error is the exit code and the last line of output. Past the timeout the
 * process and its children are killed and the error reads {@code Timed out after 2s}.
 */
public final class ShellRunner implements ActionRunner {

    @Override
    public Outcome run(Action action, Path baseDir) {
        long start = System.nanoTime();
        String command = action.fieldOrParam("command");
        if (command == null || command.isBlank()) {
            return new Outcome(false, "shell action has no command", Duration.ZERO);
        }
        Path output = null;
        try {
            output = Files.createTempFile("heartbeat-shell-", ".out");
            ProcessBuilder pb = new ProcessBuilder(List.of("/bin/sh", "-c", command))
                    .directory(baseDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            action.params().forEach((k, v) -> pb.environment()
                    .put("HB_PARAM_" + k.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9_]", "_"), v));
            Process process = pb.start();
            Duration timeout = action.timeout();
            boolean finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!finished) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
                return new Outcome(false, "Timed out after " + Durations.format(timeout), elapsed(start));
            }
            int exit = process.exitValue();
            if (exit == 0) {
                return new Outcome(true, "OK (exit 0)", elapsed(start));
            }
            return new Outcome(false, ActionRunner.oneLine("Exit code " + exit + lastLine(output)), elapsed(start));
        } catch (IOException e) {
            return new Outcome(false, ActionRunner.oneLine("Cannot run command: " + e.getMessage()), elapsed(start));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(false, "Interrupted", elapsed(start));
        } finally {
            if (output != null) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot delete temporary output " + output, e);
                }
            }
        }
    }

    /** The last non-blank line of the output; bytes that are not UTF-8 read as U+FFFD rather than failing. */
    private static String lastLine(Path output) throws IOException {
        List<String> lines = new String(Files.readAllBytes(output), StandardCharsets.UTF_8).lines().toList();
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (!lines.get(i).isBlank()) {
                return ": " + lines.get(i).strip();
            }
        }
        return "";
    }

    private static Duration elapsed(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }
}
