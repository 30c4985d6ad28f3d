package io.lifeline.client.hooks;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One file an install or uninstall writes: its text before (null: absent) and after (null: to be deleted), and
 * what changed, in words, for the person running it.
 */
public record FileChange(Path file, String before, String after, List<String> summary) {
    public FileChange {
        summary = List.copyOf(summary);
    }

    public boolean changed() {
        return !Objects.equals(before, after);
    }
}
