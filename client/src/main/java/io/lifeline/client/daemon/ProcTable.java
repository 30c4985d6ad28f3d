package io.lifeline.client.daemon;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What Linux's {@code /proc} says of a process: its start time in clock ticks since boot (field 22 of
 * {@code /proc/<pid>/stat}), its process group and its session. A pid is reused once its process is gone, so a
 * pid is only "the same process" when its start time matches the one recorded when it started. Elsewhere
 * ({@link #available()} false) it falls back to {@link ProcessHandle}'s start instant, in milliseconds.
 */
final class ProcTable {
    private static final Path PROC = Path.of("/proc");

    private ProcTable() {
    }

    /** Whether this machine has a Linux {@code /proc}. */
    static boolean available() {
        return Files.isReadable(PROC.resolve("self/stat"));
    }

    /** A process's identity: its pid and start time (ticks since boot on Linux, else epoch ms). */
    record Stat(long pid, long pgrp, long session, long start) {
    }

    /** The process as {@code /proc} (or, without one, {@link ProcessHandle}) shows it now, if it runs. */
    static Optional<Stat> stat(long pid) {
        if (!available()) {
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).flatMap(h -> h.info().startInstant()
                    .map(t -> new Stat(pid, -1, -1, t.toEpochMilli())));
        }
        try {
            String text = Files.readString(PROC.resolve(pid + "/stat"), StandardCharsets.US_ASCII);
            // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
            // cstime priority nice threads itrealvalue starttime ...": comm may hold spaces and parentheses.
            String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
            if ("Z".equals(f[0]) || "X".equals(f[0])) {
                return Optional.empty(); // a zombie has ended; only its exit status is left to read
            }
            return Optional.of(new Stat(pid, Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[19])));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The start time of {@code pid} if it runs, else -1. */
    static long start(long pid) {
        return stat(pid).map(Stat::start).orElse(-1L);
    }

    /** Every running process of session {@code sid} (Linux; elsewhere none). */
    static List<Stat> sessionMembers(long sid) {
        List<Stat> out = new ArrayList<>();
        if (!available()) {
            return out;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, p -> p.getFileName().toString()
                .chars().allMatch(Character::isDigit))) {
            for (Path d : dirs) {
                stat(Long.parseLong(d.getFileName().toString())).filter(s -> s.session() == sid).ifPresent(out::add);
            }
        } catch (IOException e) {
            // /proc unreadable: nothing found
        }
        return out;
    }
}
