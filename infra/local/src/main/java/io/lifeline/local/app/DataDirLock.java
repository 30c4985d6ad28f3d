package io.lifeline.local.app;

import io.lifeline.local.runtime.OwnerOnly;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.Set;

/**
 * One process per data dir: {@code <data-dir>/lock} (0600) holds the pid of the process that has the data dir,
 * and an OS file lock on it for as long as that process runs (the OS drops it when the process dies, even by
 * SIGKILL, so a stale file never blocks a start). A second Lifeline Local, or a bootstrap command, on a held data
 * dir is refused with a {@link StartRefusedException} naming the holder's pid.
 */
final class DataDirLock implements AutoCloseable {
    static final String FILE = "lock";

    /**
     * Data dirs this JVM holds. A second channel on a file this process has locked must not even be opened:
     * closing it would drop the process's lock (POSIX locks belong to the process, not to a descriptor).
     */
    private static final Set<Path> HELD = new HashSet<>();

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes {@code dataDir} (creating it), or refuses in one line if another process, or this one, holds it. */
    static DataDirLock acquire(Path dataDir) throws IOException {
        Path dir = OwnerOnly.dir(dataDir).toRealPath();
        Path file = dir.resolve(FILE);
        synchronized (HELD) {
            if (HELD.contains(file)) {
                throw inUse(dir, Long.toString(ProcessHandle.current().pid()));
            }
            FileChannel channel = open(file);
            try {
                FileLock lock;
                try {
                    lock = channel.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null;
                }
                if (lock == null) {
                    throw inUse(dir, holder(file));
                }
                byte[] pid = (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
                channel.truncate(0);
                channel.write(ByteBuffer.wrap(pid), 0);
                channel.force(false);
                HELD.add(file);
                return new DataDirLock(file, channel, lock);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        }
    }

    private static FileChannel open(Path file) throws IOException {
        Set<StandardOpenOption> options = Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            FileChannel channel = FileChannel.open(file, options,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            // The mode above applies only when the file is created; an older file is made owner-only too.
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            return channel;
        } catch (UnsupportedOperationException e) {
            return FileChannel.open(file, options); // not a POSIX file system
        }
    }

    /** The pid written in the lock file by its holder, or a phrase when it cannot be read yet. */
    private static String holder(Path file) {
        try {
            String pid = Files.readString(file, StandardCharsets.US_ASCII).strip();
            return pid.matches("[0-9]{1,19}") ? pid : "unknown";
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static StartRefusedException inUse(Path dir, String pid) {
        return new StartRefusedException("data dir " + dir + " is in use by Lifeline Local process " + pid
                + "; stop it first, or use another --data-dir");
    }

    @Override
    public void close() throws IOException {
        synchronized (HELD) {
            try {
                lock.release();
            } finally {
                channel.close();
                HELD.remove(file);
            }
        }
    }
}
