package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Each form evaluated in zones other than UTC, away from daylight-saving changes (those are in DaylightSavingTest). */
@Tag("unit")
class TimeZoneTest {

    @Test
    void daily_inUtc_runsAtThatUtcTime() {
        Schedule schedule = Schedules.parse("daily:09:00", null);

        assertEquals(Instant.parse("2026-01-15T09:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T08:00:00Z")));
        assertEquals(Instant.parse("2026-07-15T09:00:00Z"), schedule.nextAfter(Instant.parse("2026-07-15T08:00:00Z")));
    }

    @Test
    void daily_inBerlin_runsAtBerlinWallTimeInWinterAndSummer() {
        Schedule schedule = Schedules.parse("daily:09:00", "Europe/Berlin");

        // CET (+01:00) in January, CEST (+02:00) in July.
        assertEquals(Instant.parse("2026-01-15T08:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T07:00:00Z")));
        assertEquals(Instant.parse("2026-07-15T07:00:00Z"), schedule.nextAfter(Instant.parse("2026-07-15T06:00:00Z")));
    }

    @Test
    void daily_atOrAfterTodaysSlot_givesTomorrowsSlot() {
        Schedule schedule = Schedules.parse("daily:09:00", "Europe/Berlin");

        assertEquals(Instant.parse("2026-01-16T08:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T08:00:00Z")));
        assertEquals(Instant.parse("2026-01-16T08:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T08:00:00.001Z")));
    }

    @Test
    void daily_slotBeforeMidnightUtcButNextLocalDay_usesLocalDate() {
        // 00:30 in Tokyo (+09:00) is 15:30 UTC the day before.
        Schedule schedule = Schedules.parse("daily:00:30", "Asia/Tokyo");

        assertEquals(Instant.parse("2026-01-15T15:30:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T12:00:00Z")));
        assertEquals(Instant.parse("2026-01-16T15:30:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T15:30:00Z")));
    }

    @Test
    void hourly_inUtc_topOfNextHour() {
        Schedule schedule = Schedules.parse("hourly", null);

        assertEquals(Instant.parse("2026-01-15T11:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:00:00Z")));
        assertEquals(Instant.parse("2026-01-15T11:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:59:59.999Z")));
    }

    @Test
    void hourly_inKolkata_runsAtHalfPastInUtc() {
        // Asia/Kolkata is +05:30 all year, so the top of each local hour is :30 UTC.
        Schedule schedule = Schedules.parse("hourly", "Asia/Kolkata");

        assertEquals(Instant.parse("2026-01-15T10:30:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:00:00Z")));
        assertEquals(Instant.parse("2026-01-15T11:30:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:30:00Z")));
    }

    @Test
    void hourly_inChatham_runsAtQuarterPastInUtc() {
        // Pacific/Chatham is +13:45 in January (daylight saving).
        Schedule schedule = Schedules.parse("hourly", "Pacific/Chatham");

        assertEquals(Instant.parse("2026-01-15T10:15:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:00:00Z")));
    }

    @Test
    void hourly_lordHoweHalfHourFallBack_nextTopOfHourIsNinetyMinutesLater() {
        // Australia/Lord_Howe moves its clocks by 30 minutes: at 02:00 (+11:00) on 2026-04-05 they go back to
        // 01:30 (+10:30). Wall-clock 01:00 happens once, 02:00 next at +10:30: 90 minutes apart.
        ZoneId lordHowe = ZoneId.of("Australia/Lord_Howe");
        Schedule schedule = Schedules.parse("hourly", lordHowe.getId());
        Instant oneOClock = LocalDateTime.of(2026, 4, 5, 1, 0).atZone(lordHowe).toInstant();

        assertEquals(Instant.parse("2026-04-04T14:00:00Z"), oneOClock);
        assertEquals(Instant.parse("2026-04-04T15:30:00Z"), schedule.nextAfter(oneOClock));
    }

    @Test
    void cron_inBerlin_evaluatedOnBerlinWallClock() {
        Schedule schedule = Schedules.parse("cron:0 9 * * 1-5", "Europe/Berlin");

        // Friday 2026-01-16 09:00 CET, then Monday 2026-01-19.
        assertEquals(Instant.parse("2026-01-16T08:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-16T07:59:00Z")));
        assertEquals(Instant.parse("2026-01-19T08:00:00Z"), schedule.nextAfter(Instant.parse("2026-01-16T08:00:00Z")));
    }

    @Test
    void cron_inKolkata_hourFieldIsLocal() {
        Schedule schedule = Schedules.parse("cron:0 * * * *", "Asia/Kolkata");

        assertEquals(Instant.parse("2026-01-15T10:30:00Z"), schedule.nextAfter(Instant.parse("2026-01-15T10:00:00Z")));
    }

    @Test
    void every_inAnyZone_isTheSameAbsoluteInterval() {
        Instant t = Instant.parse("2026-01-15T10:00:00Z");

        assertEquals(Schedules.parse("every:5m", null).nextAfter(t),
                Schedules.parse("every:5m", "Asia/Kolkata").nextAfter(t));
    }

    @Test
    void at_beforeTheInstant_returnsTheInstant() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00+01:00", "Europe/Berlin");

        assertEquals(Instant.parse("2026-03-01T11:00:00Z"), schedule.nextAfter(Instant.parse("2026-03-01T10:59:59Z")));
    }

    @Test
    void at_atOrAfterTheInstant_returnsNull() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00Z", null);

        assertNull(schedule.nextAfter(Instant.parse("2026-03-01T12:00:00Z")));
        assertNull(schedule.nextAfter(Instant.parse("2026-03-02T00:00:00Z")));
    }
}
