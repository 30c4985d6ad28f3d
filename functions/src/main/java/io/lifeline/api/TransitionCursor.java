package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The opaque cursor of {@code GET .../transitions}: where the next page starts (the seq the next page stays
 * below), as URL-safe base64 of {@code t1:<seq>}. Clients give it back as it came; anything else is 400
 * INVALID_QUERY, never a 500.
 */
final class TransitionCursor {
    private static final String PREFIX = "t1:";
    private static final int MAX_CHARS = 64;

    private TransitionCursor() {
    }

    static String encode(long beforeSeq) {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((PREFIX + beforeSeq).getBytes(StandardCharsets.US_ASCII));
    }

    /** The seq the page stays below, or null when no cursor was given. */
    static Long decode(String cursor) {
        if (cursor == null) {
            return null;
        }
        try {
            if (cursor.length() <= MAX_CHARS) {
                String text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.US_ASCII);
                if (text.startsWith(PREFIX) && text.substring(PREFIX.length()).matches("[1-9][0-9]{0,17}")) {
                    return Long.parseLong(text.substring(PREFIX.length()));
                }
            }
        } catch (IllegalArgumentException e) {
            // not base64: refused below
        }
        throw LifelineException.badInput("INVALID_QUERY",
                "'cursor' must be a nextCursor from an earlier answer of this route, as it came");
    }
}
