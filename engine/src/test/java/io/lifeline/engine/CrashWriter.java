package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;

/**
 * The process {@link CrashTest} kills: opens the data dir given, then on each of several threads, as fast as it can,
 * moves its own counter item on by one with a conditional UpdateItem and adds a ledger item for the new count with
 * a conditional PutItem, printing each one once it is acknowledged ("u thread n", "p thread n"); the table has a
 * NEW_IMAGE stream, so each write also makes a stream record. It never ends by
 * itself. Arguments: the dir, the number of threads, and the log size that triggers a checkpoint (small, so kills
 * also land during checkpoints and log rotations).
 */
final class CrashWriter {
    private CrashWriter() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Engine engine = Engine.open(dir, Clock.systemUTC(), Long.parseLong(args[2]));
        DynamoDbClient db = engine.client();
        try {
            db.createTable(r -> r.tableName("crash")
                    .attributeDefinitions(d -> d.attributeName("pk").attributeType("S"),
                            d -> d.attributeName("sk").attributeType("N"))
                    .keySchema(k -> k.attributeName("pk").keyType("HASH"), k -> k.attributeName("sk").keyType("RANGE"))
                    .streamSpecification(st -> st.streamEnabled(true).streamViewType("NEW_IMAGE")));
        } catch (ResourceInUseException e) {
            // a run before this one made it
        }
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String me = "w" + t;
            all.add(new Thread(() -> write(db, me, out)));
        }
        synchronized (out) {
            out.println("ready");
            out.flush();
        }
        all.forEach(Thread::start);
        for (Thread t : all) {
            t.join();
        }
    }

    private static void write(DynamoDbClient db, String me, PrintStream out) {
        Map<String, AttributeValue> key = map("pk", me, "sk", n("0"));
        Map<String, AttributeValue> now = db.getItem(r -> r.tableName("crash").key(key)).item();
        long count = now == null || now.isEmpty() ? 0 : Long.parseLong(now.get("count").n());
        while (true) {
            long next = count + 1;
            db.updateItem(r -> r.tableName("crash").key(key).updateExpression("SET #c = :next")
                    .conditionExpression("attribute_not_exists(#c) OR #c = :seen")
                    .expressionAttributeNames(Map.of("#c", "count"))
                    .expressionAttributeValues(map(":next", n(Long.toString(next)), ":seen",
                            n(Long.toString(next - 1)))));
            say(out, "u " + me + " " + next);
            db.putItem(r -> r.tableName("crash").item(map("pk", me, "sk", n(Long.toString(next)), "at",
                    "x".repeat(120))).conditionExpression("attribute_not_exists(pk)"));
            say(out, "p " + me + " " + next);
            count = next;
        }
    }

    private static void say(PrintStream out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
