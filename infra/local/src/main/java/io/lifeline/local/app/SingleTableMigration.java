package io.lifeline.local.app;

import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.Tables;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * Moves a data dir written before the live/ledger split (one table, {@code lifeline}) into the two tables, before
 * anything reads them, so an old data dir is never half-read. Agent items get their live key
 * ({@code TEAM#<team>#AGENT#<id> / AGENT}) and team items keep theirs, on the live table, and each agent an entry in
 * its team's roster on the ledger; every other item goes to the ledger unchanged. An agent whose newest transition
 * the old outbox had not recorded yet carries the outbox mark, so the new outbox records it and tells it (and nothing
 * already told is told again). The old table is deleted last: a migration cut short runs again, whole, on the next
 * start (every write is a plain overwrite of the same item). The old stream's checkpoints go with it.
 */
final class SingleTableMigration {
    private SingleTableMigration() {
    }

    /** Migrates when {@code oldTable} exists; true when it did. */
    static boolean run(DynamoDbClient dynamo, LocalTables target, SamTemplate template, String oldTable,
                       Path oldCheckpoints) throws IOException {
        if (target.tables().live().equals(oldTable) || target.tables().ledger().equals(oldTable)) {
            throw new IllegalStateException("the old single table's name is one of the new tables' names: " + oldTable);
        }
        try {
            dynamo.describeTable(d -> d.tableName(oldTable));
        } catch (ResourceNotFoundException e) {
            return false;
        }
        target.ensure(dynamo, template);
        Tables tables = target.tables();
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        dynamo.scanPaginator(s -> s.tableName(oldTable).consistentRead(true)).items().forEach(items::add);
        Set<String> recorded = new HashSet<>();
        for (Map<String, AttributeValue> item : items) {
            String sk = str(item, "sk");
            if (sk != null && sk.startsWith("T#")) {
                recorded.add(str(item, "pk") + "/" + sk);
            }
        }
        int agents = 0;
        for (Map<String, AttributeValue> item : items) {
            String pk = str(item, "pk");
            String sk = str(item, "sk");
            if (pk == null || sk == null) {
                continue;
            }
            if (pk.startsWith("TEAM#") && !pk.substring(5).contains("#") && sk.startsWith("AGENT#")) {
                String team = pk.substring(5);
                String agentId = sk.substring("AGENT#".length());
                Map<String, AttributeValue> live = new HashMap<>(item);
                String scope = pk + "#AGENT#" + agentId;
                live.put("pk", AttributeValue.fromS(scope));
                live.put("sk", AttributeValue.fromS("AGENT"));
                long seq = item.containsKey("tseq") ? Long.parseLong(item.get("tseq").n()) : 0;
                if (seq > 0 && !recorded.contains(scope + "/" + String.format("T#%012d", seq))) {
                    live.put("ob", AttributeValue.fromBool(true));
                } else {
                    live.remove("ob");
                }
                dynamo.putItem(p -> p.tableName(tables.live()).item(live));
                // Its entry in the team's roster, which lists the team's agents (RosterMigration).
                dynamo.putItem(p -> p.tableName(tables.ledger()).item(Map.of("pk", AttributeValue.fromS(pk),
                        "sk", AttributeValue.fromS("AGENT#" + agentId))));
                agents++;
            } else if (pk.startsWith("TEAM#") && !pk.substring(5).contains("#") && sk.equals("TEAM")) {
                dynamo.putItem(p -> p.tableName(tables.live()).item(item));
            } else {
                dynamo.putItem(p -> p.tableName(tables.ledger()).item(item));
            }
        }
        dynamo.deleteTable(d -> d.tableName(oldTable));
        if (oldCheckpoints != null) {
            Files.deleteIfExists(oldCheckpoints);
        }
        System.out.println("migrated the data dir's single table '" + oldTable + "' (" + items.size() + " items, "
                + agents + " agents) into '" + tables.live() + "' and '" + tables.ledger() + "'");
        return true;
    }

    private static String str(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null ? null : v.s();
    }
}
