package io.lifeline.client.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long the established TCP connections of each agent's process tree have received nothing: the kernel's own
 * per-socket time since the last byte received ({@code tcp_info.tcpi_last_data_recv}, which {@code ss -ti} prints as
 * {@code lastrcv:<ms>}), the least over the tree's sockets. A streamed model response refreshes it every few seconds;
 * a stream silent on an open socket lets it grow. One sample costs one {@code ss} call and one walk of {@code /proc}
 * for all the daemon's agents together (docs/daemon.md, "Progress"). A process tree is a session: the daemon starts
 * each command under {@code setsid}, so the session id is the command's pid.
 */
final class StreamSilence {
    /** {@code ino:<n>} on an {@code ss -e} line and {@code lastrcv:<ms>} on its {@code -i} line. */
    private static final Pattern INODE = Pattern.compile("\\bino:(\\d+)");
    private static final Pattern LAST_RCV = Pattern.compile("\\blastrcv:(\\d+)");
    private static final Pattern SOCKET = Pattern.compile("socket:\\[(\\d+)]");
    private static final Path PROC = Path.of("/proc");
    private static final String[] SS = {"ss", "-tinHe", "state", "established"};

    private StreamSilence() {
    }

    /** Whether this machine can be sampled: a Linux {@code /proc} and an {@code ss} (iproute2). */
    static boolean available() {
        return ProcTable.available() && (Files.isExecutable(Path.of("/usr/bin/ss"))
                || Files.isExecutable(Path.of("/bin/ss")) || Files.isExecutable(Path.of("/usr/sbin/ss")));
    }

    /**
     * For each of {@code sessions} (a session leader's pid) with at least one established TCP connection: the least
     * time (ms) since any of them received data. A session with none is absent (no model call open).
     */
    static Map<Long, Long> sample(Collection<Long> sessions) {
        Map<Long, Long> out = new HashMap<>();
        if (sessions.isEmpty() || !available()) {
            return out;
        }
        Map<Long, Set<Long>> inodes = socketInodes(new HashSet<>(sessions));
        if (inodes.isEmpty()) {
            return out;
        }
        Map<Long, Long> lastRcv = parse(ss());
        inodes.forEach((sid, socks) -> socks.stream().map(lastRcv::get).filter(v -> v != null)
                .min(Long::compare).ifPresent(ms -> out.put(sid, ms)));
        return out;
    }

    /** {@code ss -tinHe state established}'s output, or "" when it could not run. */
    private static String ss() {
        try {
            Process p = new ProcessBuilder(SS).redirectErrorStream(true).start();
            String text;
            try (InputStream in = p.getInputStream()) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "";
            }
            return text;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /**
     * Socket inode to {@code lastrcv} (ms) from {@code ss -tinHe} output: each connection is a line with its
     * {@code ino:} and a continuation line (starting with white space) with its {@code tcp_info}.
     */
    static Map<Long, Long> parse(String text) {
        Map<Long, Long> out = new HashMap<>();
        Long inode = null;
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            if (!Character.isWhitespace(line.charAt(0))) {
                Matcher m = INODE.matcher(line);
                inode = m.find() ? Long.valueOf(m.group(1)) : null;
            }
            Matcher r = LAST_RCV.matcher(line);
            if (inode != null && r.find()) {
                out.put(inode, Long.valueOf(r.group(1)));
            }
        }
        return out;
    }

    /** The socket inodes open in each of {@code sessions}' processes: one walk of {@code /proc}. */
    private static Map<Long, Set<Long>> socketInodes(Set<Long> sessions) {
        Map<Long, Set<Long>> out = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, p -> p.getFileName().toString()
                .chars().allMatch(Character::isDigit))) {
            for (Path d : dirs) {
                long pid = Long.parseLong(d.getFileName().toString());
                ProcTable.stat(pid).filter(s -> sessions.contains(s.session()))
                        .ifPresent(s -> addSockets(d.resolve("fd"), out.computeIfAbsent(s.session(),
                                k -> new HashSet<>())));
            }
        } catch (IOException e) {
            // /proc unreadable: nothing found
        }
        out.values().removeIf(Set::isEmpty);
        return out;
    }

    private static void addSockets(Path fds, Set<Long> into) {
        try (DirectoryStream<Path> links = Files.newDirectoryStream(fds)) {
            for (Path l : links) {
                try {
                    Matcher m = SOCKET.matcher(Files.readSymbolicLink(l).toString());
                    if (m.matches()) {
                        into.add(Long.valueOf(m.group(1)));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException e) {
            // the process ended, or is not ours to read
        }
    }
}
