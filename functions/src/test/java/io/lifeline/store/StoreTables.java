package io.lifeline.store;

import io.lifeline.engine.Engine;
import io.lifeline.store.dynamo.Tables;
import java.time.Clock;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The store's test harness: a fresh pair of live and ledger tables, created from template.yaml's definitions
 * ({@link TemplateTables}), in one Lifeline engine for the whole test JVM (in-process and in memory: the store's tests
 * need a client, not an endpoint). Each test class (or test) opens its own pair under fresh names, so none sees
 * another's items, and closes it to delete them.
 * Their stream and TTL are on, as declared; the engine deletes expired items only when asked ({@code expire()}),
 * which the store's tests never do, so their clock may be anywhere.
 */
public final class StoreTables implements AutoCloseable {
    private static DynamoDbClient shared;

    /** The client of this JVM's engine; the same for every pair of tables. Do not close it. */
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
            // The engine's clock stamps table creation and ages transaction tokens; the store's own "now" comes from
            // each test's MutableClock, passed to every store call.
            shared = new Engine(Clock.systemUTC()).client();
        }
        return shared;
    }

    @Override
    public void close() {
        dynamo.deleteTable(d -> d.tableName(tables.live()));
        dynamo.deleteTable(d -> d.tableName(tables.ledger()));
    }
}
