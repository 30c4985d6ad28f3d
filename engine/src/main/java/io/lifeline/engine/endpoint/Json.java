package io.lifeline.engine.endpoint;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.SdkField;
import software.amazon.awssdk.core.SdkPojo;
import software.amazon.awssdk.core.protocol.MarshallLocation;
import software.amazon.awssdk.core.traits.ListTrait;
import software.amazon.awssdk.core.traits.MapTrait;
import software.amazon.awssdk.core.util.SdkAutoConstructList;
import software.amazon.awssdk.core.util.SdkAutoConstructMap;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.protocols.jsoncore.JsonWriter;
import software.amazon.awssdk.utils.builder.Buildable;

/**
 * DynamoDB's JSON 1.0 wire form to and from the SDK's model objects, for every shape at once: each model class and
 * its builder is an {@link SdkPojo} whose {@link SdkField}s carry the member's wire name and type, so one walk over
 * them reads any request and writes any response or error, with no case per operation. The protocol's rules:
 * members by their wire names, binaries in base64, timestamps as epoch seconds with a fraction, a member the
 * shape does not have refused (never silently dropped), and a JSON null the same as an absent member.
 */
final class Json {
    private Json() {
    }

    /** A body that is not the shape it should be: AWS answers it as a SerializationException. */
    static final class BadShape extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadShape(String message) {
            super(message);
        }
    }

    /** Fills {@code builder} (a model class's builder) from the JSON object {@code node}, and builds it. */
    static Object read(SdkPojo builder, JsonNode node, String where) {
        if (!node.isObject()) {
            throw new BadShape("Expected an object for " + where);
        }
        Map<String, SdkField<?>> fields = new LinkedHashMap<>();
        for (SdkField<?> f : builder.sdkFields()) {
            if (f.location() == MarshallLocation.PAYLOAD) {
                fields.put(f.locationName(), f);
            }
        }
        for (Map.Entry<String, JsonNode> member : node.asObject().entrySet()) {
            SdkField<?> f = fields.get(member.getKey());
            if (f == null) {
                throw new BadShape("Unknown member " + member.getKey() + " in " + where);
            }
            if (!member.getValue().isNull()) {
                f.set(builder, value(f, member.getValue(), where + "." + member.getKey()));
            }
        }
        return ((Buildable) builder).build();
    }

    private static Object value(SdkField<?> f, JsonNode v, String where) {
        switch (f.marshallingType().getKnownType()) {
            case STRING:
                return text(v, where);
            case BOOLEAN:
                if (!v.isBoolean()) {
                    throw new BadShape("Expected a boolean for " + where);
                }
                return v.asBoolean();
            case INTEGER:
                return (int) whole(v, where, Integer.MIN_VALUE, Integer.MAX_VALUE);
            case LONG:
                return whole(v, where, Long.MIN_VALUE, Long.MAX_VALUE);
            case SHORT:
                return (short) whole(v, where, Short.MIN_VALUE, Short.MAX_VALUE);
            case BYTE:
                return (byte) whole(v, where, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case DOUBLE:
                return number(v, where).doubleValue();
            case FLOAT:
                return number(v, where).floatValue();
            case BIG_DECIMAL:
                return number(v, where);
            case INSTANT:
                return instant(number(v, where));
            case SDK_BYTES:
                return bytes(v, where);
            case SDK_POJO:
                return read(f.constructor().get(), v, where);
            case LIST:
                return list(f, v, where);
            case MAP:
                return map(f, v, where);
            default:
                throw new BadShape("Cannot read " + where + " (" + f.marshallingType() + ")");
        }
    }

    private static String text(JsonNode v, String where) {
        if (!v.isString()) {
            throw new BadShape("Expected a string for " + where);
        }
        return v.asString();
    }

    private static BigDecimal number(JsonNode v, String where) {
        if (!v.isNumber()) {
            throw new BadShape("Expected a number for " + where);
        }
        try {
            return new BigDecimal(v.asNumber());
        } catch (NumberFormatException e) {
            throw new BadShape("Expected a number for " + where);
        }
    }

    /** A whole number from {@code min} to {@code max}. */
    private static long whole(JsonNode v, String where, long min, long max) {
        try {
            long n = number(v, where).longValueExact();
            if (n >= min && n <= max) {
                return n;
            }
        } catch (ArithmeticException notWhole) {
            // refused below
        }
        throw new BadShape("Expected a whole number from " + min + " to " + max + " for " + where);
    }

    private static Instant instant(BigDecimal seconds) {
        BigDecimal whole = new BigDecimal(seconds.toBigInteger());
        int nanos = seconds.subtract(whole).movePointRight(9).intValue();
        return Instant.ofEpochSecond(whole.longValueExact(), nanos);
    }

    private static SdkBytes bytes(JsonNode v, String where) {
        try {
            return SdkBytes.fromByteArray(Base64.getDecoder().decode(text(v, where)));
        } catch (IllegalArgumentException e) {
            throw new BadShape("Expected base64 for " + where);
        }
    }

    private static List<Object> list(SdkField<?> f, JsonNode v, String where) {
        if (!v.isArray()) {
            throw new BadShape("Expected an array for " + where);
        }
        SdkField<?> member = f.getRequiredTrait(ListTrait.class).memberFieldInfo();
        List<Object> out = new ArrayList<>();
        for (JsonNode e : v.asArray()) {
            out.add(e.isNull() ? null : value(member, e, where + "[]"));
        }
        return out;
    }

    private static Map<String, Object> map(SdkField<?> f, JsonNode v, String where) {
        if (!v.isObject()) {
            throw new BadShape("Expected an object for " + where);
        }
        SdkField<?> member = f.getRequiredTrait(MapTrait.class).valueFieldInfo();
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : v.asObject().entrySet()) {
            out.put(e.getKey(), e.getValue().isNull() ? null : value(member, e.getValue(), where + "." + e.getKey()));
        }
        return out;
    }

    /**
     * Writes {@code pojo}'s members (a response, a nested shape, or an exception's modelled members) into the open
     * object of {@code w}. A member never set (null, or the SDK's auto-constructed empty list or map) is left out;
     * an empty list or map that was set is written, as AWS writes {@code "L": []}.
     */
    static void members(JsonWriter w, SdkPojo pojo) {
        for (SdkField<?> f : pojo.sdkFields()) {
            Object v = f.getValueOrDefault(pojo);
            if (f.location() != MarshallLocation.PAYLOAD || absent(v)) {
                continue;
            }
            w.writeFieldName(f.locationName());
            write(w, f, v);
        }
    }

    private static boolean absent(Object v) {
        return v == null || v instanceof SdkAutoConstructList || v instanceof SdkAutoConstructMap;
    }

    private static void write(JsonWriter w, SdkField<?> f, Object v) {
        if (v == null) {
            w.writeNull();
            return;
        }
        switch (f.marshallingType().getKnownType()) {
            case STRING -> w.writeValue((String) v);
            case BOOLEAN -> w.writeValue((Boolean) v);
            case INTEGER, LONG, SHORT, BYTE -> w.writeValue(((Number) v).longValue());
            case DOUBLE, FLOAT -> w.writeValue(((Number) v).doubleValue());
            case BIG_DECIMAL -> w.writeValue((BigDecimal) v);
            case INSTANT -> w.writeNumber(seconds((Instant) v));
            case SDK_BYTES -> w.writeValue(Base64.getEncoder().encodeToString(((SdkBytes) v).asByteArrayUnsafe()));
            case SDK_POJO -> {
                w.writeStartObject();
                members(w, (SdkPojo) v);
                w.writeEndObject();
            }
            case LIST -> {
                SdkField<?> member = f.getRequiredTrait(ListTrait.class).memberFieldInfo();
                w.writeStartArray();
                for (Object e : (List<?>) v) {
                    write(w, member, e);
                }
                w.writeEndArray();
            }
            case MAP -> {
                SdkField<?> member = f.getRequiredTrait(MapTrait.class).valueFieldInfo();
                w.writeStartObject();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    w.writeFieldName((String) e.getKey());
                    write(w, member, e.getValue());
                }
                w.writeEndObject();
            }
            default -> throw new IllegalStateException("cannot write " + f.memberName() + " ("
                    + f.marshallingType() + ")");
        }
    }

    /** Epoch seconds with the fraction AWS's JSON 1.0 protocol gives a timestamp (1700000000.123). */
    static String seconds(Instant t) {
        return BigDecimal.valueOf(t.getEpochSecond()).add(BigDecimal.valueOf(t.getNano(), 9))
                .stripTrailingZeros().toPlainString();
    }
}
