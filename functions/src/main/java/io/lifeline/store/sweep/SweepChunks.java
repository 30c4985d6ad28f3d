package io.lifeline.store.sweep;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A part's shipment as the payloads of its chunks: each a gzip stream of a version byte ({@link #VERSION}), then
 * entries, each a kind byte and its body: a team's counters (the team's name and its counters' attribute,
 * {@link SweepRoundCodec}) or an item (an attribute map). Values are a type tag and their body (strings and numbers as
 * UTF-8 with a length, numbers in the text DynamoDB answered, binaries with a length, maps and lists and sets with a
 * count), so every attribute type an item can hold reads back equal. Why binary and gzip: the items shipped as
 * DynamoDB attribute maps cost a write unit a KB, and a hosted fleet's shipment is its leases and the agents naming
 * them, the same attribute names and near-identical values over and over.
 */
final class SweepChunks {
    static final int VERSION = 1;
    private static final int COUNTS = 1;
    private static final int ITEM = 2;
    private static final int S = 1;
    private static final int N = 2;
    private static final int B = 3;
    private static final int BOOL_TRUE = 4;
    private static final int BOOL_FALSE = 5;
    private static final int NUL = 6;
    private static final int M = 7;
    private static final int L = 8;
    private static final int SS = 9;
    private static final int NS = 10;
    private static final int BS = 11;

    private SweepChunks() {
    }

    /** One chunk read back: its teams' counters (team to attribute) and its items. */
    record Contents(Map<String, AttributeValue> counts, List<Map<String, AttributeValue>> items) {
    }

    /**
     * The payloads of a shipment: the teams' counters, then the items, in chunks of at most {@code maxBytes} bytes
     * compressed (an entry alone larger than that has a chunk of its own).
     */
    static List<byte[]> pack(Map<String, AttributeValue> counts, List<Map<String, AttributeValue>> items,
                             int maxBytes) {
        Packer packer = new Packer(maxBytes);
        counts.forEach((team, c) -> packer.add(entry(COUNTS, out -> {
            string(out, team);
            value(out, c);
        })));
        for (Map<String, AttributeValue> item : items) {
            packer.add(entry(ITEM, out -> map(out, item)));
        }
        return packer.finish();
    }

