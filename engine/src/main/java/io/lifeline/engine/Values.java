package io.lifeline.engine;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * DynamoDB's rules for attribute values: their types, numbers, equality, order and size.
 *
 * <p>Numbers follow
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html">
 * Supported data types and naming rules</a>: up to 38 significant digits, positive magnitudes from 1E-130 to
 * 9.9999999999999999999999999999999999999E+125 (and the same negative), leading and trailing zeros not counted.
 * Strings and binaries order by their unsigned UTF-8 bytes ("Comparison operator and function reference").
 * Sizes follow <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html">
 * DynamoDB item sizes and formats</a>.
 */
public final class Values {
    private static final BigDecimal MAX = new BigDecimal("9.9999999999999999999999999999999999999E+125");
    private static final BigDecimal MIN = new BigDecimal("1E-130");

    private Values() {
    }

    /** The type's code as DynamoDB names it in messages and in {@code attribute_type}: S, N, B, SS, ..., NULL. */
    public static String type(AttributeValue v) {
        return switch (v.type()) {
            case S -> "S";
            case N -> "N";
            case B -> "B";
            case BOOL -> "BOOL";
            case NUL -> "NULL";
            case M -> "M";
            case L -> "L";
            case SS -> "SS";
            case NS -> "NS";
            case BS -> "BS";
            default -> throw Errors.validation("Supplied AttributeValue is empty, must contain exactly one of the "
                    + "supported datatypes");
        };
    }

    /** The type's long name, as DynamoDB's update errors name operand types (STRING, NUMBER, ...). */
    public static String typeName(AttributeValue v) {
        return switch (type(v)) {
            case "S" -> "STRING";
            case "N" -> "NUMBER";
            case "B" -> "BINARY";
            case "BOOL" -> "BOOLEAN";
            case "SS" -> "STRING SET";
            case "NS" -> "NUMBER SET";
            case "BS" -> "BINARY SET";
            case "M" -> "MAP";
            case "L" -> "LIST";
            default -> "NULL";
        };
    }

    /** Parses a number DynamoDB would store, or throws the ValidationException AWS answers. */
    public static BigDecimal number(String text) {
        BigDecimal d;
        try {
            if (text == null || text.isEmpty() || !text.strip().equals(text)) {
                throw new NumberFormatException();
            }
            d = new BigDecimal(text);
        } catch (NumberFormatException e) {
            throw Errors.validation("The parameter cannot be converted to a numeric value: " + text);
        }
        return checked(d);
    }

    /** Holds a number (parsed or computed) to DynamoDB's precision and range. */
    public static BigDecimal checked(BigDecimal d) {
        if (d.signum() == 0) {
            return BigDecimal.ZERO;
        }
        BigDecimal s = d.stripTrailingZeros();
        if (s.precision() > 38) {
            throw Errors.validation("Attempting to store more than 38 significant digits in a Number");
        }
        BigDecimal abs = s.abs();
        if (abs.compareTo(MAX) > 0) {
            throw Errors.validation("Number overflow. Attempting to store a number with magnitude larger than "
                    + "supported range");
        }
        if (abs.compareTo(MIN) < 0) {
            throw Errors.validation("Number underflow. Attempting to store a number with magnitude smaller than "
                    + "supported range");
        }
        return s;
    }

    /** A number as DynamoDB answers it: no exponent, no trailing zeros after the point. */
    public static String format(BigDecimal d) {
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }

    /**
     * The value as DynamoDB stores and answers it: numbers (alone, in sets, lists and maps) with leading and trailing
     * zeros trimmed ("DynamoDB item sizes and formats"). Answers {@code v} itself when nothing changes.
     */
    public static AttributeValue canonical(AttributeValue v) {
        switch (type(v)) {
            case "N" -> {
                String c = format(number(v.n()));
                return c.equals(v.n()) ? v : AttributeValue.fromN(c);
            }
            case "NS" -> {
                List<String> c = v.ns().stream().map(n -> format(number(n))).toList();
                return c.equals(v.ns()) ? v : AttributeValue.fromNs(c);
            }
            case "L" -> {
                List<AttributeValue> c = v.l().stream().map(Values::canonical).toList();
                return sameRefs(c, v.l()) ? v : AttributeValue.fromL(c);
            }
            case "M" -> {
                Map<String, AttributeValue> c = canonical(v.m());
                return c == v.m() ? v : AttributeValue.fromM(c);
            }
            default -> {
                return v;
            }
        }
    }

