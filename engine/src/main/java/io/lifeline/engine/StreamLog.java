package io.lifeline.engine;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Identity;
import software.amazon.awssdk.services.dynamodb.model.OperationType;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.StreamRecord;

/**
 * One table's stream: one shard, its records in sequence order. In memory a record holds the images its view type
 * asks for as the very maps the table held (an item is never changed in place: a write makes a new map), so a
 * MODIFY's old image is the previous record's new image, not a copy. Over a data dir the records are durable, as on
 * AWS: each is encoded into a map of the store ({@code stream/<table id>/<salt>}: sequence number to bytes, with key 0
 * holding the highest sequence number trimmed), written under the lock with its write and committed at the next
 * checkpoint; the log's replay after a crash makes the records again with the numbers and times the log recorded
 * ({@link Durable#stamped}). The stream's identity (its {@link Spec}) is kept with the table's settings, so a reopened
 * engine has the same ARN, label and shard, and a consumer's sequence number stays valid. The SDK's {@link Record} is
 * built only when a reader asks.
 *
 * <p>Records older than the retention (24 hours, as on AWS) are trimmed on every append and read, and so are the
 * oldest beyond {@link Streams#maxRecords}, so a consumer that stopped reading cannot grow the engine's memory (or its
 * data dir) without bound. Callers hold the engine's lock.
 */
