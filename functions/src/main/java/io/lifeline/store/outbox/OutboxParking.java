package io.lifeline.store.outbox;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Limits;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Stream records the outbox could not handle, parked on the ledger with their images and the error, so the shard
 * moves on and nothing is lost: a record that failed for a reason that does not pass (a decoding bug, an item
 * edited by hand), or that kept failing for longer than the outbox waits. The re-drive hands each back to the
 * publisher and removes it once handled; one that fails again stays, with its attempts counted.
 */
public final class OutboxParking {
    static final String PK = "OUTBOX#PARKED";

    /** A parked record: its stream sequence number, images, why it was parked, and how often it was tried. */
    public record Parked(String sequenceNumber, Map<String, AttributeValue> oldImage,
                         Map<String, AttributeValue> newImage, String error, int attempts, Instant parkedAt,
                         Map<String, AttributeValue> key) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final Duration retention;

    public OutboxParking(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.retention = retention;
    }

    /** Parks a record (a record parked before, by its sequence number, is overwritten with the newer error). */
    public void park(String sequenceNumber, Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage,
                     String error, int attempts, Instant now) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(Keys.PK, s(PK));
        item.put(Keys.SK, s(sequenceNumber));
        if (oldImage != null && !oldImage.isEmpty()) {
            item.put("old", AttributeValue.fromM(oldImage));
        }
        if (newImage != null && !newImage.isEmpty()) {
            item.put("new", AttributeValue.fromM(newImage));
        }
        item.put("error", s(error == null || error.isEmpty() ? "unknown" : Limits.cut(error, 1000)));
        item.put("attempts", n(attempts));
        item.put("parkedAt", ms(now));
        item.put(Keys.EXPIRES_AT, n(now.plus(retention).getEpochSecond()));
        StoreFailures.call("park a stream record", () -> dynamo.putItem(p -> p.tableName(table).item(item)));
    }

    /** Parked records, oldest sequence first, at most {@code limit}. */
    public List<Parked> list(int limit) {
        List<Parked> out = new ArrayList<>();
        StoreFailures.call("read parked records", () -> dynamo.query(q -> q.tableName(table).consistentRead(true)
                .keyConditionExpression("#pk = :pk").expressionAttributeNames(Map.of("#pk", Keys.PK))
                .expressionAttributeValues(Map.of(":pk", s(PK))).limit(limit))).items().forEach(item -> out.add(
                        new Parked(Items.str(item, Keys.SK), image(item, "old"), image(item, "new"),
                                Items.str(item, "error"), (int) Items.num(item, "attempts", 0),
                                Items.instant(item, "parkedAt"), Map.of(Keys.PK, item.get(Keys.PK), Keys.SK,
                                        item.get(Keys.SK)))));
        return out;
    }

    /** Removes a parked record once handled. */
    public void remove(Parked parked) {
        StoreFailures.call("remove a parked record", () -> dynamo.deleteItem(d -> d.tableName(table)
                .key(parked.key())));
    }

    private static Map<String, AttributeValue> image(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || !v.hasM() ? null : v.m();
    }
}