    /** {@link #canonical(AttributeValue)} of every value of a map; the map itself when nothing changes. */
    public static Map<String, AttributeValue> canonical(Map<String, AttributeValue> item) {
        Map<String, AttributeValue> out = null;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            AttributeValue c = canonical(e.getValue());
            if (c != e.getValue()) {
                if (out == null) {
                    out = new LinkedHashMap<>(item);
                }
                out.put(e.getKey(), c);
            }
        }
        return out == null ? item : out;
    }

    private static boolean sameRefs(List<AttributeValue> a, List<AttributeValue> b) {
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i) != b.get(i)) {
                return false;
            }
        }
        return true;
    }

    /** Equality as DynamoDB's {@code =}: same type and value; numbers by value; sets whatever their order. */
    public static boolean same(AttributeValue a, AttributeValue b) {
        if (a == null || b == null) {
            return false;
        }
        String t = type(a);
        if (!t.equals(type(b))) {
            return false;
        }
        return switch (t) {
            case "S" -> a.s().equals(b.s());
            case "N" -> number(a.n()).compareTo(number(b.n())) == 0;
            case "B" -> a.b().equals(b.b());
            case "BOOL" -> a.bool().equals(b.bool());
            case "NULL" -> true;
            case "SS" -> new HashSet<>(a.ss()).equals(new HashSet<>(b.ss()));
            case "NS" -> numberSet(a.ns()).equals(numberSet(b.ns()));
            case "BS" -> new HashSet<>(a.bs()).equals(new HashSet<>(b.bs()));
            case "L" -> sameList(a.l(), b.l());
            default -> sameMap(a.m(), b.m());
        };
    }

    private static HashSet<BigDecimal> numberSet(List<String> ns) {
        HashSet<BigDecimal> out = new HashSet<>();
        for (String n : ns) {
            out.add(number(n).stripTrailingZeros());
        }
        return out;
    }

    private static boolean sameList(List<AttributeValue> a, List<AttributeValue> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!same(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameMap(Map<String, AttributeValue> a, Map<String, AttributeValue> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Map.Entry<String, AttributeValue> e : a.entrySet()) {
            if (!same(e.getValue(), b.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code a} and {@code b} can be ordered ({@code < <= > >= BETWEEN}): both S, both N or both B. */
    public static boolean comparable(AttributeValue a, AttributeValue b) {
        if (a == null || b == null) {
            return false;
        }
        String t = type(a);
        return t.equals(type(b)) && (t.equals("S") || t.equals("N") || t.equals("B"));
    }

    /** Orders two values of one scalar type (check {@link #comparable} first). */
    public static int compare(AttributeValue a, AttributeValue b) {
        return switch (type(a)) {
            case "N" -> number(a.n()).compareTo(number(b.n()));
            case "S" -> compareStrings(a.s(), b.s());
            default -> compareBytes(a.b().asByteArrayUnsafe(), b.b().asByteArrayUnsafe());
        };
    }

    /**
     * Two strings in the order of their UTF-8 bytes, without encoding them: up to the first char that differs, UTF-16
     * and UTF-8 order agree unless a surrogate is involved, and then (or when one string ends in the middle of a
     * pair) the bytes decide. Every key lookup of a table compares keys this way.
     */
    static int compareStrings(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (Character.isSurrogate(x) || Character.isSurrogate(y)) {
                    return utf8Order(a, b);
                }
                return x < y ? -1 : 1;
            }
        }
        if (n > 0 && Character.isSurrogate(a.charAt(n - 1))) {
            return utf8Order(a, b);
        }
        return Integer.compare(a.length(), b.length());
    }

    private static int utf8Order(String a, String b) {
        return compareBytes(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    /** Unsigned lexicographic order, DynamoDB's order of strings (as UTF-8) and binaries. */
    public static int compareBytes(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            int c = Integer.compare(a[i] & 0xff, b[i] & 0xff);
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.length, b.length);
    }

    /** Whether {@code bytes} starts with {@code prefix}. */
    public static boolean startsWith(byte[] bytes, byte[] prefix) {
        if (prefix.length > bytes.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (bytes[i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /** The size of an item: its attribute names and values, by "DynamoDB item sizes and formats". */
    public static long itemSize(Map<String, AttributeValue> item) {
        long size = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            size += utf8(e.getKey()) + size(e.getValue());
        }
        return size;
    }

    /**
     * The size of one value without its name. A number: 1 byte per two significant digits (rounded up) plus 1;
     * a list or map: 3 bytes plus 1 byte per element plus the elements (and a map's keys); a set: its elements.
     */
    public static long size(AttributeValue v) {
        return switch (type(v)) {
            case "S" -> utf8(v.s());
            case "N" -> numberSize(v.n());
            case "B" -> v.b().asByteArrayUnsafe().length;
            case "BOOL", "NULL" -> 1;
            case "SS" -> v.ss().stream().mapToLong(Values::utf8).sum();
            case "NS" -> v.ns().stream().mapToLong(Values::numberSize).sum();
            case "BS" -> v.bs().stream().mapToLong(b -> b.asByteArrayUnsafe().length).sum();
            case "L" -> 3 + v.l().stream().mapToLong(e -> 1 + size(e)).sum();
            default -> 3 + v.m().entrySet().stream().mapToLong(e -> 1 + utf8(e.getKey()) + size(e.getValue())).sum();
        };
    }

    /** A number's size: (significant digits + 1) / 2 + 1 bytes, leading and trailing zeros not counted. */
    public static long numberSize(String n) {
        int plain = plainDigits(n);
        if (plain >= 0) {
            return plain == 0 ? 2 : (plain + 1) / 2 + 1;
        }
        BigDecimal d = number(n);
        if (d.signum() == 0) {
            return 2;
        }
        int digits = d.stripTrailingZeros().precision();
        return (digits + 1) / 2 + 1;
    }

    /**
     * The significant digits of a plain decimal ({@code -?digits[.digits]}, no exponent, at most 38 characters, so
     * within DynamoDB's precision and range), leading and trailing zeros not counted (0 for zero); -1 for any other
     * form, which {@link #numberSize} then reads as a BigDecimal. Sizing every number of every item read by a Scan
     * dominated it while each went through BigDecimal.
     */
    static int plainDigits(String n) {
        int len = n.length();
        int i = len > 0 && n.charAt(0) == '-' ? 1 : 0;
        if (len > 38 || i == len) {
            return -1;
        }
        int first = -1;
        int last = -1;
        int digits = 0;
        int point = -1;
        for (int k = i; k < len; k++) {
            char c = n.charAt(k);
            if (c == '.' && point < 0 && k > i && k < len - 1) {
                point = k;
            } else if (c >= '0' && c <= '9') {
                if (c != '0') {
                    if (first < 0) {
                        first = digits;
                    }
                    last = digits;
                }
                digits++;
            } else {
                return -1;
            }
        }
        return first < 0 ? 0 : last - first + 1;
    }

    /** UTF-8 length of a string. */
    public static long utf8(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** A string value. */
    public static AttributeValue s(String s) {
        return AttributeValue.fromS(s);
    }

    /** A number value, formatted as DynamoDB answers it. */
    public static AttributeValue n(BigDecimal d) {
        return AttributeValue.fromN(format(d));
    }

    /** A binary value. */
    public static AttributeValue b(byte[] bytes) {
        return AttributeValue.fromB(SdkBytes.fromByteArray(bytes));
    }

    /** Hash code consistent with {@link #same} for key values (S, N, B). */
    public static int keyHash(AttributeValue v) {
        return switch (type(v)) {
            case "N" -> number(v.n()).stripTrailingZeros().hashCode();
            case "S" -> v.s().hashCode();
            default -> Objects.hashCode(v.b());
        };
    }
}
