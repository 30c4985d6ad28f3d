package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Daylight-saving changes in 2026, both directions.
 * <ul>
 *   <li>America/New_York: 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z),
 *       so 01:00-01:59 happens twice.</li>
 *   <li>Europe/Berlin: 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z),
 *       so 02:00-02:59 happens twice (01:30 is not ambiguous in Berlin; 02:30 is).</li>
 * </ul>
 */
@Tag("unit")
class DaylightSavingTest {

    private static final String NEW_YORK = "America/New_York";
    private static final String BERLIN = "Europe/Berlin";

    /** Daily: a wall time that does not exist moves later by the gap; a repeated one counts once, first. */
    @Nested
    class Daily {
        @Test
        void daily_newYorkSpringForward_nonexistentTimeRunsAnHourLaterThenNormalAgain() {
            Schedule schedule = Schedules.parse("daily:02:30", NEW_YORK);

            List<Instant> slots = iterate(schedule, Instant.parse("2026-03-07T00:00:00Z"), 3);

            assertEquals(List.of(
                    Instant.parse("2026-03-07T07:30:00Z"),   // 02:30 EST
                    Instant.parse("2026-03-08T07:30:00Z"),   // 02:30 does not exist: 03:30 EDT
                    Instant.parse("2026-03-09T06:30:00Z")),  // 02:30 EDT
                    slots);
            assertEquals(LocalTime.of(3, 30), slots.get(1).atZone(ZoneId.of(NEW_YORK)).toLocalTime());
        }

        @Test
        void daily_berlinSpringForward_nonexistentTimeRunsAnHourLaterThenNormalAgain() {
            Schedule schedule = Schedules.parse("daily:02:30", BERLIN);

            List<Instant> slots = iterate(schedule, Instant.parse("2026-03-28T00:00:00Z"), 3);

            assertEquals(List.of(
                    Instant.parse("2026-03-28T01:30:00Z"),   // 02:30 CET
                    Instant.parse("2026-03-29T01:30:00Z"),   // 02:30 does not exist: 03:30 CEST
                    Instant.parse("2026-03-30T00:30:00Z")),  // 02:30 CEST
                    slots);
            assertEquals(LocalTime.of(3, 30), slots.get(1).atZone(ZoneId.of(BERLIN)).toLocalTime());
        }

        @Test
        void daily_newYorkFallBack_ambiguousTimeRunsOnceAtFirstOccurrence() {
            Schedule schedule = Schedules.parse("daily:01:30", NEW_YORK);

            assertEquals(List.of(
                    Instant.parse("2026-11-01T05:30:00Z"),   // first 01:30 (EDT)
                    Instant.parse("2026-11-02T06:30:00Z")),  // not 06:30Z the same day (the second 01:30, EST)
                    iterate(schedule, Instant.parse("2026-10-31T16:00:00Z"), 2));
            // Asked between the two 01:30s, or at the second one: the answer is still the next day.
            assertEquals(Instant.parse("2026-11-02T06:30:00Z"), schedule.nextAfter(Instant.parse("2026-11-01T06:00:00Z")));
            assertEquals(Instant.parse("2026-11-02T06:30:00Z"), schedule.nextAfter(Instant.parse("2026-11-01T06:30:00Z")));
        }

        @Test
        void daily_berlinFallBack_ambiguousTimeRunsOnceAtFirstOccurrence() {
            Schedule schedule = Schedules.parse("daily:02:30", BERLIN);

            assertEquals(List.of(
                    Instant.parse("2026-10-25T00:30:00Z"),   // first 02:30 (CEST)
                    Instant.parse("2026-10-26T01:30:00Z")),  // not 01:30Z the same day (the second 02:30, CET)
                    iterate(schedule, Instant.parse("2026-10-24T12:00:00Z"), 2));
            assertEquals(Instant.parse("2026-10-26T01:30:00Z"), schedule.nextAfter(Instant.parse("2026-10-25T01:00:00Z")));
        }
    }

    /** Cron: whatever cron-utils does, stated here. */
    @Nested
    class Cron {
        @Test
        void cron_newYorkSpringForward_nonexistentTimeIsSkippedThatDay() {
            Schedule schedule = Schedules.parse("cron:30 2 * * *", NEW_YORK);

            assertEquals(List.of(
                    Instant.parse("2026-03-07T07:30:00Z"),   // 02:30 EST
                    Instant.parse("2026-03-09T06:30:00Z")),  // no run on 2026-03-08 (unlike daily:02:30)
                    iterate(schedule, Instant.parse("2026-03-07T00:00:00Z"), 2));
        }

