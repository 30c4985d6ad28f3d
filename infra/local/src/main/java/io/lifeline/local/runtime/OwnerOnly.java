package io.lifeline.local.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Lifeline Local's data dir holds key hashes, agents' metadata and checkpoints: the dir, its {@code dynamodb/}
 * folder, the store's file and the stream checkpoints are its owner's only (0700 for folders, 0600 for files),
 * whatever the umask, and an older data dir is tightened when Local starts on it. On a file system without
 * POSIX modes (Windows) this does nothing. In the runtime room so the app (the data dir, the store) and aws (the
 * stream's checkpoint file) share the one copy.
 */
public final class OwnerOnly {
    static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
    static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

    private OwnerOnly() {
    }

    /** Creates {@code dir} (and missing parents) if need be, and makes it 0700. */
    public static Path dir(Path dir) throws IOException {
        Path made = posix(dir) ? Files.createDirectories(dir, attribute(DIR)) : Files.createDirectories(dir);
        set(made, DIR);
        return made;
    }

    /**
     * Creates {@code file} empty as 0600 if it does not exist (so whoever writes it first, such as SQLite,
     * never makes it with the umask's mode), and makes an existing one 0600.
     */
    public static Path file(Path file) throws IOException {
        if (!Files.exists(file)) {
            if (posix(file.getParent())) {
                Files.createFile(file, attribute(FILE));
            } else {
                Files.createFile(file);
            }
        }
        set(file, FILE);
        return file;
    }

    /** Makes {@code file} 0600 if it exists. */
    public static void tighten(Path file) throws IOException {
        if (Files.exists(file)) {
            set(file, FILE);
        }
    }

    private static void set(Path path, Set<PosixFilePermission> mode) throws IOException {
        try {
            Files.setPosixFilePermissions(path, mode); // not subject to the umask
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: nothing to set
        }
    }

    private static boolean posix(Path path) {
        Path p = path == null ? Path.of("") : path.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        return p != null && safeSupports(p);
    }

    private static boolean safeSupports(Path p) {
        try {
            return Files.getFileStore(p).supportsFileAttributeView("posix");
        } catch (IOException e) {
            return false;
        }
    }

    private static FileAttribute<Set<PosixFilePermission>> attribute(Set<PosixFilePermission> mode) {
        return PosixFilePermissions.asFileAttribute(mode);
    }
}
