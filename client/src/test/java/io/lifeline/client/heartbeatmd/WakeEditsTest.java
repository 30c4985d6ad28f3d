package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * heartbeat.md as a person meets it: a file in, a wake, the file out. next_wake never passes a due retry,
 * an unknown field is a mistake named with its line, an edited action or one set back to pending runs afresh, what
 * did not run is listed with why and when, and a rewrite keeps the file's permissions.
 */
@Tag("unit")
class WakeEditsTest {
    private static final Instant T0 = Instant.parse("2024-01-15T10:00:00Z");

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);

    private Path write(String text) throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, text);
        return file;
    }

    private String read(Path file) throws Exception {
        return Files.readString(file);
    }

    /** A runner for type {@code slow}: takes {@code took} of the test clock, then succeeds. */
    private WakeOptions slowTakes(Duration took) {
        ActionRunner slow = (a, base) -> {
            clock.advance(took);
            return new ActionRunner.Outcome(true, "done", took);
        };
        Map<String, ActionRunner> runners = new HashMap<>(WakeOptions.defaults().runners());
        runners.put("slow", slow);
        return WakeOptions.defaults().withRunners(runners);
    }

    @Test
    void run_retryFallingDueDuringTheWake_makesNextWakeTheWakesEnd_notALaterSlotOrNone() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n"
                + "### [HIGH] Flaky\n- **id**: flaky\n- **type**: shell\n- **command**: exit 3\n- **retry**: 3\n"
                + "- **retry_delay**: 10s\n\n"
                + "### [MEDIUM] Long job\n- **id**: long\n- **type**: slow\n\n"
                + "### [LOW] Hourly report\n- **id**: report\n- **type**: shell\n- **command**: true\n"
                + "- **schedule**: cron:0 * * * *\n");

        WakeResult r = Wake.run(file, clock, slowTakes(Duration.ofMinutes(1)));

        HeartbeatFile out = HeartbeatFile.parse(read(file));
        assertEquals("2024-01-15T10:00:10Z", out.action("flaky").field("next_retry"), "the retry fell due mid-wake");
        Instant end = T0.plus(Duration.ofMinutes(1));
        assertEquals(end, r.nextWake(), "not the 11:00 slot, and not none");
        assertTrue(read(file).contains("next_wake: " + end + "\n"), read(file));
        assertEquals(1L, r.nextHeartbeatWithinSeconds().getAsLong());
    }

    @Test
    void run_withNothingDueDuringTheWake_keepsTheEarliestLaterDue() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n### [HIGH] Flaky\n- **id**: flaky\n- **type**: shell\n"
                + "- **command**: exit 3\n- **retry**: 3\n- **retry_delay**: 10m\n\n### [LOW] Hourly report\n"
                + "- **id**: report\n- **type**: shell\n- **command**: true\n- **schedule**: cron:0 * * * *\n");
        WakeResult r = Wake.run(file, clock);
        assertEquals(Instant.parse("2024-01-15T10:10:00Z"), r.nextWake(), "the retry, before the 11:00 slot");
    }

    @Test
    void parse_unknownActionFields_areMistakesNamingTheLineAndTheFieldMeant_andLeaveTheFileAlone() throws Exception {
        String url = "---\nversion: 1\n---\n\n### [CRITICAL] Check API\n- **id**: api\n- **type**: http_check\n"
                + "- **url**: http://127.0.0.1:1/health\n";
        Path file = write(url);
        HeartbeatParseException e = assertThrows(HeartbeatParseException.class, () -> Wake.run(file, clock));
        assertEquals(8, e.line());
        assertTrue(e.getMessage().contains("unknown field 'url' in action 'api'; did you mean 'target'?"),
                e.getMessage());
        assertEquals(url, read(file), "untouched");

        HeartbeatParseException typo = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(
                "---\nversion: 1\n---\n### [HIGH] Build\n- **id**: b\n- **type**: shell\n- **comand**: make\n"));
        assertEquals(7, typo.line());
        assertTrue(typo.getMessage().contains("unknown field 'comand' in action 'b'; did you mean 'command'?"),
                typo.getMessage());

        HeartbeatParseException other = assertThrows(HeartbeatParseException.class, () -> HeartbeatFile.parse(
                "---\nversion: 1\n---\n### [HIGH] Build\n- **id**: b\n- **type**: shell\n- **flavour**: mint\n"));
        assertTrue(other.getMessage().contains("unknown field 'flavour' in action 'b' (fields: id, type"),
                other.getMessage());
        // What the runner writes reads back, and a person's description is allowed.
        HeartbeatFile.parse("---\nversion: 1\n---\n### [HIGH] Build\n- **id**: b\n- **type**: shell\n"
                + "- **description**: builds it\n- **deferred**: x\n- **watched_hash**: y\n- **definition_hash**: z\n");
    }

    @Test
    void run_failedActionFixedByAnEdit_runsAgainAtOnce_asAFreshChain_andTheFailureFieldsGo() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n### [HIGH] Build\n- **id**: build\n- **type**: shell\n"
                + "- **command**: exit 3\n- **status**: pending\n");
        assertEquals(1, Wake.run(file, clock).failed().size());
        clock.advance(Duration.ofMinutes(5));
        WakeResult stuck = Wake.run(file, clock);
        assertTrue(stuck.ran().isEmpty());
        assertEquals(List.of(new WakeResult.NotRun("build", "failed, no attempts left (1/1); fix it (an edited action "
                + "runs again) or set status: pending to run it again", null)), stuck.notRun());

        Files.writeString(file, read(file).replace("- **command**: exit 3", "- **command**: echo fixed"));
        clock.advance(Duration.ofMinutes(1));
        WakeResult fixed = Wake.run(file, clock);

        assertEquals(List.of(new WakeResult.Attempt("build", Priority.HIGH, true, "OK (exit 0)", 1, 1)), fixed.ran());
        Action a = HeartbeatFile.parse(read(file)).action("build");
        assertEquals(ActionStatus.COMPLETED, a.status());
        for (String gone : List.of("failed_at", "error", "retry_count", "next_retry")) {
            assertNull(a.field(gone), gone);
        }
        assertEquals(a.definitionHash(), a.field("definition_hash"));
        clock.advance(Duration.ofMinutes(1));
        assertTrue(Wake.run(file, clock).ran().isEmpty(), "and then, a one-shot action done, it rests");
    }

    @Test
    void run_statusSetBackToPending_runsWhenDue_evenWithTheOldResultStillThere() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n### [HIGH] Once\n- **id**: once\n- **type**: shell\n"
                + "- **command**: exit 3\n- **retry**: 2\n\n### [MEDIUM] Hourly\n- **id**: hourly\n- **type**: shell\n"
                + "- **command**: echo hi\n- **schedule**: every:1h\n");
        Wake.run(file, clock);
        clock.advance(Duration.ofMinutes(1));
        Wake.run(file, clock); // the second and last attempt of 'once'
        assertEquals("2/2", HeartbeatFile.parse(read(file)).action("once").field("retry_count"));
        clock.advance(Duration.ofMinutes(1));
        assertTrue(Wake.run(file, clock).ran().isEmpty());

        // A person sets both back to pending, leaving the old results in place.
        Files.writeString(file, read(file).replace("- **status**: failed", "- **status**: pending")
                .replace("- **status**: completed", "- **status**: pending"));
        clock.advance(Duration.ofMinutes(1));
        WakeResult r = Wake.run(file, clock);

        assertEquals(List.of("once", "hourly"), r.ran().stream().map(WakeResult.Attempt::actionId).toList());
        assertEquals(1, r.ran().get(0).attempt(), "a fresh chain of attempts");
        assertEquals("1/2", HeartbeatFile.parse(read(file)).action("once").field("retry_count"));
    }

    @Test
    void run_listsWhatDidNotRun_withWhyAndWhenItNextWill() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n### [HIGH] Hourly\n- **id**: hourly\n- **type**: shell\n"
                + "- **command**: echo hi\n- **schedule**: every:1h\n\n### [HIGH] Flaky\n- **id**: flaky\n"
                + "- **type**: shell\n- **command**: exit 3\n- **retry**: 3\n\n### [MEDIUM] On start\n- **id**: boot\n"
                + "- **type**: shell\n- **command**: true\n- **schedule**: startup\n");
        Wake.run(file, clock);
        clock.advance(Duration.ofSeconds(10));

        WakeResult r = Wake.run(file, clock);

        assertTrue(r.ran().isEmpty(), r.toString());
        assertEquals(List.of(
                new WakeResult.NotRun("hourly", "not due; next at 2024-01-15T11:00:00Z",
                        Instant.parse("2024-01-15T11:00:00Z")),
                new WakeResult.NotRun("flaky", "retry 2/3 due at 2024-01-15T10:01:00Z",
                        Instant.parse("2024-01-15T10:01:00Z")),
                new WakeResult.NotRun("boot", "runs on a startup wake (--startup)", null)), r.notRun());
    }

    @Test
    void run_rewritesTheFile_keepingItsPermissions() throws Exception {
        Path file = write("---\nversion: 1\n---\n\n### [HIGH] Hello\n- **id**: hello\n- **type**: shell\n"
                + "- **command**: echo hi\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        Wake.run(file, clock);
        assertTrue(read(file).contains("- **status**: completed"), read(file));
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }
}
