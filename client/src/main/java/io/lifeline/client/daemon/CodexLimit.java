package io.lifeline.client.daemon;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.hooks.UsageLimit;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Month;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Codex CLI's usage limit, read from its session's rollout file (docs/runtimes/codex.md, "Usage limits"). Codex
 * fires no failure hook when its provider answers {@code usage_limit_reached}: it ends the turn with a
 * {@code task_complete} event whose {@code error} is {@code {"message": "You've hit your usage limit. Try again at
 * 5:49 PM.", "codex_error_info": "usage_limit_exceeded"}}, writes it to the rollout file its hooks name
 * ({@code transcript_path}), and ends its session. Only that last {@code task_complete} of the file's tail is read,
 * in memory: only the reset comes out of this class, never the text.
 *
 * <p>Codex words the reset in the local time of its process, to the minute and rounded down ("Try again at 6:50 PM."
 * for a reset at 18:50:33; "at Nov 29th, 2026 9:35 PM." for one on another day; "Try again later." when the answer
 * named no {@code resets_at}): the limit has surely reset at the end of that minute, which is the reset read here.
 */
final class CodexLimit {
    /** How much of the rollout file's end is read for its last turn's end. */
    static final int TAIL_BYTES = 64 * 1024;
    /** Codex's own category of a usage-limit failure. */
    static final String USAGE_LIMIT_EXCEEDED = "usage_limit_exceeded";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonFactory FACTORY = JSON.getFactory();
    /** A rollout file's name: {@code rollout-<time>-<session id>.jsonl}. */
    private static final Pattern ROLLOUT = Pattern.compile("rollout-[0-9T:-]+-([0-9a-fA-F-]{8,64})\\.jsonl");
    private static final Pattern TRY_AGAIN_AT = Pattern.compile("try again at (?:([a-z]{3})[a-z]* (\\d{1,2})"
            + "(?:st|nd|rd|th)?,? (\\d{4}),? )?(\\d{1,2}):(\\d{2})\\s*([ap])\\.?m\\b");

    private CodexLimit() {
    }

    /**
     * The rollout file a Codex hook body names ({@code transcript_path}) when it is one: an absolute path to a file
     * named {@code rollout-<time>-<id>.jsonl} of the session the hook named ({@code session}, when it named one);
     * else null. Only that top-level field is read; every other value is skipped unread.
     */
    static Path rollout(byte[] hookBody, String session) {
        String path = null;
        try (JsonParser p = FACTORY.createParser(hookBody)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("transcript_path".equals(name) && value == JsonToken.VALUE_STRING) {
                    path = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            return null;
        }
        if (path == null || path.length() > 4096 || path.indexOf('\0') >= 0) {
            return null;
        }
        Path file = Path.of(path);
        Matcher m = file.getFileName() == null ? null : ROLLOUT.matcher(file.getFileName().toString());
        if (!file.isAbsolute() || m == null || !m.matches() || session != null && !session.equals(m.group(1))) {
            return null;
        }
        return file;
    }

    /**
     * When the usage limit that ended the session's last turn resets, read at {@code now} in Codex's local time
     * {@code zone}; empty when the file's last turn did not end at a usage limit (or the file cannot be read).
     */
    static Optional<Instant> limitUntil(Path rollout, Instant now, ZoneId zone) {
        return lastTurnError(rollout).filter(CodexLimit::usageLimit).map(e -> reset(e, now, zone));
    }

    /**
     * The {@code error} of the last {@code task_complete} in the file's last {@value #TAIL_BYTES} bytes; empty when
     * the last turn ended without one, when none is there, or the file cannot be read.
     */
    static Optional<JsonNode> lastTurnError(Path rollout) {
        String tail;
        try {
            tail = tail(rollout);
        } catch (IOException e) {
            return Optional.empty();
        }
        String[] lines = tail.split("\n");
        for (int i = lines.length - 1; i >= 0; i--) {
            String line = lines[i];
            if (!line.contains("\"task_complete\"")) {
                continue; // the cheap test first: most lines are the conversation, never parsed
            }
            try {
                JsonNode payload = JSON.readTree(line).path("payload");
                if ("task_complete".equals(payload.path("type").asText())) {
                    JsonNode error = payload.path("error");
                    return error.isObject() ? Optional.of(error) : Optional.empty();
                }
            } catch (IOException e) {
                // a line cut by the tail's start, or one being written: not the turn's end
            }
        }
        return Optional.empty();
    }

    /** Whether a turn's {@code error} is a provider's usage or rate limit. */
    static boolean usageLimit(JsonNode error) {
        JsonNode info = error.path("codex_error_info");
        String category = info.isTextual() ? info.asText() : info.isObject() && info.fieldNames().hasNext()
                ? info.fieldNames().next() : "";
        return USAGE_LIMIT_EXCEEDED.equalsIgnoreCase(category) || UsageLimit.reported(category)
                || UsageLimit.reported(error.path("message").asText(null));
    }

    /**
     * The reset of a usage-limit {@code error}: its {@code resets_at} (epoch seconds), else its
     * {@code resets_in_seconds}, else the end of the minute its message's "try again at" names (the next such local
     * time), else a wait or instant its message words otherwise, else {@link UsageLimit#DEFAULT_RESET} after
     * {@code now}; never before {@code now} nor past {@link UsageLimit#MAX_WAIT}.
     */
    static Instant reset(JsonNode error, Instant now, ZoneId zone) {
        Instant at = null;
        if (error.path("resets_at").isIntegralNumber()) {
            at = Instant.ofEpochSecond(error.path("resets_at").asLong());
        } else if (error.path("resets_in_seconds").isNumber()) {
            at = now.plusSeconds(Math.max(0, error.path("resets_in_seconds").asLong()));
        }
        String message = error.path("message").asText("");
        if (at == null) {
            at = tryAgainAt(message, now, zone).orElse(null);
        }
        if (at == null) {
            at = UsageLimit.reset(message, now).orElse(now.plus(UsageLimit.DEFAULT_RESET));
        }
        Instant latest = now.plus(UsageLimit.MAX_WAIT);
        return at.isBefore(now) ? now : at.isAfter(latest) ? latest : at;
    }

    /**
     * "Try again at 6:50 PM." or "Try again at Nov 29th, 2026 9:35 PM." (Codex's words, in local time, rounded down
     * to the minute): the end of that minute, for a time alone the first such minute that ends after {@code now}
     * less a minute (the message was written just before it is read); empty when the text names none.
     */
    static Optional<Instant> tryAgainAt(String text, Instant now, ZoneId zone) {
        Matcher m = TRY_AGAIN_AT.matcher(text.toLowerCase(Locale.ROOT).replace('\u202f', ' ').replace('\u00a0', ' '));
        if (!m.find()) {
            return Optional.empty();
        }
        int hour = Integer.parseInt(m.group(4));
        int minute = Integer.parseInt(m.group(5));
        if (hour < 1 || hour > 12 || minute > 59) {
            return Optional.empty();
        }
        LocalTime time = LocalTime.of(hour % 12 + ("p".equals(m.group(6)) ? 12 : 0), minute);
        if (m.group(1) != null) {
            Optional<Month> month = month(m.group(1));
            int day = Integer.parseInt(m.group(2));
            if (month.isEmpty() || day < 1 || day > month.get().length(true)) {
                return Optional.empty();
            }
            try {
                LocalDate date = LocalDate.of(Integer.parseInt(m.group(3)), month.get(), day);
                return Optional.of(LocalDateTime.of(date, time).atZone(zone).toInstant().plus(Duration.ofMinutes(1)));
            } catch (DateTimeException e) {
                return Optional.empty();
            }
        }
        ZonedDateTime local = now.atZone(zone);
        ZonedDateTime end = local.with(time).plusMinutes(1);
        if (!end.toInstant().isAfter(now.minus(Duration.ofMinutes(1)))) {
            end = local.plusDays(1).with(time).plusMinutes(1);
        }
        return Optional.of(end.toInstant());
    }

    private static Optional<Month> month(String abbreviation) {
        for (Month mo : Month.values()) {
            if (mo.name().toLowerCase(Locale.ROOT).startsWith(abbreviation)) {
                return Optional.of(mo);
            }
        }
        return Optional.empty();
    }

    /** The file's last {@value #TAIL_BYTES} bytes as text (its first line may be cut). */
    private static String tail(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("not a file");
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long length = f.length();
            int n = (int) Math.min(length, TAIL_BYTES);
            byte[] bytes = new byte[n];
            f.seek(length - n);
            f.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
