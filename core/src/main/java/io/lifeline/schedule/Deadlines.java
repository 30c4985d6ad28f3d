package io.lifeline.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/** When the heartbeat after this one must have arrived, for an agent on a {@link Schedule}. */
public final class Deadlines {

    private Deadlines() {
    }

    /**
     * The deadline for the next heartbeat after one that arrived at {@code heartbeatAt}.
     *
     * <p>The rule:
     * <ol>
     *   <li>{@code every:} schedules are measured from the heartbeat itself, so a heartbeat is never early:
     *       the deadline is {@code heartbeatAt + interval + grace}.</li>
     *   <li>For the calendar forms ({@code daily}, {@code hourly}, {@code cron}, {@code at}) let
     *       {@code slot = schedule.nextAfter(heartbeatAt)}. If {@code slot - heartbeatAt <= grace} the heartbeat
     *       is early and counts for {@code slot}; the deadline is then {@code schedule.nextAfter(slot) + grace}.
     *       Otherwise the deadline is {@code slot + grace}. A late heartbeat (after its slot, within grace)
     *       needs nothing special: the next slot after it is the following one.</li>
     *   <li>null means no deadline, because no further heartbeat is expected: an {@code at:} schedule whose
     *       instant is not after the heartbeat, or whose instant the (early) heartbeat counted for.</li>
     * </ol>
     * Example, {@code daily:02:00} with 60 s of grace: a heartbeat at 01:58 gives 02:01 today; one at 01:59:30
     * counts for today's 02:00 and gives 02:01 tomorrow.
     *
     * <p>When {@code grace} is as long as the gap between slots (say {@code cron:* * * * *} with 60 s), every
     * heartbeat counts as early and the deadline moves one slot further out; choose a grace shorter than the
     * schedule's period.
     *
     * @param grace how late a heartbeat may be after its slot; zero or positive
     * @return the deadline, or null when no further heartbeat is expected
     */
    public static Instant next(Schedule schedule, Instant heartbeatAt, Duration grace) {
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(heartbeatAt, "heartbeatAt");
        Objects.requireNonNull(grace, "grace");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("grace must not be negative: " + grace);
        }
        Instant slot = schedule.nextAfter(heartbeatAt);
        if (slot == null) {
            return null;
        }
        if (!(schedule instanceof EverySchedule) && Duration.between(heartbeatAt, slot).compareTo(grace) <= 0) {
            slot = schedule.nextAfter(slot);
            if (slot == null) {
                return null;
            }
        }
        return slot.plus(grace);
    }
}