    /** A payload read back; a version this code does not know is refused. */
    static Contents read(byte[] payload) {
        Map<String, AttributeValue> counts = new HashMap<>();
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(new GZIPInputStream(new ByteArrayInputStream(payload)))) {
            int version = in.read();
            if (version != VERSION) {
                throw new IllegalStateException("a sweep round's chunk of unknown version " + version);
            }
            for (int kind = in.read(); kind >= 0; kind = in.read()) {
                if (kind == COUNTS) {
                    counts.put(string(in), value(in));
                } else if (kind == ITEM) {
                    items.add(map(in));
                } else {
                    throw new IllegalStateException("a sweep round's chunk with an entry of kind " + kind);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("a sweep round's chunk unreadable", e);
        }
        return new Contents(counts, items);
    }

    /**
     * Fills chunks to their compressed size: an entry is written when the compressed bytes so far plus the worst
     * case for what is not flushed yet fit; else the stream is flushed (its compressed size is then exact) and the
     * entry starts a new chunk only if it still cannot fit. So no chunk passes {@code maxBytes}, and flushes come only
     * as a chunk fills.
     */
    private static final class Packer {
        private final int maxBytes;
        private final List<byte[]> done = new ArrayList<>();
        private ByteArrayOutputStream out;
        private GZIPOutputStream gzip;
        private long pending;
        private int entries;

        Packer(int maxBytes) {
            this.maxBytes = maxBytes;
            open();
        }

        void add(byte[] entry) {
            try {
                if (out.size() + worst(pending + entry.length) > maxBytes) {
                    gzip.flush();
                    pending = 0;
                    if (entries > 0 && out.size() + worst(entry.length) > maxBytes) {
                        close();
                        open();
                    }
                }
                gzip.write(entry);
                pending += entry.length;
                entries++;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        List<byte[]> finish() {
            close();
            return done;
        }

        private void open() {
            out = new ByteArrayOutputStream();
            try {
                gzip = new GZIPOutputStream(out, 8192, true);
                gzip.write(VERSION);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            pending = 1;
            entries = 0;
        }

        private void close() {
            try {
                gzip.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            done.add(out.toByteArray());
        }

        /** Deflate's bound for {@code raw} bytes not yet flushed, with the stream's last block and gzip's trailer. */
        private static long worst(long raw) {
            return raw + (raw >> 10) + 64;
        }
    }

    private interface Body {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] entry(int kind, Body body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(kind);
            body.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static void map(DataOutputStream out, Map<String, AttributeValue> m) throws IOException {
        out.writeInt(m.size());
        for (Map.Entry<String, AttributeValue> e : m.entrySet()) {
            string(out, e.getKey());
            value(out, e.getValue());
        }
    }

    private static void value(DataOutputStream out, AttributeValue v) throws IOException {
        switch (v.type()) {
            case S -> tagged(out, S, v.s());
            case N -> tagged(out, N, v.n());
            case B -> {
                out.writeByte(B);
                bytes(out, v.b());
            }
            case BOOL -> out.writeByte(v.bool() ? BOOL_TRUE : BOOL_FALSE);
            case NUL -> out.writeByte(NUL);
            case M -> {
                out.writeByte(M);
                map(out, v.m());
            }
            case L -> {
                out.writeByte(L);
                out.writeInt(v.l().size());
                for (AttributeValue e : v.l()) {
                    value(out, e);
                }
            }
            case SS -> strings(out, SS, v.ss());
            case NS -> strings(out, NS, v.ns());
            case BS -> {
                out.writeByte(BS);
                out.writeInt(v.bs().size());
                for (SdkBytes b : v.bs()) {
                    bytes(out, b);
                }
            }
            default -> throw new IllegalArgumentException("an attribute of a type this code does not know: " + v);
        }
    }

    private static void tagged(DataOutputStream out, int tag, String s) throws IOException {
        out.writeByte(tag);
        string(out, s);
    }

    private static void strings(DataOutputStream out, int tag, List<String> all) throws IOException {
        out.writeByte(tag);
        out.writeInt(all.size());
        for (String s : all) {
            string(out, s);
        }
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        bytes(out, s.getBytes(StandardCharsets.UTF_8));
    }

    private static void bytes(DataOutputStream out, SdkBytes b) throws IOException {
        bytes(out, b.asByteArrayUnsafe());
    }

    private static void bytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    private static Map<String, AttributeValue> map(DataInputStream in) throws IOException {
        int size = in.readInt();
        Map<String, AttributeValue> m = new HashMap<>();
        for (int i = 0; i < size; i++) {
            m.put(string(in), value(in));
        }
        return m;
    }

    private static AttributeValue value(DataInputStream in) throws IOException {
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case S -> AttributeValue.fromS(string(in));
            case N -> AttributeValue.fromN(string(in));
            case B -> AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(bytes(in)));
            case BOOL_TRUE -> AttributeValue.fromBool(true);
            case BOOL_FALSE -> AttributeValue.fromBool(false);
            case NUL -> AttributeValue.fromNul(true);
            case M -> AttributeValue.fromM(map(in));
            case L -> AttributeValue.fromL(list(in));
            case SS -> AttributeValue.fromSs(strings(in));
            case NS -> AttributeValue.fromNs(strings(in));
            case BS -> AttributeValue.fromBs(binaries(in));
            default -> throw new IllegalStateException("a sweep round's chunk with a value of tag " + tag);
        };
    }

    private static List<AttributeValue> list(DataInputStream in) throws IOException {
        int size = in.readInt();
        List<AttributeValue> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(value(in));
        }
        return out;
    }

    private static List<String> strings(DataInputStream in) throws IOException {
        int size = in.readInt();
        List<String> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(string(in));
        }
        return out;
    }

    private static List<SdkBytes> binaries(DataInputStream in) throws IOException {
        int size = in.readInt();
        List<SdkBytes> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(SdkBytes.fromByteArrayUnsafe(bytes(in)));
        }
        return out;
    }

    private static String string(DataInputStream in) throws IOException {
        return new String(bytes(in), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }
}
