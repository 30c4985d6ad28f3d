package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Local's data dir holds key hashes, metadata and checkpoints: the dir and the engine's {@code engine/} folder are
 * 0700 (so the engine's files inside are reachable by their owner only), when Local makes them (also under umask
 * 000) and when it starts on a data dir left open to everyone; the data is there again after a reopen. A data dir an
 * earlier Local wrote with DynamoDB Local is refused in one line, by the start and by the bootstrap commands.
 */
@Timeout(120)
@Tag("e2e")
class DataDirModesTest {
    @TempDir
    Path tmp;

    @Test
    void open_onANewDataDir_makesItAndTheEngineFolderOwnerOnly() throws Exception {
        Path dataDir = tmp.resolve("new").resolve(".lifeline");
        try (LocalEngine store = LocalEngine.open(dataDir, Clock.systemUTC())) {
            store.client().listTables();
            assertOwnerOnly(dataDir);
            assertTrue(Files.exists(dataDir.resolve(LocalEngine.ENGINE_DIR).resolve("engine.format")),
                    "the engine keeps its files in the engine folder");
        }
        assertOwnerOnly(dataDir);
    }

    @Test
    void open_onADataDirOpenToEveryone_tightensIt_andTheEngineStillReadsItsData() throws Exception {
        Path dataDir = tmp.resolve("old");
        try (LocalEngine store = LocalEngine.open(dataDir, Clock.systemUTC())) {
            store.client().createTable(t -> t.tableName("kept")
                    .keySchema(k -> k.attributeName("pk").keyType("HASH"))
                    .attributeDefinitions(a -> a.attributeName("pk").attributeType("S"))
                    .billingMode("PAY_PER_REQUEST"));
        }
        Files.writeString(dataDir.resolve(LocalEngine.STREAM_CHECKPOINTS_FILE), "shardId-old=1\n");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setPosixFilePermissions(dataDir.resolve(LocalEngine.ENGINE_DIR),
                PosixFilePermissions.fromString("rwxrwxrwx"));

        try (LocalEngine store = LocalEngine.open(dataDir, Clock.systemUTC())) {
            assertOwnerOnly(dataDir);
            assertEquals(List.of("kept"), store.client().listTables().tableNames());
            assertEquals("shardId-old=1\n", Files.readString(dataDir.resolve(LocalEngine.STREAM_CHECKPOINTS_FILE)),
                    "the pump's checkpoints are kept: the engine's streams and their records survive a reopen");
        }
    }

    @Test
    void aDataDirWrittenByDynamoDbLocal_isRefusedInOneLine_byTheStartAndTheBootstrapCommands() throws Exception {
        Path dataDir = tmp.resolve("dynamodb-local");
        Files.createDirectories(dataDir.resolve("dynamodb"));
        Files.writeString(dataDir.resolve(LocalEngine.DYNAMODB_LOCAL_FILE), "SQLite format 3");
        for (String[] args : List.of(new String[] {"--port", "0", "--data-dir", dataDir.toString()},
                new String[] {"--data-dir", dataDir.toString(), "create-team", "t"},
                new String[] {"--data-dir", dataDir.toString(), "create-operator-key"})) {
            Run r = run(args);
            assertEquals(1, r.exit(), r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
            assertTrue(r.err().contains("was written by an earlier Lifeline Local on DynamoDB Local")
                    && r.err().contains("move that dir aside (or delete it) and start again with an empty one"),
                    r.err());
        }
        assertFalse(Files.exists(dataDir.resolve(LocalEngine.ENGINE_DIR)), "nothing of the engine's written there");
        assertTrue(Files.exists(dataDir.resolve(LocalEngine.DYNAMODB_LOCAL_FILE)), "the old store is left as it was");
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

    /** Local's command line in this JVM, its stderr captured. */
    private record Run(int exit, String err) {
    }

    private static Run run(String... args) {
        StringWriter err = new StringWriter();
        CommandLine line = LocalMain.commandLine();
        line.setErr(new PrintWriter(err, true));
        return new Run(line.execute(args), err.toString());
    }

    private static void assertOwnerOnly(Path dataDir) throws Exception {
        assertEquals("rwx------", mode(dataDir), "the data dir");
        assertEquals("rwx------", mode(dataDir.resolve(LocalEngine.ENGINE_DIR)), "its engine folder");
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
