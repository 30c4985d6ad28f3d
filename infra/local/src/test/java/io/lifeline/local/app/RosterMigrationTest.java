package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.ApiKeys;
import io.lifeline.local.TestStack;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * A data dir written before 2026-11-25 (agents listed through the live table's index {@code byTeam}, their items
 * carrying its keys, the task fence holding the task's id, a published transition's details still on the item) is
 * read whole after a start: every agent is listed (from the team's roster the start wrote), the index keys are gone
 * from the items, GET agent shows the last change, and the agent holding a task completes it.
 */
@Timeout(120)
@Tag("e2e")
class RosterMigrationTest {
    private static final String TEAM = "old-team";

    @TempDir
    Path dataDir;

    private String writeOldDataDir() throws Exception {
        String key = ApiKeys.generate();
        String hash = ApiKeys.hash(key);
        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            DynamoDbClient dynamo = store.client();
            SamTemplate template = TestStack.template();
            LocalTables tables = LocalTables.named(template, LifelineLocal.TABLE_PREFIX);
            CreateTableRequest live = template.createTableRequest(tables.liveLogicalId(), tables.tables().live());
            List<AttributeDefinition> attributes = new ArrayList<>(live.attributeDefinitions());
            attributes.add(AttributeDefinition.builder().attributeName("tpk").attributeType(ScalarAttributeType.S)
                    .build());
            attributes.add(AttributeDefinition.builder().attributeName("tsk").attributeType(ScalarAttributeType.S)
                    .build());
            dynamo.createTable(live.toBuilder().attributeDefinitions(attributes).globalSecondaryIndexes(
                    GlobalSecondaryIndex.builder().indexName("byTeam").keySchema(
                            KeySchemaElement.builder().attributeName("tpk").keyType(KeyType.HASH).build(),
                            KeySchemaElement.builder().attributeName("tsk").keyType(KeyType.RANGE).build())
                            .projection(p -> p.projectionType(ProjectionType.KEYS_ONLY)).build()).build());
            dynamo.createTable(template.createTableRequest(tables.ledgerLogicalId(), tables.tables().ledger()));
            long now = Instant.now().toEpochMilli();
            String ledger = tables.tables().ledger();
            put(dynamo, tables.tables().live(), Map.of("pk", s("TEAM#" + TEAM), "sk", s("TEAM"), "adminKeys", n(1),
                    "createdAt", n(now)));
            put(dynamo, ledger, Map.of("pk", s("KEY#" + hash), "sk", s("KEY"), "scope", s("admin"), "team", s(TEAM),
                    "createdAt", n(now)));
            put(dynamo, ledger, Map.of("pk", s("TEAM#" + TEAM), "sk", s("KEY#" + ApiKeys.idOf(hash)),
                    "scope", s("admin"), "hash", s(hash), "createdAt", n(now)));
            put(dynamo, tables.tables().live(), agent("idle", "ready", now, null));
            put(dynamo, tables.tables().live(), agent("busy", "working", now, "t1"));
            put(dynamo, ledger, Map.of("pk", s("TEAM#" + TEAM), "sk", s("TASK#t1"), "title", s("a task"),
                    "status", s("in_progress"), "assignee", s("busy"), "createdAt", n(now), "claimedAt", n(now),
                    "gsi1pk", s("TEAM#" + TEAM + "#ASSIGNEE#busy"), "gsi1sk", s("t1")));
        }
        return key;
    }

    @Test
    void start_onADataDirWithTheTeamIndex_listsEveryAgentFromTheRosterAndReadsOldItemsWhole() throws Exception {
        String key = writeOldDataDir();
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, dataDir, TestStack.template(),
                Map.of(), Clock.systemUTC()))) {
            JsonNode agents = call(local, key, "GET", "/v1/teams/" + TEAM + "/agents", 200);
            assertEquals(2, agents.get("agents").size(), agents.toString());
            for (String id : List.of("idle", "busy")) {
                Map<String, AttributeValue> item = local.dynamo().getItem(g -> g.tableName(local.tables().live())
                        .key(Map.of("pk", s("TEAM#" + TEAM + "#AGENT#" + id), "sk", s("AGENT")))).item();
                assertFalse(item.containsKey("tpk") || item.containsKey("tsk"), id + ": " + item);
                assertTrue(local.dynamo().getItem(g -> g.tableName(local.tables().ledger()).consistentRead(true)
                        .key(Map.of("pk", s("TEAM#" + TEAM), "sk", s("AGENT#" + id)))).hasItem(), id + " on the roster");
            }
            JsonNode busy = call(local, key, "GET", "/v1/teams/" + TEAM + "/agents/busy", 200);
            assertEquals("claim_task", busy.get("lastTransition").get("trigger").asText(), busy.toString());
            assertEquals("t1", busy.get("currentTaskId").asText());
            // The fence written as the task's id still lets the life that claimed the task complete it.
            JsonNode done = call(local, key, "POST", "/v1/teams/" + TEAM + "/tasks/t1/complete", 200,
                    "{\"agentId\":\"busy\"}");
            assertEquals("ready", done.get("agentStatus").asText(), done.toString());
            // A second start finds nothing left to move.
            assertEquals(0, RosterMigration.run(local.dynamo(), local.tables()));
        }
    }

    /** An old agent item: the index keys, a published transition with its details, a fence holding the task's id. */
    private static Map<String, AttributeValue> agent(String id, String status, long now, String task) {
        Map<String, AttributeValue> item = new HashMap<>(Map.of("pk", s("TEAM#" + TEAM + "#AGENT#" + id),
                "sk", s("AGENT"), "tpk", s("TEAM#" + TEAM), "tsk", s(id), "status", s(status), "name", s(id),
                "role", s("worker"), "staleMs", n(3_600_000), "grace", n(2), "misses", n(0)));
        item.putAll(Map.of("beats", n(3), "regAt", n(now), "hbAt", n(now), "deadline", n(now + 3_600_000),
                "tseq", n(2), "ps", n(2), "tFrom", s(task == null ? "offline" : "ready"),
                "tTrigger", s(task == null ? "join" : "claim_task"), "tAt", n(now)));
        if (task != null) {
            item.put("taskId", s(task));
            item.put("hold", s(task));
        }
        return item;
    }

    private static JsonNode call(LifelineLocal local, String key, String method, String path, int expected)
            throws Exception {
        return call(local, key, method, path, expected, null);
    }

    private static JsonNode call(LifelineLocal local, String key, String method, String path, int expected,
                                 String body) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(local.url().resolve(path))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(expected, r.statusCode(), path + ": " + r.body());
        return Json.parse(r.body());
    }

    private static void put(DynamoDbClient dynamo, String table, Map<String, AttributeValue> item) {
        dynamo.putItem(p -> p.tableName(table).item(item));
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    private static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }
}
