package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Coverage-guided fuzzing of {@link Schedules#parse} (Jazzer). In a normal build the target runs once per file of
 * its regression corpus, {@code src/test/resources/io/lifeline/schedule/SchedulesFuzzTestInputs/<method>/};
 * with {@code JAZZER_FUZZ=1} it fuzzes (README, "Fuzzing").
 *
 * <p>The input is UTF-8 text: the expression, then optionally a NUL byte and the time zone.
 */
@Tag("unit")
class SchedulesFuzzTest {
    private static final Instant[] PROBES = {Instant.parse("2026-03-29T00:59:59Z"), Instant.parse("2026-10-25T00:30:00Z"),
            Instant.parse("2000-02-28T23:59:00Z"), Instant.parse("2099-12-31T23:59:59Z"), Instant.MIN, Instant.MAX,
            Schedule.CALENDAR_END.minusSeconds(1), Instant.MAX.minusSeconds(3600)};

    /**
     * Any text is either a schedule (whose canonical form parses to an equal schedule and whose next times keep
     * increasing) or {@link InvalidScheduleException} with a one-line sentence. Anything else thrown is a finding.
     */
    @FuzzTest(maxDuration = "2m")
    void parse_anyText_givesAScheduleOrAPlainInvalidSchedule(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        int nul = text.indexOf('\0');
        String expression = nul < 0 ? text : text.substring(0, nul);
        String zone = nul < 0 ? null : text.substring(nul + 1);
        Schedule schedule;
        try {
            schedule = Schedules.parse(expression, zone);
        } catch (InvalidScheduleException e) {
            assertPlainSentence(e.getMessage());
            return;
        }
        assertEquals(schedule.expression(), Schedules.parse(schedule.expression(), schedule.zone().getId()).expression(),
                "the canonical form parses to itself");
        for (Instant probe : PROBES) {
            Instant next = schedule.nextAfter(probe);
            if (next != null) {
                assertTrue(next.isAfter(probe), schedule + " after " + probe + " gave " + next);
                Instant after = schedule.nextAfter(next);
                assertTrue(after == null || after.isAfter(next), schedule + " after " + next + " gave " + after);
            }
        }
    }

    /** The inputs Jazzer found that cron-utils fails on with ArrayIndexOutOfBoundsException. */
    @ParameterizedTest
    @ValueSource(strings = {"cron:9-17/ * * * *", "cron:0| 1|2 * * *", "cron:*/ * * * *", "cron:0 9-17/ * * *"})
    void parse_cronTheLibraryFailsOn_isInvalidScheduleWithAPlainMessage(String expression) {
        InvalidScheduleException e = assertThrows(InvalidScheduleException.class, () -> Schedules.parse(expression, null));

        assertTrue(e.getMessage().startsWith("invalid cron expression"), e.getMessage());
        assertFalse(e.getMessage().contains("Exception"), "no exception names: " + e.getMessage());
        assertPlainSentence(e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"at:+10000-01-01T00:00:00Z", "at:-0001-12-31T23:59:59Z", "at:+999999999-12-31T23:59:59Z"})
    void parse_atOutsideTheYears0000To9999_isInvalidSchedule(String expression) {
        InvalidScheduleException e = assertThrows(InvalidScheduleException.class, () -> Schedules.parse(expression, null));

        assertTrue(e.getMessage().contains("outside the years 0000 to 9999"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"every:7d", "daily:02:00", "hourly", "cron:0 0 29 2 *"})
    void nextAfter_atTheEndsOfTime_isNullRatherThanAnException(String expression) {
        Schedule schedule = Schedules.parse(expression, "Europe/Berlin");

        assertNull(schedule.nextAfter(Instant.MAX));
        assertNull(schedule.nextAfter(Instant.MAX.minusSeconds(60)));
        Instant fromTheStart = schedule.nextAfter(Instant.MIN);
        assertTrue(fromTheStart == null || fromTheStart.isAfter(Instant.MIN), String.valueOf(fromTheStart));
    }

    private static void assertPlainSentence(String message) {
        assertNotNull(message);
        assertFalse(message.isBlank(), "a reason is given");
        assertTrue(message.length() <= 400, "a short reason: " + message);
        // codePoints() leaves an unpaired surrogate as a code point of type SURROGATE.
        assertFalse(message.codePoints().anyMatch(c -> Character.isISOControl(c) || c == '\u2028' || c == '\u2029'
                || Character.getType(c) == Character.SURROGATE), "one printable line: " + message);
    }
}
