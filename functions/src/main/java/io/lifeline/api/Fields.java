package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import io.lifeline.support.Json;
import java.util.Iterator;
import java.util.Set;

/**
 * Reads typed fields from a JSON request body, refusing wrong types, unknown fields and values out of their
 * limits with a 400 that names the field.
 */
final class Fields {
    private final ObjectNode body;

    private Fields(ObjectNode body) {
        this.body = body;
    }

    /** {@code body} must be an object with no fields beyond {@code allowed}. */
    static Fields of(JsonNode body, String where, Set<String> allowed) {
        if (body == null || !body.isObject()) {
            throw LifelineException.badInput("INVALID_BODY", where + " must be a JSON object");
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!allowed.contains(field)) {
                throw LifelineException.badInput("UNKNOWN_FIELD", "Unknown field '" + field + "' in " + where
                        + "; allowed: " + String.join(", ", allowed.stream().sorted().toList()));
            }
        }
        return new Fields((ObjectNode) body);
    }

    boolean has(String field) {
        JsonNode v = body.get(field);
        return v != null && !v.isNull();
    }

    String string(String field, int maxChars) {
        if (!has(field)) {
            return null;
        }
        JsonNode v = body.get(field);
        if (!v.isTextual()) {
            throw wrongType(field, "a string");
        }
        String s = v.textValue();
        if (s.isBlank()) {
            throw LifelineException.badInput("INVALID_FIELD", "'" + field + "' must not be blank");
        }
        if (s.length() > maxChars) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "'" + field + "' is " + s.length() + " characters; the limit is " + maxChars);
        }
        return s;
    }

    String requiredString(String field, int maxChars) {
        String s = string(field, maxChars);
        if (s == null) {
            throw missing(field);
        }
        return s;
    }

    /** A required string limited in UTF-8 bytes (for fields stored on the agent item). */
    String requiredUtf8(String field, int maxBytes) {
        String s = requiredString(field, maxBytes);
        int bytes = Limits.utf8Length(s);
        if (bytes > maxBytes) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "'" + field + "' is " + bytes + " bytes as UTF-8; the limit is " + maxBytes);
        }
        return s;
    }

    /** An id is checked against the id pattern only, so an empty or blank id is INVALID_ID, as in a path. */
    String id(String field) {
        if (!has(field)) {
            return null;
        }
        JsonNode v = body.get(field);
        if (!v.isTextual()) {
            throw wrongType(field, "a string");
        }
        return Limits.requireId("'" + field + "'", v.textValue());
    }

    String requiredId(String field) {
        String s = id(field);
        if (s == null) {
            throw missing(field);
        }
        return s;
    }

    Boolean bool(String field) {
        if (!has(field)) {
            return null;
        }
        JsonNode v = body.get(field);
        if (!v.isBoolean()) {
            throw wrongType(field, "true or false");
        }
        return v.booleanValue();
    }

    Long integer(String field, long min, long max) {
        if (!has(field)) {
            return null;
        }
        JsonNode v = body.get(field);
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw wrongType(field, "a whole number");
        }
        long n = v.longValue();
        if (n < min || n > max) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "'" + field + "' must be between " + min + " and " + max + ", was " + n);
        }
        return n;
    }

    /** An object field, serialised back to compact JSON, refused with 413 past {@code maxBytes}. */
    String objectJson(String field, int maxBytes, String tooLargeCode) {
        if (!has(field)) {
            return null;
        }
        JsonNode v = body.get(field);
        if (!v.isObject()) {
            throw wrongType(field, "an object");
        }
        String json = Json.write(v);
        int size = Json.utf8Length(json);
        if (size > maxBytes) {
            throw new LifelineException(LifelineException.Kind.TOO_LARGE, tooLargeCode,
                    "'" + field + "' is " + size + " bytes as JSON; the limit is " + maxBytes);
        }
        return json;
    }

    /** Whether the field is the JSON literal {@code false}. */
    boolean isFalse(String field) {
        JsonNode v = body.get(field);
        return v != null && v.isBoolean() && !v.booleanValue();
    }

    Fields nested(String field, Set<String> allowed) {
        if (!has(field)) {
            return null;
        }
        return of(body.get(field), "'" + field + "'", allowed);
    }

    private static LifelineException wrongType(String field, String expected) {
        return LifelineException.badInput("INVALID_FIELD", "'" + field + "' must be " + expected);
    }

    private static LifelineException missing(String field) {
        return LifelineException.badInput("MISSING_FIELD", "'" + field + "' is required");
    }
}
