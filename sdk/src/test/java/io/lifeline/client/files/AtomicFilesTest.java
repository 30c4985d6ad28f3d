package io.lifeline.client.files;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lifeline.client.files.AtomicFiles.Options;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each of the writer's options, on real files in a temp folder: what the file, its mode and the folder hold after. */
@Tag("unit")
class AtomicFilesTest {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> SHARED = PosixFilePermissions.fromString("rw-r--r--");

    @TempDir
    Path dir;

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private void assumePosix() throws IOException {
        assumeTrue(Files.getFileStore(dir).supportsFileAttributeView("posix"), "POSIX modes only");
    }

    @Test
    void write_replacesTheFile_andLeavesNoTempFile() throws IOException {
        Path f = dir.resolve("state.json");
        Files.writeString(f, "old");
        AtomicFiles.write(f, "new", Options.of());
        assertEquals("new", Files.readString(f));
        assertEquals(List.of("state.json"), names(dir));
        AtomicFiles.write(dir.resolve("fresh.json"), "made".getBytes(UTF_8),
                Options.of());
        assertEquals("made", Files.readString(dir.resolve("fresh.json")));
    }

    @Test
    void byDefault_theFileIsOwnerOnly_asItsFreshTempFile_evenOverASharedOne() throws IOException {
        assumePosix();
        Path f = dir.resolve("state.json");
        Files.writeString(f, "old");
        Files.setPosixFilePermissions(f, SHARED);
        AtomicFiles.write(f, "new", Options.of().forced());
        assertEquals(OWNER_ONLY, Files.getPosixFilePermissions(f));
        AtomicFiles.write(dir.resolve("new.json"), "x", Options.of());
        assertEquals(OWNER_ONLY, Files.getPosixFilePermissions(dir.resolve("new.json")));
    }

    @Test
    void keepingPermissions_keepsTheReplacedFilesMode_andANewFileIsOwnerOnly() throws IOException {
        assumePosix();
        Path f = dir.resolve("HEARTBEAT.md");
        Files.writeString(f, "old");
        Files.setPosixFilePermissions(f, SHARED);
        AtomicFiles.write(f, "new", Options.of().keepingPermissions());
        assertEquals("new", Files.readString(f));
        assertEquals(SHARED, Files.getPosixFilePermissions(f));
        Path g = dir.resolve("settings.json");
        AtomicFiles.write(g, "{}", Options.of().keepingPermissions());
        assertEquals(OWNER_ONLY, Files.getPosixFilePermissions(g));
    }

    @Test
    void siblingTemp_isNameDotTmp_madeWithTheUmasksMode_andALeftoverIsOverwritten() throws IOException {
        assumePosix();
        Path asTheUmaskMakes = Files.createFile(dir.resolve("probe"));
        Path f = dir.resolve("commands.json");
        Files.writeString(dir.resolve("commands.json.tmp"), "a leftover of a killed write, longer than the new bytes");
        Files.setPosixFilePermissions(dir.resolve("commands.json.tmp"), Files.getPosixFilePermissions(asTheUmaskMakes));
        AtomicFiles.write(f, "{}", Options.of().siblingTemp());
        assertEquals("{}", Files.readString(f));
        assertEquals(List.of("commands.json", "probe"), names(dir));
        Files.delete(f);
        AtomicFiles.write(f, "[]", Options.of().siblingTemp());
        assertEquals(Files.getPosixFilePermissions(asTheUmaskMakes), Files.getPosixFilePermissions(f),
                "made as Files.write makes a file, not owner-only");
    }

    @Test
    void aFailedRename_removesAFreshTempFile_butLeavesTheSiblingOne() throws IOException {
        Path busy = dir.resolve("busy");
        Files.createDirectories(busy.resolve("inside")); // a folder that is not empty cannot be replaced
        assertThrows(IOException.class, () -> AtomicFiles.write(busy, "x", Options.of().forced()));
        assertEquals(List.of("busy"), names(dir));
        assertThrows(IOException.class, () -> AtomicFiles.write(busy, "x", Options.of().siblingTemp()));
        assertEquals(List.of("busy", "busy.tmp"), names(dir));
        assertEquals("x", Files.readString(dir.resolve("busy.tmp")));
    }

    /** Records each force and what the file held at that moment. */
    private static final class Recorded implements AtomicFiles.Sync {
        final Path target;
        final List<String> calls = new ArrayList<>();

        Recorded(Path target) {
            this.target = target;
        }

        @Override
        public void file(FileChannel ch) throws IOException {
            calls.add("file, the target holding " + Files.readString(target));
            AtomicFiles.Sync.super.file(ch);
        }

        @Override
        public void directory(Path d) {
            try {
                calls.add("directory " + d.getFileName() + ", the target holding " + Files.readString(target));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            AtomicFiles.Sync.super.directory(d);
        }
    }

    @Test
    void forced_forcesTheBytesBeforeTheRename_directoryForced_theFolderAfterIt() throws IOException {
        Path f = dir.resolve("f");
        Files.writeString(f, "old");
        Recorded none = new Recorded(f);
        AtomicFiles.write(f, "v1".getBytes(UTF_8), Options.of(), none);
        assertEquals(List.of(), none.calls);

        Recorded file = new Recorded(f);
        AtomicFiles.write(f, "v2".getBytes(UTF_8), Options.of().forced(), file);
        assertEquals(List.of("file, the target holding v1"), file.calls);

        Recorded both = new Recorded(f);
        AtomicFiles.write(f, "v3".getBytes(UTF_8),
                Options.of().forced().directoryForced().keepingPermissions(), both);
        assertEquals(List.of("file, the target holding v2",
                "directory " + dir.getFileName() + ", the target holding v3"), both.calls);

        Recorded folderOnly = new Recorded(f);
        AtomicFiles.write(f, "v4".getBytes(UTF_8),
                Options.of().siblingTemp().directoryForced(), folderOnly);
        assertEquals(List.of("directory " + dir.getFileName() + ", the target holding v4"), folderOnly.calls);
        assertTrue(Files.exists(f));
    }
}
