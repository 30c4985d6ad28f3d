package io.lifeline.store.dynamo;

import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * A list's cursor: where the next page starts, as the caller carries it. It names the list, a tag of the team (a
 * hash: the cursor never names the team), the filter, and the position (the last entry's id, and for an index its
 * sort key), base64url. Decoding checks all of them: a cursor of another team, list or filter, or one altered, is
 * refused 400 {@code INVALID_QUERY}. No secret signs it: the store builds the start key from the team of the request's
 * path and the position's checked parts, so an altered cursor can at most start the caller's own list elsewhere.
 */
public final class Cursors {
    private static final String VERSION = "c1";
    private static final String SEP = "|";
    /** Far above any cursor this class writes (ids are at most 64 characters). */
    private static final int MAX_LENGTH = 512;

    private Cursors() {
    }

    public static String encode(String list, String team, String filter, String... position) {
        List<String> parts = new ArrayList<>(List.of(VERSION, list, teamTag(team), filter == null ? "" : filter));
        parts.addAll(Arrays.asList(position));
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString(String.join(SEP, parts).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The position of {@code cursor}, {@code parts} strings (each an id or a number, as its writer put them), when it
     * was issued for this {@code list}, {@code team} and {@code filter}; otherwise refused 400 INVALID_QUERY.
     */
    public static List<String> decode(String cursor, String list, String team, String filter, int parts) {
        if (cursor.length() > MAX_LENGTH) {
            throw invalid("it is longer than any cursor Lifeline issues");
        }
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid("it is not one Lifeline issued");
        }
        List<String> fields = Arrays.asList(text.split("\\|", -1));
        if (fields.size() != 4 + parts || !VERSION.equals(fields.get(0)) || !list.equals(fields.get(1))) {
            throw invalid("it is not one Lifeline issued for this list");
        }
        if (!teamTag(team).equals(fields.get(2))) {
            throw invalid("it was issued for another team's list");
        }
        if (!(filter == null ? "" : filter).equals(fields.get(3))) {
            throw invalid("it was issued for another filter; ask the same filter as the page it came with");
        }
        List<String> position = fields.subList(4, fields.size());
        for (String p : position) {
            if (!Limits.ID_PATTERN.matcher(p).matches()) {
                throw invalid("it is not one Lifeline issued");
            }
        }
        return List.copyOf(position);
    }

    /** A position part that is a number (an index's sort key), refused as the cursor is when it is not one. */
    public static long number(String part) {
        try {
            return Long.parseLong(part);
        } catch (NumberFormatException e) {
            throw invalid("it is not one Lifeline issued");
        }
    }

    private static LifelineException invalid(String why) {
        return LifelineException.badInput("INVALID_QUERY",
                "'cursor' is not valid here: " + why + " (a cursor is good only with the team, list and filter of the "
                        + "page that answered it; start again without one)");
    }

    /** 12 bytes of SHA-256 of the team's name: binds a cursor to its team without naming it. */
    private static String teamTag(String team) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(("cursor:" + team)
                    .getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 12));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JVM", e);
        }
    }
}
