package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class WakeTest {
    private static final Instant T0 = Instant.parse("2024-01-15T10:32:15Z");

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);

    private Path write(String text) throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private static String read(Path p) throws Exception {
        return Files.readString(p, StandardCharsets.UTF_8);
    }

    private List<Path> history() throws Exception {
        if (!Files.isDirectory(dir.resolve("history"))) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir.resolve("history"))) {
            return s.sorted().toList();
        }
    }

    @Test
    void run_seedMinimalExample_runsShellAndWritesCompletionAndFrontmatter() throws Exception {
        Path file = write(Fixtures.seed("seed-minimal.md"));
        List<Long> sent = new ArrayList<>();
        WakeResult r = Wake.run(file, clock, WakeOptions.defaults().withHeartbeat(sent::add));

        assertEquals(1, r.succeeded().size());
        assertEquals("OK (exit 0)", r.succeeded().get(0).message());
        String out = read(file);
        assertTrue(out.matches("(?s)---\nversion: 1\nstatus: idle\nlast_wake: 2024-01-15T10:32:15Z\n"
                + "next_wake: 2024-01-15T11:32:15Z\nerror_count: 0\nlast_error: null\nconfig_hash: [0-9a-f]{12}\n---\n"
                + "\n# Heartbeat\n\n## Pending Actions\n\n### \\[MEDIUM\\] Hello World\n- \\*\\*id\\*\\*: hello-001\n"
                + "- \\*\\*type\\*\\*: shell\n- \\*\\*command\\*\\*: echo \"Agent is alive\"\n- \\*\\*schedule\\*\\*: every:1h\n"
                + "- \\*\\*status\\*\\*: completed\n- \\*\\*completed_at\\*\\*: 2024-01-15T10:32:15Z\n"
                + "- \\*\\*duration\\*\\*: [0-9]+\\.[0-9]s\n- \\*\\*result\\*\\*: OK \\(exit 0\\)\n"), out);
        assertEquals(Instant.parse("2024-01-15T11:32:15Z"), r.nextWake());
        assertEquals(3600, r.nextHeartbeatWithinSeconds().getAsLong());
        assertEquals(List.of(3600L), sent);
        assertEquals(dir.resolve("history/heartbeat-20240115-103215.md"), r.backup());
        assertEquals(Fixtures.seed("seed-minimal.md"), read(r.backup()));
        assertFalse(Files.exists(dir.resolve("heartbeat.md.lock")));
    }

    @Test
    void run_secondWakeBeforeDue_runsNothingAndKeepsActionLines() throws Exception {
        Path file = write(Fixtures.seed("seed-minimal.md"));
        Wake.run(file, clock);
        String after = read(file);
        clock.advance(Duration.ofMinutes(10));
        WakeResult r = Wake.run(file, clock);
        assertTrue(r.ran().isEmpty());
        assertEquals(after.replace("last_wake: 2024-01-15T10:32:15Z", "last_wake: 2024-01-15T10:42:15Z"), read(file));
        assertEquals(50 * 60, r.nextHeartbeatWithinSeconds().getAsLong());
        assertEquals(2, history().size());
    }

    @Test
    void run_failingActionWithRetries_writesSeedFailureFormatThenUsesUpAttempts() throws Exception {
        Path file = write("---\nversion: 1\nstatus: idle\n---\n\n### [HIGH] Flaky\n- **id**: flaky\n- **type**: shell\n"
                + "- **command**: echo boom >&2; exit 3\n- **retry**: 3\n- **status**: pending\n");

        WakeResult first = Wake.run(file, clock);
        assertEquals(1, first.failed().size());
        assertEquals("---\nversion: 1\nstatus: error\nlast_wake: 2024-01-15T10:32:15Z\nnext_wake: 2024-01-15T10:33:15Z\n"
                + "error_count: 1\nlast_error: \"flaky: Exit code 3: boom\"\nconfig_hash: "
                + HeartbeatFile.parse(read(file)).configHash() + "\n---\n\n### [HIGH] Flaky\n- **id**: flaky\n"
                + "- **type**: shell\n- **command**: echo boom >&2; exit 3\n- **retry**: 3\n- **status**: failed\n"
                + "- **failed_at**: 2024-01-15T10:32:15Z\n- **error**: Exit code 3: boom\n- **retry_count**: 1/3\n"
                + "- **next_retry**: 2024-01-15T10:33:15Z\n- **definition_hash**: "
                + HeartbeatFile.parse(read(file)).action("flaky").definitionHash() + "\n", read(file));

        clock.advance(Duration.ofSeconds(30));
        assertTrue(Wake.run(file, clock).ran().isEmpty(), "not yet at next_retry");

        clock.set(Instant.parse("2024-01-15T10:33:15Z"));
        WakeResult second = Wake.run(file, clock);
        assertEquals(2, second.failed().get(0).attempt());
        Action a = HeartbeatFile.parse(read(file)).action("flaky");
        assertEquals("2/3", a.field("retry_count"));
        assertEquals("2024-01-15T10:35:15Z", a.field("next_retry"), "second retry waits twice as long");

        clock.set(Instant.parse("2024-01-15T10:35:15Z"));
        WakeResult third = Wake.run(file, clock);
        HeartbeatFile hb = HeartbeatFile.parse(read(file));
        assertEquals("3/3", hb.action("flaky").field("retry_count"));
        assertNull(hb.action("flaky").field("next_retry"));
        assertEquals(3, hb.errorCount());
        assertNull(third.nextWake());
        assertTrue(third.nextHeartbeatWithinSeconds().isEmpty());

        clock.advance(Duration.ofHours(1));
        assertTrue(Wake.run(file, clock).ran().isEmpty(), "a one-shot action that used up its attempts stays failed");
    }

    @Test
    void run_failureThenSuccess_clearsFailureFieldsAndErrorCount() throws Exception {
        Path marker = dir.resolve("ok");
        Path file = write("---\nversion: 1\n---\n### [HIGH] Needs marker\n- **id**: m\n- **type**: shell\n"
                + "- **command**: test -f ok\n- **retry**: 2\n");
        Wake.run(file, clock);
        Files.writeString(marker, "");
        clock.advance(Duration.ofMinutes(1));
        WakeResult r = Wake.run(file, clock);
        assertEquals(1, r.succeeded().size());
        HeartbeatFile hb = HeartbeatFile.parse(read(file));
        Action a = hb.action("m");
        assertEquals(ActionStatus.COMPLETED, a.status());
        assertNull(a.field("failed_at"));
        assertNull(a.field("retry_count"));
        assertEquals(0, hb.errorCount());
        assertEquals("idle", hb.status());
        assertEquals("m: Exit code 1", hb.lastError(), "last_error keeps the last message after recovery");
    }

    @Test
    void run_shellPastTimeout_killsItAndFailsWithTimeout() throws Exception {
        Path file = write("---\nversion: 1\n---\n### [LOW] Slow\n- **id**: slow\n- **type**: shell\n"
                + "- **command**: sleep 20\n- **timeout**: 300ms\n");
        long start = System.nanoTime();
        WakeResult r = Wake.run(file, clock);
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toSeconds() < 10);
        assertEquals("Timed out after 300ms", r.failed().get(0).message());
        assertEquals("Timed out after 300ms", HeartbeatFile.parse(read(file)).action("slow").field("error"));
    }

    @Test
    void run_dependencyCompletesEarlierInWake_dependentRunsInSameWake() throws Exception {
        Path file = write("---\nversion: 1\n---\n### [HIGH] First\n- **id**: first\n- **type**: shell\n- **command**: true\n\n"
                + "### [LOW] Second\n- **id**: second\n- **type**: shell\n- **command**: true\n- **depends_on**: first\n");
        WakeResult r = Wake.run(file, clock);
        assertEquals(List.of("first", "second"), r.ran().stream().map(WakeResult.Attempt::actionId).toList());
    }

    @Test
    void run_criticalFails_holdsBackTheRest() throws Exception {
        Path file = write("---\nversion: 1\n---\n### [CRITICAL] Gate\n- **id**: gate\n- **type**: shell\n- **command**: false\n\n"
                + "### [HIGH] After\n- **id**: after\n- **type**: shell\n- **command**: true\n");
        WakeResult r = Wake.run(file, clock);
        assertEquals(List.of("gate"), r.ran().stream().map(WakeResult.Attempt::actionId).toList());
        assertEquals(List.of(new WakeResult.HeldBack("after", Evaluator.Verdict.BLOCKED,
                "CRITICAL action gate failed earlier in this wake")), r.heldBack());
        assertEquals(ActionStatus.PENDING, HeartbeatFile.parse(read(file)).action("after").status());
    }

    @Test
    void run_conditionFalse_skipsWithoutWriting() throws Exception {
        Path file = write("---\nversion: 1\n---\n### [LOW] Cond\n- **id**: c\n- **type**: shell\n- **command**: true\n"
                + "- **condition**: env:LIFELINE_TEST_FLAG\n");
        WakeResult r = Wake.run(file, clock, WakeOptions.defaults().withEnv(Map.<String, String>of()::get));
        assertTrue(r.ran().isEmpty());
        assertEquals(Evaluator.Verdict.SKIPPED, r.heldBack().get(0).verdict());
        WakeResult r2 = Wake.run(file, clock, WakeOptions.defaults().withEnv(Map.of("LIFELINE_TEST_FLAG", "1")::get));
        assertEquals(1, r2.succeeded().size());
    }

    @Test
    void run_onChange_recordsWatchedHashAndRunsAgainOnlyAfterChange() throws Exception {
        Files.writeString(dir.resolve("agent.yaml"), "v: 1\n");
        Path file = write("---\nversion: 1\n---\n### [LOW] Reload\n- **id**: reload\n- **type**: shell\n- **command**: true\n"
                + "- **schedule**: on_change:agent.yaml\n");
        assertEquals(1, Wake.run(file, clock).ran().size());
        assertNotNull(HeartbeatFile.parse(read(file)).action("reload").field("watched_hash"));
        assertEquals(0, Wake.run(file, clock).ran().size());
        Files.writeString(dir.resolve("agent.yaml"), "v: 2\n");
        assertEquals(1, Wake.run(file, clock).ran().size());
    }

    @Test
    void run_unknownActionType_failsThatActionOnly() throws Exception {
        Path file = write("---\nversion: 1\n---\n### [LOW] Mail\n- **id**: mail\n- **type**: email\n");
        WakeResult r = Wake.run(file, clock);
        assertEquals("unknown action type 'email'; this runner knows http_check, shell", r.failed().get(0).message());
    }

    @Test
    void run_malformedFile_throwsNamingLineAndLeavesFileUntouched() throws Exception {
        String text = "---\nversion: 1\n---\n\n### [HIGH] Check\n- **id**: c\n- **type**: shell\n- **retry**: lots\n";
        Path file = write(text);
        byte[] before = Files.readAllBytes(file);
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> Wake.run(file, clock));
        assertEquals(8, e.line());
        assertTrue(e.getMessage().startsWith("line 8: retry must be"), e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(file));
        assertEquals(List.of(), history());
        assertFalse(Files.exists(dir.resolve("heartbeat.md.lock")));
    }

    @Test
    void run_corruptFile_restoresLatestValidBackupAndSaysSo() throws Exception {
        Path file = write(Fixtures.seed("seed-minimal.md"));
        Wake.run(file, clock);
        String afterFirst = read(file);
        clock.advance(Duration.ofMinutes(5));
        Wake.run(file, clock);
        read(file);
        // A bad backup that is newer than the good ones must be passed over.
        Files.writeString(dir.resolve("history/heartbeat-20240115-103800.md"), "---\nversion: 1\n");
        Files.write(file, new byte[] {'-', '-', '-', '\n', 'v', 'e', 'r', 0, 0, 0});
        clock.advance(Duration.ofMinutes(10));

        WakeResult r = Wake.run(file, clock);

        assertNotNull(r.recovery());
        assertTrue(r.recovery().startsWith("heartbeat.md was corrupt (line 2: contains a NUL byte"), r.recovery());
        assertTrue(r.recovery().contains("restored from history/heartbeat-20240115-103715.md"), r.recovery());
        assertTrue(r.recovery().contains("history/corrupt-20240115-104715.md"), r.recovery());
        assertEquals(afterFirst, read(dir.resolve("history/heartbeat-20240115-104715.md")),
                "the newest valid backup (the file as the second wake found it) is restored, backed up and run on");
        assertTrue(Files.exists(dir.resolve("history/corrupt-20240115-104715.md")));
        assertEquals(Instant.parse("2024-01-15T10:47:15Z"), HeartbeatFile.parse(read(file)).lastWake());
    }

    @Test
    void run_corruptFileWithoutBackup_throwsAndLeavesFileUntouched() throws Exception {
        Path file = write("---\nversion: 1\nstatus: idle\n");
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> Wake.run(file, clock));
        assertTrue(e.corrupt());
        assertTrue(e.getMessage().contains("no valid backup"), e.getMessage());
        assertEquals("---\nversion: 1\nstatus: idle\n", read(file));
    }

    @Test
    void run_notUtf8_isCorruptNamingLine() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Files.write(file, new byte[] {'-', '-', '-', '\n', 'v', ':', (byte) 0xC3, '\n'});
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> Wake.run(file, clock));
        assertEquals(2, e.line());
        assertTrue(e.corrupt());
    }

    @Test
    void run_heartbeatCallbackThrows_fileStillWrittenAndErrorReported() throws Exception {
        Path file = write(Fixtures.seed("seed-minimal.md"));
        WakeResult r = Wake.run(file, clock, WakeOptions.defaults().withHeartbeat(s -> {
            throw new IllegalStateException("server unreachable");
        }));
        assertEquals("server unreachable", r.heartbeatError());
        assertEquals(ActionStatus.COMPLETED, HeartbeatFile.parse(read(file)).action("hello-001").status());
    }

    @Test
    void run_manyWakes_keepsOnlyNewestBackups() throws Exception {
        Path file = write(Fixtures.seed("seed-minimal.md"));
        for (int i = 0; i < 5; i++) {
            Wake.run(file, clock, WakeOptions.defaults().withKeepBackups(3));
        }
        List<Path> h = history();
        assertEquals(3, h.size());
        assertEquals(List.of("heartbeat-20240115-103215-2.md", "heartbeat-20240115-103215-3.md",
                "heartbeat-20240115-103215-4.md"), h.stream().map(p -> p.getFileName().toString()).toList());
    }
}
