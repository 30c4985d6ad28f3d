package io.lifeline.store;

import com.amazonaws.services.dynamodbv2.local.embedded.DynamoDBEmbedded;
import com.amazonaws.services.dynamodbv2.local.shared.access.AmazonDynamoDBLocal;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The store's test harness: a fresh pair of live and ledger tables, created from template.yaml's definitions
 * ({@link TemplateTables}), in one Amazon DynamoDB Local for the whole test JVM (in-process, no port: the store's
 * tests need a client, not an endpoint; it takes about a second to start). Each test class (or test) opens its own
 * pair under fresh names, so none sees another's items, and closes it to delete them.
 */
public final class StoreTables implements AutoCloseable {
    private static AmazonDynamoDBLocal local;
    private static DynamoDbClient shared;

    /** The client of this JVM's DynamoDB Local; the same for every pair of tables. Do not close it. */
    public final DynamoDbClient dynamo;
    public final Tables tables;

    private StoreTables(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.tables = tables;
    }

    /** New live and ledger tables, {@code s-<uuid>-live} and {@code s-<uuid>-ledger}, as template.yaml declares them. */
    public static StoreTables create() {
        DynamoDbClient dynamo = client();
        TemplateTables template = TemplateTables.repo();
        String prefix = "s-" + UUID.randomUUID();
        Tables tables = new Tables(prefix + "-live", prefix + "-ledger");
        createTable(dynamo, template, template.liveLogicalId(), tables.live());
        createTable(dynamo, template, template.ledgerLogicalId(), tables.ledger());
        return new StoreTables(dynamo, tables);
    }

    private static void createTable(DynamoDbClient dynamo, TemplateTables template, String logicalId, String name) {
        dynamo.createTable(template.createTableRequest(logicalId, name));
        String ttl = template.timeToLiveAttribute(logicalId);
        if (ttl != null) {
            dynamo.updateTimeToLive(u -> u.tableName(name)
                    .timeToLiveSpecification(t -> t.attributeName(ttl).enabled(true)));
        }
    }

    private static synchronized DynamoDbClient client() {
        if (shared == null) {
            local = DynamoDBEmbedded.create(true);
            shared = local.dynamoDbClient();
            AmazonDynamoDBLocal started = local;
            // Its job threads are not daemons: stop it when the test JVM ends.
            Runtime.getRuntime().addShutdownHook(new Thread(started::shutdownNow, "dynamodb-local-stop"));
        }
        return shared;
    }

    @Override
    public void close() {
        dynamo.deleteTable(d -> d.tableName(tables.live()));
        dynamo.deleteTable(d -> d.tableName(tables.ledger()));
    }
}