final class StreamLog {
    /** What a TTL delete names as its author, as DynamoDB does: the service, not a user. */
    static final Identity TTL_SERVICE = Identity.builder().type("Service").principalId("dynamodb.amazonaws.com")
            .build();
    private static final DateTimeFormatter LABEL = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);
    private static final String[] EVENTS = {"INSERT", "MODIFY", "REMOVE"};

    /** One change. {@code key} is kept only when no kept image carries the key. */
    private record Change(long seq, long at, byte event, boolean byService, Map<String, AttributeValue> key,
            Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage) {
    }

    /**
     * What names a stream and where its numbers start: kept with the table's settings in a data dir, so a reopened
     * engine gives the table the same stream. {@code created} is -1 when a dir recorded the view type alone.
     */
    record Spec(String viewType, long created, long start, long salt, String suffix) {
    }

    final Streams streams;
    final String tableName;
    final String hash;
    final String range;
    final String viewType;
    final String label;
    final String arn;
    final String shardId;
    final long created;
    final Spec spec;
    /** The first sequence number the shard may hold. */
    final long start;
    private final long salt;
    private final List<Change> changes = new ArrayList<>();
    /** Index in {@link #changes} of the oldest kept record (the ones before it are trimmed, awaiting compaction). */
    private int head;
    /** The highest sequence number trimmed from the shard, or {@code start - 1}. */
    private long trimmedThrough;
    /** When the stream was disabled (its shard closed), or -1 while enabled. */
    long disabledAt = -1;
    /** The last sequence number of a closed shard. */
    private long end;
    private Identity author;
    /** Over a data dir: the store's map of this stream's records (null in memory). */
    private final MVMap<Long, byte[]> disk;
    private final Durable log;

    StreamLog(Streams streams, Table t, Spec spec) {
        this.streams = streams;
        this.spec = spec;
        this.tableName = t.name;
        this.hash = t.hash;
        this.range = t.range;
        this.viewType = spec.viewType();
        this.created = spec.created();
        this.label = label(created, spec.suffix());
        this.arn = Describe.arn(t) + "/stream/" + label;
        this.shardId = String.format("shardId-%020d-%08x", created, (int) spec.salt());
        this.start = spec.start();
        this.salt = spec.salt();
        this.log = t.log;
        this.disk = log == null ? null : log.streamRecords(t.id, salt);
        if (disk != null && disk.containsKey(0L)) {
            this.trimmedThrough = new Codec.In(disk.get(0L)).varint();
        } else {
            this.trimmedThrough = start - 1;
            if (disk != null) {
                disk.put(0L, marker(trimmedThrough));
            }
        }
    }

    static String label(long created, String suffix) {
        return LABEL.format(Instant.ofEpochMilli(created)) + suffix;
    }

    private static byte[] marker(long through) {
        Codec.Out out = new Codec.Out(16);
        out.varint(through);
        return out.bytes();
    }

    boolean enabled() {
        return disabledAt < 0;
    }

    /** Closes the shard: nothing more is appended, and a reader at its end gets no next iterator. */
    void disable(long now) {
        if (enabled()) {
            disabledAt = now;
            end = last();
        }
    }

    /** The last sequence number of the closed shard (meaningful once disabled). */
    long end() {
        return end;
    }

    /** The highest sequence number this shard has given out, or {@code start - 1} when it has none. */
    long last() {
        if (disk != null) {
            Long k = disk.lastKey();
            return k == null || k == 0 ? trimmedThrough : k;
        }
        return size() == 0 ? trimmedThrough : changes.get(changes.size() - 1).seq();
    }

    long trimmedThrough() {
        return trimmedThrough;
    }

    /** Runs {@code write} with its record named as the service's (a TTL delete). */
    void asService(Runnable write) {
        author = TTL_SERVICE;
        try {
            write.run();
        } finally {
            author = null;
        }
    }

    /**
     * Records the change of the item at {@code key} from {@code old} to {@code now} (null: no item). A write that
     * changes nothing (a Put of the same item, an Update that sets what is there, a Delete of no item) records
     * nothing, as AWS documents.
     */
    void append(Map<String, AttributeValue> key, Map<String, AttributeValue> old, Map<String, AttributeValue> now) {
        // replaying the log at opening: the write makes the record it made before the crash, numbered and timed as
        // the log recorded it, and none when it recorded none
        boolean replay = log != null && log.replaying();
        Durable.Stamp stamp = replay ? log.takeStamp() : null;
        if (!enabled() || (replay ? stamp == null : unchanged(old, now))) {
            return;
        }
        long at = replay ? stamp.at() : streams.now();
        long seq = replay ? streams.replayed(stamp.seq()) : streams.nextSequence();
        boolean byService = replay ? stamp.byService() : author != null;
        byte event = (byte) (old == null ? 0 : now == null ? 2 : 1);
        boolean keepNew = viewType.equals("NEW_IMAGE") || viewType.equals("NEW_AND_OLD_IMAGES");
        boolean keepOld = viewType.equals("OLD_IMAGE") || viewType.equals("NEW_AND_OLD_IMAGES");
        Map<String, AttributeValue> newImage = keepNew ? now : null;
        Map<String, AttributeValue> oldImage = keepOld ? old : null;
        Map<String, AttributeValue> keyKept = newImage == null && oldImage == null ? key : null;
        Change c = new Change(seq, at, event, byService, keyKept, oldImage, newImage);
        if (disk != null) {
            log.stamped(seq, at, byService);
            disk.put(seq, encode(c));
        } else {
            changes.add(c);
        }
        trim(at);
    }

    private static byte[] encode(Change c) {
        Codec.Out out = new Codec.Out();
        out.varint(c.at());
        out.varint(c.event());
        out.varint(c.byService() ? 1 : 0);
        image(out, c.key());
        image(out, c.oldImage());
        image(out, c.newImage());
        return out.bytes();
    }

    private static void image(Codec.Out out, Map<String, AttributeValue> image) {
        out.varint(image == null ? 0 : 1);
        if (image != null) {
            out.item(image);
        }
    }

    private static Change decode(long seq, byte[] bytes) {
        Codec.In in = new Codec.In(bytes);
        long at = in.varint();
        byte event = (byte) in.varint();
        boolean byService = in.varint() == 1;
        Map<String, AttributeValue> key = image(in);
        Map<String, AttributeValue> oldImage = image(in);
        return new Change(seq, at, event, byService, key, oldImage, image(in));
    }

    private static Map<String, AttributeValue> image(Codec.In in) {
        return in.varint() == 0 ? null : in.item();
    }

    private static boolean unchanged(Map<String, AttributeValue> old, Map<String, AttributeValue> now) {
        if (old == null || now == null) {
            return old == now;
        }
        if (old == now) {
            return true;
        }
        if (old.size() != now.size()) {
            return false;
        }
        for (Map.Entry<String, AttributeValue> e : old.entrySet()) {
            if (!Values.same(e.getValue(), now.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** Drops the records past the retention, and the oldest beyond the cap on records kept. */
    void trim(long now) {
        long oldest = now - streams.retentionMillis;
        if (disk != null) {
            trimDisk(oldest);
            return;
        }
        while (head < changes.size()
                && (changes.get(head).at() < oldest || changes.size() - head > streams.maxRecords)) {
            trimmedThrough = changes.get(head).seq();
            changes.set(head, null);
            head++;
        }
        if (head > 1024 && head > changes.size() / 2) {
            changes.subList(0, head).clear();
            head = 0;
        }
    }

    private void trimDisk(long oldest) {
        long through = trimmedThrough;
        for (Long k = disk.higherKey(0L); k != null; k = disk.higherKey(k)) {
            if (size() <= streams.maxRecords && new Codec.In(disk.get(k)).varint() >= oldest) {
                break;
            }
            disk.remove(k);
            through = k;
        }
        if (through != trimmedThrough) {
            trimmedThrough = through;
            disk.put(0L, marker(through));
        }
    }

    /** Lets a forgotten stream's records go from the data dir. */
    void forgotten() {
        if (disk != null) {
            log.dropStream(disk);
        }
    }

    /** Whether a disabled stream's records are all past the retention, so the stream can be forgotten. */
    boolean gone(long now) {
        return !enabled() && now - disabledAt > streams.retentionMillis;
    }

    /** The records from sequence number {@code from} on: at most {@code limit} of them and about 1 MB. */
    List<Record> read(long from, int limit) {
        List<Record> out = new ArrayList<>();
        long bytes = 0;
        if (disk != null) {
            Cursor<Long, byte[]> c = disk.cursor(Math.max(from, 1L));
            while (c.hasNext() && out.size() < limit && bytes < 1024 * 1024) {
                Record r = record(decode(c.next(), c.getValue()));
                bytes += r.dynamodb().sizeBytes();
                out.add(r);
            }
            return out;
        }
        for (int i = firstAtOrAfter(from); i < changes.size() && out.size() < limit && bytes < 1024 * 1024; i++) {
            Record r = record(changes.get(i));
            bytes += r.dynamodb().sizeBytes();
            out.add(r);
        }
        return out;
    }

    private int firstAtOrAfter(long seq) {
        int lo = head;
        int hi = changes.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (changes.get(mid).seq() < seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private Record record(Change c) {
        Map<String, AttributeValue> newImage = c.newImage();
        Map<String, AttributeValue> oldImage = c.oldImage();
        Map<String, AttributeValue> keys = c.key() != null ? c.key() : keyOf(newImage != null ? newImage : oldImage);
        StreamRecord.Builder d = StreamRecord.builder().keys(keys).sequenceNumber(Streams.format(c.seq()))
                .streamViewType(viewType).approximateCreationDateTime(Instant.ofEpochSecond(c.at() / 1000));
        long size = Values.itemSize(keys);
        if (newImage != null) {
            d.newImage(newImage);
            size += Values.itemSize(newImage);
        }
        if (oldImage != null) {
            d.oldImage(oldImage);
            size += Values.itemSize(oldImage);
        }
        Record.Builder r = Record.builder().eventID(String.format("%016x%016x", salt, c.seq()))
                .eventName(OperationType.fromValue(EVENTS[c.event()])).eventVersion("1.1").eventSource("aws:dynamodb")
                .awsRegion(Describe.REGION).dynamodb(d.sizeBytes(size).build());
        if (c.byService()) {
            r.userIdentity(TTL_SERVICE);
        }
        return r.build();
    }

    private Map<String, AttributeValue> keyOf(Map<String, AttributeValue> item) {
        Map<String, AttributeValue> k = new LinkedHashMap<>();
        k.put(hash, item.get(hash));
        if (range != null) {
            k.put(range, item.get(range));
        }
        return k;
    }

    /** How many records the shard keeps now. */
    long size() {
        return disk != null ? disk.sizeAsLong() - 1 : changes.size() - head;
    }
}
