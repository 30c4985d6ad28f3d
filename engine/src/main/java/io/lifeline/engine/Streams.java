package io.lifeline.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import software.amazon.awssdk.core.SdkField;
import software.amazon.awssdk.core.util.SdkAutoConstructList;
import software.amazon.awssdk.core.util.SdkAutoConstructMap;
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;
import software.amazon.awssdk.services.dynamodb.model.UpdateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTableResponse;

/**
 * The engine's streams: each table's stream spec, the streams by ARN (a disabled stream, or a deleted table's, stays
 * readable for the retention, as on AWS), and the sequence numbers, which increase across every stream of the
 * engine. Callers hold the engine's lock.
 *
 * <p>Sequence numbers are 21-digit numeric strings (AWS's are 21 to 40 digits), starting from the clock's time when
 * the first stream is made, so an engine started later numbers above an earlier one; over a data dir the highest
 * given out is kept at each checkpoint and raised by the log's replay, so a reopened engine numbers on above it.
 */
final class Streams {
    /** How long a record is kept: 24 hours, as DynamoDB Streams keeps it. */
    static final long RETENTION_MILLIS = Duration.ofHours(24).toMillis();
    private static final Set<String> VIEW_TYPES = Set.of("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES");
    private static final Set<String> UPDATABLE = Set.of("TableName", "StreamSpecification");

    private final Engine engine;
    final long retentionMillis = RETENTION_MILLIS;
    /** At most this many records kept per stream, the oldest trimmed first (see {@link Engine#maxStreamRecords}). */
    int maxRecords = 100_000;
    private long sequence;
    private final Map<String, StreamLog> byArn = new LinkedHashMap<>();

    Streams(Engine engine) {
        this.engine = engine;
    }

    long now() {
        return engine.clock.millis();
    }

    long nextSequence() {
        if (sequence == 0) {
            sequence = Math.max(1, now()) * 1_000_000L;
        }
        return ++sequence;
    }

    /** A number the log's replay gives a record again: the numbers given out next stay above it. */
    long replayed(long seq) {
        sequence = Math.max(sequence, seq);
        return seq;
    }

    /** The highest number given out (a data dir keeps it at each checkpoint), or 0 before the first. */
    long sequence() {
        return sequence;
    }

    /** Restores the highest number given out, read from a data dir. */
    void restore(long seq) {
        sequence = Math.max(sequence, seq);
    }

    /** The next sequence number to be given out (where LATEST starts). */
    long upcoming() {
        return sequence + 1;
    }

    static String format(long seq) {
        return "1" + String.format("%020d", seq);
    }

    /** A sequence number as {@link #format} writes it, or -1 when it is not one. */
    static long parse(String text) {
        if (text == null || text.length() != 21 || !text.startsWith("10")) {
            return -1;
        }
        for (int i = 2; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(text.substring(2));
        } catch (NumberFormatException tooLarge) {
            return -1;
        }
    }

    /** Refuses a stream spec CreateTable or UpdateTable cannot take. */
    static void check(StreamSpecification spec) {
        if (spec == null) {
            return;
        }
        if (spec.streamEnabled() == null) {
            throw Errors.validation("1 validation error detected: Value null at 'streamSpecification.streamEnabled' "
                    + "failed to satisfy constraint: Member must not be null");
        }
        if (spec.streamEnabled() && !VIEW_TYPES.contains(String.valueOf(spec.streamViewTypeAsString()))) {
            throw Errors.validation("One or more parameter values were invalid: StreamViewType must be one of "
                    + "KEYS_ONLY, NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES when StreamEnabled is true");
        }
    }

    /** Gives a new table the stream its spec asks for. */
    void created(Table t, StreamSpecification spec) {
        if (spec != null && spec.streamEnabled()) {
            open(t, spec.streamViewTypeAsString());
        }
    }

