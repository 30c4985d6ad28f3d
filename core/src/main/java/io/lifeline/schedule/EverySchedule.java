package io.lifeline.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/** {@code every:<n><unit>}: the next heartbeat is due {@code interval} after the previous one. */
record EverySchedule(String expression, ZoneId zone, Duration interval) implements Schedule {

    EverySchedule {
        Objects.requireNonNull(expression);
        Objects.requireNonNull(zone);
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive: " + interval);
        }
    }

    @Override
    public Instant nextAfter(Instant t) {
        return t.isAfter(Instant.MAX.minus(interval)) ? null : t.plus(interval);
    }

    @Override
    public String toString() {
        return expression + " (" + zone.getId() + ")";
    }
}
