package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/** The data dir: what a reopened engine finds, a torn log tail, the log's truncation, and the dirs it refuses. */
@Tag("unit")
@Timeout(120)
class DurableTest {
    @TempDir
    Path dir;

    private final Clock clock = Clock.systemUTC();

    /** A table like the conformance suite's (pk, sk; a keys-only index byTeam on tpk, tsk). */
    private static void create(DynamoDbClient db, String name) {
        db.createTable(r -> r.tableName(name)
                .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"),
                        d -> d.attributeName("sk").attributeType("S"), d -> d.attributeName("tpk").attributeType("S"),
                        d -> d.attributeName("tsk").attributeType("S"))
                .keySchema(k -> k.attributeName("pk").keyType("HASH"), k -> k.attributeName("sk").keyType("RANGE"))
                .globalSecondaryIndexes(g -> g.indexName("byTeam").keySchema(k -> k.attributeName("tpk").keyType("HASH"),
                        k -> k.attributeName("tsk").keyType("RANGE")).projection(p -> p.projectionType("ALL"))));
    }

    private static Map<String, AttributeValue> get(DynamoDbClient db, String t, String pk, String sk) {
        Map<String, AttributeValue> item = db.getItem(r -> r.tableName(t).key(map("pk", pk, "sk", sk))).item();
        return item == null || item.isEmpty() ? null : item;
    }

    @Test
    void aReopenedDirHasEveryWriteTableAndIndex() {
        long size;
        try (Engine e = Engine.open(dir, clock)) {
            DynamoDbClient db = e.client();
            create(db, "ledger");
            create(db, "gone");
            for (int i = 0; i < 50; i++) {
                int k = i;
                db.putItem(r -> r.tableName("ledger").item(map("pk", "a" + (k % 5), "sk", String.format("%03d", k),
                        "tpk", "team", "tsk", String.format("%03d", k), "v", n(Integer.toString(k)))));
            }
            db.updateItem(r -> r.tableName("ledger").key(map("pk", "a0", "sk", "000"))
                    .updateExpression("SET v = v + :one").conditionExpression("v = :zero")
                    .expressionAttributeValues(map(":one", n("1"), ":zero", n("0"))));
            db.deleteItem(r -> r.tableName("ledger").key(map("pk", "a1", "sk", "001")));
            db.transactWriteItems(r -> r.transactItems(
                    TransactWriteItem.builder().put(p -> p.tableName("ledger").item(map("pk", "tx", "sk", "1"))).build(),
                    TransactWriteItem.builder().delete(d -> d.tableName("ledger").key(map("pk", "a2", "sk", "002")))
                            .build()));
            db.deleteTable(r -> r.tableName("gone"));
            size = db.describeTable(r -> r.tableName("ledger")).table().tableSizeBytes();
        }
        try (Engine e = Engine.open(dir, clock)) {
            DynamoDbClient db = e.client();
            assertEquals(List.of("ledger"), db.listTables().tableNames());
            assertEquals("1", get(db, "ledger", "a0", "000").get("v").n());
            assertNull(get(db, "ledger", "a1", "001"));
            assertNull(get(db, "ledger", "a2", "002"));
            assertTrue(get(db, "ledger", "tx", "1") != null);
            assertEquals(49, db.scan(r -> r.tableName("ledger")).count());
            assertEquals(48, db.query(r -> r.tableName("ledger").indexName("byTeam")
                    .keyConditionExpression("tpk = :t").expressionAttributeValues(map(":t", "team"))).count());
            assertEquals(10, db.query(r -> r.tableName("ledger").keyConditionExpression("pk = :p")
                    .expressionAttributeValues(map(":p", "a3"))).count());
            assertEquals(49L, db.describeTable(r -> r.tableName("ledger")).table().itemCount());
            assertEquals(size, db.describeTable(r -> r.tableName("ledger")).table().tableSizeBytes());
            create(db, "gone");
            assertEquals(0, db.scan(r -> r.tableName("gone")).count());
        }
    }

    @Test
    void aTornLastRecordIsDroppedAndEveryWholeOneKept() throws IOException {
        Path copy = Files.createTempDirectory(dir, "copy");
        try (Engine e = Engine.open(dir.resolve("live"), clock)) {
            DynamoDbClient db = e.client();
            create(db, "t");
            for (int i = 0; i < 20; i++) {
                int k = i;
                db.putItem(r -> r.tableName("t").item(map("pk", "p", "sk", String.format("%02d", k))));
            }
            copyDir(dir.resolve("live"), copy);
        }
        Path segment = lastSegment(copy);
        long size = Files.size(segment);
        try (var ch = Files.newByteChannel(segment, StandardOpenOption.WRITE)) {
            ch.truncate(size - 5);
        }
        try (Engine e = Engine.open(copy, clock)) {
            assertEquals(19, e.client().scan(r -> r.tableName("t")).count(), "the torn 20th put is not there");
            assertNull(get(e.client(), "t", "p", "19"));
        }
        Path garbage = Files.createTempDirectory(dir, "garbage");
        copyDir(copy, garbage);
        try (Engine e = Engine.open(garbage, clock)) {
            e.client().putItem(r -> r.tableName("t").item(map("pk", "p", "sk", "19")));
            copyDir(garbage, copy);
        }
        Files.write(lastSegment(copy), new byte[] {0, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 99, 5, 6, 7, 8}, StandardOpenOption.APPEND);
        try (Engine e = Engine.open(copy, clock)) {
            assertEquals(20, e.client().scan(r -> r.tableName("t")).count(), "garbage after the last record is ignored");
        }
    }

    @Test
    void theLogIsTruncatedAtEachCheckpoint() throws IOException {
        try (Engine e = Engine.open(dir, clock, 64 * 1024)) {
            DynamoDbClient db = e.client();
            create(db, "t");
            for (int i = 0; i < 3000; i++) {
                int k = i;
                db.putItem(r -> r.tableName("t").item(map("pk", "p" + (k % 100), "sk", "s", "v", n(Integer.toString(k)),
                        "pad", "x".repeat(100))));
            }
            assertTrue(e.checkpoints() >= 4, "checkpoints: " + e.checkpoints());
            assertEquals(1, Wal.segments(dir).size());
            assertTrue(Files.size(Wal.segments(dir).get(0)) < 64 * 1024 + 1024);
        }
        try (Engine e = Engine.open(dir, clock)) {
            assertEquals(100, e.client().scan(r -> r.tableName("t")).count());
            assertEquals("2999", get(e.client(), "t", "p99", "s").get("v").n());
        }
    }

    @Test
    void theStoreIsWrittenAtCheckpointsOnly() throws IOException {
        try (Engine e = Engine.open(dir, clock)) {
            DynamoDbClient db = e.client();
            create(db, "t");
            long before = Files.size(dir.resolve("engine.mv"));
            for (int i = 0; i < 4000; i++) {
                int k = i;
                db.putItem(r -> r.tableName("t").item(map("pk", "p" + (k % 100), "sk", "s" + k,
                        "pad", "x".repeat(1000))));
            }
            assertEquals(1, e.checkpoints(), "only the one at open");
            assertEquals(before, Files.size(dir.resolve("engine.mv")), "4 MB of changes, none in the store yet");
            assertTrue(Files.size(Wal.segments(dir).get(0)) > 4_000_000);
        }
        try (Engine e = Engine.open(dir, clock)) {
            assertEquals(4000L, e.client().describeTable(r -> r.tableName("t")).table().itemCount());
            assertTrue(get(e.client(), "t", "p99", "s3999") != null);
        }
    }

    @Test
    void aDirOpenElsewhereIsRefused() {
        try (Engine e = Engine.open(dir, clock)) {
            IllegalStateException x = assertThrows(IllegalStateException.class, () -> Engine.open(dir, clock));
            assertTrue(x.getMessage().contains("is open in another Lifeline process"), x.getMessage());
            assertEquals(0, e.client().listTables().tableNames().size());
        }
        Engine.open(dir, clock).close();
    }

    @Test
    void aDynamoDbLocalDataDirIsRefusedInOneLine() throws IOException {
        Files.createDirectories(dir.resolve("dynamodb"));
        Files.writeString(dir.resolve("dynamodb/shared-local-instance.db"), "SQLite format 3");
        for (Path given : List.of(dir, dir.resolve("engine"))) {
            IllegalStateException x = assertThrows(IllegalStateException.class, () -> Engine.open(given, clock));
            assertTrue(x.getMessage().contains("holds a DynamoDB Local store"), x.getMessage());
            assertTrue(x.getMessage().contains("move that dir aside"), x.getMessage());
            assertFalse(x.getMessage().contains("\n"));
        }
    }

    @Test
    void aDirOfAnotherFormatIsRefusedInOneLine() throws IOException {
        Engine.open(dir, clock).close();
        Files.writeString(dir.resolve("engine.format"), "lifeline-engine-format 0\n");
        IllegalStateException x = assertThrows(IllegalStateException.class, () -> Engine.open(dir, clock));
        assertTrue(x.getMessage().contains("another storage format"), x.getMessage());
        assertTrue(x.getMessage().contains("move that dir aside"), x.getMessage());
        assertFalse(x.getMessage().contains("\n"));
        Files.delete(dir.resolve("engine.format"));
        x = assertThrows(IllegalStateException.class, () -> Engine.open(dir, clock));
        assertTrue(x.getMessage().contains("no engine.format"), x.getMessage());
    }

    @Test
    void aClosedEngineAnswersNothing() {
        Engine e = Engine.open(dir, clock);
        e.close();
        assertThrows(IllegalStateException.class, () -> e.client().listTables());
    }

    private static Path lastSegment(Path d) throws IOException {
        List<Path> s = Wal.segments(d);
        return s.get(s.size() - 1);
    }

    /** Copies the dir's files as they are on disk now (what a crash at this instant would leave). */
    static void copyDir(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.list(to)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        try (Stream<Path> files = Files.list(from)) {
            for (Path p : files.toList()) {
                if (!p.getFileName().toString().equals("engine.lock")) {
                    Files.copy(p, to.resolve(p.getFileName()));
                }
            }
        }
    }
}
