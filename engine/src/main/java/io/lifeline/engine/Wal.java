package io.lifeline.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The write-ahead log: one record per engine operation that changed anything, numbered in the order the engine's
 * lock ran them, appended to a segment file and fsynced before the operation answers.
 *
 * <p>Group commit: {@link #append} (under the engine's lock) only adds the record to a buffer. After the lock is
 * let go, {@link #await} waits until the record is on disk: if no thread is syncing, the waiter becomes the one that
 * does, writes everything buffered so far (its own record and every other one sealed meanwhile) and calls fsync
 * once; the others wait for it to finish, and those whose records it covered return without syncing. So many
 * writers share one fsync, and while one fsync runs the next group gathers.
 *
 * <p>A record: its payload's length (4 bytes), a CRC-32C of the sequence number and payload (4), the sequence
 * number (8), the payload. A segment starts with {@link #MAGIC} and the format version. Reading stops at the first
 * record that is short or fails its checksum: a torn tail, written while the process died and never acknowledged.
 */
final class Wal implements AutoCloseable {
    static final byte[] MAGIC = "LIFELINE-ENGINE-WAL".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADER = 16;
    private static final String PREFIX = "engine-wal-";

    /** A record read back: its sequence number and payload. */
    record Record(long seq, byte[] payload) {
    }

    private final Path dir;
    private FileChannel channel;
    private long segmentBytes;
    private final ReentrantLock syncLock = new ReentrantLock();
    private final Object bufLock = new Object();
    /** Where writers wait for their records; guards {@link #syncing}. */
    private final Object waiters = new Object();
    /** Whether a thread is writing and syncing now (the others wait for it rather than queue to sync). */
    private boolean syncing;
    /** Records sealed but not yet written; guarded by bufLock. */
    private Codec.Out buffer = new Codec.Out(1 << 16);
    /** The buffer the syncing thread writes from; guarded by syncLock. */
    private Codec.Out writing = new Codec.Out(1 << 16);
    /** The last sequence number sealed; guarded by bufLock. */
    private long sealed;
    private volatile long durable;
    private volatile IOException failed;
    private long fsyncs;

    Wal(Path dir, long lastSeq) {
        this.dir = dir;
        this.sealed = lastSeq;
        this.durable = lastSeq;
    }

    /** Adds a record for {@code payload[0, length)}; answers its sequence number. Caller holds the engine lock. */
    long append(byte[] payload, int length) {
        CRC32C crc = new CRC32C();
        synchronized (bufLock) {
            long seq = ++sealed;
            ByteBuffer head = ByteBuffer.allocate(HEADER);
            head.putInt(length).putInt(0).putLong(seq);
            crc.update(head.array(), 8, 8);
            crc.update(payload, 0, length);
            head.putInt(4, (int) crc.getValue());
            buffer.write(head.array(), 0, HEADER);
            buffer.write(payload, 0, length);
            return seq;
        }
    }

    long sealed() {
        synchronized (bufLock) {
            return sealed;
        }
    }

    /** Bytes in the current segment, written or still buffered. */
    long size() {
        synchronized (bufLock) {
            return segmentBytes + buffer.size();
        }
    }

    long fsyncs() {
        return fsyncs;
    }

    /** Returns once record {@code seq} (and every one before it) is on disk, writing and syncing if need be. */
    void await(long seq) {
        while (true) {
            synchronized (waiters) {
                while (durable < seq && syncing) {
                    check();
                    try {
                        waiters.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("Interrupted waiting for the write-ahead log", e);
                    }
                }
                check();
                if (durable >= seq) {
                    return;
                }
                syncing = true;
            }
            lead();
        }
    }

    /** Writes and syncs all sealed so far, as the one thread syncing; then wakes every waiter to look again. */
    private void lead() {
        syncLock.lock();
        try {
            flush();
        } finally {
            syncLock.unlock();
            synchronized (waiters) {
                syncing = false;
                waiters.notifyAll();
            }
        }
    }

    private void check() {
        if (failed != null) {
            throw new UncheckedIOException("The engine's write-ahead log could not be written", failed);
        }
    }

    /** Writes and fsyncs everything sealed so far. Caller holds the sync lock. */
    private void flush() {
        long upTo;
        Codec.Out out;
        synchronized (bufLock) {
            out = buffer;
            buffer = writing;
            writing = out;
            upTo = sealed;
            segmentBytes += out.size();
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(out.raw(), 0, out.size());
            while (b.hasRemaining()) {
                channel.write(b);
            }
            channel.force(false);
            fsyncs++;
            out.reset();
            durable = upTo;
        } catch (IOException e) {
            failed = e;
            throw new UncheckedIOException("The engine's write-ahead log could not be written", e);
        }
    }

    /**
     * Starts a new segment whose records follow {@code lastSeq} and deletes the older ones: called (under the engine
     * lock) once the store on disk holds everything up to {@code lastSeq}, so nothing buffered is needed any more.
     */
    void rotate(long lastSeq) {
        syncLock.lock();
        try {
            synchronized (bufLock) {
                buffer.reset();
                sealed = lastSeq;
                segmentBytes = MAGIC.length + 4;
            }
            if (channel != null) {
                channel.close();
            }
            Path next = dir.resolve(String.format("%s%020d.log", PREFIX, lastSeq + 1));
            channel = FileChannel.open(next, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
            ByteBuffer head = ByteBuffer.allocate(MAGIC.length + 4).put(MAGIC).putInt(Durable.FORMAT);
            head.flip();
            channel.write(head);
            channel.force(true);
            Durable.syncDir(dir);
            for (Path old : segments(dir)) {
                if (!old.equals(next)) {
                    Files.delete(old);
                }
            }
            durable = lastSeq;
        } catch (IOException e) {
            failed = e;
            throw new UncheckedIOException("The engine's write-ahead log could not be started", e);
        } finally {
            syncLock.unlock();
        }
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.close();
        }
    }

    /** The segment files in order. */
    static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(PREFIX)).sorted().toList();
        }
    }

    /**
     * Every whole record of every segment, in order; a segment's reading stops at its first torn or corrupt record.
     * A segment written by another format is refused.
     */
    static List<Record> read(Path dir) throws IOException {
        List<Record> out = new ArrayList<>();
        for (Path seg : segments(dir)) {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(seg));
            if (b.remaining() < MAGIC.length + 4) {
                continue;
            }
            byte[] magic = new byte[MAGIC.length];
            b.get(magic);
            int format = b.getInt();
            if (!Arrays.equals(magic, MAGIC) || format != Durable.FORMAT) {
                throw Durable.refuse(dir, "its write-ahead log " + seg.getFileName() + " is of another format ("
                        + format + ")");
            }
            readRecords(b, out);
        }
        return out;
    }

    private static void readRecords(ByteBuffer b, List<Record> out) {
        while (b.remaining() >= HEADER) {
            int length = b.getInt();
            int crc = b.getInt();
            long seq = b.getLong();
            if (length < 0 || length > b.remaining()) {
                return;
            }
            byte[] payload = new byte[length];
            b.get(payload);
            CRC32C c = new CRC32C();
            c.update(ByteBuffer.allocate(8).putLong(0, seq).array(), 0, 8);
            c.update(payload, 0, length);
            if ((int) c.getValue() != crc) {
                return;
            }
            out.add(new Record(seq, payload));
        }
    }
}
