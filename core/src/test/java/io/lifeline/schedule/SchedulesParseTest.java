package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

@Tag("unit")
class SchedulesParseTest {

    private static final Instant T = Instant.parse("2026-05-04T10:17:23Z");
    private static final String FORMS =
            "every:<n><s|m|h|d>, cron:<5 fields>, daily:HH:MM, hourly or at:<ISO-8601 instant>";

    @ParameterizedTest(name = "{0} = {1} s")
    @CsvSource({
        "every:1s, 1", "every:30s, 30", "every:5m, 300", "every:1h, 3600", "every:1d, 86400",
        "every:604800s, 604800", "every:10080m, 604800", "every:168h, 604800", "every:7d, 604800"})
    void parse_every_nextAfterIsIntervalAfterT(String expression, long seconds) {
        Schedule schedule = Schedules.parse(expression, null);

        assertEquals(expression, schedule.expression());
        assertEquals(T.plusSeconds(seconds), schedule.nextAfter(T));
    }

    @Test
    void parse_everyWithLeadingZerosAndSpaces_canonicalisesExpression() {
        Schedule schedule = Schedules.parse("  every:05m ", null);

        assertEquals("every:5m", schedule.expression());
        assertEquals(T.plus(Duration.ofMinutes(5)), schedule.nextAfter(T));
    }

    @Test
    void parse_cron_evaluatesUnixExpression() {
        Schedule schedule = Schedules.parse("cron:*/5 * * * *", null);

        assertEquals("cron:*/5 * * * *", schedule.expression());
        assertEquals(Instant.parse("2026-05-04T10:20:00Z"), schedule.nextAfter(T));
        assertEquals(Instant.parse("2026-05-04T10:25:00Z"), schedule.nextAfter(Instant.parse("2026-05-04T10:20:00Z")));
    }

    @Test
    void parse_cronWithExtraSpaces_canonicalisesToSingleSpaces() {
        assertEquals("cron:0 2 * * *", Schedules.parse("cron:  0   2 *\t* * ", null).expression());
    }

    @Test
    void parse_cronWithNamesAndSundaySeven_accepted() {
        Schedule weekdays = Schedules.parse("cron:0 9 * * MON-FRI", null);
        Schedule sunday = Schedules.parse("cron:0 0 * * 7", null);

        // 2026-05-08 is a Friday, 2026-05-10 a Sunday.
        assertEquals(Instant.parse("2026-05-11T09:00:00Z"), weekdays.nextAfter(Instant.parse("2026-05-08T09:00:00Z")));
        assertEquals(Instant.parse("2026-05-10T00:00:00Z"), sunday.nextAfter(T));
    }

    @Test
    void parse_cronOnTwentyNinthFebruary_runsInLeapYearsOnly() {
        Schedule schedule = Schedules.parse("cron:0 0 29 2 *", null);

        assertEquals(Instant.parse("2028-02-29T00:00:00Z"), schedule.nextAfter(T));
    }

    @Test
    void parse_daily_evaluatesWallTime() {
        Schedule schedule = Schedules.parse("daily:02:00", null);

        assertEquals("daily:02:00", schedule.expression());
        assertEquals(Instant.parse("2026-05-05T02:00:00Z"), schedule.nextAfter(T));
    }

    @Test
    void parse_hourly_evaluatesTopOfHour() {
        Schedule schedule = Schedules.parse(" hourly ", null);

        assertEquals("hourly", schedule.expression());
        assertEquals(Instant.parse("2026-05-04T11:00:00Z"), schedule.nextAfter(T));
    }

    @Test
    void parse_atWithZ_isThatInstant() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00Z", null);

