package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.ApiKeys;
import io.lifeline.local.CrashRestartTest;
import io.lifeline.local.TestStack;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * A data dir written before the live/ledger split (one table, {@code lifeline}) is migrated on start, before
 * anything reads it: the agents, their history, the team's keys and tasks all answer through the API as before,
 * and the old table is gone.
 */
@Timeout(120)
@Tag("e2e")
class SingleTableMigrationTest {
    private static final String TEAM = "old-team";

    @TempDir
    Path dataDir;

    /** Writes the old layout: team item, two agents (one with an unrecorded newest transition), history, task, key. */
    private String writeOldDataDir() throws Exception {
        String key = ApiKeys.generate();
        String hash = ApiKeys.hash(key);
        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            DynamoDbClient dynamo = store.client();
            SamTemplate template = TestStack.template();
            dynamo.createTable(template.createTableRequest(template.globalEnvironmentReference("LEDGER_TABLE"),
                    LifelineLocal.OLD_SINGLE_TABLE));
            long now = Instant.now().toEpochMilli();
            put(dynamo, Map.of("pk", s("TEAM#" + TEAM), "sk", s("TEAM"), "adminKeys", n(1), "createdAt", n(now)));
            put(dynamo, Map.of("pk", s("KEY#" + hash), "sk", s("KEY"), "scope", s("admin"), "team", s(TEAM),
                    "createdAt", n(now)));
            put(dynamo, Map.of("pk", s("TEAM#" + TEAM), "sk", s("KEY#" + ApiKeys.idOf(hash)), "scope", s("admin"),
                    "hash", s(hash), "createdAt", n(now)));
            put(dynamo, agent("recorded", "offline", 2, now));
            put(dynamo, agent("unrecorded", "offline", 2, now));
            for (String id : new String[] {"recorded", "unrecorded"}) {
                put(dynamo, transition(id, 1, "offline", "ready", now));
            }
            put(dynamo, transition("recorded", 2, "ready", "offline", now));
            put(dynamo, Map.of("pk", s("TEAM#" + TEAM), "sk", s("TASK#t1"), "title", s("a task"),
                    "status", s("pending"), "createdAt", n(now)));
        }
        return key;
    }

    @Test
    void start_onAnOldSingleTableDataDir_migratesEverythingBeforeServing() throws Exception {
        String key = writeOldDataDir();
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, dataDir, TestStack.template(),
                Map.of(), Clock.systemUTC()))) {
            JsonNode agents = get(local, key, "/v1/teams/" + TEAM + "/agents");
            assertEquals(2, agents.get("agents").size(), agents.toString());
            JsonNode tasks = get(local, key, "/v1/teams/" + TEAM + "/tasks");
            assertEquals("t1", tasks.get("tasks").get(0).get("taskId").asText(), tasks.toString());
            JsonNode history = get(local, key, "/v1/teams/" + TEAM + "/agents/recorded/transitions");
            assertEquals(2, history.get("transitions").size(), history.toString());
            // The transition the old outbox had not recorded is recorded by the new one (the migration marked it).
            CrashRestartTest.poll(Duration.ofSeconds(30), "the unrecorded transition recorded", () -> {
                local.pump().drain();
                return local.dynamo().getItem(g -> g.tableName(local.tables().ledger()).consistentRead(true)
                        .key(Map.of("pk", s("TEAM#" + TEAM + "#AGENT#unrecorded"), "sk", s("T#000000000002"))))
                        .hasItem();
            });
            assertThrows(ResourceNotFoundException.class, () -> local.dynamo().describeTable(d -> d
                    .tableName(LifelineLocal.OLD_SINGLE_TABLE)));
            Map<String, AttributeValue> recorded = local.dynamo().getItem(g -> g.tableName(local.tables().live())
                    .key(Map.of("pk", s("TEAM#" + TEAM + "#AGENT#recorded"), "sk", s("AGENT")))).item();
            assertFalse(recorded.containsKey("ob"), "an agent whose history is complete is not told again");
        }
    }

    @Test
    void migration_onANewDataDir_doesNothing() throws Exception {
        try (LocalDynamo store = LocalDynamo.open(dataDir)) {
            DynamoDbClient dynamo = store.client();
            LocalTables tables = LocalTables.named(TestStack.template(), LifelineLocal.TABLE_PREFIX);
            assertFalse(SingleTableMigration.run(dynamo, tables, TestStack.template(), LifelineLocal.OLD_SINGLE_TABLE,
                    null));
            tables.ensure(dynamo, TestStack.template());
            assertTrue(dynamo.listTables().tableNames().containsAll(List.of(tables.tables().live(),
                    tables.tables().ledger())));
        }
    }

    private static JsonNode get(LifelineLocal local, String key, String path) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(local.url().resolve(path))
                .header("Authorization", "Bearer " + key).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        return Json.parse(r.body());
    }

    private static Map<String, AttributeValue> agent(String id, String status, long seq, long now) {
        Map<String, AttributeValue> item = new HashMap<>(Map.of("pk", s("TEAM#" + TEAM), "sk", s("AGENT#" + id),
                "status", s(status), "name", s(id), "role", s("worker"), "staleMs", n(60_000), "grace", n(2),
                "misses", n(0), "beats", n(3), "regAt", n(now)));
        item.putAll(Map.of("tseq", n(seq), "tFrom", s("ready"), "tTrigger", s("leave"), "tAt", n(now)));
        return item;
    }

    private static Map<String, AttributeValue> transition(String id, long seq, String from, String to, long now) {
        return Map.of("pk", s("TEAM#" + TEAM + "#AGENT#" + id), "sk", s(String.format("T#%012d", seq)),
                "from", s(from), "to", s(to), "trigger", s(seq == 1 ? "join" : "leave"), "at", n(now), "seq", n(seq));
    }

    private static void put(DynamoDbClient dynamo, Map<String, AttributeValue> item) {
        dynamo.putItem(p -> p.tableName(LifelineLocal.OLD_SINGLE_TABLE).item(item));
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    private static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }
}
