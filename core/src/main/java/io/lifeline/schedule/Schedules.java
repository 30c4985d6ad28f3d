package io.lifeline.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the schedule forms (every, cron, daily, hourly, at). Everything a caller can get wrong is refused with
 * {@link InvalidScheduleException} with a sentence for a person (the API answers it as 400 INVALID_SCHEDULE).
 *
 * <p>Accepted, after trimming surrounding whitespace (prefixes are lower case):
 * <ul>
 *   <li>{@code every:<n><s|m|h|d>}, 1 s to 7 d, e.g. {@code every:30s}, {@code every:5m}; canonical without
 *       leading zeros</li>
 *   <li>{@code cron:<minute> <hour> <day-of-month> <month> <day-of-week>} (Unix; names such as MON and JAN
 *       allowed); canonical with single spaces. An expression that can never run (30 February) is refused.</li>
 *   <li>{@code daily:HH:MM}, 24-hour, two digits each</li>
 *   <li>{@code hourly}</li>
 *   <li>{@code at:<ISO-8601 date-time with Z or an offset>}, in the years 0000 to 9999; canonical as the UTC
 *       instant ({@code at:2026-03-01T11:00:00Z})</li>
 * </ul>
 * The time zone is an id {@link ZoneId#of} knows (an IANA region such as {@code Europe/Berlin}, or a fixed
 * offset such as {@code +05:30}); null means UTC.
 */
public final class Schedules {

    /** Longest schedule expression accepted, in characters (before trimming). */
    public static final int MAX_EXPRESSION_CHARS = 128;
    /** Longest time zone id accepted, in characters. */
    public static final int MAX_ZONE_CHARS = 64;
    /** Longest reason given; cron-utils' own messages echo the input, sometimes twice. */
    static final int MAX_REASON_CHARS = 300;
    public static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
    public static final Duration MAX_INTERVAL = Duration.ofDays(7);

    /** The range of {@code at:} instants accepted: the years ISO-8601 writes with four digits. */
    private static final Instant AT_EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant AT_LATEST = Instant.parse("9999-12-31T23:59:59Z");
    private static final String FORMS =
            "every:<n><s|m|h|d>, cron:<5 fields>, daily:HH:MM, hourly or at:<ISO-8601 instant>";
    private static final Pattern EVERY = Pattern.compile("(-?[0-9]+)([a-zA-Z]*)");
    private static final Pattern DAILY = Pattern.compile("([0-9]{2}):([0-9]{2})");
    private static final CronParser CRON_PARSER =
            new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    /** Where the "can this cron ever run" check starts; any date works, as cron repeats at most every 28 years. */
    private static final LocalDateTime CRON_PROBE_START = LocalDateTime.of(2000, 1, 1, 0, 0);

    private Schedules() {
    }

