package io.lifeline.schedule;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/** {@code at:<instant>}: one expected time; nothing is expected after it. */
record AtSchedule(String expression, ZoneId zone, Instant at) implements Schedule {

    AtSchedule {
        Objects.requireNonNull(expression);
        Objects.requireNonNull(zone);
        Objects.requireNonNull(at);
    }

    /** {@code at} if it is after {@code t}, otherwise null: no further heartbeat is expected. */
    @Override
    public Instant nextAfter(Instant t) {
        return at.isAfter(t) ? at : null;
    }

    @Override
    public String toString() {
        return expression + " (" + zone.getId() + ")";
    }
}
