package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.StreamDescription;
import software.amazon.awssdk.services.dynamodb.model.StreamRecord;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * DynamoDB Streams and time to live, as the <a href="https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/
 * API_Operations_Amazon_DynamoDB_Streams.html">Streams API reference</a> and the developer guide's
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html">change data capture</a> page
 * define them: a record per change with the images its view type asks for, none for a write that changes nothing or
 * fails its condition, the four iterator types, paging by Limit. TTL expiry itself cannot be run on demand on moto or
 * AWS: EngineStreamTest covers it on the engine, with a test clock.
 */
interface StreamCases extends Cases {
    String STREAMS_GUIDE = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html";

    private String streamArn(String t) {
        return db().describeTable(r -> r.tableName(t)).table().latestStreamArn();
    }

    private StreamDescription stream(String arn) {
        return streams().describeStream(r -> r.streamArn(arn)).streamDescription();
    }

    private String iterator(String arn, ShardIteratorType type, String sequence) {
        String shard = stream(arn).shards().get(0).shardId();
        return streams().getShardIterator(r -> r.streamArn(arn).shardId(shard).shardIteratorType(type)
                .sequenceNumber(sequence)).shardIterator();
    }

    /** Every record from the trim horizon; on AWS, waits (bounded) until {@code atLeast} have arrived. */
    private List<Record> records(String arn, int atLeast) {
        List<Record> out = new ArrayList<>();
        String it = iterator(arn, ShardIteratorType.TRIM_HORIZON, null);
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (it != null) {
            String current = it;
            GetRecordsResponse page = streams().getRecords(r -> r.shardIterator(current));
            out.addAll(page.records());
            it = page.nextShardIterator();
            if (page.records().isEmpty()) {
                if (out.size() >= atLeast || !target().equals("aws") || System.nanoTime() > deadline) {
                    break;
                }
                pause(); // AWS: a bounded poll while the records arrive (a shard takes 5 reads a second)
            }
        }
        return out;
    }

    private static void pause() {
        try {
            Thread.sleep(250);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for stream records", e);
        }
    }

