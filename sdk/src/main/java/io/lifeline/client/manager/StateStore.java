package io.lifeline.client.manager;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.LifelineClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The state file, written atomically: the JSON goes to a temporary file in the same directory, is forced to
 * disk ({@link FileChannel#force}), then renamed over the old file, so a crash leaves the old file or the new
 * one, never half of either.
 */
public final class StateStore {
    private static final ObjectMapper MAPPER = LifelineClient.mapper();
    private final Path path;

    public StateStore(Path path) {
        this.path = path.toAbsolutePath();
    }

    public Path path() {
        return path;
    }

    public void save(PersistedState state) {
        try {
            Path dir = path.getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, path.getFileName().toString(), ".tmp");
            try {
                byte[] bytes = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(state);
                try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING)) {
                    ByteBuffer buf = ByteBuffer.wrap(bytes);
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                    ch.force(true);
                }
                try {
                    Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the state file " + path, e);
        }
    }

    /** The saved state, or null when there is none or it cannot be read (a corrupt file is no state). */
    public PersistedState load() {
        if (!Files.isRegularFile(path)) {
            return null;
        }
        try {
            return MAPPER.readValue(path.toFile(), PersistedState.class);
        } catch (IOException e) {
            return null;
        }
    }

    public void clear() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot remove the state file " + path, e);
        }
    }
}
