package io.lifeline.client.manager;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.files.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The state file, written atomically ({@link AtomicFiles}): the JSON goes to a temporary file in the same directory,
 * is forced to disk, then renamed over the old file, so a crash leaves the old file or the new one, never half of
 * either. The file is its owner's only (0600, as its temp file is made).
 */
public final class StateStore {
    private static final ObjectMapper MAPPER = LifelineClient.mapper();
    private static final AtomicFiles.Options WRITE = AtomicFiles.Options.of().forced();
    private final Path path;

    public StateStore(Path path) {
        this.path = path.toAbsolutePath();
    }

    public Path path() {
        return path;
    }

    public void save(PersistedState state) {
        try {
            Files.createDirectories(path.getParent());
            AtomicFiles.write(path, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(state), WRITE);
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