        @Test
        void cron_berlinSpringForward_nonexistentTimeIsSkippedThatDay() {
            Schedule schedule = Schedules.parse("cron:30 2 * * *", BERLIN);

            assertEquals(List.of(
                    Instant.parse("2026-03-28T01:30:00Z"),
                    Instant.parse("2026-03-30T00:30:00Z")),  // no run on 2026-03-29
                    iterate(schedule, Instant.parse("2026-03-28T00:00:00Z"), 2));
        }

        @Test
        void cron_newYorkFallBack_twoThirtyIsNotRepeatedAndRunsOnce() {
            Schedule schedule = Schedules.parse("cron:30 2 * * *", NEW_YORK);

            assertEquals(List.of(
                    Instant.parse("2026-11-01T07:30:00Z"),   // 02:30 EST; 02:00-02:59 happens once in New York
                    Instant.parse("2026-11-02T07:30:00Z")),
                    iterate(schedule, Instant.parse("2026-10-31T16:00:00Z"), 2));
        }

        @Test
        void cron_newYorkFallBack_singleAmbiguousHourRunsOnceAtFirstOccurrence() {
            Schedule schedule = Schedules.parse("cron:30 1 * * *", NEW_YORK);

            assertEquals(List.of(
                    Instant.parse("2026-11-01T05:30:00Z"),   // first 01:30 (EDT)
                    Instant.parse("2026-11-02T06:30:00Z")),
                    iterate(schedule, Instant.parse("2026-10-31T16:00:00Z"), 2));
        }

        @Test
        void cron_berlinFallBack_singleAmbiguousHourRunsOnceAtFirstOccurrence() {
            Schedule schedule = Schedules.parse("cron:30 2 * * *", BERLIN);

            assertEquals(List.of(
                    Instant.parse("2026-10-25T00:30:00Z"),   // first 02:30 (CEST)
                    Instant.parse("2026-10-26T01:30:00Z")),
                    iterate(schedule, Instant.parse("2026-10-24T12:00:00Z"), 2));
        }

        @Test
        void cron_fallBackWithHourRange_runsInBothOccurrences() {
            // cron-utils treats a range or wildcard hour differently from a single hour: both 01:30s run.
            Schedule newYork = Schedules.parse("cron:30 0-3 * * *", NEW_YORK);
            Schedule berlin = Schedules.parse("cron:30 1-3 * * *", BERLIN);

            assertEquals(List.of(
                    Instant.parse("2026-11-01T04:30:00Z"),   // 00:30 EDT
                    Instant.parse("2026-11-01T05:30:00Z"),   // 01:30 EDT
                    Instant.parse("2026-11-01T06:30:00Z"),   // 01:30 EST
                    Instant.parse("2026-11-01T07:30:00Z"),   // 02:30 EST
                    Instant.parse("2026-11-01T08:30:00Z")),  // 03:30 EST
                    iterate(newYork, Instant.parse("2026-11-01T04:00:00Z"), 5));
            assertEquals(List.of(
                    Instant.parse("2026-10-24T23:30:00Z"),   // 01:30 CEST
                    Instant.parse("2026-10-25T00:30:00Z"),   // 02:30 CEST
                    Instant.parse("2026-10-25T01:30:00Z"),   // 02:30 CET
                    Instant.parse("2026-10-25T02:30:00Z")),  // 03:30 CET
                    iterate(berlin, Instant.parse("2026-10-24T23:00:00Z"), 4));
        }

        @Test
        void cron_everyTenMinutesOverFallBack_keepsTenMinuteStepsInAbsoluteTime() {
            Schedule schedule = Schedules.parse("cron:*/10 * * * *", NEW_YORK);

            List<Instant> slots = iterate(schedule, Instant.parse("2026-11-01T04:00:00Z"), 24);

            for (int i = 1; i < slots.size(); i++) {
                assertEquals(Duration.ofMinutes(10), Duration.between(slots.get(i - 1), slots.get(i)), "at " + slots.get(i));
            }
        }

