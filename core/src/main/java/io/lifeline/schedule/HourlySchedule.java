package io.lifeline.schedule;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Objects;

/**
 * {@code hourly}: every instant at which the zone's wall clock reads HH:00:00. Worked out per stretch of constant
 * UTC offset, so offsets that are not whole hours (Asia/Kolkata +05:30) and half-hour daylight-saving shifts
 * (Australia/Lord_Howe) come out right.
 */
record HourlySchedule(String expression, ZoneId zone) implements Schedule {

    private static final long HOUR_SECONDS = 3600;

    HourlySchedule {
        Objects.requireNonNull(expression);
        Objects.requireNonNull(zone);
    }

    @Override
    public Instant nextAfter(Instant t) {
        if (!Schedule.onCalendar(t)) {
            return null;
        }
        ZoneRules rules = zone.getRules();
        Instant from = t;
        boolean inclusive = false;
        while (true) {
            ZoneOffset offset = rules.getOffset(from);
            Instant candidate = topOfHour(from, offset, inclusive);
            ZoneOffsetTransition change = rules.nextTransition(from);
            if (change == null || candidate.isBefore(change.getInstant())) {
                return candidate;
            }
            // The offset changes before the candidate: start again from the change under the new offset.
            from = change.getInstant();
            inclusive = true;
        }
    }

    /** The first top of a wall-clock hour under a fixed {@code offset}, after {@code from} (or at it, if inclusive). */
    private static Instant topOfHour(Instant from, ZoneOffset offset, boolean inclusive) {
        long local = from.getEpochSecond() + offset.getTotalSeconds();
        boolean exact = from.getNano() == 0 && Math.floorMod(local, HOUR_SECONDS) == 0;
        long top = exact && inclusive ? local : Math.floorDiv(local, HOUR_SECONDS) * HOUR_SECONDS + HOUR_SECONDS;
        return Instant.ofEpochSecond(top - offset.getTotalSeconds());
    }

    @Override
    public String toString() {
        return expression + " (" + zone.getId() + ")";
    }
}
