package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Coverage-guided fuzzing of heartbeat.md (Jazzer): parse, render, and every write-back {@link Wake} makes. In a
 * normal build each target runs once per file of its regression corpus,
 * {@code src/test/resources/io/lifeline/client/heartbeatmd/HeartbeatFileFuzzTestInputs/<method>/}; with
 * {@code JAZZER_FUZZ=1} it fuzzes (README, "Fuzzing"). The {@code @Test}s are known hostile inputs, spelled out.
 */
@Tag("unit")
class HeartbeatFileFuzzTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    /**
     * Where the fuzz targets make their folders: memory (/dev/shm) where there is one, since every wake syncs the
     * file and its backup to disk, which would make fuzzing a hundred times slower; else the temporary folder.
     */
    private static final Path SCRATCH = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
            ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));

    /** The file the hostile-output target wakes: a retried action, and a [LOW] one the budget defers. */
    private static final String HOSTILE_FILE = """
            ---
            version: 1
            ---
            # Agent tasks

            ### [HIGH] Hostile output
            - **id**: hostile
            - **type**: scripted
            - **retry**: 3

            ### [LOW] Too long for the budget
            - **id**: later
            - **type**: scripted
            - **timeout**: 1h
            """;

    /**
     * Any text either parses, renders back byte for byte and answers every accessor, or is refused with
     * {@link HeartbeatParseException} naming a line. Anything else thrown (a StackOverflowError, a
     * NumberFormatException) is a finding.
     */
    @FuzzTest(maxDuration = "2m")
    void parse_anyText_rendersItBackByteForByteOrNamesALine(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        HeartbeatFile hb;
        try {
            hb = HeartbeatFile.parse(text);
        } catch (HeartbeatParseException e) {
            assertTrue(e.line() >= 1, e.getMessage());
            assertFalse(e.reason().isBlank(), "a reason is given");
            return;
        }
        assertEquals(text, hb.render(), "an unchanged file renders byte for byte");
        hb.version();
        hb.status();
        hb.lastError();
        assertTrue(hb.errorCount() >= 0);
        hb.lastWake();
        hb.nextWake();
        assertEquals(12, hb.computeConfigHash().length());
        for (Action a : hb.actions()) {
            assertTrue(a.maxAttempts() >= 1);
            assertTrue(Evaluator.attemptsSoFar(a) >= 0);
            assertNotNull(a.timeout());
            a.lastRun();
            a.dependsOn();
            if (a.condition() != null) {
                assertNotNull(a.condition().toString());
            }
        }
    }

    /**
     * Any file that parses, woken with runners that fail or succeed with any text, is written so that it parses
     * again, the next wake reads it without calling it corrupt, and a file that is refused is left as it was.
     * Input: the file, then a NUL byte, then the runners' answer (first byte odd: success; the rest: the message).
     */
    @FuzzTest(maxDuration = "2m")
    void wake_anyFileAnyOutcome_writesAFileTheNextWakeReads(byte[] data) throws IOException {
        int nul = indexOf(data, (byte) 0);
        String text = new String(data, 0, nul < 0 ? data.length : nul, StandardCharsets.UTF_8);
        boolean success = nul >= 0 && nul + 1 < data.length && (data[nul + 1] & 1) == 1;
        String message = nul < 0 || nul + 2 > data.length ? ""
                : new String(data, nul + 2, data.length - nul - 2, StandardCharsets.UTF_8);
        try {
            HeartbeatFile.parse(text);
        } catch (HeartbeatParseException e) {
            return; // parse_anyText covers refusals; a wake of a refused file is run by the tests of Wake
        }
        Path dir = Files.createTempDirectory(SCRATCH, "hb-fuzz");
        try {
            Path file = dir.resolve("heartbeat.md");
            Files.writeString(file, text, StandardCharsets.UTF_8);
            ActionRunner runner = (action, baseDir) -> new ActionRunner.Outcome(success, message, Duration.ofMillis(1200));
            MutableClock clock = new MutableClock(T0);
            WakeOptions options = options(Map.of("shell", runner, "http_check", runner, "scripted", runner));

            Wake.run(file, clock, options);
            String written = Files.readString(file, StandardCharsets.UTF_8);
            HeartbeatFile again = HeartbeatFile.parse(written);
            assertEquals(written, again.render(), "the written file renders back byte for byte");

            clock.advance(Duration.ofHours(2));
            WakeResult next = Wake.run(file, clock, options);
            assertNull(next.recovery(), "the next wake reads what the last one wrote");
            assertEquals(List.of(), corruptCopies(dir));
            HeartbeatFile.parse(Files.readString(file, StandardCharsets.UTF_8));
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * A runner whose answer holds anything (colour codes, BEL, DEL, NEL, line and paragraph separators, quotes,
     * backslashes, unpaired surrogates, 10 KiB): the failure is written as one clean line, retry_count and
     * next_retry are kept, the [LOW] action stays deferred, and each next wake reads the file and retries until
     * the action succeeds with the same text as its result.
     */
    @FuzzTest(maxDuration = "2m")
    void wake_withHostileRunnerOutput_writesAFileTheNextWakeReadsAndRetries(byte[] data) throws IOException {
        String message = new String(data, StandardCharsets.UTF_8);
        Path dir = Files.createTempDirectory(SCRATCH, "hb-fuzz");
        try {
            assertHostileOutputRoundTrips(dir, message);
        } finally {
            deleteTree(dir);
        }
    }

    /** Known hostile inputs, spelled out. */
    @Nested
    class KnownHostileInputs {
        @Test
        void wake_errorTextWithColourCodesAndSeparators_writesAFileTheNextWakeReadsAndRetries(@TempDir Path dir)
                throws IOException {
            String colours = "\u001B[31mError:\u001B[0m disk \u0007full\u007F\u0085next\u2028line\u2029para \"q\" \\";

            assertHostileOutputRoundTrips(dir, colours);

            HeartbeatFile hb = HeartbeatFile.parse(Files.readString(dir.resolve("heartbeat.md")));
            assertEquals("Error: disk full next line para \"q\" \\", hb.action("hostile").field("result"));
        }

        @Test
        void wake_realShellPrintingColourCodesAndSeparators_nextWakeReadsTheFileAndRetries(@TempDir Path dir)
                throws IOException {
            Path file = dir.resolve("heartbeat.md");
            // printf in sh: \033 ESC, \007 BEL, \177 DEL, \302\205 NEL, \342\200\250 U+2028, \342\200\251 U+2029.
            Files.writeString(file, """
                    ---
                    version: 1
                    ---
                    ### [HIGH] Colourful
                    - **id**: colourful
                    - **type**: shell
                    - **command**: printf '\\033[1;31mFAILED\\033[0m\\007 \\177disk\\302\\205full\\342\\200\\250see\\342\\200\\251log'; exit 3
                    - **retry**: 3
                    """);
            MutableClock clock = new MutableClock(T0);

            WakeResult first = Wake.run(file, clock, WakeOptions.defaults().withEnv(name -> null));
            HeartbeatFile afterFirst = HeartbeatFile.parse(Files.readString(file));
            Action a = afterFirst.action("colourful");
            assertEquals("Exit code 3: FAILED disk full see log", a.field("error"));
            assertEquals("1/3", a.field("retry_count"));
            assertEquals(first.wokeAt().plus(Duration.ofMinutes(1)), Instant.parse(a.field("next_retry")));
            assertEquals("colourful: Exit code 3: FAILED disk full see log", afterFirst.lastError());

            clock.advance(Duration.ofSeconds(61));
            WakeResult second = Wake.run(file, clock, WakeOptions.defaults().withEnv(name -> null));
            assertNull(second.recovery(), "not called corrupt");
            assertEquals(1, second.ran().size());
            assertEquals(2, second.ran().get(0).attempt());
            assertEquals("2/3", HeartbeatFile.parse(Files.readString(file)).action("colourful").field("retry_count"));
            assertEquals(List.of(), corruptCopies(dir));
        }

        @Test
        void parse_errorCountPastTheLimit_isAParseErrorNamingTheLine() {
            HeartbeatParseException e = assertThrows(HeartbeatParseException.class,
                    () -> HeartbeatFile.parse("---\nversion: 1\nerror_count: 2147483648\n---\n"));

            assertEquals(3, e.line());
            assertFalse(e.corrupt(), "a mistake to report, not a file to restore");
            assertTrue(e.reason().contains("from 0 to 999999999"), e.getMessage());
        }

        @Test
        void wake_errorCountAtTheLimit_failingWakeKeepsItThere(@TempDir Path dir) throws IOException {
            Path file = dir.resolve("heartbeat.md");
            Files.writeString(file, "---\nversion: 1\nerror_count: 999999999\n---\n### [HIGH] A\n- **id**: a\n"
                    + "- **type**: scripted\n");
            ActionRunner fails = (action, baseDir) -> new ActionRunner.Outcome(false, "no", Duration.ZERO);

            Wake.run(file, new MutableClock(T0), options(Map.of("scripted", fails)));

            assertEquals(HeartbeatFile.MAX_ERROR_COUNT, HeartbeatFile.parse(Files.readString(file)).errorCount());
        }

        @Test
        void parse_conditionNestedFiveThousandNotsDeep_isAClearParseError() {
            String condition = "not:".repeat(5000) + "always";
            HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(
                    "---\nversion: 1\n---\n### [HIGH] A\n- **id**: a\n- **type**: shell\n- **condition**: " + condition + "\n"));

            assertEquals(7, e.line());
            assertTrue(e.reason().contains("nests not: more than 16 deep"), e.getMessage());
        }

        @Test
        void parse_conditionNestedSixteenDeep_isAccepted() {
            HeartbeatFile hb = HeartbeatFile.parse("---\nversion: 1\n---\n### [HIGH] A\n- **id**: a\n- **type**: shell\n"
                    + "- **condition**: " + "not:".repeat(16) + "always\n");

            assertTrue(hb.action("a").condition().holds(new Condition.Context(Path.of("."), name -> null)));
        }

        @Test
        void parse_fieldHoldingLineSeparators_keepsTheRestOfTheBlock() {
            HeartbeatFile hb = HeartbeatFile.parse("---\nversion: 1\n---\n### [HIGH] A\n- **id**: a\n- **type**: shell\n"
                    + "- **error**: one\u2028two\u0085three\u2029four\n- **retry_count**: 1/3\n"
                    + "- **next_retry**: 2026-03-01T12:01:00Z\n");

            assertEquals("1/3", hb.action("a").field("retry_count"));
            assertEquals("2026-03-01T12:01:00Z", hb.action("a").field("next_retry"));
        }

        @Test
        void parse_retryCountPastThreeDigits_isAParseError() {
            HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(
                    "---\nversion: 1\n---\n### [HIGH] A\n- **id**: a\n- **type**: shell\n- **status**: failed\n"
                            + "- **retry_count**: 99999999999/3\n"));

            assertEquals(8, e.line());
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private static void assertHostileOutputRoundTrips(Path dir, String message) throws IOException {
        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, HOSTILE_FILE, StandardCharsets.UTF_8);
        Deque<Boolean> outcomes = new ArrayDeque<>(List.of(false, false, true));
        ActionRunner scripted = (action, baseDir) -> new ActionRunner.Outcome(
                !action.id().equals("hostile") || outcomes.pop(), message, Duration.ofMillis(1500));
        MutableClock clock = new MutableClock(T0);
        WakeOptions options = options(Map.of("scripted", scripted)).withBudget(Duration.ofMinutes(10));
        String clean = ActionRunner.oneLine(message);

        for (int attempt = 1; attempt <= 3; attempt++) {
            WakeResult r = Wake.run(file, clock, options);
            assertNull(r.recovery(), "wake " + attempt + " reads what the last one wrote");
            assertEquals(List.of(new WakeResult.Attempt("hostile", Priority.HIGH, attempt == 3, clean, attempt, 3)),
                    r.ran(), "wake " + attempt + " retries the action");
            String written = Files.readString(file, StandardCharsets.UTF_8);
            assertOneCleanLinePerLine(written);
            HeartbeatFile hb = HeartbeatFile.parse(written);
            assertEquals(written, hb.render(), "the written file renders back byte for byte");
            Action hostile = hb.action("hostile");
            Action later = hb.action("later");
            assertTrue(later.field("deferred").startsWith("deferred: not enough of the wake's time budget left"),
                    later.field("deferred"));
            if (attempt < 3) {
                assertEquals(ActionStatus.FAILED, hostile.status());
                assertEquals(clean, hostile.field("error"));
                assertEquals(attempt + "/3", hostile.field("retry_count"));
                Instant nextRetry = Instant.parse(hostile.field("next_retry"));
                assertEquals(r.wokeAt().plus(Duration.ofMinutes(1).multipliedBy(1L << (attempt - 1))), nextRetry);
                assertEquals(TextLine.oneLine("hostile: " + clean), hb.lastError());
                assertEquals(attempt, hb.errorCount());
                assertEquals(HeartbeatFile.STATUS_ERROR, hb.status());
                clock.set(nextRetry.plusSeconds(1));
            } else {
                assertEquals(ActionStatus.COMPLETED, hostile.status());
                assertEquals(clean, hostile.field("result"));
                assertNull(hostile.field("retry_count"));
                assertNull(hostile.field("next_retry"));
                assertEquals(0, hb.errorCount());
            }
        }
        assertEquals(List.of(), corruptCopies(dir));
    }

    private static WakeOptions options(Map<String, ActionRunner> runners) {
        return WakeOptions.defaults().withRunners(runners).withEnv(name -> null).withLockTimeout(Duration.ofSeconds(5))
                .withKeepBackups(3);
    }

    /** Every line of a written file is one line to any reader: no control character or separator but the \n. */
    private static void assertOneCleanLinePerLine(String text) {
        for (String line : text.split("\n", -1)) {
            assertFalse(line.codePoints().anyMatch(c -> (Character.isISOControl(c) && c != '\t') || c == 0x2028
                    || c == 0x2029 || Character.getType(c) == Character.SURROGATE), "a clean line: " + line);
        }
    }

    private static List<Path> corruptCopies(Path dir) throws IOException {
        Path history = dir.resolve("history");
        if (!Files.isDirectory(history)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(history)) {
            return files.filter(p -> p.getFileName().toString().startsWith("corrupt-")).toList();
        }
    }

    private static int indexOf(byte[] data, byte b) {
        for (int i = 0; i < data.length; i++) {
            if (data[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
