package io.lifeline.schedule;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Objects;

/**
 * {@code daily:HH:MM}: one slot per calendar day in the zone, resolved the way {@link ZonedDateTime#of} resolves
 * a local time: in a gap it moves later by the gap's length, in an overlap it takes the earlier offset (the
 * first occurrence). Because every day's slot is taken from that day's date, a repeated wall time never gives
 * a second slot.
 */
record DailySchedule(String expression, ZoneId zone, LocalTime time) implements Schedule {

    /** Days to look ahead; more than enough even for a zone that once skipped a whole date (Pacific/Apia, 2011). */
    private static final int MAX_DAYS_AHEAD = 4;

    DailySchedule {
        Objects.requireNonNull(expression);
        Objects.requireNonNull(zone);
        Objects.requireNonNull(time);
    }

    @Override
    public Instant nextAfter(Instant t) {
        if (!Schedule.onCalendar(t)) {
            return null;
        }
        LocalDate day = t.atZone(zone).toLocalDate();
        for (int i = 0; i <= MAX_DAYS_AHEAD; i++) {
            Instant slot = ZonedDateTime.of(day.plusDays(i), time, zone).toInstant();
            if (slot.isAfter(t)) {
                return slot;
            }
        }
        throw new IllegalStateException("no slot for " + this + " within " + MAX_DAYS_AHEAD + " days after " + t);
    }

    @Override
    public String toString() {
        return expression + " (" + zone.getId() + ")";
    }
}
