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
 * Streams and TTL over a data dir: stream records are in memory only, so a reopened engine (after a close, or after
 * a crash, its log replayed) has new, empty streams, while each table's stream spec and TTL setting survive; a TTL
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

    @Test
    void writesReplayedOrCheckpointedMakeNoStreamRecords() throws IOException {
        Path live = dir.resolve("live");
        Path crashed;
        String before;
        try (Engine e = Engine.open(live, clock)) {
            DynamoDbClient db = e.client();
            create(db, "outbox", stream("NEW_AND_OLD_IMAGES"));
            create(db, "later", null);
            db.updateTable(r -> r.tableName("later").streamSpecification(stream("NEW_IMAGE")));
            for (int i = 0; i < 5; i++) {
                put(db, "outbox", "p" + i, "v");
                put(db, "later", "p" + i, "v");
            }
            put(db, "outbox", "p0", "changed");
            assertEquals(6, records(e, "outbox").size());
            assertEquals(5, records(e, "later").size());
            before = arn(e, "outbox");
            crashed = copy(live); // what a kill now leaves: every write in the log only, none checkpointed
        }
        for (Path d : List.of(crashed, live)) {
            clock.advance(Duration.ofSeconds(1));
            try (Engine e = Engine.open(d, clock)) {
                DynamoDbClient db = e.client();
                assertEquals(5, db.scan(r -> r.tableName("outbox")).count(), "the items are back: " + d);
                assertEquals("changed", db.getItem(r -> r.tableName("outbox").key(map("pk", "p0"))).item().get("v").s());
                assertNotEquals(before, arn(e, "outbox"), "a new stream");
                assertEquals(0, records(e, "outbox").size(), "no record of a write made before the reopening: " + d);
                assertEquals(0, records(e, "later").size());
                put(db, "outbox", "p9", "new");
                List<Record> got = records(e, "outbox");
                assertEquals(1, got.size(), "a write after reopening: one record");
                assertEquals("INSERT", got.get(0).eventNameAsString());
                assertEquals("p9", got.get(0).dynamodb().keys().get("pk").s());
            }
        }
    }

    @Test
    void streamSpecsAndTtlSettingsSurviveACloseAndACrash() throws IOException {
        Path live = dir.resolve("live");
        Path crashed;
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
        }
        for (Path d : List.of(crashed, live)) {
            try (Engine e = Engine.open(d, clock)) {
                DynamoDbClient db = e.client();
                TableDescription created = db.describeTable(r -> r.tableName("created")).table();
                assertEquals(stream("KEYS_ONLY"), created.streamSpecification(), d.toString());
                assertNotNull(created.latestStreamArn());
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
        try (Engine e = Engine.open(live, clock)) {
            assertNull(e.client().describeTable(r -> r.tableName("created")).table().streamSpecification(),
                    "disabling is kept too");
        }
    }

    @Test
    void anExpiryIsOnDiskWhenItAnswersAndStreamedOnlyLive() throws IOException {
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
                assertEquals(0, records(e, "beats").size(), "the expiry is not streamed again");
                assertEquals(0, e.expire(), "nothing left to expire");
            }
        }
    }

    /**
     * A rough figure, printed, never asserted (as {@code EngineStreamTest} prints it in memory): the heap a MODIFY
     * record holds over a data dir, where it keeps its images as their bytes (an item read there is decoded for its
     * write alone, so its old image cannot be shared with the record before). Measured over 5,000 records (each
     * update waits for its fsync) and scaled to the default cap of 100,000. The count kept is asserted.
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