        assertEquals("at:2026-03-01T12:00:00Z", schedule.expression());
        assertEquals(Instant.parse("2026-03-01T12:00:00Z"), schedule.nextAfter(Instant.parse("2026-02-01T00:00:00Z")));
    }

    @Test
    void parse_atWithOffset_canonicalisesToUtc() {
        Schedule schedule = Schedules.parse("at:2026-03-01T13:30:00+01:00", "America/New_York");

        assertEquals("at:2026-03-01T12:30:00Z", schedule.expression());
        assertEquals(Instant.parse("2026-03-01T12:30:00Z"), schedule.nextAfter(Instant.parse("2026-02-01T00:00:00Z")));
    }

    @Test
    void parse_atWithoutSecondsOrWithFraction_accepted() {
        assertEquals("at:2026-03-01T12:00:00Z", Schedules.parse("at:2026-03-01T12:00Z", null).expression());
        assertEquals("at:2026-03-01T12:00:00.250Z", Schedules.parse("at:2026-03-01T12:00:00.25Z", null).expression());
    }

    @Test
    void parse_nullZone_usesUtc() {
        assertEquals(ZoneOffset.UTC, Schedules.parse("hourly", null).zone());
    }

    @ParameterizedTest
    @ValueSource(strings = {"Europe/Berlin", "Asia/Kolkata", "UTC", "+05:30", "Etc/GMT+5"})
    void parse_knownZoneIds_accepted(String zone) {
        assertEquals(ZoneId.of(zone), Schedules.parse("daily:09:00", zone).zone());
    }

    @Test
    void parse_expressionOfExactlyMaxLength_accepted() {
        String padded = "cron:0 2 * * *" + " ".repeat(Schedules.MAX_EXPRESSION_CHARS - 14);
        assertEquals(Schedules.MAX_EXPRESSION_CHARS, padded.length());

        assertEquals("cron:0 2 * * *", Schedules.parse(padded, null).expression());
    }

    @ParameterizedTest(name = "{0} in {1}")
    @CsvSource({
        "every:30s, UTC", "cron:*/5 * * * *, Europe/Berlin", "daily:02:30, America/New_York",
        "hourly, Asia/Kolkata", "at:2026-03-01T12:00:00Z, Europe/Berlin"})
    void parse_ownExpressionAndZone_givesEqualSchedule(String expression, String zone) {
        Schedule schedule = Schedules.parse(expression, zone);

        Schedule again = Schedules.parse(schedule.expression(), schedule.zone().getId());

        assertEquals(schedule, again);
        assertEquals(schedule.hashCode(), again.hashCode());
        assertEquals(schedule.nextAfter(T), again.nextAfter(T));
    }

    static Stream<Arguments> invalidSchedules() {
        return Stream.of(
                Arguments.of(null, null, "schedule is missing; use " + FORMS),
                Arguments.of("", null, "schedule is missing; use " + FORMS),
                Arguments.of("   ", null, "schedule is missing; use " + FORMS),
                Arguments.of("cron:0 2 * * *" + " ".repeat(115), null, "schedule is longer than 128 characters"),
                Arguments.of("weekly:mon", null, "unknown schedule form 'weekly'; use " + FORMS),
                Arguments.of("HOURLY", null, "unknown schedule form 'HOURLY'; use " + FORMS),
                Arguments.of("*/5 * * * *", null, "unknown schedule form '*/5 * * * *'; use " + FORMS),
                Arguments.of("startup", null,
                        "'startup' is not a time schedule, so no heartbeat time can be expected from it; use " + FORMS),
                Arguments.of("on_change:path/to/watch", null,
                        "'on_change' is not a time schedule, so no heartbeat time can be expected from it; use " + FORMS),
                Arguments.of("hourly:15", null,
                        "hourly takes no argument (it means the top of every hour in the time zone)"),
                Arguments.of("every:", null,
                        "every needs a whole number and a unit, e.g. every:30s, every:5m, every:1h, every:1d"),
                Arguments.of("every:abc", null,
                        "every needs a whole number and a unit, e.g. every:30s, every:5m, every:1h, every:1d"),
                Arguments.of("every:1.5h", null,
                        "every needs a whole number and a unit, e.g. every:30s, every:5m, every:1h, every:1d"),
                Arguments.of("every:5", null, "every:5 has no unit; add s, m, h or d (e.g. every:5m)"),
                Arguments.of("every:5w", null, "unknown unit 'w' in every:5w; use s, m, h or d"),
                Arguments.of("every:5M", null, "unknown unit 'M' in every:5M; use s, m, h or d"),
                Arguments.of("every:5ms", null, "unknown unit 'ms' in every:5ms; use s, m, h or d"),
                Arguments.of("every:0s", null, "every needs an interval greater than zero, got 0s"),
                Arguments.of("every:-5m", null, "every needs an interval greater than zero, got -5m"),
                Arguments.of("every:8d", null, "every:8d is longer than the longest interval, 7d"),
                Arguments.of("every:604801s", null, "every:604801s is longer than the longest interval, 7d"),
                Arguments.of("every:169h", null, "every:169h is longer than the longest interval, 7d"),
                Arguments.of("every:99999999999999999999s", null,
                        "every:99999999999999999999s is too large; the longest interval is 7d"),
                Arguments.of("cron:", null,
                        "cron needs 5 fields (minute hour day-of-month month day-of-week), got 0"),
                Arguments.of("cron:* * * *", null,
                        "cron needs 5 fields (minute hour day-of-month month day-of-week), got 4"),
                Arguments.of("cron:0 * * * * *", null,
                        "cron needs 5 fields (minute hour day-of-month month day-of-week), got 6"),
                Arguments.of("cron:@daily", null,
                        "cron needs 5 fields (minute hour day-of-month month day-of-week), got 1"),
                Arguments.of("cron:61 * * * *", null, "invalid cron expression '61 * * * *': "
                        + "Failed to parse cron expression. Value 61 not in range [0, 59]"),
                Arguments.of("cron:0 24 * * *", null, "invalid cron expression '0 24 * * *': "
                        + "Failed to parse cron expression. Value 24 not in range [0, 23]"),
                Arguments.of("cron:0 0 1 13 *", null, "invalid cron expression '0 0 1 13 *': "
                        + "Failed to parse cron expression. Value 13 not in range [1, 12]"),
                Arguments.of("cron:5-2 * * * *", null, "invalid cron expression '5-2 * * * *': "
                        + "Failed to parse cron expression. Invalid range! [5,2]"),
                Arguments.of("cron:*/0 * * * *", null, "invalid cron expression '*/0 * * * *': "
                        + "Failed to parse cron expression. Period 0 not in range [0, 59]"),
                Arguments.of("cron:0 0 ? * *", null, "invalid cron expression '0 0 ? * *': "
                        + "Failed to parse cron expression. Invalid expression: ?"),
                Arguments.of("cron:a b c d e", null, "invalid cron expression 'a b c d e': "
                        + "Failed to parse cron expression. Invalid chars in expression! Expression: A Invalid chars: A"),
                Arguments.of("cron:0 0 31 2 *", null, "cron expression '0 0 31 2 *' never runs (no such date)"),
                Arguments.of("cron:0 0 31 4,6 *", null, "cron expression '0 0 31 4,6 *' never runs (no such date)"),
                Arguments.of("daily:", null, "daily needs a 24-hour time HH:MM, e.g. daily:02:00"),
                Arguments.of("daily:9:00", null, "daily needs a 24-hour time HH:MM, e.g. daily:02:00"),
                Arguments.of("daily:09:00:00", null, "daily needs a 24-hour time HH:MM, e.g. daily:02:00"),
                Arguments.of("daily:24:00", null,
                        "daily:24:00 is not a time of day; hours run 00-23 and minutes 00-59"),
                Arguments.of("daily:12:60", null,
                        "daily:12:60 is not a time of day; hours run 00-23 and minutes 00-59"),
                Arguments.of("at:", null, AT_MESSAGE),
                Arguments.of("at:tomorrow", null, AT_MESSAGE),
                Arguments.of("at:2026-03-01", null, AT_MESSAGE),
                Arguments.of("at:2026-03-01T12:00:00", null, AT_MESSAGE),
                Arguments.of("at:2026-02-30T12:00:00Z", null, AT_MESSAGE),
                Arguments.of("at:2026-03-01T25:00:00Z", null, AT_MESSAGE),
                Arguments.of("at:1772366400", null, AT_MESSAGE),
                Arguments.of("hourly", "Mars/Olympus",
                        "unknown time zone 'Mars/Olympus'; use an IANA zone id such as Europe/Berlin"),
                Arguments.of("hourly", "europe/berlin",
                        "unknown time zone 'europe/berlin'; use an IANA zone id such as Europe/Berlin"),
                Arguments.of("hourly", "CEST",
                        "unknown time zone 'CEST'; use an IANA zone id such as Europe/Berlin"),
                Arguments.of("hourly", "",
                        "time zone must be an IANA zone id such as Europe/Berlin (or omitted for UTC)"),
                Arguments.of("hourly", "A".repeat(65),
                        "time zone must be an IANA zone id such as Europe/Berlin (or omitted for UTC)"));
    }

    private static final String AT_MESSAGE = "at needs an ISO-8601 date-time with Z or an offset, "
            + "e.g. at:2026-03-01T12:00:00Z or at:2026-03-01T13:00:00+01:00";

    @ParameterizedTest(name = "[{index}] \"{0}\" in {1}")
    @MethodSource("invalidSchedules")
    void parse_invalidInput_refusedWithInvalidScheduleAndReason(String expression, String zone, String message) {
        InvalidScheduleException e = assertThrows(InvalidScheduleException.class,
                () -> Schedules.parse(expression, zone));

        assertEquals(message, e.getMessage());
    }

    @Test
    void parse_longInputEchoedInMessage_isCut() {
        InvalidScheduleException e = assertThrows(InvalidScheduleException.class,
                () -> Schedules.parse("every:" + "9".repeat(60) + "s", null));

        assertEquals("every:" + "9".repeat(40) + "... is too large; the longest interval is 7d", e.getMessage());
        assertNull(e.getCause());
    }
}
