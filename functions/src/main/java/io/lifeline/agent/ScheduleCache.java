package io.lifeline.agent;

import io.lifeline.schedule.Schedule;
import io.lifeline.schedule.Schedules;
import java.util.LinkedHashMap;
import java.util.Map;

/** Parsed schedules by (expression, zone): parsing a cron expression on every heartbeat would be waste. */
final class ScheduleCache {
    private static final int MAX_ENTRIES = 10_000;
    private static final Map<String, Schedule> CACHE = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Schedule> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    private ScheduleCache() {
    }

    static synchronized Schedule parse(String expression, String zone) {
        return CACHE.computeIfAbsent(expression + "\u0000" + zone, k -> Schedules.parse(expression, zone));
    }
}
