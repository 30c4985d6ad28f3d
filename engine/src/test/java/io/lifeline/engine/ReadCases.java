package io.lifeline.engine;

import static io.lifeline.engine.Cases.b;
import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static io.lifeline.engine.Cases.names;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.Select;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/** Query and Scan: key conditions, order, filters, projections, Limit, pages, segments and an index. */
interface ReadCases extends Cases {
    /** Ten items in partition "p" (sort keys s00..s09, n = 0..9) and one in "q", written in one batch. */
    private String ten() {
        String t = table();
        List<WriteRequest> puts = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int k = i;
            puts.add(WriteRequest.builder().putRequest(p -> p.item(map("pk", "p", "sk", "s0" + k, "n", n("" + k),
                    "odd", AttributeValue.fromBool(k % 2 == 1)))).build());
        }
        puts.add(WriteRequest.builder().putRequest(p -> p.item(map("pk", "q", "sk", "s00"))).build());
        db().batchWriteItem(r -> r.requestItems(Map.of(t, puts)));
        return t;
    }

    private List<String> sortKeys(List<Map<String, AttributeValue>> items) {
        return items.stream().map(i -> i.get("sk").s()).toList();
    }

    private QueryResponse query(String t, String key, Consumer<QueryRequest.Builder> more,
            Object... values) {
        return db().query(r -> {
            r.tableName(t).keyConditionExpression(key).expressionAttributeValues(map(values));
            more.accept(r);
        });
    }

    @Test
    default void keyConditionsAndOrder() {
        String t = ten();
        assertEquals(10, query(t, "pk = :p", r -> { }, ":p", "p").count());
        assertEquals(List.of("s03", "s04", "s05"), sortKeys(query(t, "pk = :p AND sk BETWEEN :a AND :b", r -> { },
                ":p", "p", ":a", "s03", ":b", "s05").items()));
        assertEquals(List.of("s09", "s08"), sortKeys(query(t, "pk = :p AND sk > :a", r -> r.scanIndexForward(false),
                ":p", "p", ":a", "s07").items()));
        assertEquals(List.of("s00", "s01"), sortKeys(query(t, "pk = :p AND sk < :a", r -> { },
                ":p", "p", ":a", "s02").items()));
        assertEquals(List.of("s02"), sortKeys(query(t, "pk = :p AND sk = :a", r -> { }, ":p", "p", ":a", "s02")
                .items()));
        assertEquals(10, query(t, "pk = :p AND begins_with(sk, :a)", r -> { }, ":p", "p", ":a", "s0").count());
        assertEquals(List.of("s01", "s00"), sortKeys(query(t, "#k = :p AND #s <= :a",
                r -> r.scanIndexForward(false).expressionAttributeNames(names("#k", "pk", "#s", "sk")),
                ":p", "p", ":a", "s01").items()));
        assertThrows(DynamoDbException.class, () -> query(t, "pk = :p OR sk = :a", r -> { }, ":p", "p", ":a", "x"));
        assertThrows(DynamoDbException.class, () -> query(t, "sk = :a", r -> { }, ":a", "x"));
    }

    @Test
    default void filterProjectionAndCount() {
        String t = ten();
        QueryResponse odd = query(t, "pk = :p", r -> r.filterExpression("odd = :t").projectionExpression("sk, n"),
                ":p", "p", ":t", AttributeValue.fromBool(true));
        assertEquals(5, odd.count());
        assertEquals(10, odd.scannedCount(), "the filter runs after the read");
        assertEquals(Set.of("sk", "n"), odd.items().get(0).keySet());
        QueryResponse count = query(t, "pk = :p", r -> r.select(Select.COUNT), ":p", "p");
        assertEquals(10, count.count());
        assertTrue(count.items().isEmpty());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html"
                + " (a filter expression cannot contain partition key or sort key attributes)",
                () -> assertThrows(DynamoDbException.class, () -> query(t, "pk = :p",
                        r -> r.filterExpression("sk = :x"), ":p", "p", ":x", "s01")));
    }

    @Test
    default void limitPagesAndTheirBoundaries() {
        String t = ten();
        List<String> seen = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        int pages = 0;
        do {
            Map<String, AttributeValue> from = start;
            QueryResponse page = query(t, "pk = :p", r -> r.limit(3).exclusiveStartKey(from), ":p", "p");
            seen.addAll(sortKeys(page.items()));
            start = page.hasLastEvaluatedKey() ? page.lastEvaluatedKey() : null;
            pages++;
        } while (start != null && pages < 10);
        assertEquals(10, seen.size());
        assertEquals(10, new HashSet<>(seen).size());
        assertEquals(4, pages);
        QueryResponse all = query(t, "pk = :p", r -> r.limit(20), ":p", "p");
        assertFalse(all.hasLastEvaluatedKey(), "a page that did not reach its Limit is the last");
        QueryResponse exact = query(t, "pk = :p", r -> r.limit(10), ":p", "p");
        assertEquals(10, exact.count());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html"
                + " (a LastEvaluatedKey does not mean more data follows: a page that stops at its Limit carries one)",
                () -> {
                    assertTrue(exact.hasLastEvaluatedKey(), "no LastEvaluatedKey on a page stopped by its Limit");
                    assertEquals(0, query(t, "pk = :p", r -> r.exclusiveStartKey(exact.lastEvaluatedKey()),
                            ":p", "p").count());
                });
        QueryResponse filtered = query(t, "pk = :p", r -> r.limit(2).filterExpression("odd = :t"), ":p", "p",
                ":t", AttributeValue.fromBool(true));
        assertEquals(1, filtered.count(), "Limit counts items read, not items kept");
        assertEquals("s01", filtered.lastEvaluatedKey().get("sk").s());
    }

    @Test
    default void theSdksPaginatorsWalkEveryPage() {
        String t = ten();
        List<String> queried = new ArrayList<>();
        db().queryPaginator(QueryRequest.builder().tableName(t).keyConditionExpression("pk = :p")
                .expressionAttributeValues(map(":p", "p")).limit(3).build())
                .items().forEach(i -> queried.add(i.get("sk").s()));
        assertEquals(List.of("s00", "s01", "s02", "s03", "s04", "s05", "s06", "s07", "s08", "s09"), queried);
        List<String> scanned = new ArrayList<>();
        db().scanPaginator(ScanRequest.builder().tableName(t).limit(4).build())
                .items().forEach(i -> scanned.add(i.get("pk").s() + i.get("sk").s()));
        assertEquals(11, scanned.size());
        assertEquals(11, new HashSet<>(scanned).size());
    }

    @Test
    default void aPageStopsAtOneMegabyte() {
        String t = table();
        String big = "x".repeat(300_000);
        for (int i = 0; i < 5; i++) {
            int k = i;
            db().putItem(r -> r.tableName(t).item(map("pk", "p", "sk", "s" + k, "big", big)));
        }
        QueryResponse first = db().query(r -> r.tableName(t).keyConditionExpression("pk = :p")
                .expressionAttributeValues(map(":p", "p")));
        assertTrue(first.count() < 5 && first.count() >= 3, "count " + first.count());
        assertTrue(first.hasLastEvaluatedKey());
        QueryResponse rest = db().query(r -> r.tableName(t).keyConditionExpression("pk = :p")
                .exclusiveStartKey(first.lastEvaluatedKey()).expressionAttributeValues(map(":p", "p")));
        assertEquals(5, first.count() + rest.count());
    }

    @Test
    default void scanSegmentsCoverEveryItemOnce() {
        String t = ten();
        List<String> seen = new ArrayList<>();
        for (int seg = 0; seg < 4; seg++) {
            int s = seg;
            ScanResponse page = db().scan(r -> r.tableName(t).segment(s).totalSegments(4));
            page.items().forEach(i -> seen.add(i.get("pk").s() + i.get("sk").s()));
        }
        assertEquals(11, seen.size());
        assertEquals(11, new HashSet<>(seen).size());
        ScanResponse filtered = db().scan(r -> r.tableName(t).filterExpression("n >= :five")
                .projectionExpression("pk, sk").expressionAttributeValues(map(":five", n("5"))));
        assertEquals(5, filtered.count());
        assertEquals(11, filtered.scannedCount());
        assertEquals(Set.of("pk", "sk"), filtered.items().get(0).keySet());
        List<String> paged = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = db().scan(r -> r.tableName(t).limit(4).exclusiveStartKey(from));
            page.items().forEach(i -> paged.add(i.get("pk").s() + i.get("sk").s()));
            start = page.hasLastEvaluatedKey() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        assertEquals(new HashSet<>(seen), new HashSet<>(paged));
        assertEquals(11, paged.size());
        assertThrows(DynamoDbException.class, () -> db().scan(r -> r.tableName(t).segment(4).totalSegments(4)));
    }

    @Test
    default void aKeysOnlyIndexListsItsItemsAndSkipsItemsWithoutItsKeys() {
        String t = table("S", "byTeam");
        db().putItem(r -> r.tableName(t).item(map("pk", "TEAM#t#AGENT#1", "sk", "AGENT", "tpk", "TEAM#t", "tsk", "1",
                "status", "ready")));
        db().putItem(r -> r.tableName(t).item(map("pk", "TEAM#t#AGENT#2", "sk", "AGENT", "tpk", "TEAM#t", "tsk", "2")));
        db().putItem(r -> r.tableName(t).item(map("pk", "TEAM#t", "sk", "TEAM", "name", "no index keys")));
        QueryResponse q = db().query(r -> r.tableName(t).indexName("byTeam").keyConditionExpression("tpk = :t")
                .expressionAttributeValues(map(":t", "TEAM#t")));
        assertEquals(2, q.count());
        assertEquals(Set.of("pk", "sk", "tpk", "tsk"), q.items().get(0).keySet(), "keys only");
        assertEquals("1", q.items().get(0).get("tsk").s());
        QueryResponse page = db().query(r -> r.tableName(t).indexName("byTeam").keyConditionExpression("tpk = :t")
                .limit(1).expressionAttributeValues(map(":t", "TEAM#t")));
        assertEquals(Set.of("pk", "sk", "tpk", "tsk"), page.lastEvaluatedKey().keySet());
        QueryResponse second = db().query(r -> r.tableName(t).indexName("byTeam").keyConditionExpression("tpk = :t")
                .exclusiveStartKey(page.lastEvaluatedKey()).expressionAttributeValues(map(":t", "TEAM#t")));
        assertEquals("2", second.items().get(0).get("tsk").s());
        assertThrows(DynamoDbException.class, () -> db().query(r -> r.tableName(t).indexName("byTeam")
                .consistentRead(true).keyConditionExpression("tpk = :t").expressionAttributeValues(map(":t", "x"))));
    }

    @Test
    default void numberAndBinarySortKeysOrderByValue() {
        String tn = table("N", null);
        for (String v : List.of("10", "9", "-1", "1.5", "100")) {
            db().putItem(r -> r.tableName(tn).item(map("pk", "p", "sk", n(v))));
        }
        assertEquals(List.of("-1", "1.5", "9", "10", "100"), db().query(r -> r.tableName(tn)
                .keyConditionExpression("pk = :p").expressionAttributeValues(map(":p", "p"))).items().stream()
                .map(i -> i.get("sk").n()).toList());
        String tb = table("B", null);
        db().putItem(r -> r.tableName(tb).item(map("pk", "p", "sk", b(0x80))));
        db().putItem(r -> r.tableName(tb).item(map("pk", "p", "sk", b(0x7f))));
        db().putItem(r -> r.tableName(tb).item(map("pk", "p", "sk", b(0x7f, 1))));
        QueryResponse q = db().query(r -> r.tableName(tb).keyConditionExpression("pk = :p AND begins_with(sk, :b)")
                .expressionAttributeValues(map(":p", "p", ":b", b(0x7f))));
        assertEquals(2, q.count(), "begins_with on a binary sort key");
        QueryResponse all = db().query(r -> r.tableName(tb).keyConditionExpression("pk = :p")
                .expressionAttributeValues(map(":p", "p")));
        assertEquals((byte) 0x80, all.items().get(2).get("sk").b().asByteArray()[0], "binaries order unsigned");
        assertNull(all.lastEvaluatedKey().isEmpty() ? null : all.lastEvaluatedKey());
    }
}