    /**
     * @param expression one of the forms above
     * @param timeZone   a zone id, or null for UTC
     * @throws InvalidScheduleException when either argument is not acceptable
     */
    public static Schedule parse(String expression, String timeZone) {
        ZoneId zone = zone(timeZone);
        if (expression == null || expression.isBlank()) {
            throw invalid("schedule is missing; use " + FORMS);
        }
        if (expression.length() > MAX_EXPRESSION_CHARS) {
            throw invalid("schedule is longer than " + MAX_EXPRESSION_CHARS + " characters");
        }
        String text = expression.strip();
        if (text.equals("hourly")) {
            return new HourlySchedule("hourly", zone);
        }
        int colon = text.indexOf(':');
        String form = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1).strip();
        switch (form) {
            case "every":
                return every(value, zone);
            case "cron":
                return cron(value, zone);
            case "daily":
                return daily(value, zone);
            case "at":
                return at(value, zone);
            case "hourly":
                throw invalid("hourly takes no argument (it means the top of every hour in the time zone)");
            case "startup":
            case "on_change":
                throw invalid("'" + form + "' is not a time schedule, so no heartbeat time can be expected from it; use "
                        + FORMS);
            default:
                throw invalid("unknown schedule form '" + quote(form) + "'; use " + FORMS);
        }
    }

    private static ZoneId zone(String timeZone) {
        if (timeZone == null) {
            return ZoneOffset.UTC;
        }
        if (timeZone.isBlank() || timeZone.length() > MAX_ZONE_CHARS) {
            throw invalid("time zone must be an IANA zone id such as Europe/Berlin (or omitted for UTC)");
        }
        try {
            return ZoneId.of(timeZone);
        } catch (DateTimeException e) {
            throw invalid("unknown time zone '" + quote(timeZone) + "'; use an IANA zone id such as Europe/Berlin");
        }
    }

    private static Schedule every(String value, ZoneId zone) {
        Matcher m = EVERY.matcher(value);
        if (!m.matches()) {
            throw invalid("every needs a whole number and a unit, e.g. every:30s, every:5m, every:1h, every:1d");
        }
        String unit = m.group(2);
        if (unit.isEmpty()) {
            throw invalid("every:" + m.group(1) + " has no unit; add s, m, h or d (e.g. every:5m)");
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw invalid("every:" + quote(value) + " is too large; the longest interval is 7d");
        }
        if (n <= 0) {
            throw invalid("every needs an interval greater than zero, got " + quote(value));
        }
        Duration interval;
        switch (unit) {
            case "s":
                interval = n > MAX_INTERVAL.toSeconds() ? null : Duration.ofSeconds(n);
                break;
            case "m":
                interval = n > MAX_INTERVAL.toMinutes() ? null : Duration.ofMinutes(n);
                break;
            case "h":
                interval = n > MAX_INTERVAL.toHours() ? null : Duration.ofHours(n);
                break;
            case "d":
                interval = n > MAX_INTERVAL.toDays() ? null : Duration.ofDays(n);
                break;
            default:
                throw invalid("unknown unit '" + quote(unit) + "' in every:" + quote(value) + "; use s, m, h or d");
        }
        if (interval == null) {
            throw invalid("every:" + value + " is longer than the longest interval, 7d");
        }
        return new EverySchedule("every:" + n + unit, zone, interval);
    }

    private static Schedule cron(String value, ZoneId zone) {
        String[] fields = value.isEmpty() ? new String[0] : value.split("\\s+");
        if (fields.length != 5) {
            throw invalid("cron needs 5 fields (minute hour day-of-month month day-of-week), got " + fields.length);
        }
        String canonical = String.join(" ", fields);
        ExecutionTime executionTime;
        boolean runs;
        try {
            Cron cron = CRON_PARSER.parse(canonical).validate();
            executionTime = ExecutionTime.forCron(cron);
            runs = executionTime.nextExecution(CRON_PROBE_START.atZone(ZoneOffset.UTC)).isPresent();
        } catch (IllegalArgumentException e) {
            throw invalid("invalid cron expression '" + quote(canonical) + "': " + e.getMessage());
        } catch (RuntimeException e) {
            // cron-utils fails on some malformed fields with its own bugs (ArrayIndexOutOfBoundsException for
            // "9-17/" or "0|"), not IllegalArgumentException; the text is still the caller's mistake.
            throw invalid("invalid cron expression '" + quote(canonical) + "': a field is not a number, name, "
                    + "range (1-5), step (*/15 or 9-17/2) or list (1,15) of them");
        }
        if (!runs) {
            throw invalid("cron expression '" + quote(canonical) + "' never runs (no such date)");
        }
        return new CronSchedule("cron:" + canonical, zone, executionTime);
    }

    private static Schedule daily(String value, ZoneId zone) {
        Matcher m = DAILY.matcher(value);
        if (!m.matches()) {
            throw invalid("daily needs a 24-hour time HH:MM, e.g. daily:02:00");
        }
        int hour = Integer.parseInt(m.group(1));
        int minute = Integer.parseInt(m.group(2));
        if (hour > 23 || minute > 59) {
            throw invalid("daily:" + value + " is not a time of day; hours run 00-23 and minutes 00-59");
        }
        return new DailySchedule("daily:" + value, zone, LocalTime.of(hour, minute));
    }

    private static Schedule at(String value, ZoneId zone) {
        Instant at;
        try {
            at = OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            throw invalid("at needs an ISO-8601 date-time with Z or an offset, e.g. at:2026-03-01T12:00:00Z or "
                    + "at:2026-03-01T13:00:00+01:00");
        }
        if (at.isBefore(AT_EARLIEST) || at.isAfter(AT_LATEST)) {
            throw invalid("at:" + quote(value) + " is outside the years 0000 to 9999");
        }
        return new AtSchedule("at:" + at, zone, at);
    }

    private static InvalidScheduleException invalid(String why) {
        String text = printable(why);
        if (text.length() > MAX_REASON_CHARS) {
            int cut = Character.isHighSurrogate(text.charAt(MAX_REASON_CHARS - 4)) ? MAX_REASON_CHARS - 4 : MAX_REASON_CHARS - 3;
            text = text.substring(0, cut) + "...";
        }
        return new InvalidScheduleException(text);
    }

    /**
     * The reason as one printable line: control characters and line or paragraph separators echoed from the input
     * are shown as escapes ({@code \n}, {@code \u001b}), so a reason never breaks a log line or a terminal.
     */
    static String printable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029'
                    || Character.isSurrogate(c) && !paired(text, i)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean paired(String text, int i) {
        char c = text.charAt(i);
        return Character.isHighSurrogate(c) ? i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))
                : i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
    }

    /** Input echoed into a message, cut so a message stays short (never between the two halves of a surrogate pair). */
    private static String quote(String text) {
        if (text.length() <= 40) {
            return text;
        }
        int cut = Character.isHighSurrogate(text.charAt(39)) ? 39 : 40;
        return text.substring(0, cut) + "...";
    }
}
