package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The opaque cursor of {@code GET .../events}: the team it was given to and where the next page starts (the
 * position in the log's order, time then event id, that the next page stays below), as URL-safe base64 of
 * {@code e1:<team>:<position>}. A cursor is good only for the team that was given it: another team's, or anything
 * else, is 400 INVALID_QUERY, never a 500 and never a read.
 */
final class EventCursor {
    private static final String PREFIX = "e1:";
    /** Base64 of the prefix, a team id, the position's 16 characters and an event id (about 3 x 64 characters). */
    static final int MAX_CHARS = 512;
    /** The log's sort key: {@code E#<13-digit epoch ms>#<event id>}. */
    private static final Pattern POSITION = Pattern.compile("E#[0-9]{13}#[^\\s]{1,300}");

    private EventCursor() {
    }

    static String encode(String team, String position) {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((PREFIX + team + ":" + position).getBytes(StandardCharsets.UTF_8));
    }

    /** The position the page stays below, or null when no cursor was given. */
    static String decode(String team, String cursor) {
        if (cursor == null) {
            return null;
        }
        try {
            if (cursor.length() <= MAX_CHARS) {
                String text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
                String mine = PREFIX + team + ":";
                if (text.startsWith(mine)) {
                    Matcher m = POSITION.matcher(text.substring(mine.length()));
                    if (m.matches()) {
                        return m.group();
                    }
                }
            }
        } catch (IllegalArgumentException e) {
            // not base64: refused below
        }
        throw LifelineException.badInput("INVALID_QUERY",
                "'cursor' must be a nextCursor from an earlier answer of this route for this team, as it came");
    }
}
