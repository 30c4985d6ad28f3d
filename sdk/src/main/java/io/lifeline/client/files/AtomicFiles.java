package io.lifeline.client.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a file so a reader sees the old bytes or the new, never a mix: the bytes go to a temp file in the same
 * folder, then it is renamed over the file ({@code ATOMIC_MOVE}; where the file system cannot, a plain replace). The
 * one writer of the SDK and the CLI; its {@link Options} say what each caller needs beyond that:
 * <ul>
 * <li>the temp file: a fresh one ({@code .<name>.<random>.tmp}, created owner-only, 0600, and removed if the write
 * fails), or {@code <name>.tmp} beside the file ({@link Options#siblingTemp()}: created with the process's umask,
 * reused by the next write);</li>
 * <li>{@link Options#forced()}: the bytes are forced to disk before the rename, so a crash cannot leave the new
 * name on missing bytes;</li>
 * <li>{@link Options#directoryForced()}: the folder is forced after the rename, so the rename itself survives a
 * crash (where the platform lets a folder be opened; elsewhere the rename is still atomic, only less durable);</li>
 * <li>{@link Options#keepingPermissions()}: the new file gets the replaced one's POSIX permissions (a rewrite does
 * not change who may read it); without it the file has the temp file's.</li>
 * </ul>
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    /**
     * How a write is made: see {@link AtomicFiles}. {@link #of()} is the least (a fresh owner-only temp file, nothing
     * forced, the temp file's permissions); each method adds one thing.
     */
    public record Options(boolean uniqueTemp, boolean forceFile, boolean forceDirectory, boolean keepPermissions) {
        public static Options of() {
            return new Options(true, false, false, false);
        }

        /** The temp file is {@code <name>.tmp} beside the file, made with the umask's mode and left if a write fails. */
        public Options siblingTemp() {
            return new Options(false, forceFile, forceDirectory, keepPermissions);
        }

        /** The bytes are forced to disk before the rename. */
        public Options forced() {
            return new Options(uniqueTemp, true, forceDirectory, keepPermissions);
        }

        /** The folder is forced after the rename. */
        public Options directoryForced() {
            return new Options(uniqueTemp, forceFile, true, keepPermissions);
        }

        /** The new file keeps the replaced one's permissions. */
        public Options keepingPermissions() {
            return new Options(uniqueTemp, forceFile, forceDirectory, true);
        }
    }

    /** How bytes and folders are forced to disk: the real calls, or a test's record of them. */
    interface Sync {
        Sync REAL = new Sync() {
        };

        default void file(FileChannel ch) throws IOException {
            ch.force(true);
        }

        /** Linux allows opening a folder for reading; where that is refused, nothing more can be done. */
        default void directory(Path dir) {
            try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
                ch.force(true);
            } catch (IOException e) {
                // Not supported on this platform (e.g. Windows); the rename is still atomic, only less durable.
                return;
            }
        }
    }

    /** Replaces {@code target} with {@code text} in UTF-8. */
    public static void write(Path target, String text, Options options) throws IOException {
        write(target, text.getBytes(StandardCharsets.UTF_8), options);
    }

    /** Replaces {@code target} with {@code bytes}. */
    public static void write(Path target, byte[] bytes, Options options) throws IOException {
        write(target, bytes, options, Sync.REAL);
    }

    static void write(Path target, byte[] bytes, Options options, Sync sync) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Path temp = options.uniqueTemp() ? Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp")
                : target.resolveSibling(target.getFileName() + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                if (options.forceFile()) {
                    sync.file(ch);
                }
            }
            if (options.keepPermissions()) {
                keepPermissions(target, temp);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            if (options.forceDirectory()) {
                sync.directory(dir);
            }
        } finally {
            if (options.uniqueTemp()) {
                Files.deleteIfExists(temp);
            }
        }
    }

    private static void keepPermissions(Path from, Path to) throws IOException {
        if (!Files.exists(from)) {
            return;
        }
        try {
            Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from));
        } catch (UnsupportedOperationException notPosix) {
            // Windows: the folder's ACLs apply to the new file as to the old
        }
    }
}
