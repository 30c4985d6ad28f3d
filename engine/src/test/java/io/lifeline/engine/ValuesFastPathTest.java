package io.lifeline.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The shortcuts the engine takes on its hot paths answer what the long ways answer: strings ordered without
 * encoding them, as their UTF-8 bytes order them; a plain number's size without BigDecimal, as BigDecimal's
 * significant digits give it.
 */
@Tag("unit")
class ValuesFastPathTest {
    /** Chars from every range that matters to the order: ASCII, two- and three-byte, and surrogate pairs. */
    private static final String[] PIECES = {"a", "b", "z", "#", "0", "é", "ÿ", "Ā", "中", "\uE000", "\uFFFD",
        "\uD83D\uDE00", "\uD800\uDC00", "\uDBFF\uDFFF", ""};

    @Test
    void stringsOrderAsTheirUtf8Bytes() {
        Random r = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            String a = random(r);
            String b = random(r);
            int bytes = Integer.signum(Values.compareBytes(a.getBytes(StandardCharsets.UTF_8),
                    b.getBytes(StandardCharsets.UTF_8)));
            assertEquals(bytes, Integer.signum(Values.compareStrings(a, b)), () -> "[" + a + "] vs [" + b + "]");
            assertEquals(bytes, Integer.signum(new Key(AttributeValue.fromS(a)).compareTo(
                    new Key(AttributeValue.fromS(b)))));
            assertEquals(bytes == 0, new Key(AttributeValue.fromS(a)).equals(new Key(AttributeValue.fromS(b))));
        }
    }

    private static String random(Random r) {
        StringBuilder b = new StringBuilder("TEAM#");
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) {
            b.append(PIECES[r.nextInt(PIECES.length)]);
        }
        return b.toString();
    }

    @Test
    void aPlainNumbersSizeIsBigDecimalsSignificantDigits() {
        List<String> forms = List.of("0", "-0", "0.0", "7", "-7", "10", "100", "1000000", "007", "0.5", "0.05",
                "-0.0500", "123.456", "1764338112345", "99999999999999999999999999999999999999",
                "-1234567890123456789012345678901234567", "1.0000000000000000000000000000000000001", "120.000",
                "5E+3", "1.5e2", ".5", "1.", "+3", "0.000000000000000000000000000000000000000000001");
        for (String n : forms) {
            BigDecimal d = Values.number(n);
            long want = d.signum() == 0 ? 2 : (d.stripTrailingZeros().precision() + 1) / 2 + 1;
            assertEquals(want, Values.numberSize(n), n);
        }
        Random r = new Random(11);
        for (int i = 0; i < 100_000; i++) {
            String n = (r.nextBoolean() ? "-" : "") + Math.abs(r.nextLong()) / (1L << r.nextInt(40))
                    + (r.nextBoolean() ? "." + r.nextInt(1_000_000) : "");
            BigDecimal d = Values.number(n);
            long want = d.signum() == 0 ? 2 : (d.stripTrailingZeros().precision() + 1) / 2 + 1;
            assertEquals(want, Values.numberSize(n), n);
        }
    }
}
