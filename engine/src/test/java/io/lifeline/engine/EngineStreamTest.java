package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ExpiredIteratorException;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Identity;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.StreamDescription;
import software.amazon.awssdk.services.dynamodb.model.TrimmedDataAccessException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * What only the engine can be asked of streams and TTL, on a clock the test moves: TTL expiry (moto and AWS expire
 * on their own schedule, not on demand), iterator expiry after 15 minutes, the 24-hour retention, the cap on records
 * kept, and a disabled or deleted table's stream.
 */
@Tag("unit")
class EngineStreamTest implements Cases {
    private final MovableClock clock = new MovableClock(Instant.parse("2026-03-01T12:00:00Z"));
    private final Engine engine = new Engine(clock);
    private final DynamoDbClient client = engine.client();
    private final DynamoDbStreamsClient streams = engine.streamsClient();

    /** A clock the test moves; read by the engine's threads too, so its instant is volatile. */
    static final class MovableClock extends Clock {
        private volatile Instant now;

        MovableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public DynamoDbStreamsClient streams() {
        return streams;
    }

    @Override
    public String target() {
        return "engine";
    }

    private String arn(String t) {
        return db().describeTable(r -> r.tableName(t)).table().latestStreamArn();
    }

    private String iterator(String arn, ShardIteratorType type, String seq) {
        String shard = streams.describeStream(r -> r.streamArn(arn)).streamDescription().shards().get(0).shardId();
        return streams.getShardIterator(r -> r.streamArn(arn).shardId(shard).shardIteratorType(type)
                .sequenceNumber(seq)).shardIterator();
    }

    private List<Record> all(String arn) {
        List<Record> out = new ArrayList<>();
        String it = iterator(arn, ShardIteratorType.TRIM_HORIZON, null);
        while (it != null) {
            String current = it;
            GetRecordsResponse page = streams.getRecords(r -> r.shardIterator(current));
            out.addAll(page.records());
            it = page.records().isEmpty() ? null : page.nextShardIterator();
        }
        return out;
    }

    private void put(String t, String pk, Object... more) {
        Object[] kv = new Object[more.length + 4];
        kv[0] = "pk";
        kv[1] = pk;
        kv[2] = "sk";
        kv[3] = "1";
        System.arraycopy(more, 0, kv, 4, more.length);
        db().putItem(r -> r.tableName(t).item(map(kv)));
    }

    private long nowSeconds() {
        return clock.instant().getEpochSecond();
    }

    @Test
    void expiryDeletesOnlyNumbersInThePastWithinFiveYearsAsTheService() {
        String t = table("S", "byTeam", "NEW_AND_OLD_IMAGES");
        db().updateTimeToLive(r -> r.tableName(t).timeToLiveSpecification(s -> s.attributeName("exp").enabled(true)));
        long now = nowSeconds();
        put(t, "past", "exp", n(Long.toString(now - 10)), "tpk", "T", "tsk", "a");
        put(t, "future", "exp", n(Long.toString(now + 100)));
        put(t, "now", "exp", n(Long.toString(now)));
        put(t, "text", "exp", Long.toString(now - 10));
        put(t, "none");
        put(t, "ancient", "exp", n(Long.toString(now - Duration.ofDays(6 * 365).toSeconds())));
        put(t, "millis", "exp", n(Long.toString(clock.millis() - 10_000)));
        put(t, "fraction", "exp", n((now - 1) + ".5"));
        String arn = arn(t);
        int before = all(arn).size();
        db().deleteItem(r -> r.tableName(t).key(map("pk", "none", "sk", "1")));

        assertEquals(2, engine.expire(), "the item 10 s past and the one half a second past");
        assertFalse(db().getItem(r -> r.tableName(t).key(map("pk", "past", "sk", "1"))).hasItem());
        assertEquals(0, db().scan(r -> r.tableName(t).indexName("byTeam")).count(), "its index entry went too");
        List<String> left = db().scan(r -> r.tableName(t)).items().stream().map(i -> i.get("pk").s()).sorted()
                .toList();
        assertEquals(List.of("ancient", "future", "millis", "now", "text"), left,
                "not yet, now itself, a string, five years past, and milliseconds (far future in seconds) stay");
        List<Record> records = all(arn).subList(before, before + 3);
        assertNull(records.get(0).userIdentity(), "a user's delete");
        Identity service = Identity.builder().type("Service").principalId("dynamodb.amazonaws.com").build();
        for (Record r : records.subList(1, 3)) {
            assertEquals("REMOVE", r.eventNameAsString());
            assertEquals(service, r.userIdentity());
            assertNotNull(r.dynamodb().oldImage().get("exp"));
        }
        assertEquals(0, engine.expire(), "nothing left to expire");
        clock.advance(Duration.ofSeconds(101));
        assertEquals(2, engine.expire(), "now the future one and the one that was now");
    }

