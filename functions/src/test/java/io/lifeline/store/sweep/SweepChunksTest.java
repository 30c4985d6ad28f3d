package io.lifeline.store.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A round's chunk payloads on generated items: every attribute type an item can hold (S, N, B, BOOL, NULL, M, L, SS,
 * NS, BS, nested, empty, non-ASCII) reads back equal and in order, the counters with them, at chunk sizes from a few
 * hundred bytes to the real one; no chunk passes its size but an entry alone larger than it; a payload of an unknown
 * version is refused.
 */
@Tag("unit")
class SweepChunksTest {
    private static final int[] SIZES = {200, 1_000, 4_000, SweepRounds.CHUNK_BYTES};

    @Test
    void generatedItemsAndCounters_readBackEqual_inChunksNoneOverItsSize() {
        Set<AttributeValue.Type> seen = EnumSet.noneOf(AttributeValue.Type.class);
        for (long seed = 1; seed <= 40; seed++) {
            Random random = new Random(seed);
            List<Map<String, AttributeValue>> items = new ArrayList<>();
            for (int i = random.nextInt(200); i >= 0; i--) {
                items.add(item(random, 0, seen));
            }
            Map<String, AttributeValue> counts = new HashMap<>();
            for (int i = random.nextInt(20); i > 0; i--) {
                counts.put(string(random), AttributeValue.fromM(item(random, 2, seen)));
            }
            for (int size : SIZES) {
                List<byte[]> chunks = SweepChunks.pack(counts, items, size);
                Map<String, AttributeValue> countsBack = new HashMap<>();
                List<Map<String, AttributeValue>> itemsBack = new ArrayList<>();
                for (byte[] chunk : chunks) {
                    SweepChunks.Contents read = SweepChunks.read(chunk);
                    assertTrue(chunk.length <= size || read.counts().size() + read.items().size() == 1,
                            "seed " + seed + ": a chunk of " + chunk.length + " > " + size + ", not one entry alone");
                    countsBack.putAll(read.counts());
                    itemsBack.addAll(read.items());
                }
                assertEquals(counts, countsBack, "seed " + seed + ", chunks of " + size + ": the counters");
                assertEquals(items, itemsBack, "seed " + seed + ", chunks of " + size + ": the items, in order");
            }
        }
        assertEquals(EnumSet.complementOf(EnumSet.of(AttributeValue.Type.UNKNOWN_TO_SDK_VERSION)), seen,
                "every attribute type generated");
    }

    @Test
    void anEmptyShipment_isOneChunk_readBackEmpty() {
        List<byte[]> chunks = SweepChunks.pack(Map.of(), List.of(), SweepRounds.CHUNK_BYTES);
        assertEquals(1, chunks.size());
        SweepChunks.Contents read = SweepChunks.read(chunks.get(0));
        assertEquals(Map.of(), read.counts());
        assertEquals(List.of(), read.items());
    }

    @Test
    void aPayloadOfAnotherVersion_isRefused() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
            gzip.write(SweepChunks.VERSION + 1);
        }
        assertThrows(IllegalStateException.class, () -> SweepChunks.read(bytes.toByteArray()));
    }

    /** An item of a few attributes of random types; maps and lists nest up to depth 3. */
    private static Map<String, AttributeValue> item(Random random, int depth, Set<AttributeValue.Type> seen) {
        Map<String, AttributeValue> item = new HashMap<>();
        for (int i = random.nextInt(8); i >= 0; i--) {
            item.put(string(random), value(random, depth, seen));
        }
        return item;
    }

    private static AttributeValue value(Random random, int depth, Set<AttributeValue.Type> seen) {
        AttributeValue v = switch (random.nextInt(depth >= 3 ? 8 : 10)) {
            case 0 -> AttributeValue.fromS(string(random));
            case 1 -> AttributeValue.fromN(number(random));
            case 2 -> AttributeValue.fromB(binary(random));
            case 3 -> AttributeValue.fromBool(random.nextBoolean());
            case 4 -> AttributeValue.fromNul(true);
            case 5 -> AttributeValue.fromSs(distinct(random, () -> string(random)));
            case 6 -> AttributeValue.fromNs(distinct(random, () -> number(random)));
            case 7 -> AttributeValue.fromBs(distinct(random, () -> binary(random)));
            case 8 -> AttributeValue.fromM(item(random, depth + 1, seen));
            default -> {
                List<AttributeValue> list = new ArrayList<>();
                for (int i = random.nextInt(5); i > 0; i--) {
                    list.add(value(random, depth + 1, seen));
                }
                yield AttributeValue.fromL(list);
            }
        };
        seen.add(v.type());
        return v;
    }

    private interface Gen<T> {
        T next();
    }

    /** One to four distinct values: DynamoDB's sets are never empty. */
    private static <T> List<T> distinct(Random random, Gen<T> gen) {
        List<T> out = new ArrayList<>();
        for (int i = 1 + random.nextInt(4); i > 0; i--) {
            T next = gen.next();
            if (!out.contains(next)) {
                out.add(next);
            }
        }
        return out;
    }

    /** Letters, digits, '#', and some beyond ASCII (two- to four-byte UTF-8); empty now and then. */
    private static String string(Random random) {
        StringBuilder s = new StringBuilder();
        int[] extra = {'#', 'é', 'Ж', '中', 0x1F600};
        for (int i = random.nextInt(24); i > 0; i--) {
            int r = random.nextInt(40);
            s.appendCodePoint(r < 26 ? 'a' + r : r < 35 ? '0' + r - 26 : extra[r - 35]);
        }
        return s.toString();
    }

    /** Numbers as DynamoDB answers them, and as a client may write them (a sign, a fraction, an exponent). */
    private static String number(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> Long.toString(random.nextLong());
            case 1 -> Integer.toString(random.nextInt(1000));
            case 2 -> random.nextInt(100) + "." + random.nextInt(1000);
            default -> "-" + random.nextInt(10) + "E" + random.nextInt(30);
        };
    }

    private static SdkBytes binary(Random random) {
        byte[] b = new byte[random.nextInt(40)];
        random.nextBytes(b);
        return random.nextInt(10) == 0 ? SdkBytes.fromString("", StandardCharsets.UTF_8) : SdkBytes.fromByteArray(b);
    }
}
