package io.lifeline.client.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/** A stand-in for an agent's runtime in the daemon's tests: a script that records how each start was called. */
final class RuntimeStandIn {
    private RuntimeStandIn() {
    }

    /**
     * Writes {@code script}, executable: it appends its arguments as one line to {@code args}, then runs
     * {@code rest} (shell lines, such as {@code exec sleep 300}).
     */
    static void write(Path script, Path args, String rest) throws IOException {
        Files.writeString(script, "#!/bin/sh\necho \"$*\" >> '" + args + "'\n" + rest);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** The lines of {@code p}, none while it is not there or cannot be read (for a poll). */
    static List<String> lines(Path p) {
        try {
            return Files.exists(p) ? Files.readAllLines(p) : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }
}
