package io.lifeline.engine;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Identity;
import software.amazon.awssdk.services.dynamodb.model.OperationType;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.StreamRecord;

/**
 * One table's stream: one shard, its records in sequence order. A record holds the images its view type asks for: in
 * memory, as the very maps the table held (an item is never changed in place: a write makes a new map), so a
 * MODIFY's old image is the previous record's new image, not a copy; over a data dir, as the images' bytes (never the
 * store's pages). The SDK's {@link Record} is built only when a reader asks.
 *
 * <p>Records older than the retention (24 hours, as on AWS) are trimmed on every append and read, and so are the
 * oldest beyond {@link Streams#maxRecords}, so a consumer that stopped reading cannot grow the engine's memory without
 * bound. Callers hold the engine's lock.
 */
final class StreamLog {
    /** What a TTL delete names as its author, as DynamoDB does: the service, not a user. */
    static final Identity TTL_SERVICE = Identity.builder().type("Service").principalId("dynamodb.amazonaws.com")
            .build();
    private static final DateTimeFormatter LABEL = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);
    private static final String[] EVENTS = {"INSERT", "MODIFY", "REMOVE"};

    /**
     * One change. {@code key} is kept only when no kept image carries the key. In memory the images are the table's
     * own maps ({@code oldImage}, {@code newImage}); over a data dir, their bytes ({@code oldBytes},
     * {@code newBytes}), decoded when a reader asks.
     */
    private record Change(long seq, long at, byte event, boolean byService, Map<String, AttributeValue> key,
            Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage, byte[] oldBytes,
            byte[] newBytes) {
        Map<String, AttributeValue> oldItem() {
            return oldBytes != null ? Codec.decode(oldBytes) : oldImage;
        }

        Map<String, AttributeValue> newItem() {
            return newBytes != null ? Codec.decode(newBytes) : newImage;
        }
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
    /**
     * Over a data dir, images are kept as their bytes: each item a write reads there is a map decoded for it alone
     * (a MODIFY's old image cannot be the previous record's new image), and its bytes are a fraction of its objects.
     */
    private final boolean compact;

    StreamLog(Streams streams, Table t, String viewType, long created, long start, long salt, String labelSuffix) {
        this.streams = streams;
        this.tableName = t.name;
        this.hash = t.hash;
        this.range = t.range;
        this.viewType = viewType;
        this.created = created;
        this.label = LABEL.format(Instant.ofEpochMilli(created)) + labelSuffix;
        this.arn = Describe.arn(t) + "/stream/" + label;
        this.shardId = String.format("shardId-%020d-%08x", created, (int) salt);
        this.start = start;
        this.salt = salt;
        this.trimmedThrough = start - 1;
        this.compact = t.log != null;
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
        if (!enabled() || unchanged(old, now)) {
            return;
        }
        long at = streams.now();
        byte event = (byte) (old == null ? 0 : now == null ? 2 : 1);
        boolean keepNew = viewType.equals("NEW_IMAGE") || viewType.equals("NEW_AND_OLD_IMAGES");
        boolean keepOld = viewType.equals("OLD_IMAGE") || viewType.equals("NEW_AND_OLD_IMAGES");
        Map<String, AttributeValue> newImage = keepNew ? now : null;
        Map<String, AttributeValue> oldImage = keepOld ? old : null;
        Map<String, AttributeValue> keyKept = newImage == null && oldImage == null ? key : null;
        long seq = streams.nextSequence();
        if (compact) {
            changes.add(new Change(seq, at, event, author != null, keyKept, null, null, encode(oldImage),
                    encode(newImage)));
        } else {
            changes.add(new Change(seq, at, event, author != null, keyKept, oldImage, newImage, null, null));
        }
        trim(at);
    }

    private static byte[] encode(Map<String, AttributeValue> image) {
        return image == null ? null : Codec.encode(image);
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

    /** Whether a disabled stream's records are all past the retention, so the stream can be forgotten. */
    boolean gone(long now) {
        return !enabled() && now - disabledAt > streams.retentionMillis;
    }

    /** The records from sequence number {@code from} on: at most {@code limit} of them and about 1 MB. */
    List<Record> read(long from, int limit) {
        List<Record> out = new ArrayList<>();
        long bytes = 0;
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
        Map<String, AttributeValue> newImage = c.newItem();
        Map<String, AttributeValue> oldImage = c.oldItem();
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
    int size() {
        return changes.size() - head;
    }
}