    /**
     * Gives a table read from a data dir (its catalog, or a logged creation or change of settings) the stream its
     * recorded spec names: the same ARN, shard and records as before the close or the crash. A stream the spec no
     * longer names is disabled; a dir that recorded a view type alone gets a new stream.
     */
    void reopened(Table t) {
        StreamLog.Spec spec = t.recordedStream;
        t.recordedStream = null;
        StreamLog current = t.stream;
        boolean same = current != null && current.enabled() && spec != null && (spec.equals(current.spec)
                || spec.created() < 0 && spec.viewType().equals(current.viewType));
        if (same) {
            return;
        }
        if (current != null) {
            current.disable(now());
        }
        if (spec == null) {
            return;
        }
        if (spec.created() < 0) {
            open(t, spec.viewType());
            return;
        }
        StreamLog s = new StreamLog(this, t, spec);
        sequence = Math.max(sequence, Math.max(s.last(), s.start)); // its start was given out when it was made
        byArn.put(s.arn, s);
        t.stream = s;
    }

    private void open(Table t, String viewType) {
        long at = now();
        long start = nextSequence();
        String suffix = "";
        for (int n = 1; byArn.containsKey(arn(t, at, suffix)); n++) {
            // two streams of one table in one millisecond (a test clock): still two ARNs
            suffix = "-" + n;
        }
        StreamLog s = new StreamLog(this, t, new StreamLog.Spec(viewType, at, start,
                ThreadLocalRandom.current().nextLong(), suffix));
        byArn.put(s.arn, s);
        t.stream = s;
    }

    private static String arn(Table t, long at, String suffix) {
        return Describe.arn(t) + "/stream/" + StreamLog.label(at, suffix);
    }

    /**
     * UpdateTable: enables or disables the table's stream, the one change the engine makes to a table; any other
     * parameter is refused by name.
     */
    UpdateTableResponse update(UpdateTableRequest r) {
        for (SdkField<?> f : r.sdkFields()) {
            Object v = f.getValueOrDefault(r);
            boolean given = v != null && !(v instanceof SdkAutoConstructList) && !(v instanceof SdkAutoConstructMap);
            if (given && !UPDATABLE.contains(f.locationName())) {
                throw Errors.unsupported("UpdateTable of " + f.locationName() + " (only StreamSpecification)");
            }
        }
        Table t = engine.table(r.tableName());
        StreamSpecification spec = r.streamSpecification();
        if (spec == null) {
            throw Errors.validation("1 validation error detected: UpdateTable must change something "
                    + "(the Lifeline engine updates StreamSpecification only)");
        }
        check(spec);
        boolean enabled = t.stream != null && t.stream.enabled();
        if (spec.streamEnabled()) {
            if (enabled) {
                throw Errors.validation("Table already has an enabled stream: TableName: " + t.name);
            }
            open(t, spec.streamViewTypeAsString());
        } else {
            if (!enabled) {
                throw Errors.validation("Table does not have an enabled stream to disable: TableName: " + t.name);
            }
            t.stream.disable(now());
        }
        if (t.log != null) {
            t.log.settings(t);
        }
        return UpdateTableResponse.builder().tableDescription(Describe.of(t, "ACTIVE")).build();
    }

    /** A deleted table's stream is closed and stays readable for the retention. */
    void deleted(Table t) {
        if (t.stream != null) {
            t.stream.disable(now());
        }
    }

    /** The stream named {@code arn}, while it is kept. */
    StreamLog stream(String arn) {
        forget();
        StreamLog s = arn == null ? null : byArn.get(arn);
        if (s == null) {
            throw Errors.notFound("Requested resource not found: Stream: " + arn + " not found");
        }
        return s;
    }

    /** Every stream kept, oldest first. */
    List<StreamLog> all() {
        forget();
        return new ArrayList<>(byArn.values());
    }

    /** Drops the streams disabled longer ago than the retention (their records are all trimmed by then). */
    private void forget() {
        long now = now();
        for (Iterator<StreamLog> it = byArn.values().iterator(); it.hasNext();) {
            StreamLog s = it.next();
            if (s.gone(now)) {
                s.forgotten();
                it.remove();
            }
        }
    }
}
