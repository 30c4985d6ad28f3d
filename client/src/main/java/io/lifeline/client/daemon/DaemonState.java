package io.lifeline.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.files.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A daemon's state directory (one per host id): {@code daemon.lock}, held while the daemon runs (a second daemon
 * for the same host is refused), and {@code commands.json}, the process of each agent's command now running with
 * its start time as the system keeps it ({@code /proc/<pid>/stat} on Linux), rewritten at every start and stop. A
 * daemon that was killed (kill -9, a power cut) leaves its records behind; the next daemon for the host
 * {@link #reclaim() reclaims} them before it starts anything: a recorded process that still runs, with the same
 * start time (a reused pid has another), is stopped with its whole session, so no command runs twice.
 * {@code groups} lists the process groups (or, unsupervised, the pids) the daemon's reaper stops if the daemon
 * dies ({@link CommandProcesses}).
 */
public final class DaemonState implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One command's process as recorded. {@code session}: the runtime's last session id, or null. */
    public record Entry(long pid, long start, boolean group, String startedAt, String session) {
    }

    private final Path dir;
    private final String hostId;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final Map<String, Entry> found;

    /** Another daemon holds the state directory's lock. */
    public static final class Busy extends Exception {
        Busy(String message) {
            super(message);
        }
    }

    private DaemonState(Path dir, String hostId, FileChannel ch, FileLock lock, Map<String, Entry> found) {
        this.dir = dir;
        this.hostId = hostId;
        this.lockChannel = ch;
        this.lock = lock;
        this.found = found;
    }

    /**
     * Opens (creating it) the state directory of the daemon for {@code hostId} and takes its lock; refused with
     * {@link Busy} when another daemon holds it. Reads what a previous daemon recorded ({@link #reclaim()}).
     */
    public static DaemonState open(Path dir, String hostId) throws IOException, Busy {
        Files.createDirectories(dir);
        FileChannel ch = FileChannel.open(dir.resolve("daemon.lock"), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            String holder = new String(Files.readAllBytes(dir.resolve("daemon.lock")), StandardCharsets.UTF_8).strip();
            ch.close();
            throw new Busy("another lifeline daemon for host " + hostId + " is running" + (holder.isEmpty() ? ""
                    : " (" + holder + ")") + "; its state directory is " + dir);
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap(("pid " + ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)), 0);
        Map<String, Entry> found = new LinkedHashMap<>();
        Path file = dir.resolve("commands.json");
        if (Files.exists(file)) {
            try {
                JsonNode n = JSON.readTree(file.toFile()).path("commands");
                for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> e = it.next();
                    JsonNode v = e.getValue();
                    found.put(e.getKey(), new Entry(v.path("pid").asLong(), v.path("start").asLong(),
                            v.path("group").asBoolean(), v.path("startedAt").asText(null),
                            v.path("session").asText(null)));
                }
            } catch (IOException | RuntimeException e) {
                // an unreadable file (cut short by a crash while written elsewhere): nothing to reclaim from it
            }
        }
        return new DaemonState(dir, hostId, ch, lock, found);
    }

    public Path dir() {
        return dir;
    }

    /** The list the reaper reads when the daemon dies: one {@code -pgid} (or pid) a line. */
    public Path groupsFile() {
        return dir.resolve("groups");
    }

    /** What the previous daemon recorded for {@code agentId} (its runtime session, say), if anything. */
    public Optional<Entry> previous(String agentId) {
        return Optional.ofNullable(found.get(agentId));
    }

    /**
     * Stops what a previous daemon for this host left running, before this one starts anything: each recorded
     * command's process if it still runs with its recorded start time, and (on Linux) every process left in its
     * session (a session id is not reused while the session lasts). TERM, then KILL after {@code grace}. Answers
     * a line per agent whose leftovers it stopped.
     */
    public List<String> reclaim(Duration grace) {
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, Entry> e : found.entrySet()) {
            Entry r = e.getValue();
            List<Long> pids = leftovers(r);
            if (pids.isEmpty()) {
                continue;
            }
            pids.forEach(p -> ProcessHandle.of(p).ifPresent(ProcessHandle::destroy));
            long deadline = System.nanoTime() + grace.toNanos();
            while (System.nanoTime() < deadline && pids.stream().anyMatch(p -> ProcessHandle.of(p)
                    .map(ProcessHandle::isAlive).orElse(false))) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            pids.forEach(p -> ProcessHandle.of(p).ifPresent(ProcessHandle::destroyForcibly));
            lines.add("stopped what a previous daemon for host " + hostId + " left running for " + e.getKey() + ": "
                    + pids.size() + " process(es) of pid " + r.pid() + " (started " + r.startedAt() + "), so the "
                    + "command does not run twice");
        }
        return lines;
    }

    /** The recorded command's processes still running: itself if its start time matches, and its session's. */
    private static List<Long> leftovers(Entry r) {
        List<Long> pids = new ArrayList<>();
        Optional<ProcTable.Stat> leader = ProcTable.stat(r.pid());
        boolean same = leader.map(s -> s.start() == r.start()).orElse(false);
        if (leader.isPresent() && !same) {
            return pids; // the pid was reused by another process: nothing of ours
        }
        if (same) {
            pids.add(r.pid());
            if (!ProcTable.available()) {
                ProcessHandle.of(r.pid()).ifPresent(h -> h.descendants().forEach(d -> pids.add(d.pid())));
            }
        }
        if (r.group()) {
            for (ProcTable.Stat s : ProcTable.sessionMembers(r.pid())) {
                if (s.pid() != r.pid()) {
                    pids.add(s.pid());
                }
            }
        }
        return pids;
    }

    /** Records a command's new process (its start time read from the system now). */
    public synchronized void started(String agentId, long pid, boolean group, String session) {
        entries.put(agentId, new Entry(pid, ProcTable.start(pid), group, Instant.now().toString(), session));
        write();
    }

    /** Records the runtime session the agent's current process runs (learnt from its hooks). */
    public synchronized void session(String agentId, String session) {
        Entry e = entries.get(agentId);
        if (e != null && !Objects.equals(e.session(), session)) {
            entries.put(agentId, new Entry(e.pid(), e.start(), e.group(), e.startedAt(), session));
            write();
        }
    }

    /** The command's process ended, or was stopped with its group. */
    public synchronized void ended(String agentId) {
        if (entries.remove(agentId) != null) {
            write();
        }
    }

    private void write() {
        ObjectNode root = JSON.createObjectNode().put("hostId", hostId).put("daemonPid", ProcessHandle.current().pid());
        ObjectNode commands = root.putObject("commands");
        StringBuilder groups = new StringBuilder();
        entries.forEach((id, e) -> {
            ObjectNode n = commands.putObject(id).put("pid", e.pid()).put("start", e.start()).put("group", e.group())
                    .put("startedAt", e.startedAt());
            if (e.session() != null) {
                n.put("session", e.session());
            }
            groups.append(e.group() ? "-" : "").append(e.pid()).append('\n');
        });
        try {
            replace(dir.resolve("commands.json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
            replace(groupsFile(), groups.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.getLogger(DaemonState.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot write the daemon's state in " + dir + ": " + e.getMessage());
        }
    }

    /**
     * A record renamed into place, so a reader never sees half of it: written to {@code <name>.tmp} (made with the
     * umask's mode), not forced to disk.
     */
    private static void replace(Path file, byte[] bytes) throws IOException {
        AtomicFiles.write(file, bytes, AtomicFiles.Options.of().siblingTemp());
    }

    /** Releases the lock; the records stay (empty after a clean stop). */
    @Override
    public synchronized void close() {
        write();
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            // the lock goes with the process anyway
        }
    }
}
