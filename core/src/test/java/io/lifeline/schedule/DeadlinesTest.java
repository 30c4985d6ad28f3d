package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class DeadlinesTest {

    private static final Duration GRACE = Duration.ofSeconds(60);
    private static final Schedule DAILY_TWO = Schedules.parse("daily:02:00", null);

    @Test
    void next_heartbeatWellBeforeSlot_isTodaysSlotPlusGrace() {
        assertEquals(Instant.parse("2026-05-04T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:58:00Z"), GRACE));
    }

    @Test
    void next_earlyHeartbeatWithinGraceOfSlot_countsForItAndGivesNextDaysSlotPlusGrace() {
        assertEquals(Instant.parse("2026-05-05T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:59:30Z"), GRACE));
    }

    @Test
    void next_heartbeatExactlyGraceBeforeSlot_countsAsEarly() {
        assertEquals(Instant.parse("2026-05-05T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:59:00Z"), GRACE));
    }

    @Test
    void next_heartbeatJustOverGraceBeforeSlot_isNotEarly() {
        assertEquals(Instant.parse("2026-05-04T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:58:59.999Z"), GRACE));
    }

    @Test
    void next_heartbeatOnSlot_givesNextDaysSlotPlusGrace() {
        assertEquals(Instant.parse("2026-05-05T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T02:00:00Z"), GRACE));
    }

    @Test
    void next_lateHeartbeatWithinGrace_givesNextDaysSlotPlusGrace() {
        assertEquals(Instant.parse("2026-05-05T02:01:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T02:00:30Z"), GRACE));
    }

    @Test
    void next_zeroGrace_onlyAHeartbeatOnTheSlotIsNotEarly() {
        assertEquals(Instant.parse("2026-05-04T02:00:00Z"),
                Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:59:59Z"), Duration.ZERO));
    }

    @Test
    void next_dailyInNewYorkBeforeSpringForward_deadlineIsShiftedSlotPlusGrace() {
        Schedule schedule = Schedules.parse("daily:02:30", "America/New_York");

        // Heartbeat at 02:30 EST on 2026-03-07; the next 02:30 does not exist, so 03:30 EDT (07:30Z) + 60 s.
        assertEquals(Instant.parse("2026-03-08T07:31:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-03-07T07:30:00Z"), GRACE));
    }

    @Test
    void next_hourlyInKolkataEarlyHeartbeat_countsForTheHalfPastUtcSlot() {
        Schedule schedule = Schedules.parse("hourly", "Asia/Kolkata");

        assertEquals(Instant.parse("2026-05-04T11:31:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:29:30Z"), GRACE));
        assertEquals(Instant.parse("2026-05-04T10:31:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:20:00Z"), GRACE));
    }

    @Test
    void next_cronEarlyHeartbeat_countsForThatSlot() {
        Schedule schedule = Schedules.parse("cron:*/5 * * * *", null);

        assertEquals(Instant.parse("2026-05-04T10:11:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:04:45Z"), GRACE));
        assertEquals(Instant.parse("2026-05-04T10:06:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:03:00Z"), GRACE));
    }

    @Test
    void next_every_isHeartbeatPlusIntervalPlusGrace() {
        Schedule schedule = Schedules.parse("every:5m", "Europe/Berlin");

        assertEquals(Instant.parse("2026-05-04T10:06:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:00:00Z"), GRACE));
    }

    @Test
    void next_everyShorterThanGrace_isNeverEarly() {
        Schedule schedule = Schedules.parse("every:30s", null);

        assertEquals(Instant.parse("2026-05-04T10:01:30Z"),
                Deadlines.next(schedule, Instant.parse("2026-05-04T10:00:00Z"), GRACE));
    }

    @Test
    void next_atWellBeforeInstant_isInstantPlusGrace() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00Z", null);

        assertEquals(Instant.parse("2026-03-01T12:01:00Z"),
                Deadlines.next(schedule, Instant.parse("2026-03-01T11:00:00Z"), GRACE));
    }

    @Test
    void next_atEarlyHeartbeatWithinGrace_countsForTheInstantAndGivesNoDeadline() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00Z", null);

        assertNull(Deadlines.next(schedule, Instant.parse("2026-03-01T11:59:30Z"), GRACE));
    }

    @Test
    void next_atOnOrAfterInstant_givesNoDeadline() {
        Schedule schedule = Schedules.parse("at:2026-03-01T12:00:00Z", null);

        assertNull(Deadlines.next(schedule, Instant.parse("2026-03-01T12:00:00Z"), GRACE));
        assertNull(Deadlines.next(schedule, Instant.parse("2026-03-01T12:00:30Z"), GRACE));
        assertNull(Deadlines.next(schedule, Instant.parse("2027-01-01T00:00:00Z"), GRACE));
    }

    @Test
    void next_negativeGrace_refused() {
        assertThrows(IllegalArgumentException.class,
                () -> Deadlines.next(DAILY_TWO, Instant.parse("2026-05-04T01:00:00Z"), Duration.ofSeconds(-1)));
    }

    @Test
    void next_nullArguments_refused() {
        Instant t = Instant.parse("2026-05-04T01:00:00Z");

        assertThrows(NullPointerException.class, () -> Deadlines.next(null, t, GRACE));
        assertThrows(NullPointerException.class, () -> Deadlines.next(DAILY_TWO, null, GRACE));
        assertThrows(NullPointerException.class, () -> Deadlines.next(DAILY_TWO, t, null));
    }
}
