package io.lifeline.client.heartbeatmd;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as heartbeat.md writes them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
final class Durations {
    private static final Pattern DURATION = Pattern.compile("([0-9]{1,9})(ms|s|m|h)");

    private Durations() {
    }

    /** Parses a duration, or null if the text is not one. */
    static Duration parse(String text) {
        Matcher m = DURATION.matcher(text.strip());
        if (!m.matches()) {
            return null;
        }
        long n = Long.parseLong(m.group(1));
        switch (m.group(2)) {
            case "ms":
                return Duration.ofMillis(n);
            case "s":
                return Duration.ofSeconds(n);
            case "m":
                return Duration.ofMinutes(n);
            default:
                return Duration.ofHours(n);
        }
    }

    /** Shortest exact form: {@code 30s}, {@code 5m}, {@code 500ms}. */
    static String format(Duration d) {
        if (d.toMillis() % 1000 != 0) {
            return d.toMillis() + "ms";
        }
        long s = d.toSeconds();
        if (s != 0 && s % 3600 == 0) {
            return s / 3600 + "h";
        }
        if (s != 0 && s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }

    private static final Pattern ELAPSED = Pattern.compile("([0-9]{1,9})(?:\\.([0-9]))?s");

    /** A {@code duration} field as {@link #formatElapsed} writes it ({@code 1.2s}), or null (also for null). */
    static Duration parseElapsed(String text) {
        Matcher m = text == null ? null : ELAPSED.matcher(text.strip());
        if (m == null || !m.matches()) {
            return null;
        }
        return Duration.ofSeconds(Long.parseLong(m.group(1)))
                .plusMillis(m.group(2) == null ? 0 : Long.parseLong(m.group(2)) * 100);
    }

    /** The heartbeat.md format's {@code duration} field: seconds with one decimal, e.g. {@code 1.2s}. */
    static String formatElapsed(Duration d) {
        return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
    }
}
