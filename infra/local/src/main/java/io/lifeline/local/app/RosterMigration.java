package io.lifeline.local.app;

import io.lifeline.store.Tables;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Moves a data dir written before 2026-11-25, when a team's agents were listed through the live table's index
 * {@code byTeam} (keys {@code tpk}, {@code tsk} on every agent item), to the team's roster on the ledger
 * ({@code TEAM#<team> / AGENT#<id>}), before anything reads the tables, so no agent is left out of a list: each agent
 * item that still carries the index keys gets its roster entry, then loses the keys (a conditional write). A run cut
 * short does the rest on the next start (the roster entry is a plain overwrite of the same keys). The old table's
 * index itself stays, unused and emptied; the template no longer defines it.
 */
final class RosterMigration {
    private RosterMigration() {
    }

    /** Migrates every agent item that still carries the index keys; answers how many. */
    static int run(DynamoDbClient dynamo, Tables tables) {
        List<Map<String, AttributeValue>> old = new ArrayList<>();
        dynamo.scanPaginator(s -> s.tableName(tables.live()).consistentRead(true)
                .filterExpression("#sk = :agent AND (attribute_exists(#tpk) OR attribute_exists(#tsk))")
                .projectionExpression("#pk, #sk")
                .expressionAttributeNames(Map.of("#pk", "pk", "#sk", "sk", "#tpk", "tpk", "#tsk", "tsk"))
                .expressionAttributeValues(Map.of(":agent", AttributeValue.fromS("AGENT"))))
                .items().forEach(old::add);
        int moved = 0;
        for (Map<String, AttributeValue> key : old) {
            String pk = key.get("pk").s();
            int at = pk.indexOf("#AGENT#");
            if (!pk.startsWith("TEAM#") || at < 0) {
                continue;
            }
            String team = pk.substring(0, at);
            String agentId = pk.substring(at + "#AGENT#".length());
            dynamo.putItem(p -> p.tableName(tables.ledger()).item(Map.of("pk", AttributeValue.fromS(team),
                    "sk", AttributeValue.fromS("AGENT#" + agentId))));
            try {
                dynamo.updateItem(u -> u.tableName(tables.live()).key(key)
                        .updateExpression("REMOVE #tpk, #tsk")
                        .conditionExpression("attribute_exists(#pk)")
                        .expressionAttributeNames(Map.of("#pk", "pk", "#tpk", "tpk", "#tsk", "tsk")));
                moved++;
            } catch (ConditionalCheckFailedException gone) {
                // not there any more: nothing to move
            }
        }
        if (moved > 0) {
            System.out.println("migrated " + moved + " agents of the data dir from the live table's team index to"
                    + " their teams' rosters on '" + tables.ledger() + "'");
        }
        return moved;
    }
}