    @Test
    void expiryWalksALargeTableInChunks() {
        String t = table();
        db().updateTimeToLive(r -> r.tableName(t).timeToLiveSpecification(s -> s.attributeName("exp").enabled(true)));
        long now = nowSeconds();
        int items = Ttl.CHUNK * 2 + 500;
        for (int i = 0; i < items; i++) {
            put(t, "k" + i, "exp", n(Long.toString(i % 2 == 0 ? now - 1 : now + 1)));
        }
        assertEquals(items / 2, engine.expire(), "every other item, across three chunks");
        assertEquals(items / 2, db().scan(r -> r.tableName(t)).count());
    }

    @Test
    void disabledTtlExpiresNothing() {
        String t = table();
        db().updateTimeToLive(r -> r.tableName(t).timeToLiveSpecification(s -> s.attributeName("exp").enabled(true)));
        db().updateTimeToLive(r -> r.tableName(t).timeToLiveSpecification(s -> s.attributeName("exp").enabled(false)));
        put(t, "past", "exp", n(Long.toString(nowSeconds() - 10)));
        assertEquals(0, engine.expire());
        assertEquals("DISABLED", db().describeTimeToLive(r -> r.tableName(t)).timeToLiveDescription()
                .timeToLiveStatusAsString());
        assertThrows(DynamoDbException.class, () -> db().updateTimeToLive(r -> r.tableName(t)
                .timeToLiveSpecification(s -> s.attributeName("exp").enabled(false))));
    }

    @Test
    @Timeout(30)
    void aScheduledPassExpiresOnADaemonThread() throws InterruptedException {
        String t = table();
        db().updateTimeToLive(r -> r.tableName(t).timeToLiveSpecification(s -> s.attributeName("exp").enabled(true)));
        put(t, "soon", "exp", n(Long.toString(nowSeconds() + 60)));
        try (Engine.Schedule schedule = engine.expireEvery(Duration.ofMillis(20))) {
            clock.advance(Duration.ofMinutes(2));
            while (db().getItem(r -> r.tableName(t).key(map("pk", "soon", "sk", "1"))).hasItem()) {
                TimeUnit.MILLISECONDS.sleep(10); // bounded by the @Timeout: waits for the pass, proves no non-event
            }
        }
    }

    @Test
    void anIteratorExpiresAfterFifteenMinutes() {
        String t = table("S", null, "KEYS_ONLY");
        put(t, "a");
        String it = iterator(arn(t), ShardIteratorType.TRIM_HORIZON, null);
        clock.advance(Duration.ofMinutes(15));
        GetRecordsResponse page = streams.getRecords(r -> r.shardIterator(it));
        assertEquals(1, page.records().size(), "15 minutes exactly: still valid");
        clock.advance(Duration.ofMillis(1));
        assertThrows(ExpiredIteratorException.class, () -> streams.getRecords(r -> r.shardIterator(it)));
        assertEquals(0, streams.getRecords(r -> r.shardIterator(page.nextShardIterator())).records().size(),
                "the next iterator is new: it has its own 15 minutes");
        assertThrows(DynamoDbException.class, () -> streams.getRecords(r -> r.shardIterator("not-an-iterator")));
    }

    @Test
    void recordsOlderThanADayAreTrimmed() {
        String t = table("S", null, "NEW_IMAGE");
        String arn = arn(t);
        put(t, "old");
        String oldSeq = all(arn).get(0).dynamodb().sequenceNumber();
        clock.advance(Duration.ofHours(24).minusMinutes(1));
        String fromOld = iterator(arn, ShardIteratorType.TRIM_HORIZON, null);
        clock.advance(Duration.ofMinutes(2)); // the iterator is 2 minutes old, its record 24 h and a minute
        put(t, "new");
        List<Record> left = all(arn);
        assertEquals(1, left.size());
        assertEquals("new", left.get(0).dynamodb().keys().get("pk").s());
        assertThrows(TrimmedDataAccessException.class, () -> streams.getRecords(r -> r.shardIterator(fromOld)));
        assertThrows(TrimmedDataAccessException.class,
                () -> iterator(arn, ShardIteratorType.AT_SEQUENCE_NUMBER, oldSeq));
        assertThrows(DynamoDbException.class, () -> iterator(arn, ShardIteratorType.AFTER_SEQUENCE_NUMBER, "12345"));
    }

