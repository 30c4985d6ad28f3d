package io.lifeline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Property-style: from seeded random starts, nextAfter fed back into itself 500 times gives strictly increasing
 * instants, for every form in zones with daylight saving, odd offsets and midnight changes. The seed is printed
 * (target/surefire-reports/*-output.txt) and in every failure message; rerun one with -Dschedule.seed=N.
 */
@Tag("unit")
class MonotonicityTest {

    private static final int STEPS = 500;
    private static final List<String> EXPRESSIONS = List.of(
            "every:1s", "every:7m", "every:1h", "every:1d", "every:7d",
            "cron:*/5 * * * *", "cron:30 2 * * *", "cron:0 0 * * *", "cron:15 1,2,3 * * 0", "cron:0 12 1 * *",
            "daily:02:30", "daily:00:00", "daily:23:59", "hourly");
    private static final List<String> ZONES = List.of(
            "UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe",
            "America/Santiago", "Pacific/Chatham", "America/Havana");
    /** Random starts fall in [2000, 2090). */
    private static final long FROM = Instant.parse("2000-01-01T00:00:00Z").getEpochSecond();
    private static final long UNTIL = Instant.parse("2090-01-01T00:00:00Z").getEpochSecond();

    private static long seed;

    @BeforeAll
    static void chooseSeed() {
        seed = Long.getLong("schedule.seed", System.nanoTime());
        System.out.println("MonotonicityTest seed=" + seed + " (rerun with -Dschedule.seed=" + seed + ")");
    }

    @Test
    void nextAfter_iteratedFromRandomStarts_isStrictlyIncreasing() {
        Random random = new Random(seed);
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (String zone : ZONES) {
                for (String expression : EXPRESSIONS) {
                    Instant start = randomInstant(random);
                    walk(Schedules.parse(expression, zone), start);
                }
            }
        });
    }

    @Test
    void nextAfter_atSchedule_isTheInstantOnceThenNull() {
        Random random = new Random(seed);
        for (int i = 0; i < STEPS; i++) {
            Instant at = randomInstant(random);
            Schedule schedule = Schedules.parse("at:" + at, ZONES.get(random.nextInt(ZONES.size())));
            Instant before = at.minusSeconds(1 + random.nextInt(1_000_000));

            assertEquals(at, schedule.nextAfter(before), "seed=" + seed + " at=" + at);
            assertEquals(null, schedule.nextAfter(at), "seed=" + seed + " at=" + at);
        }
    }

    private static void walk(Schedule schedule, Instant start) {
        String where = "seed=" + seed + " " + schedule + " from " + start;
        Instant t = start;
        for (int i = 0; i < STEPS; i++) {
            Instant next = schedule.nextAfter(t);
            assertNotNull(next, where + ": null after " + t);
            assertTrue(next.isAfter(t), where + ": step " + i + " gave " + next + ", not after " + t);
            checkShape(schedule, t, next, where);
            t = next;
        }
    }

    /** What each form promises besides increasing. */
    private static void checkShape(Schedule schedule, Instant t, Instant next, String where) {
        ZonedDateTime local = next.atZone(schedule.zone());
        if (schedule instanceof EverySchedule every) {
            assertEquals(every.interval(), Duration.between(t, next), where);
        } else if (schedule instanceof HourlySchedule) {
            assertEquals(0, local.getMinute() + local.getSecond() + local.getNano(), where + ": " + local);
            assertTrue(Duration.between(t, next).compareTo(Duration.ofHours(2)) <= 0, where + ": gap at " + local);
        } else if (schedule instanceof DailySchedule daily) {
            // On the wall time, or, when that did not exist that day, later by exactly the gap.
            LocalDateTime wanted = local.toLocalDate().atTime(daily.time());
            ZoneOffsetTransition gap = schedule.zone().getRules().getTransition(wanted);
            boolean exact = local.toLocalDateTime().equals(wanted);
            boolean shiftedOutOfGap = gap != null && gap.isGap()
                    && local.toLocalDateTime().equals(wanted.plus(gap.getDuration()));
            assertTrue(exact || shiftedOutOfGap, where + ": " + local);
            assertTrue(Duration.between(t, next).compareTo(Duration.ofHours(49)) <= 0, where + ": gap at " + local);
        }
    }

    private static Instant randomInstant(Random random) {
        long second = FROM + (long) (random.nextDouble() * (UNTIL - FROM));
        int nanos = random.nextInt(4) == 0 ? random.nextInt(1_000_000_000) : 0;
        return Instant.ofEpochSecond(second, nanos);
    }
}
