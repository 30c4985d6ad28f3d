package io.lifeline.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DescribeTimeToLiveRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTimeToLiveResponse;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveSpecification;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveResponse;

/**
 * Time to live: UpdateTimeToLive, DescribeTimeToLive and the expiry pass, by AWS's rules
 * (<a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-before-you-start.html">
 * Using DynamoDB Time to Live</a>): an item expires when its TTL attribute is a top-level Number of epoch seconds
 * earlier than now; a value of another type, a missing one, or one more than five years in the past is ignored.
 *
 * <p>AWS deletes expired items in the background within a few days; the engine deletes them when its owner runs
 * {@link Engine#expire()} (or the schedule {@link Engine#expireEvery} starts), at the engine clock's time. Each
 * delete goes through the table's one write path (indexes kept in step) and its stream record names the service as
 * its author ({@code userIdentity} type Service, principal dynamodb.amazonaws.com), as AWS's does. A change of
 * setting takes effect at once (AWS takes up to an hour, and refuses another change meanwhile).
 */
final class Ttl {
    /** Five years of 365 days and one leap day: an expiry further in the past is ignored. */
    private static final long FIVE_YEARS_SECONDS = Duration.ofDays(5 * 365 + 1).toSeconds();
    /** At most this many items are read under the lock at a time. */
    static final int CHUNK = 1000;

    private Ttl() {
    }

    static UpdateTimeToLiveResponse update(Engine engine, UpdateTimeToLiveRequest r) {
        TimeToLiveSpecification spec = r.timeToLiveSpecification();
        if (spec == null || spec.enabled() == null || spec.attributeName() == null
                || spec.attributeName().isEmpty()) {
            throw Errors.validation("1 validation error detected: TimeToLiveSpecification must have Enabled and a "
                    + "non-empty AttributeName");
        }
        Table t = engine.table(r.tableName());
        if (spec.enabled()) {
            if (t.ttlAttribute != null) {
                throw Errors.validation("TimeToLive is already enabled");
            }
            t.ttlAttribute = spec.attributeName();
        } else {
            if (t.ttlAttribute == null) {
                throw Errors.validation("TimeToLive is already disabled");
            }
            if (!t.ttlAttribute.equals(spec.attributeName())) {
                throw Errors.validation("TimeToLive is enabled on attribute " + t.ttlAttribute + ", not "
                        + spec.attributeName());
            }
            t.ttlAttribute = null;
        }
        if (t.log != null) {
            t.log.settings(t);
        }
        return UpdateTimeToLiveResponse.builder().timeToLiveSpecification(spec).build();
    }

    static DescribeTimeToLiveResponse describe(Engine engine, DescribeTimeToLiveRequest r) {
        Table t = engine.table(r.tableName());
        TimeToLiveDescription.Builder d = TimeToLiveDescription.builder();
        if (t.ttlAttribute == null) {
            d.timeToLiveStatus("DISABLED");
        } else {
            d.timeToLiveStatus("ENABLED").attributeName(t.ttlAttribute);
        }
        return DescribeTimeToLiveResponse.builder().timeToLiveDescription(d.build()).build();
    }

    /**
     * Deletes every expired item of every table with TTL enabled; answers how many. The pass takes the engine's lock
     * for {@link #CHUNK} items at a time, so a large table's pass never holds other calls up for long.
     */
    static int expire(Engine engine) {
        BigDecimal now = BigDecimal.valueOf(engine.clock.millis(), 3);
        BigDecimal floor = now.subtract(BigDecimal.valueOf(FIVE_YEARS_SECONDS));
        List<String> names;
        engine.acquire();
        try {
            names = new ArrayList<>(engine.tables.keySet());
        } finally {
            engine.release();
        }
        int deleted = 0;
        for (String name : names) {
            Cursor at = Cursor.START;
            while (at != null) {
                engine.acquire();
                try {
                    Table t = engine.tables.get(name);
                    if (t == null || t.ttlAttribute == null) {
                        break;
                    }
                    List<Map<String, AttributeValue>> expired = new ArrayList<>();
                    at = scan(t, at, item -> expired(item.get(t.ttlAttribute), now, floor), expired);
                    for (Map<String, AttributeValue> item : expired) {
                        delete(t, item);
                    }
                    deleted += expired.size();
                } finally {
                    engine.release();
                }
            }
        }
        return deleted;
    }

    /** Where a pass stopped in a table: after this item (START: before the first). */
    private record Cursor(Partition partition, Sorted.Position position) {
        static final Cursor START = new Cursor(null, null);
    }

    /** Sorts before every partition (hashes compare unsigned, so 0 is the lowest). */
    private static final Partition FIRST = new Partition(0, Key.NONE);

    /** Adds the expired of up to CHUNK items after {@code from} to {@code out}; answers where it stopped, or null. */
    private static Cursor scan(Table t, Cursor from, Predicate<Map<String, AttributeValue>> expired,
            List<Map<String, AttributeValue>> out) {
        Iterator<Sorted.Entry> items = from.partition() == null ? t.items.from(FIRST, null)
                : t.items.from(from.partition(), from.position());
        int read = 0;
        while (items.hasNext()) {
            Sorted.Entry e = items.next();
            if (expired.test(e.item())) {
                out.add(e.item());
            }
            if (++read == CHUNK) {
                return new Cursor(e.partition(), e.position());
            }
        }
        return null;
    }

    private static void delete(Table t, Map<String, AttributeValue> item) {
        Map<String, AttributeValue> key = t.keyOf(item);
        if (t.stream == null) {
            t.write(key, item, null);
        } else {
            t.stream.asService(() -> t.write(key, item, null));
        }
    }

    private static boolean expired(AttributeValue v, BigDecimal now, BigDecimal floor) {
        if (v == null || v.n() == null) {
            return false;
        }
        BigDecimal at = Values.number(v.n());
        return at.compareTo(now) < 0 && at.compareTo(floor) >= 0;
    }

    /** The expiry pass every {@code period} on a daemon thread, until closed. */
    static Engine.Schedule every(Engine engine, Duration period) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread th = new Thread(r, "lifeline-engine-ttl");
            th.setDaemon(true);
            return th;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                engine.expire();
            } catch (RuntimeException e) {
                System.err.println("engine TTL pass failed, it runs again next period: " + e);
            }
        }, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
        return timer::shutdownNow; // a daemon thread: it never holds the JVM open either
    }
}
