package io.lifeline.schedule;

import com.cronutils.model.time.ExecutionTime;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code cron:<5 fields>}: Unix cron evaluated by cron-utils in the zone. Whatever cron-utils answers, this never
 * returns a time at or before the one asked about: an answer that is not later is retried from a later start,
 * a bounded number of times.
 */
final class CronSchedule implements Schedule {

    /** Retries when cron-utils answers a time that is not after the one asked about; each starts one minute later. */
    private static final int MAX_ATTEMPTS = 4;

    private final String expression;
    private final ZoneId zone;
    private final ExecutionTime executionTime;

    CronSchedule(String expression, ZoneId zone, ExecutionTime executionTime) {
        this.expression = Objects.requireNonNull(expression);
        this.zone = Objects.requireNonNull(zone);
        this.executionTime = Objects.requireNonNull(executionTime);
    }

    /** The next run after {@code t}; null only if cron-utils finds none (parse refuses expressions that never run). */
    @Override
    public Instant nextAfter(Instant t) {
        if (!Schedule.onCalendar(t)) {
            return null;
        }
        ZonedDateTime from = t.atZone(zone);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<ZonedDateTime> next = executionTime.nextExecution(from);
            if (next.isEmpty()) {
                return null;
            }
            Instant answer = next.get().toInstant();
            if (answer.isAfter(t)) {
                return answer;
            }
            from = from.plusMinutes(1);
        }
        throw new IllegalStateException("cron-utils gave no time after " + t + " for " + this);
    }

    @Override
    public String expression() {
        return expression;
    }

    @Override
    public ZoneId zone() {
        return zone;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CronSchedule other && expression.equals(other.expression) && zone.equals(other.zone);
    }

    @Override
    public int hashCode() {
        return Objects.hash(expression, zone);
    }

    @Override
    public String toString() {
        return expression + " (" + zone.getId() + ")";
    }
}
