package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local's data dir holds key hashes, metadata and checkpoints: the dir and its {@code dynamodb/} folder are
 * 0700, the store's file and the stream checkpoints 0600, when Local makes them (also under umask 000) and when
 * it starts on a data dir an older version left open to everyone.
 */
@Timeout(120)
@Tag("e2e")
class DataDirModesTest {
    @TempDir
    Path tmp;

    @Test
    void open_onANewDataDir_makesItAndTheStoreOwnerOnly() throws Exception {
        Path dataDir = tmp.resolve("new").resolve(".lifeline");
        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            store.client().listTables();
            assertOwnerOnly(dataDir);
        }
        assertOwnerOnly(dataDir);
    }

    @Test
    void open_onAnOlderDataDirOpenToEveryone_tightensIt_andTheStoreStillReadsItsData() throws Exception {
        Path dataDir = tmp.resolve("old");
        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            store.client().createTable(t -> t.tableName("kept")
                    .keySchema(k -> k.attributeName("pk").keyType("HASH"))
                    .attributeDefinitions(a -> a.attributeName("pk").attributeType("S"))
                    .billingMode("PAY_PER_REQUEST"));
        }
        Files.writeString(dataDir.resolve(LocalDynamo.STREAM_CHECKPOINTS_FILE), "shard=1\n");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setPosixFilePermissions(dataDir.resolve("dynamodb"), PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setPosixFilePermissions(db(dataDir), PosixFilePermissions.fromString("rw-rw-rw-"));
        Files.setPosixFilePermissions(dataDir.resolve(LocalDynamo.STREAM_CHECKPOINTS_FILE),
                PosixFilePermissions.fromString("rw-rw-rw-"));

        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            assertOwnerOnly(dataDir);
            assertEquals("rw-------", mode(dataDir.resolve(LocalDynamo.STREAM_CHECKPOINTS_FILE)));
            assertEquals(List.of("kept"), store.client().listTables().tableNames());
        }
    }

    @Test
    void createTeam_inAChildUnderUmask000_stillMakesTheDataDirOwnerOnly() throws Exception {
        Path dataDir = tmp.resolve("umask").resolve(".lifeline");
        Path control = tmp.resolve("control");
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c",
                "umask 000 && touch \"$0\" && exec \"$@\"", control.toString()));
        cmd.addAll(LocalProcessGuardsTest.javaCommand("--data-dir", dataDir.toString(), "create-team", "umask-team"));
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try (var in = child.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(child.waitFor(90, TimeUnit.SECONDS), out);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("Team umask-team created"), out);
        assertEquals("rw-rw-rw-", mode(control), "the child really ran under umask 000");
        assertOwnerOnly(dataDir);
        assertEquals("rwx------", mode(dataDir.getParent().resolve(".lifeline")));
    }

    private static void assertOwnerOnly(Path dataDir) throws Exception {
        assertEquals("rwx------", mode(dataDir), "the data dir");
        assertEquals("rwx------", mode(dataDir.resolve("dynamodb")), "its dynamodb folder");
        assertEquals("rw-------", mode(db(dataDir)), "the store's file");
    }

    private static Path db(Path dataDir) {
        return dataDir.resolve("dynamodb").resolve(LocalDynamo.SHARED_DB_FILE);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
