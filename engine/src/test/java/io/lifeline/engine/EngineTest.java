package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** What only the engine can be asked: isolation under threads, refusals by name, idempotency, its speed. */
@Tag("unit")
class EngineTest implements Cases {
    private final Engine engine = new Engine(Clock.systemUTC());
    private final DynamoDbClient client = engine.client();

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public DynamoDbStreamsClient streams() {
        return engine.streamsClient();
    }

    @Override
    public String target() {
        return "engine";
    }

    @Test
    @Timeout(60)
    void concurrentConditionalIncrementsLoseNothing() throws Exception {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "c", "sk", "1", "v", n("0"))));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<Integer>> done = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            done.add(pool.submit(() -> {
                int won = 0;
                for (int i = 0; i < 500; i++) {
                    Map<String, AttributeValue> now = db().getItem(r -> r.tableName(t)
                            .key(map("pk", "c", "sk", "1"))).item();
                    try {
                        db().updateItem(r -> r.tableName(t).key(map("pk", "c", "sk", "1"))
                                .updateExpression("SET v = v + :one").conditionExpression("v = :seen")
                                .expressionAttributeValues(map(":one", n("1"), ":seen", now.get("v"))));
                        won++;
                    } catch (ConditionalCheckFailedException lost) {
                        // another thread moved v first: this compare-and-set lost, as it should
                    }
                }
                return won;
            }));
        }
        int won = 0;
        for (Future<Integer> f : done) {
            won += f.get();
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        String v = db().getItem(r -> r.tableName(t).key(map("pk", "c", "sk", "1"))).item().get("v").n();
        assertEquals(Integer.toString(won), v, "every successful compare-and-set counted once");
    }

    @Test
    @Timeout(60)
    void transactionsAreSerializableAgainstEachOtherAndPlainWrites() throws Exception {
        String t = table();
        for (int i = 0; i < 5; i++) {
            int k = i;
            db().putItem(r -> r.tableName(t).item(map("pk", "acct" + k, "sk", "1", "v", n("100"))));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> done = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            done.add(pool.submit(() -> {
                for (int i = 0; i < 400; i++) {
                    int from = ThreadLocalRandom.current().nextInt(5);
                    int to = (from + 1 + ThreadLocalRandom.current().nextInt(4)) % 5;
                    try {
                        db().transactWriteItems(r -> r.transactItems(move(t, from, "-"), move(t, to, "+")));
                    } catch (TransactionCanceledException poor) {
                        // the payer had less than 7: the whole transfer is refused
                    }
                }
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        long total = 0;
        for (Map<String, AttributeValue> item : db().scan(r -> r.tableName(t).consistentRead(true)).items()) {
            long v = Long.parseLong(item.get("v").n());
            assertTrue(v >= 0, "no balance below zero: " + v);
            total += v;
        }
        assertEquals(500, total, "money is neither made nor lost");
    }

    private static TransactWriteItem move(String t, int acct, String sign) {
        return TransactWriteItem.builder().update(u -> u.tableName(t).key(map("pk", "acct" + acct, "sk", "1"))
                .updateExpression("SET v = v " + sign + " :x")
                .conditionExpression(sign.equals("-") ? "v >= :x" : "attribute_exists(v)")
                .expressionAttributeValues(map(":x", n("7")))).build();
    }

    @Test
    void whatIsNotImplementedIsRefusedByName() {
        String t = table();
        DynamoDbException op = assertThrows(DynamoDbException.class, () -> db().describeContinuousBackups(r ->
                r.tableName(t)));
        assertEquals("ValidationException", op.awsErrorDetails().errorCode());
        assertTrue(op.getMessage().contains("DescribeContinuousBackups"), op.getMessage());
        DynamoDbException legacy = assertThrows(DynamoDbException.class, () -> db().getItem(r -> r.tableName(t)
                .key(map("pk", "a", "sk", "1")).attributesToGet("v")));
        assertTrue(legacy.getMessage().contains("AttributesToGet"), legacy.getMessage());
        DynamoDbException update = assertThrows(DynamoDbException.class, () -> db().updateTable(r -> r.tableName(t)
                .billingMode("PROVISIONED")));
        assertTrue(update.getMessage().contains("BillingMode"), update.getMessage());
    }

    @Test
    void aRetriedTransactionWithItsTokenIsNotRunTwice() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "v", n("0"))));
        TransactWriteItem add = TransactWriteItem.builder().update(u -> u.tableName(t).key(map("pk", "a", "sk", "1"))
                .updateExpression("SET v = v + :one").expressionAttributeValues(map(":one", n("1")))).build();
        db().transactWriteItems(r -> r.transactItems(add).clientRequestToken("tok"));
        db().transactWriteItems(r -> r.transactItems(add).clientRequestToken("tok"));
        assertEquals("1", db().getItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1"))).item().get("v").n());
    }

    /** A rough figure, printed, never asserted: conditional UpdateItems a second, one thread, in memory. */
    @Test
    void conditionalUpdatesPerSecondInMemory() {
        String t = table();
        int agents = 10_000;
        for (int i = 0; i < agents; i++) {
            int k = i;
            db().putItem(r -> r.tableName(t).item(map("pk", "TEAM#t#AGENT#" + k, "sk", "AGENT", "status", "ready",
                    "beat", n("0"))));
        }
        Map<String, String> names = Cases.names("#s", "status");
        int ops = 100_000;
        long start = 0;
        for (int i = -20_000; i < ops; i++) {
            if (i == 0) {
                start = System.nanoTime();
            }
            int k = Math.floorMod(i, agents);
            int at = i;
            db().updateItem(r -> r.tableName(t).key(map("pk", "TEAM#t#AGENT#" + k, "sk", "AGENT"))
                    .updateExpression("SET beat = :now").conditionExpression("#s = :ready")
                    .expressionAttributeNames(names)
                    .expressionAttributeValues(map(":now", n(Integer.toString(Math.abs(at))), ":ready", "ready")));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("engine: %,d conditional UpdateItems in %.2f s, %,.0f per second (one thread, in memory)%n",
                ops, seconds, ops / seconds);
    }
}
