package io.lifeline.local.template;

import io.lifeline.store.dynamo.Tables;
import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * The template's two tables as Local names them ({@code <prefix>-live}, {@code <prefix>-ledger}): which logical id
 * is which is read from the functions' global environment ({@code LIVE_TABLE: !Ref ...}, {@code LEDGER_TABLE}),
 * so template.yaml stays the one source of the tables' definitions.
 */
public record LocalTables(Tables tables, String liveLogicalId, String ledgerLogicalId) {

    public static LocalTables named(SamTemplate template, String prefix) {
        return new LocalTables(new Tables(prefix + "-live", prefix + "-ledger"),
                template.globalEnvironmentReference("LIVE_TABLE"), template.globalEnvironmentReference("LEDGER_TABLE"));
    }

    /** Logical id -> Local's table name, for resolving the template's references. */
    public Map<String, String> resourceNames() {
        Map<String, String> names = new LinkedHashMap<>();
        names.put(liveLogicalId, tables.live());
        names.put(ledgerLogicalId, tables.ledger());
        return names;
    }

    /** Creates both tables from the template unless they exist. */
    public void ensure(DynamoDbClient dynamo, SamTemplate template) {
        ensureTable(dynamo, template, liveLogicalId, tables.live());
        ensureTable(dynamo, template, ledgerLogicalId, tables.ledger());
    }

    /** The live table's stream, which the outbox reads. */
    public String streamArn(DynamoDbClient dynamo) {
        return dynamo.describeTable(d -> d.tableName(tables.live())).table().latestStreamArn();
    }

    public void delete(DynamoDbClient dynamo) {
        dynamo.deleteTable(d -> d.tableName(tables.live()));
        dynamo.deleteTable(d -> d.tableName(tables.ledger()));
    }

    /** Creates {@code tableName} from the template's table {@code logicalId} unless it exists; true when created. */
    public static boolean ensureTable(DynamoDbClient dynamo, SamTemplate template, String logicalId, String tableName) {
        try {
            dynamo.describeTable(d -> d.tableName(tableName));
            return false;
        } catch (ResourceNotFoundException e) {
            dynamo.createTable(template.createTableRequest(logicalId, tableName));
            String ttl = template.timeToLiveAttribute(logicalId);
            // The engine's TTL compares expiry with Local's clock (a test's clock too), so it stays on everywhere.
            if (ttl != null) {
                dynamo.updateTimeToLive(u -> u.tableName(tableName)
                        .timeToLiveSpecification(t -> t.attributeName(ttl).enabled(true)));
            }
            return true;
        }
    }
}
