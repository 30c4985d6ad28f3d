package io.lifeline.agent;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Every input limit, named once. Each is tested at its edge. */
public final class Limits {
    /** Largest request body accepted, in bytes (UTF-8). */
    public static final int MAX_BODY_BYTES = 16 * 1024;
    /**
     * A runtime's hook body may be this large (a tool's whole output, a model's whole request): Lambda's own limit
     * for a synchronous request. Only a few names are read from it; none of it is kept.
     */
    public static final int MAX_HOOK_BODY_BYTES = 6 * 1024 * 1024;
    /** Largest {@code metadata} object, serialised as JSON, in bytes. */
    public static final int MAX_METADATA_BYTES = 4 * 1024;
    /** Largest {@code checkpoint} object, serialised as JSON, in bytes. */
    public static final int MAX_CHECKPOINT_BYTES = 4 * 1024;
    /** Team, agent, host, task and key ids. */
    public static final Pattern ID_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /**
     * Agent display name and role, in UTF-8 bytes (64 ASCII characters, fewer in other scripts). Counted in
     * bytes because they live on the agent item, which must stay under 1 KB so a heartbeat is 1 write unit.
     */
    public static final int MAX_NAME_BYTES = 64;
    public static final int MAX_ROLE_BYTES = 64;
    /** A reason given with leave, fail, cleanup or pause, in characters. */
    public static final int MAX_REASON_CHARS = 160;
    /** The most restarts in an hour a host may report (one a second). */
    public static final long MAX_RESTARTS_LAST_HOUR = 3600;
    /** The longest restart a host daemon may announce with a crash report ({@code restartInSeconds}). */
    public static final long MAX_HOST_RESTART_SECONDS = 3600;
    /** A reason as stamped on the agent item, in UTF-8 bytes; longer ones are cut there, not refused. */
    public static final int MAX_STORED_REASON_BYTES = 100;
    /** A schedule expression and its IANA time zone id, on the agent item. */
    public static final int MAX_SCHEDULE_CHARS = 64;
    public static final int MAX_TIME_ZONE_CHARS = 40;
    public static final int MAX_TASK_TITLE_CHARS = 256;
    public static final int MAX_ERROR_MESSAGE_CHARS = 4096;
    /** Entries in one batched heartbeat call. */
    public static final int MAX_BATCH_HEARTBEATS = 25;
    /** Bounds of {@code staleAfterSeconds} and {@code nextHeartbeatWithinSeconds}. */
    public static final int MIN_STALE_AFTER_SECONDS = 1;
    public static final int MAX_STALE_AFTER_SECONDS = 7 * 24 * 3600;
    public static final int MAX_GRACE_MISSES = 100;
    public static final int MAX_PAGE_SIZE = 100;

    private Limits() {
    }

    public static String requireId(String what, String value) {
        if (value == null || !ID_PATTERN.matcher(value).matches()) {
            throw LifelineException.badInput("INVALID_ID",
                    what + " must match [A-Za-z0-9._-]{1,64}" + (value == null ? " (missing)" : ""));
        }
        return value;
    }

    public static String cut(String text, int maxChars) {
        return text == null || text.length() <= maxChars ? text : text.substring(0, maxChars);
    }

    /** {@code text} cut to at most {@code maxBytes} of UTF-8, never inside a character. */
    public static String cutUtf8(String text, int maxBytes) {
        if (text == null || utf8Length(text) <= maxBytes) {
            return text;
        }
        int bytes = 0;
        int end = 0;
        while (end < text.length()) {
            int cp = text.codePointAt(end);
            int size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + size > maxBytes) {
                break;
            }
            bytes += size;
            end += Character.charCount(cp);
        }
        return text.substring(0, end);
    }

    public static int utf8Length(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }
}
