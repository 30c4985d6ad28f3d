package io.lifeline.client.heartbeatmd;

import io.lifeline.schedule.InvalidScheduleException;
import io.lifeline.schedule.Schedule;
import io.lifeline.schedule.Schedules;

/**
 * An action's {@code schedule}: a time schedule from {@link Schedules} ({@code at:}, {@code every:},
 * {@code cron:}, {@code daily:}, {@code hourly}), or one of the runner's own forms ({@code startup},
 * {@code on_change:<path>}), or none (run once, as soon as possible).
 */
public record ScheduleSpec(Kind kind, Schedule schedule, String watchPath) {

    public enum Kind { NONE, AT, EVERY, CALENDAR, STARTUP, ON_CHANGE }

    /** @throws io.lifeline.schedule.InvalidScheduleException when the text is not a schedule */
    static ScheduleSpec parse(String text, String zone) {
        if (text == null) {
            return new ScheduleSpec(Kind.NONE, null, null);
        }
        String t = text.strip();
        if (t.equals("startup")) {
            return new ScheduleSpec(Kind.STARTUP, null, null);
        }
        if (t.startsWith("on_change:")) {
            String path = t.substring("on_change:".length()).strip();
            if (path.isEmpty()) {
                throw new InvalidScheduleException(
                        "on_change: needs a path to watch, e.g. on_change:config/agent.yaml");
            }
            return new ScheduleSpec(Kind.ON_CHANGE, null, path);
        }
        Schedule s = Schedules.parse(t, zone);
        String e = s.expression();
        Kind kind = e.startsWith("at:") ? Kind.AT : e.startsWith("every:") ? Kind.EVERY : Kind.CALENDAR;
        return new ScheduleSpec(kind, s, null);
    }

    /** True for forms that run again after completing (every, cron, daily, hourly, startup, on_change). */
    public boolean recurring() {
        return kind != Kind.NONE && kind != Kind.AT;
    }
}