        @ParameterizedTest(name = "{0} in {1} around {2}")
        @CsvSource({
            "cron:30 2 * * *, America/New_York, 2026-03-08T07:00:00Z",
            "cron:30 2 * * *, America/New_York, 2026-11-01T06:00:00Z",
            "cron:30 2 * * *, Europe/Berlin, 2026-03-29T01:00:00Z",
            "cron:30 2 * * *, Europe/Berlin, 2026-10-25T01:00:00Z",
            "cron:30 1 * * *, America/New_York, 2026-11-01T06:00:00Z",
            "cron:*/15 * * * *, Europe/Berlin, 2026-10-25T01:00:00Z",
            "cron:0 0 * * *, America/Santiago, 2026-09-06T04:00:00Z",
            "daily:02:30, America/New_York, 2026-03-08T07:00:00Z",
            "daily:01:30, America/New_York, 2026-11-01T06:00:00Z",
            "hourly, Europe/Berlin, 2026-10-25T01:00:00Z"})
        void nextAfter_everyMinuteAroundTransition_isLaterAndNeverLoops(String expression, String zone, String change) {
            Schedule schedule = Schedules.parse(expression, zone);
            Instant transition = Instant.parse(change);

            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                for (Instant t = transition.minus(Duration.ofHours(3)); t.isBefore(transition.plus(Duration.ofHours(3)));
                        t = t.plusSeconds(60)) {
                    for (Instant probe : List.of(t, t.minusMillis(1), t.plusMillis(1))) {
                        Instant next = schedule.nextAfter(probe);
                        assertTrue(next.isAfter(probe), expression + " in " + zone + ": " + next + " is not after " + probe);
                        assertTrue(next.isBefore(probe.plus(Duration.ofDays(3))), expression + " skipped days after " + probe);
                    }
                }
            });
        }
    }

    /** Every: absolute time, unaffected. */
    @Nested
    class Every {
        @Test
        void every_hourAcrossNewYorkSpringForward_exactly3600SecondsApart() {
            Schedule schedule = Schedules.parse("every:1h", NEW_YORK);

            List<Instant> slots = iterate(schedule, Instant.parse("2026-03-08T05:00:00Z"), 5);

            assertSpacing(slots, 3600);
            // Wall clock: 01:00 EST, then 03:00 EDT: one absolute hour although the clock moved two.
            assertEquals(LocalTime.of(1, 0), slots.get(0).atZone(ZoneId.of(NEW_YORK)).toLocalTime());
            assertEquals(LocalTime.of(3, 0), slots.get(1).atZone(ZoneId.of(NEW_YORK)).toLocalTime());
        }

        @Test
        void every_hourAcrossBerlinFallBack_exactly3600SecondsApart() {
            Schedule schedule = Schedules.parse("every:1h", BERLIN);

            List<Instant> slots = iterate(schedule, Instant.parse("2026-10-24T23:00:00Z"), 5);

            assertSpacing(slots, 3600);
            // 00:00Z is 02:00 CEST, 01:00Z is 02:00 CET: the same wall time twice, an hour apart.
            assertEquals(Instant.parse("2026-10-25T00:00:00Z"), slots.get(0));
            assertEquals(LocalTime.of(2, 0), slots.get(0).atZone(ZoneId.of(BERLIN)).toLocalTime());
            assertEquals(LocalTime.of(2, 0), slots.get(1).atZone(ZoneId.of(BERLIN)).toLocalTime());
        }

        @Test
        void every_hourAcrossNewYorkFallBackAndBerlinSpringForward_exactly3600SecondsApart() {
            assertSpacing(iterate(Schedules.parse("every:1h", NEW_YORK), Instant.parse("2026-11-01T03:17:00Z"), 6), 3600);
            assertSpacing(iterate(Schedules.parse("every:1h", BERLIN), Instant.parse("2026-03-28T23:17:00Z"), 6), 3600);
        }
    }

    /** Hourly: every wall-clock top of the hour. */
    @Nested
    class Hourly {
        @Test
        void hourly_newYorkSpringForward_skippedHourHasNoSlot() {
            assertEquals(List.of(
                    Instant.parse("2026-03-08T06:00:00Z"),   // 01:00 EST
                    Instant.parse("2026-03-08T07:00:00Z"),   // 03:00 EDT
                    Instant.parse("2026-03-08T08:00:00Z")),  // 04:00 EDT
                    iterate(Schedules.parse("hourly", NEW_YORK), Instant.parse("2026-03-08T05:30:00Z"), 3));
        }

        @Test
        void hourly_newYorkFallBack_repeatedHourHasBothSlots() {
            assertEquals(List.of(
                    Instant.parse("2026-11-01T05:00:00Z"),   // 01:00 EDT
                    Instant.parse("2026-11-01T06:00:00Z"),   // 01:00 EST
                    Instant.parse("2026-11-01T07:00:00Z")),  // 02:00 EST
                    iterate(Schedules.parse("hourly", NEW_YORK), Instant.parse("2026-11-01T04:30:00Z"), 3));
        }
    }

    private static List<Instant> iterate(Schedule schedule, Instant start, int count) {
        List<Instant> out = new ArrayList<>();
        Instant t = start;
        for (int i = 0; i < count; i++) {
            t = schedule.nextAfter(t);
            out.add(t);
        }
        return out;
    }

    private static void assertSpacing(List<Instant> slots, long seconds) {
        for (int i = 1; i < slots.size(); i++) {
            assertEquals(seconds, Duration.between(slots.get(i - 1), slots.get(i)).toSeconds(), "before " + slots.get(i));
        }
    }
}
