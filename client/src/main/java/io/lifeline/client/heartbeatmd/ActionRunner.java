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

    /**
     * One line for the file, at most 200 characters: colour codes and other terminal escapes dropped, control
     * characters and line separators made spaces, white space collapsed and trimmed, so that it reads back as written.
     */
    static String oneLine(String s) {
        return TextLine.oneLine(s, MAX_MESSAGE_CHARS);
    }

    /** Longest {@code result} or {@code error} written to the file. */
    int MAX_MESSAGE_CHARS = 200;
}
