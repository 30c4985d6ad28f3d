package io.lifeline.engine;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Items as bytes, for the write-ahead log and the store on disk: a type tag, then the value (strings and numbers as
 * UTF-8 with a length, numbers in the canonical text the engine keeps, maps in their attributes' order). Decoding
 * gives back an item equal to the one encoded, attribute for attribute and in the same order.
 */
final class Codec {
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
    private static final int NONE = 0;

    private Codec() {
    }

    /** A growable buffer with DynamoDB's value forms; {@link #bytes()} answers what was written. */
    static final class Out extends ByteArrayOutputStream {
        Out() {
            super(256);
        }

        Out(int size) {
            super(size);
        }

        void varint(long v) {
            long x = v;
            while ((x & ~0x7FL) != 0) {
                write((int) ((x & 0x7F) | 0x80));
                x >>>= 7;
            }
            write((int) x);
        }

        void string(String s) {
            bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        void bytes(byte[] b) {
            varint(b.length);
            write(b, 0, b.length);
        }

        void item(Map<String, AttributeValue> item) {
            varint(item.size());
            for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
                string(e.getKey());
                value(e.getValue());
            }
        }

        void key(Key k) {
            if (k.value() == null) {
                write(NONE);
            } else {
                value(k.value());
            }
        }

        void value(AttributeValue v) {
            switch (v.type()) {
                case S -> tagged(S, v.s());
                case N -> tagged(N, v.n());
                case B -> {
                    write(B);
                    bytes(v.b().asByteArrayUnsafe());
                }
                case BOOL -> write(v.bool() ? BOOL_TRUE : BOOL_FALSE);
                case NUL -> write(NUL);
                case M -> {
                    write(M);
                    item(v.m());
                }
                case L -> {
                    write(L);
                    varint(v.l().size());
                    v.l().forEach(this::value);
                }
                case SS -> strings(SS, v.ss());
                case NS -> strings(NS, v.ns());
                case BS -> {
                    write(BS);
                    varint(v.bs().size());
                    v.bs().forEach(b -> bytes(b.asByteArrayUnsafe()));
                }
                default -> throw new IllegalArgumentException("no type: " + v);
            }
        }

        private void tagged(int tag, String s) {
            write(tag);
            string(s);
        }

        private void strings(int tag, List<String> all) {
            write(tag);
            varint(all.size());
            all.forEach(this::string);
        }

        /** The bytes written so far (a copy). */
        byte[] bytes() {
            return toByteArray();
        }

        /** The buffer itself, valid up to {@link #size()} (no copy). */
        byte[] raw() {
            return buf;
        }
    }

    /** Reads what {@link Out} wrote. */
    static final class In {
        private final ByteBuffer in;

        In(ByteBuffer in) {
            this.in = in;
        }

        In(byte[] bytes) {
            this(ByteBuffer.wrap(bytes));
        }

        boolean more() {
            return in.hasRemaining();
        }

        int tag() {
            return in.get() & 0xFF;
        }

        long varint() {
            long v = 0;
            for (int shift = 0; ; shift += 7) {
                int b = in.get();
                v |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return v;
                }
            }
        }

        byte[] bytes() {
            byte[] b = new byte[(int) varint()];
            in.get(b);
            return b;
        }

        String string() {
            int n = (int) varint();
            if (!in.hasArray()) {
                byte[] b = new byte[n];
                in.get(b);
                return new String(b, StandardCharsets.UTF_8);
            }
            String s = new String(in.array(), in.arrayOffset() + in.position(), n, StandardCharsets.UTF_8);
            in.position(in.position() + n);
            return s;
        }

        Map<String, AttributeValue> item() {
            int n = (int) varint();
            Map<String, AttributeValue> item = new LinkedHashMap<>(n * 2);
            for (int i = 0; i < n; i++) {
                String name = string();
                item.put(name, value(tag()));
            }
            return item;
        }

        Key key() {
            int tag = tag();
            return tag == NONE ? Key.NONE : new Key(value(tag));
        }

        AttributeValue value(int tag) {
            return switch (tag) {
                case S -> AttributeValue.fromS(string());
                case N -> AttributeValue.fromN(string());
                case B -> AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(bytes()));
                case BOOL_TRUE -> AttributeValue.fromBool(true);
                case BOOL_FALSE -> AttributeValue.fromBool(false);
                case NUL -> AttributeValue.fromNul(true);
                case M -> AttributeValue.fromM(item());
                case L -> {
                    int n = (int) varint();
                    List<AttributeValue> l = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        l.add(value(tag()));
                    }
                    yield AttributeValue.fromL(l);
                }
                case SS -> AttributeValue.fromSs(strings());
                case NS -> AttributeValue.fromNs(strings());
                case BS -> {
                    int n = (int) varint();
                    List<SdkBytes> l = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        l.add(SdkBytes.fromByteArrayUnsafe(bytes()));
                    }
                    yield AttributeValue.fromBs(l);
                }
                default -> throw new IllegalStateException("unknown value tag " + tag);
            };
        }

        private List<String> strings() {
            int n = (int) varint();
            List<String> l = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                l.add(string());
            }
            return l;
        }
    }

    static byte[] encode(Map<String, AttributeValue> item) {
        Out out = new Out();
        out.item(item);
        return out.bytes();
    }

    static Map<String, AttributeValue> decode(byte[] bytes) {
        return new In(bytes).item();
    }
}
