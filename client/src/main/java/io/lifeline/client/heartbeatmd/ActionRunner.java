package io.lifeline.client.heartbeatmd;

import java.nio.file.Path;
import java.time.Duration;

/** Runs one attempt of one action type. Implementations must return within about {@link Action#timeout()}. */
public interface ActionRunner {

    /**
     * @param success  whether the attempt succeeded
     * @param message  the {@code result} on success (e.g. {@code OK (200)}) or the {@code error} on failure, one line
     * @param elapsed  how long the attempt took
     */
    record Outcome(boolean success, String message, Duration elapsed) {
    }

    /** @param baseDir heartbeat.md's folder, the working directory for relative paths */
    Outcome run(Action action, Path baseDir);

    /** One line, at most 200 characters, for the file. */
    static String oneLine(String s) {
        String t = s == null ? "" : s.replaceAll("[\\r\\n\\t]+", " ").strip();
        return t.length() <= 200 ? t : t.substring(0, 197) + "...";
    }
}
