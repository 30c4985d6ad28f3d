package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Identity;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Streams and TTL over a data dir: stream records are durable, as on AWS, so a reopened engine (after a close, or
 * after a crash, its log replayed) has the same streams (ARN, shard) with the same records under the same sequence
 * numbers, and a consumer's checkpoint continues exactly; each table's stream spec and TTL setting survive; a TTL
 * expiry is logged like any delete and answers only once it is on disk.
 */
@Tag("unit")
@Timeout(120)
class DurableStreamTest {
    @TempDir
    Path dir;

    private final EngineStreamTest.MovableClock clock =
            new EngineStreamTest.MovableClock(Instant.parse("2026-03-01T12:00:00Z"));

    private static void create(DynamoDbClient db, String name, StreamSpecification stream) {
        db.createTable(r -> r.tableName(name)
                .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH")).streamSpecification(stream));
    }

    private static StreamSpecification stream(String viewType) {
        return StreamSpecification.builder().streamEnabled(true).streamViewType(viewType).build();
    }

    private static void put(DynamoDbClient db, String t, String pk, String v) {
        db.putItem(r -> r.tableName(t).item(map("pk", pk, "v", v)));
    }

    private static String arn(Engine e, String t) {
        return e.client().describeTable(r -> r.tableName(t)).table().latestStreamArn();
    }

    /** Every record of the table's latest stream, from its trim horizon. */
    private static List<Record> records(Engine e, String t) {
        DynamoDbStreamsClient streams = e.streamsClient();
        String arn = arn(e, t);
        String shard = streams.describeStream(r -> r.streamArn(arn)).streamDescription().shards().get(0).shardId();
        String it = streams.getShardIterator(r -> r.streamArn(arn).shardId(shard)
                .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).shardIterator();
        List<Record> out = new ArrayList<>();
        while (it != null) {
            String current = it;
            GetRecordsResponse page = streams.getRecords(r -> r.shardIterator(current));
            out.addAll(page.records());
            it = page.records().isEmpty() ? null : page.nextShardIterator();
        }
        return out;
    }

    private Path copy(Path from) throws IOException {
        Path to = Files.createTempDirectory(dir, "crash");
        DurableTest.copyDir(from, to);
        return to;
    }

    /** What a consumer compares: the record's number, id, event, images and time. */
    private static List<String> seen(List<Record> records) {
        List<String> out = new ArrayList<>();
        for (Record r : records) {
            out.add(r.dynamodb().sequenceNumber() + " " + r.eventID() + " " + r.eventNameAsString() + " "
                    + r.dynamodb().keys() + " " + r.dynamodb().oldImage() + " " + r.dynamodb().newImage() + " "
                    + r.dynamodb().approximateCreationDateTime());
        }
        return out;
    }

    private static String shard(Engine e, String t) {
        String arn = arn(e, t);
        return e.streamsClient().describeStream(r -> r.streamArn(arn)).streamDescription().shards().get(0).shardId();
    }

    /** The records after {@code seq}, as a consumer that checkpointed it reads on. */
    private static List<Record> after(Engine e, String t, String seq) {
        DynamoDbStreamsClient streams = e.streamsClient();
        String arn = arn(e, t);
        String shard = shard(e, t);
        String it = streams.getShardIterator(r -> r.streamArn(arn).shardId(shard)
                .shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(seq)).shardIterator();
        return streams.getRecords(r -> r.shardIterator(it)).records();
    }

    /**
     * Stream records survive a close and a crash (the dir copied while open: the last writes in the log only), and a
     * checkpoint between them (a small log: some records in the store, the rest made again by the replay): the same
     * ARN and shard, the same records with the same numbers, and a consumer's checkpoint continues exactly after it.
     */
    @Test
    void streamRecordsSurviveACloseAndACrashWithTheirNumbers() throws IOException {
        Path live = dir.resolve("live");
        Path crashed;
        String arn;
        String shard;
        List<String> outbox;
        List<String> later;
        String checkpoint;
        try (Engine e = Engine.open(live, clock, 2048)) {
            DynamoDbClient db = e.client();
            create(db, "outbox", stream("NEW_AND_OLD_IMAGES"));
            create(db, "later", null);
            db.updateTable(r -> r.tableName("later").streamSpecification(stream("NEW_IMAGE")));
            for (int i = 0; i < 30; i++) {
                put(db, "outbox", "p" + i, "v");
                put(db, "later", "p" + i, "v");
                clock.advance(Duration.ofMillis(10));
            }
            put(db, "outbox", "p0", "changed");
            db.deleteItem(r -> r.tableName("outbox").key(map("pk", "p1")));
            assertTrue(e.checkpoints() > 1, "some records were checkpointed: " + e.checkpoints());
            List<Record> got = records(e, "outbox");
            assertEquals(32, got.size());
            outbox = seen(got);
            later = seen(records(e, "later"));
            assertEquals(30, later.size());
            arn = arn(e, "outbox");
            shard = shard(e, "outbox");
            checkpoint = got.get(19).dynamodb().sequenceNumber(); // a consumer read 20 of them
            crashed = copy(live); // what a kill now leaves: the last writes in the log only
        }
        for (Path d : List.of(crashed, live)) {
            clock.advance(Duration.ofSeconds(1));
            try (Engine e = Engine.open(d, clock)) {
                DynamoDbClient db = e.client();
                assertEquals(29, db.scan(r -> r.tableName("outbox")).count(), "the items are back: " + d);
                assertEquals(arn, arn(e, "outbox"), "the same stream: " + d);
                assertEquals(shard, shard(e, "outbox"), "the same shard");
                assertEquals(outbox, seen(records(e, "outbox")), "the same records, numbers and times: " + d);
                assertEquals(later, seen(records(e, "later")));
                assertEquals(outbox.subList(20, 32), seen(after(e, "outbox", checkpoint)),
                        "the consumer goes on exactly after its checkpoint");
                put(db, "outbox", "p99", "new");
                List<Record> got = records(e, "outbox");
                assertEquals(33, got.size(), "a write after reopening: one more record");
                Record last = got.get(32);
                assertEquals("INSERT", last.eventNameAsString());
                assertEquals("p99", last.dynamodb().keys().get("pk").s());
                assertTrue(last.dynamodb().sequenceNumber().compareTo(got.get(31).dynamodb().sequenceNumber()) > 0,
                        "numbered after every record before the reopening");
                assertEquals(outbox.subList(20, 32), seen(after(e, "outbox", checkpoint)).subList(0, 12));
            }
        }
    }

    /** The records over a data dir are trimmed on disk too: past the cap, and past the 24 hours, after a reopen. */
    @Test
    void recordsAreTrimmedOnDiskAndStayTrimmedAfterAReopen() {
        String first;
        try (Engine e = Engine.open(dir, clock)) {
            e.maxStreamRecords(10);
            DynamoDbClient db = e.client();
            create(db, "beats", stream("KEYS_ONLY"));
            for (int i = 0; i < 25; i++) {
                put(db, "beats", "p" + i, "v");
            }
            List<Record> got = records(e, "beats");
            assertEquals(10, got.size(), "the cap");
            first = got.get(0).dynamodb().sequenceNumber();
            assertEquals("p15", got.get(0).dynamodb().keys().get("pk").s());
        }
        try (Engine e = Engine.open(dir, clock)) {
            List<Record> got = records(e, "beats");
            assertEquals(10, got.size(), "what was trimmed stays trimmed");
            assertEquals(first, got.get(0).dynamodb().sequenceNumber());
            clock.advance(Duration.ofHours(25));
            assertEquals(0, records(e, "beats").size(), "past the retention");
            e.client().putItem(r -> r.tableName("beats").item(map("pk", "late")));
            assertEquals(1, records(e, "beats").size());
        }
        try (Engine e = Engine.open(dir, clock)) {
            assertEquals(1, records(e, "beats").size());
        }
    }

    @Test
    void streamSpecsAndTtlSettingsSurviveACloseAndACrash() throws IOException {
        Path live = dir.resolve("live");
        Path crashed;
        String createdArn;
        try (Engine e = Engine.open(live, clock)) {
            DynamoDbClient db = e.client();
            create(db, "created", stream("KEYS_ONLY"));
            create(db, "updated", null);
            db.updateTable(r -> r.tableName("updated").streamSpecification(stream("NEW_AND_OLD_IMAGES")));
            create(db, "disabled", stream("NEW_IMAGE"));
            db.updateTable(r -> r.tableName("disabled").streamSpecification(s -> s.streamEnabled(false)));
            create(db, "plain", null);
            db.updateTimeToLive(r -> r.tableName("created").timeToLiveSpecification(s -> s.attributeName("exp")
                    .enabled(true)));
            db.updateTimeToLive(r -> r.tableName("plain").timeToLiveSpecification(s -> s.attributeName("gone")
                    .enabled(true)));
            db.updateTimeToLive(r -> r.tableName("plain").timeToLiveSpecification(s -> s.attributeName("gone")
                    .enabled(false)));
            crashed = copy(live); // settings in the log only
            createdArn = arn(e, "created");
        }
        for (Path d : List.of(crashed, live)) {
            try (Engine e = Engine.open(d, clock)) {
                DynamoDbClient db = e.client();
                TableDescription created = db.describeTable(r -> r.tableName("created")).table();
                assertEquals(stream("KEYS_ONLY"), created.streamSpecification(), d.toString());
                assertEquals(createdArn, created.latestStreamArn(), "the same stream");
                TableDescription updated = db.describeTable(r -> r.tableName("updated")).table();
                assertEquals(stream("NEW_AND_OLD_IMAGES"), updated.streamSpecification());
                assertNotNull(updated.latestStreamArn());
                assertEquals("NEW_AND_OLD_IMAGES", e.streamsClient().describeStream(r -> r.streamArn(
                        updated.latestStreamArn())).streamDescription().streamViewTypeAsString());
                assertNull(db.describeTable(r -> r.tableName("disabled")).table().streamSpecification());
                assertNull(db.describeTable(r -> r.tableName("plain")).table().streamSpecification());
                TimeToLiveDescription ttl = db.describeTimeToLive(r -> r.tableName("created")).timeToLiveDescription();
                assertEquals("ENABLED", ttl.timeToLiveStatusAsString());
                assertEquals("exp", ttl.attributeName());
                assertEquals("DISABLED", db.describeTimeToLive(r -> r.tableName("plain")).timeToLiveDescription()
                        .timeToLiveStatusAsString());
            }
        }
        try (Engine e = Engine.open(live, clock)) {
            e.client().updateTable(r -> r.tableName("created").streamSpecification(s -> s.streamEnabled(false)));
        }
        clock.advance(Duration.ofSeconds(1));
        try (Engine e = Engine.open(live, clock)) {
            assertNull(e.client().describeTable(r -> r.tableName("created")).table().streamSpecification(),
                    "disabling is kept too");
            e.client().updateTable(r -> r.tableName("created").streamSpecification(stream("KEYS_ONLY")));
            assertNotEquals(createdArn, arn(e, "created"), "a stream enabled again is a new stream");
            createdArn = arn(e, "created");
        }
        try (Engine e = Engine.open(live, clock)) {
            assertEquals(createdArn, arn(e, "created"), "and it too is kept");
        }
    }

    @Test
    void anExpiryIsOnDiskWhenItAnswersAndItsRecordSurvives() throws IOException {
        Path live = dir.resolve("live");
        Path crashed;
        try (Engine e = Engine.open(live, clock)) {
            DynamoDbClient db = e.client();
            create(db, "beats", stream("NEW_AND_OLD_IMAGES"));
            db.updateTimeToLive(r -> r.tableName("beats").timeToLiveSpecification(s -> s.attributeName("exp")
                    .enabled(true)));
            long now = clock.instant().getEpochSecond();
            db.putItem(r -> r.tableName("beats").item(map("pk", "old", "exp", n(Long.toString(now - 10)))));
            db.putItem(r -> r.tableName("beats").item(map("pk", "fresh", "exp", n(Long.toString(now + 100)))));
            assertEquals(1, e.expire());
            crashed = copy(live); // at once: the expiry answered, so it is on disk
            List<Record> got = records(e, "beats");
            assertEquals(3, got.size());
            Record removed = got.get(2);
            assertEquals("REMOVE", removed.eventNameAsString());
            assertEquals(Identity.builder().type("Service").principalId("dynamodb.amazonaws.com").build(),
                    removed.userIdentity());
        }
        for (Path d : List.of(crashed, live)) {
            try (Engine e = Engine.open(d, clock)) {
                DynamoDbClient db = e.client();
                assertFalse(db.getItem(r -> r.tableName("beats").key(map("pk", "old"))).hasItem(), d.toString());
                assertTrue(db.getItem(r -> r.tableName("beats").key(map("pk", "fresh"))).hasItem());
                List<Record> got = records(e, "beats");
                assertEquals(3, got.size(), "the records, the expiry's once: " + d);
                assertEquals("REMOVE", got.get(2).eventNameAsString());
                assertEquals(Identity.builder().type("Service").principalId("dynamodb.amazonaws.com").build(),
                        got.get(2).userIdentity(), "still the service's");
                assertEquals(0, e.expire(), "nothing left to expire");
            }
        }
    }

    /**
     * A rough figure, printed, never asserted (as {@code EngineStreamTest} prints it in memory): the heap a MODIFY
     * record holds over a data dir, where records are in the store (its pages in its bounded cache until the next
     * checkpoint writes them), not in a list on the heap. Measured over 5,000 records (each update waits for its
     * fsync) and scaled to the default cap of 100,000. The count kept is asserted.
     */
    @Test
    void heapHeldByAStreamOverADataDirIsPrinted() {
        try (Engine e = Engine.open(dir, clock)) {
            e.maxStreamRecords(5000);
            DynamoDbClient db = e.client();
            create(db, "beats", stream("NEW_AND_OLD_IMAGES"));
            Object[] kv = new Object[28];
            kv[0] = "pk";
            kv[1] = "agent";
            for (int i = 1; i < 14; i++) {
                kv[2 * i] = "attr" + i;
                kv[2 * i + 1] = "value of attribute " + i;
            }
            db.putItem(r -> r.tableName("beats").item(map(kv)));
            Runtime rt = Runtime.getRuntime();
            System.gc();
            long before = rt.totalMemory() - rt.freeMemory();
            for (int i = 0; i < 5000; i++) {
                String seen = Integer.toString(i);
                db.updateItem(r -> r.tableName("beats").key(map("pk", "agent"))
                        .updateExpression("SET lastSeen = :s, beats = :b")
                        .expressionAttributeValues(map(":s", n(seen), ":b", n(seen))));
            }
            System.gc();
            long after = rt.totalMemory() - rt.freeMemory();
            StreamLog log = e.tables.get("beats").stream;
            assertEquals(5000, log.size(), "the cap: the insert was trimmed");
            long perRecord = (after - before) / log.size();
            System.out.printf("stream heap over a data dir: %d records of a 15-attribute item hold about %d MB (%d "
                    + "bytes a record; the default cap of 100,000 about %d MB)%n", log.size(), (after - before) >> 20,
                    perRecord, perRecord * 100_000 >> 20);
        }
    }
}
