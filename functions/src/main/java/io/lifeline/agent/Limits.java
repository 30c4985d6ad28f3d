package io.lifeline.agent;

import java.util.regex.Pattern;

/** Every input limit, named once. Each is tested at its edge. */
public final class Limits {
    /** Largest request body accepted, in bytes (UTF-8). */
    public static final int MAX_BODY_BYTES = 16 * 1024;
    /** Largest {@code metadata} object, serialised as JSON, in bytes. */
    public static final int MAX_METADATA_BYTES = 4 * 1024;
    /** Largest {@code checkpoint} object, serialised as JSON, in bytes. */
    public static final int MAX_CHECKPOINT_BYTES = 4 * 1024;
    /** Team, agent, host, task and key ids. */
    public static final Pattern ID_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /** Agent display name, in characters. Kept short so an agent item stays under 1 KB (1 write unit). */
    public static final int MAX_NAME_CHARS = 64;
    public static final int MAX_ROLE_CHARS = 64;
    /** A transition's reason; longer reasons are cut, not refused. */
    public static final int MAX_REASON_CHARS = 160;
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
}