    @Test
    void aStreamKeepsAtMostItsCap() {
        engine.maxStreamRecords(3);
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        for (int i = 0; i < 5; i++) {
            put(t, "k" + i);
        }
        List<String> kept = all(arn(t)).stream().map(r -> r.dynamodb().keys().get("pk").s()).toList();
        assertEquals(List.of("k2", "k3", "k4"), kept);
    }

    @Test
    void aDisabledStreamIsClosedAndADeletedTablesStaysReadableForADay() {
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        String first = arn(t);
        put(t, "a");
        db().updateTable(r -> r.tableName(t).streamSpecification(s -> s.streamEnabled(false)));
        put(t, "b");
        assertNull(db().describeTable(r -> r.tableName(t)).table().streamSpecification());
        StreamDescription closed = streams.describeStream(r -> r.streamArn(first)).streamDescription();
        assertEquals("DISABLED", closed.streamStatusAsString());
        assertNotNull(closed.shards().get(0).sequenceNumberRange().endingSequenceNumber());
        String it = iterator(first, ShardIteratorType.TRIM_HORIZON, null);
        GetRecordsResponse last = streams.getRecords(r -> r.shardIterator(it));
        assertEquals(1, last.records().size(), "the write after disabling made no record");
        assertNull(last.nextShardIterator(), "a closed shard read to its end has no next iterator");
        db().updateTable(r -> r.tableName(t).streamSpecification(s -> s.streamEnabled(true)
                .streamViewType("KEYS_ONLY")));
        String second = arn(t);
        assertNotEquals(first, second, "enabling again makes a new stream");
        assertEquals(2, streams.listStreams(r -> r.tableName(t)).streams().size());
        db().deleteTable(r -> r.tableName(t));
        assertEquals("DISABLED", streams.describeStream(r -> r.streamArn(second)).streamDescription()
                .streamStatusAsString());
        clock.advance(Duration.ofHours(24).plusSeconds(1));
        assertThrows(ResourceNotFoundException.class, () -> streams.describeStream(r -> r.streamArn(second)));
        assertTrue(streams.listStreams(r -> r.tableName(t)).streams().isEmpty());
    }

    @Test
    void sequenceNumbersAreTwentyOneDigitsAndRecordTimesAreTheClocks() {
        String t = table("S", null, "KEYS_ONLY");
        put(t, "a");
        clock.advance(Duration.ofMillis(1500));
        put(t, "b");
        List<Record> got = all(arn(t));
        assertEquals(21, got.get(0).dynamodb().sequenceNumber().length());
        assertEquals(Instant.parse("2026-03-01T12:00:00Z"), got.get(0).dynamodb().approximateCreationDateTime());
        assertEquals(Instant.parse("2026-03-01T12:00:01Z"), got.get(1).dynamodb().approximateCreationDateTime(),
                "rounded down to the second");
        assertEquals("1.1", got.get(0).eventVersion());
    }

    /**
     * A rough figure, printed, never asserted: the heap a MODIFY record of a 15-attribute item holds, with a
     * heartbeat-like update (two attributes change each time), measured over 20,000 (a cap of 20,000 set here) and
     * scaled to the default cap of 100,000. The count kept is asserted: the cap holds.
     */
    @Test
    void heapHeldByAFullStreamIsPrinted() {
        engine.maxStreamRecords(20_000);
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        Object[] kv = new Object[26];
        for (int i = 0; i < 13; i++) {
            kv[2 * i] = "attr" + i;
            kv[2 * i + 1] = "value of attribute " + i;
        }
        put(t, "agent", kv);
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long before = rt.totalMemory() - rt.freeMemory();
        for (int i = 0; i < 20_000; i++) {
            String seen = Integer.toString(i);
            db().updateItem(r -> r.tableName(t).key(map("pk", "agent", "sk", "1"))
                    .updateExpression("SET lastSeen = :s, beats = :b")
                    .expressionAttributeValues(map(":s", n(seen), ":b", n(seen))));
        }
        System.gc();
        long after = rt.totalMemory() - rt.freeMemory();
        StreamLog log = engine.tables.get(t).stream;
        assertEquals(20_000, log.size(), "the cap: the insert was trimmed");
        long perRecord = (after - before) / log.size();
        System.out.printf("stream heap: %d records of a 15-attribute item hold about %d MB (%d bytes a record; "
                + "the default cap of 100,000 about %d MB)%n", log.size(), (after - before) >> 20, perRecord,
                perRecord * 100_000 >> 20);
    }
}
