package io.lifeline.hooks;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A provider's rate or usage limit as a runtime reports it, and when it resets. A runtime that gives up on a 429
 * says so in its failure hook (Claude Code: {@code StopFailure} with {@code error: "rate_limit"}, its
 * {@code last_assistant_message} the API's error) or its error event (opencode's {@code session.error}); none of
 * them passes the answer's headers on. So the reset is read from the error's text, in the forms providers word it:
 * <ul>
 *   <li>{@code try again in 6.5s}, {@code in 1m30s}, {@code in 20ms}, {@code in 2h} (OpenAI's rate-limit message);</li>
 *   <li>{@code retry after 20 seconds} ({@code Retry-After} as a sentence);</li>
 *   <li>{@code resets at 2026-11-28T15:00:00Z} (an ISO-8601 instant after "reset");</li>
 *   <li>{@code usage limit reached|1795874100} (Claude's usage-limit answer: epoch seconds after a bar);</li>
 *   <li>{@code "resets_at": 1795874100}, {@code "resets_in_seconds": 3600} (Codex's usage-limit body).</li>
 * </ul>
 * Absent any of them the reset is unknown, and the caller applies its documented default. The text is read here, in
 * memory, and goes no further: only the instant comes out.
 */
public final class UsageLimit {
    /** The reset a limit is given when its answer names none: 30 minutes after it was reported. */
    public static final Duration DEFAULT_RESET = Duration.ofMinutes(30);
    /** The most of a wait read from a message: a week. A later reset is read as a week away. */
    public static final Duration MAX_WAIT = Duration.ofDays(7);

    private static final Pattern LIMIT = Pattern.compile(
            "rate[ _-]?limit|usage[ _-]?limit|too many requests|\\b429\\b|quota|resource[ _]exhausted");
    private static final Pattern TRY_AGAIN = Pattern.compile(
            "(?:try again|retry) (?:in|after) ((?:\\d+(?:\\.\\d+)?\\s*(?:ms|milliseconds?|s|sec|secs|seconds?|m|min|mins|"
                    + "minutes?|h|hours?)\\s*)+)");
    private static final Pattern PART = Pattern.compile(
            "(\\d+(?:\\.\\d+)?)\\s*(ms|milliseconds?|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)");
    private static final Pattern RESETS_AT = Pattern.compile(
            "resets?(?: at)? (\\d{4}-\\d{2}-\\d{2}t\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:z|[+-]\\d{2}:\\d{2}))");
    private static final Pattern BAR_EPOCH = Pattern.compile("limit reached\\|(\\d{10})\\b");
    private static final Pattern RESETS_AT_FIELD = Pattern.compile("\"?resets_at\"?\\s*[:=]\\s*(\\d{10})\\b");
    private static final Pattern RESETS_IN_FIELD = Pattern.compile("\"?resets_in_seconds\"?\\s*[:=]\\s*(\\d{1,9})\\b");

    private UsageLimit() {
    }

    /** Whether {@code text} (an error's text, or a category a runtime gives it) reports a rate or usage limit. */
    public static boolean reported(String text) {
        return text != null && LIMIT.matcher(text.toLowerCase(Locale.ROOT)).find();
    }

    /**
     * When the limit {@code text} reports resets, read at {@code now}: from a relative wait or an absolute time in
     * it; empty when it names none. A reset before {@code now} is {@code now}; one past {@link #MAX_WAIT} is cut to it.
     */
    public static Optional<Instant> reset(String text, Instant now) {
        if (text == null) {
            return Optional.empty();
        }
        String t = text.toLowerCase(Locale.ROOT);
        Instant at = null;
        Matcher m = TRY_AGAIN.matcher(t);
        if (m.find()) {
            at = now.plus(wait(m.group(1)));
        } else if ((m = RESETS_AT.matcher(t)).find()) {
            try {
                at = Instant.parse(m.group(1).toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                at = null;
            }
        } else if ((m = BAR_EPOCH.matcher(t)).find() || (m = RESETS_AT_FIELD.matcher(t)).find()) {
            at = Instant.ofEpochSecond(Long.parseLong(m.group(1)));
        } else if ((m = RESETS_IN_FIELD.matcher(t)).find()) {
            at = now.plusSeconds(Long.parseLong(m.group(1)));
        }
        if (at == null) {
            return Optional.empty();
        }
        Instant latest = now.plus(MAX_WAIT);
        return Optional.of(at.isBefore(now) ? now : at.isAfter(latest) ? latest : at);
    }

    /** "1m30s", "6.5s", "20ms", "2 hours": their sum. */
    private static Duration wait(String words) {
        Duration total = Duration.ZERO;
        Matcher p = PART.matcher(words);
        while (p.find()) {
            double n = Double.parseDouble(p.group(1));
            String unit = p.group(2);
            long ms = unit.startsWith("ms") || unit.startsWith("milli") ? Math.round(n)
                    : unit.startsWith("h") ? Math.round(n * 3_600_000)
                    : unit.startsWith("m") ? Math.round(n * 60_000) : Math.round(n * 1000);
            total = total.plusMillis(ms);
            if (total.compareTo(MAX_WAIT) > 0) {
                return MAX_WAIT;
            }
        }
        return total;
    }
}
