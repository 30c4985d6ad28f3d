package io.lifeline.schedule;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;

/**
 * When an agent is expected to send heartbeats: one of the schedule forms, bound to a time zone.
 * Made only by {@link Schedules#parse}; immutable and safe to share between threads.
 *
 * <p>The forms and how each reads a wall clock:
 * <ul>
 *   <li>{@code every:<n><s|m|h|d>} — an interval measured from the previous heartbeat in absolute time
 *       ({@code nextAfter(t) = t + n}); the time zone plays no part, so a daylight-saving change never
 *       stretches or shrinks it.</li>
 *   <li>{@code daily:HH:MM} — once per calendar day in the zone. A wall time that does not exist that day
 *       (spring forward) is moved later by the length of the gap (02:30 becomes 03:30 when clocks jump
 *       from 02:00 to 03:00); a wall time that happens twice (fall back) counts once, at its first
 *       occurrence.</li>
 *   <li>{@code hourly} — every instant at which the zone's wall clock shows minute 0 (so :30 UTC in
 *       Asia/Kolkata). Both 01:00s of a fall-back night count; the hour that a spring-forward skips has
 *       no slot.</li>
 *   <li>{@code cron:<minute hour day-of-month month day-of-week>} — Unix cron evaluated by cron-utils in
 *       the zone. cron-utils skips a wall time that does not exist (no run that day for
 *       {@code 30 2 * * *}), runs a single-hour expression once at the first occurrence of a repeated
 *       wall time, and runs wildcard or range hours in both occurrences.</li>
 *   <li>{@code at:<ISO-8601 instant>} — one expected time; afterwards nothing is expected.</li>
 * </ul>
 */
public sealed interface Schedule
        permits EverySchedule, DailySchedule, HourlySchedule, CronSchedule, AtSchedule {

    /**
     * The first expected time strictly after {@code t}, or null when nothing further is expected (an
     * {@code at:} schedule whose instant is not after {@code t}, or a {@code t} so near the ends of time that
     * the next one would not fit in an {@link Instant}, or a wall-clock form's {@code t} outside years
     * -100000 to 100000). Successive calls feeding the answer back in give strictly increasing instants.
     */
    Instant nextAfter(Instant t);

    /** Earliest and latest instants the wall-clock forms (daily, hourly, cron) are evaluated for. */
    Instant CALENDAR_START = OffsetDateTime.parse("-100000-01-01T00:00:00Z").toInstant();
    Instant CALENDAR_END = OffsetDateTime.parse("+100000-01-01T00:00:00Z").toInstant();

    /** True when {@code t} is within the range wall-clock forms are evaluated for (far from the ends of time). */
    static boolean onCalendar(Instant t) {
        return !t.isBefore(CALENDAR_START) && t.isBefore(CALENDAR_END);
    }

    /** The canonical text of this schedule; {@code Schedules.parse(expression(), zone().getId())} gives an equal schedule. */
    String expression();

    /** The time zone wall-clock forms are read in (UTC when none was given). */
    ZoneId zone();
}