    private static List<String> events(List<Record> records) {
        return records.stream().map(Record::eventNameAsString).toList();
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

    @Test
    default void aStreamRecordsInsertModifyAndRemoveWithBothImages() {
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        TableDescription d = db().describeTable(r -> r.tableName(t)).table();
        assertTrue(d.streamSpecification().streamEnabled());
        assertEquals("NEW_AND_OLD_IMAGES", d.streamSpecification().streamViewTypeAsString());
        assertTrue(d.latestStreamArn().startsWith(d.tableArn() + "/stream/"), d.latestStreamArn());
        assertTrue(d.latestStreamArn().endsWith(d.latestStreamLabel()), d.latestStreamLabel());
        put(t, "a", "v", n("1"));
        db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET v = :two")
                .expressionAttributeValues(map(":two", n("2"))));
        db().deleteItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")));
        List<Record> got = records(streamArn(t), 3);
        assertEquals(List.of("INSERT", "MODIFY", "REMOVE"), events(got));
        StreamRecord insert = got.get(0).dynamodb();
        StreamRecord modify = got.get(1).dynamodb();
        StreamRecord remove = got.get(2).dynamodb();
        assertEquals(map("pk", "a", "sk", "1"), insert.keys());
        assertEquals(map("pk", "a", "sk", "1", "v", n("1")), insert.newImage());
        assertFalse(insert.hasOldImage());
        assertEquals(map("pk", "a", "sk", "1", "v", n("1")), modify.oldImage());
        assertEquals(map("pk", "a", "sk", "1", "v", n("2")), modify.newImage());
        assertEquals(map("pk", "a", "sk", "1", "v", n("2")), remove.oldImage());
        assertFalse(remove.hasNewImage());
        BigInteger previous = BigInteger.ZERO;
        for (Record r : got) {
            assertEquals("aws:dynamodb", r.eventSource());
            assertNotNull(r.eventID());
            assertNotNull(r.awsRegion());
            assertNull(r.userIdentity(), "a user's write names no service");
            StreamRecord s = r.dynamodb();
            assertEquals("NEW_AND_OLD_IMAGES", s.streamViewTypeAsString());
            assertNotNull(s.approximateCreationDateTime());
            assertTrue(s.sizeBytes() > 0);
            assertTrue(s.sequenceNumber().matches("[0-9]{21,40}"), s.sequenceNumber());
            BigInteger seq = new BigInteger(s.sequenceNumber());
            assertTrue(seq.compareTo(previous) > 0, "sequence numbers increase");
            previous = seq;
        }
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_Record.html "
                + "(eventVersion of a DynamoDB stream record is 1.1)",
                () -> assertEquals("1.1", got.get(0).eventVersion()));
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_StreamRecord.html "
                + "(ApproximateCreationDateTime is rounded down to the closest second)",
                () -> assertEquals(0, insert.approximateCreationDateTime().getNano()));
    }

    @Test
    default void eachViewTypeKeepsOnlyItsImages() {
        for (String view : List.of("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE")) {
            String t = table("S", null, view);
            put(t, "a", "v", n("1"));
            put(t, "a", "v", n("2"));
            db().deleteItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")));
            List<Record> got = records(streamArn(t), 3);
            assertEquals(List.of("INSERT", "MODIFY", "REMOVE"), events(got), view);
            for (Record r : got) {
                StreamRecord s = r.dynamodb();
                assertEquals(view, s.streamViewTypeAsString());
                assertEquals(map("pk", "a", "sk", "1"), s.keys(), view);
                boolean wantsNew = view.equals("NEW_IMAGE") && !r.eventNameAsString().equals("REMOVE");
                boolean wantsOld = view.equals("OLD_IMAGE") && !r.eventNameAsString().equals("INSERT");
                assertEquals(wantsNew, s.hasNewImage(), view + " " + r.eventNameAsString());
                assertEquals(wantsOld, s.hasOldImage(), view + " " + r.eventNameAsString());
            }
            if (view.equals("OLD_IMAGE")) {
                assertEquals(n("2"), got.get(2).dynamodb().oldImage().get("v"));
            }
        }
    }

    @Test
    default void aFailedConditionOrAnUnchangedWriteWritesNoRecord() {
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        String arn = streamArn(t);
        put(t, "a", "v", n("1"), "tags", AttributeValue.fromSs(List.of("x", "y")));
        assertThrows(ConditionalCheckFailedException.class, () -> db().putItem(r -> r.tableName(t)
                .item(map("pk", "a", "sk", "1", "v", n("9"))).conditionExpression("attribute_not_exists(pk)")));
        assertThrows(ConditionalCheckFailedException.class, () -> db().deleteItem(r -> r.tableName(t)
                .key(map("pk", "a", "sk", "1")).conditionExpression("v = :nine")
                .expressionAttributeValues(map(":nine", n("9")))));
        db().deleteItem(r -> r.tableName(t).key(map("pk", "missing", "sk", "1")));
        assertEquals(List.of("INSERT"), events(records(arn, 1)), "a refused write and a delete of nothing");
        put(t, "a", "v", n("1.0"), "tags", AttributeValue.fromSs(List.of("y", "x")));
        db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET v = :one")
                .expressionAttributeValues(map(":one", n("1"))));
        awsDocumented(STREAMS_GUIDE + " (a PutItem or UpdateItem that does not change any data in an item writes "
                + "no stream record)", () -> assertEquals(List.of("INSERT"), events(records(arn, 1))));
    }

    @Test
    default void transactionsAndBatchesWriteARecordPerChangedItem() {
        String t = table("S", null, "NEW_IMAGE");
        String arn = streamArn(t);
        put(t, "a", "v", n("1"));
        put(t, "b", "v", n("1"));
        TransactWriteItem insert = TransactWriteItem.builder().put(p -> p.tableName(t)
                .item(map("pk", "c", "sk", "1"))).build();
        TransactWriteItem modify = TransactWriteItem.builder().update(u -> u.tableName(t)
                .key(map("pk", "a", "sk", "1")).updateExpression("SET v = :two")
                .expressionAttributeValues(map(":two", n("2")))).build();
        TransactWriteItem remove = TransactWriteItem.builder().delete(x -> x.tableName(t)
                .key(map("pk", "b", "sk", "1"))).build();
        TransactWriteItem check = TransactWriteItem.builder().conditionCheck(c -> c.tableName(t)
                .key(map("pk", "z", "sk", "1")).conditionExpression("attribute_not_exists(pk)")).build();
        TransactWriteItem failing = TransactWriteItem.builder().conditionCheck(c -> c.tableName(t)
                .key(map("pk", "a", "sk", "1")).conditionExpression("attribute_not_exists(pk)")).build();
        TransactWriteItem another = TransactWriteItem.builder().put(p -> p.tableName(t)
                .item(map("pk", "d", "sk", "1"))).build();
        assertThrows(TransactionCanceledException.class,
                () -> db().transactWriteItems(r -> r.transactItems(another, failing)));
        db().transactWriteItems(r -> r.transactItems(insert, modify, remove, check));
        assertEquals(List.of("INSERT", "INSERT", "INSERT", "MODIFY", "REMOVE"), events(records(arn, 5)),
                "two puts, then the transaction's three writes; neither its check nor the cancelled one wrote any");
        db().batchWriteItem(r -> r.requestItems(Map.of(t, List.of(
                WriteRequest.builder().putRequest(p -> p.item(map("pk", "e", "sk", "1"))).build(),
                WriteRequest.builder().putRequest(p -> p.item(map("pk", "c", "sk", "1", "v", n("3")))).build(),
                WriteRequest.builder().deleteRequest(x -> x.key(map("pk", "a", "sk", "1"))).build()))));
        List<Record> all = records(arn, 8);
        assertEquals(8, all.size());
        List<String> batch = new ArrayList<>(events(all.subList(5, 8)));
        batch.sort(null);
        assertEquals(List.of("INSERT", "MODIFY", "REMOVE"), batch);
    }

    @Test
    default void iteratorTypesAndLimitPageTheShard() {
        String t = table("S", null, "KEYS_ONLY");
        String arn = streamArn(t);
        for (int i = 1; i <= 5; i++) {
            put(t, "k" + i);
        }
        List<Record> all = records(arn, 5);
        assertEquals(5, all.size());
        List<Record> paged = new ArrayList<>();
        String it = iterator(arn, ShardIteratorType.TRIM_HORIZON, null);
        List<Integer> sizes = new ArrayList<>();
        while (true) {
            String current = it;
            GetRecordsResponse page = streams().getRecords(r -> r.shardIterator(current).limit(2));
            it = page.nextShardIterator();
            assertNotNull(it, "an open shard always answers a next iterator");
            if (page.records().isEmpty()) {
                break;
            }
            sizes.add(page.records().size());
            paged.addAll(page.records());
        }
        assertEquals(List.of(2, 2, 1), sizes);
        assertEquals(all, paged);
        String third = all.get(2).dynamodb().sequenceNumber();
        assertEquals(third, first(iterator(arn, ShardIteratorType.AT_SEQUENCE_NUMBER, third)));
        assertEquals(all.get(3).dynamodb().sequenceNumber(),
                first(iterator(arn, ShardIteratorType.AFTER_SEQUENCE_NUMBER, third)));
        String latest = iterator(arn, ShardIteratorType.LATEST, null);
        GetRecordsResponse none = streams().getRecords(r -> r.shardIterator(latest));
        assertTrue(none.records().isEmpty());
        String caughtUp = it;
        put(t, "k6");
        assertEquals(map("pk", "k6", "sk", "1"),
                streams().getRecords(r -> r.shardIterator(none.nextShardIterator())).records().get(0).dynamodb().keys());
        assertEquals(map("pk", "k6", "sk", "1"),
                streams().getRecords(r -> r.shardIterator(caughtUp)).records().get(0).dynamodb().keys());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_GetRecords.html "
                + "(Limit: the upper limit is 1000)", () -> assertThrows(DynamoDbException.class,
                        () -> streams().getRecords(r -> r.shardIterator(caughtUp).limit(1001))));
    }

    private String first(String iterator) {
        return streams().getRecords(r -> r.shardIterator(iterator)).records().get(0).dynamodb().sequenceNumber();
    }

    @Test
    default void listAndDescribeNameTheStreamAndItsShard() {
        String t = table("S", null, "NEW_AND_OLD_IMAGES");
        String arn = streamArn(t);
        var listed = streams().listStreams(r -> r.tableName(t)).streams();
        assertEquals(1, listed.size());
        assertEquals(arn, listed.get(0).streamArn());
        assertEquals(t, listed.get(0).tableName());
        assertEquals(db().describeTable(r -> r.tableName(t)).table().latestStreamLabel(), listed.get(0).streamLabel());
        StreamDescription d = stream(arn);
        assertEquals(arn, d.streamArn());
        assertEquals("ENABLED", d.streamStatusAsString());
        assertEquals("NEW_AND_OLD_IMAGES", d.streamViewTypeAsString());
        assertEquals(t, d.tableName());
        assertEquals(List.of("pk", "sk"), d.keySchema().stream().map(k -> k.attributeName()).toList());
        assertNotNull(d.creationRequestDateTime());
        assertFalse(d.shards().isEmpty());
        assertNotNull(d.shards().get(0).sequenceNumberRange().startingSequenceNumber());
        assertNull(d.shards().get(0).sequenceNumberRange().endingSequenceNumber(), "an open shard has no end");
    }

    @Test
    default void updateTableEnablesAStream() {
        String t = table();
        assertNull(db().describeTable(r -> r.tableName(t)).table().latestStreamArn());
        db().updateTable(r -> r.tableName(t).streamSpecification(s -> s.streamEnabled(true)
                .streamViewType("NEW_IMAGE")));
        if (target().equals("aws")) {
            db().waiter().waitUntilTableExists(r -> r.tableName(t));
        }
        String arn = streamArn(t);
        assertNotNull(arn);
        put(t, "a");
        assertEquals(List.of("INSERT"), events(records(arn, 1)));
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html "
                + "(StreamSpecification: enabling a stream on a table that has one is a ValidationException)", () -> {
                    DynamoDbException twice = assertThrows(DynamoDbException.class, () -> db().updateTable(r ->
                            r.tableName(t).streamSpecification(s -> s.streamEnabled(true).streamViewType("KEYS_ONLY"))));
                    assertEquals("ValidationException", twice.awsErrorDetails().errorCode());
                });
    }

    @Test
    default void timeToLiveIsDescribedAndUpdated() {
        String t = table();
        TimeToLiveDescription before = db().describeTimeToLive(r -> r.tableName(t)).timeToLiveDescription();
        assertEquals("DISABLED", before.timeToLiveStatusAsString());
        var answer = db().updateTimeToLive(r -> r.tableName(t)
                .timeToLiveSpecification(s -> s.attributeName("expiresAt").enabled(true))).timeToLiveSpecification();
        assertEquals("expiresAt", answer.attributeName());
        assertTrue(answer.enabled());
        TimeToLiveDescription after = db().describeTimeToLive(r -> r.tableName(t)).timeToLiveDescription();
        assertEquals("ENABLED", after.timeToLiveStatusAsString());
        assertEquals("expiresAt", after.attributeName());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html "
                + "(enabling TTL where it is already enabled is a ValidationException)", () -> {
                    DynamoDbException again = assertThrows(DynamoDbException.class, () -> db().updateTimeToLive(r ->
                            r.tableName(t).timeToLiveSpecification(s -> s.attributeName("expiresAt").enabled(true))));
                    assertEquals("ValidationException", again.awsErrorDetails().errorCode());
                });
        assertThrows(DynamoDbException.class, () -> db().describeTimeToLive(r -> r.tableName(t + "-missing")));
    }
}
