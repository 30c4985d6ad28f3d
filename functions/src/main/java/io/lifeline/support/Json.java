package io.lifeline.support;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The one ObjectMapper, and small helpers for building answers. No reflection-based binding on the hot path. */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper();
    /** The deepest nesting a body may have. */
    static final int MAX_NESTING_DEPTH = 64;
    private static final Pattern DUPLICATE = Pattern.compile("^Duplicate field '(.*)' for ");
    private static final Pattern TOKEN = Pattern.compile("^(?:Non-standard|Unrecognized) token '(.*?)'");

    static {
        MAPPER.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        MAPPER.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        // A 16 KiB body cannot be deeper than this legitimately; refuse pathological nesting early.
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING_DEPTH).build());
    }

    private Json() {
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    public static JsonNode parse(String text) throws JsonProcessingException {
        return MAPPER.readTree(text);
    }

    /**
     * Why a text is not JSON we accept, in plain words for a person: never the parser's names for its settings
     * or types (Jackson's messages name {@code DeserializationFeature}s and {@code StreamReadConstraints}).
     * Names the line and column where the parser stopped, when it knows them.
     */
    public static String problem(JsonProcessingException e) {
        String m = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        Matcher duplicate = DUPLICATE.matcher(m);
        if (duplicate.find()) {
            return "duplicate field \"" + duplicate.group(1) + "\" (each field may appear only once)";
        }
        String what;
        if (m.startsWith("Trailing token")) {
            what = "more than one JSON value (send exactly one)";
        } else if (m.startsWith("Unexpected end-of-input")) {
            what = "it ends before the JSON value is complete (an object, array or string is not closed)";
        } else if (e instanceof StreamConstraintsException) {
            what = m.startsWith("Document nesting depth") ? "it is nested more than " + MAX_NESTING_DEPTH
                    + " levels deep"
                    : m.startsWith("Number value length") ? "a number has too many digits"
                    : m.startsWith("Name length") ? "a field name is too long"
                    : m.startsWith("String value length") ? "a string is too long"
                    : "it is larger than a JSON parser here accepts";
        } else {
            Matcher token = TOKEN.matcher(m);
            if (token.find()) {
                what = "'" + token.group(1) + "' is not a JSON value (strings need double quotes; the literals are "
                        + "true, false and null)";
            } else if (m.indexOf('`') >= 0 || m.contains("[Source")) {
                // Some other message in the parser's own terms: say what we know without them.
                what = "it is not well-formed JSON";
            } else {
                what = m.isEmpty() ? "it is not well-formed JSON" : m
                        .replaceAll("\\(\\(CTRL-CHAR, code (\\d+)\\)\\)", "(control character $1)")
                        .replaceAll(" \\(code \\d+\\)", "");
            }
        }
        JsonLocation at = e.getLocation();
        return at == null || at.getLineNr() < 1 ? what
                : what + " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
    }

    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JsonNode always serialises", e);
        }
    }

    public static int utf8Length(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }

    /** Puts {@code value} as ISO-8601 when it is not null. */
    public static void putTime(ObjectNode node, String field, Instant value) {
        if (value != null) {
            node.put(field, value.toString());
        }
    }

    public static void putIfPresent(ObjectNode node, String field, String value) {
        if (value != null) {
            node.put(field, value);
        }
    }
}
