package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.outbox.AlertWindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * A burst's writes on its alert window spread over the window's partitions, on the engine's tables made from
 * template.yaml: 2,000 deaths in 400 teams on 50 hosts write no partition key more than a totals shard's share of
 * the deaths and twice an even share of the rest (the head's takes only the deaths up to the threshold), and the
 * totals, the teams and the hosts read back whole, page by page.
 */
@Tag("store")
class AlertWindowPartsTest {
    private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
    private static final int DEATHS = 2_000;
    private static final int TEAMS = 400;
    private static final int HOSTS = 50;

    static StoreTables store;
    static final Map<String, Integer> writesByPartition = new HashMap<>();

    /** The engine's client, counting each write by its partition key. */
    static DynamoDbClient counted;

    @BeforeAll
    static void start() {
        store = StoreTables.create();
        DynamoDbClient engine = store.dynamo;
        counted = new DynamoDbClient() {
            @Override
            public UpdateItemResponse updateItem(UpdateItemRequest r) {
                writesByPartition.merge(r.key().get(Keys.PK).s(), 1, Integer::sum);
                return engine.updateItem(r);
            }

            @Override
            public PutItemResponse putItem(PutItemRequest r) {
                writesByPartition.merge(r.item().get(Keys.PK).s(), 1, Integer::sum);
                return engine.putItem(r);
            }

            @Override
            public GetItemResponse getItem(GetItemRequest r) {
                return engine.getItem(r);
            }

            @Override
            public QueryResponse query(QueryRequest r) {
                return engine.query(r);
            }

            @Override
            public BatchGetItemResponse batchGetItem(BatchGetItemRequest r) {
                return engine.batchGetItem(r);
            }

            @Override
            public String serviceName() {
                return engine.serviceName();
            }

            @Override
            public void close() {
            }
        };
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    @Test
    void aBurstsWrites_spreadOverTheWindowsPartitions_andReadBackWhole() {
        AlertWindowStore windows = new AlertWindowStore(counted, store.tables, Duration.ofDays(7));
        int threshold = 10;
        boolean past = false;
        for (int k = 0; k < DEATHS; k++) {
            String team = "team-" + (k % TEAMS);
            String agent = "agent-" + k;
            if (!past) { // as the outbox does: once past the threshold, remembered (one attempt per environment)
                int counted = windows.countHead(START, threshold + 1, "key-" + k);
                past = counted == 0 || counted == threshold + 1;
            }
            windows.countDeath(START, team, agent, "host-" + (k % HOSTS), "heartbeat_expired", false, 3);
            windows.putMark(START, team + "#" + agent + "#2", new AlertWindowStore.Mark(true, false));
        }
        int total = writesByPartition.values().stream().mapToInt(Integer::intValue).sum();
        int head = writesByPartition.getOrDefault("ALERTS#WINDOW#" + START.toEpochMilli(), 0);
        assertEquals(threshold + 1, head, "the head takes the deaths up to its threshold, no more");
        int busiest = writesByPartition.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        System.out.println(DEATHS + " deaths: " + total + " writes over " + writesByPartition.size()
                + " partition keys, the busiest " + busiest + " (" + (total / AlertWindowStore.PARTS) + " even)");
        assertEquals(AlertWindowStore.PARTS + 1, writesByPartition.size(), writesByPartition::toString);
        int rest = total - DEATHS - head; // a death's team, host and mark writes; its shard's are the DEATHS
        assertTrue(busiest <= DEATHS / AlertWindowStore.SHARDS + 2 * rest / AlertWindowStore.PARTS,
                writesByPartition::toString);

        AlertWindowStore.Totals totals = windows.totals(START);
        assertEquals(DEATHS, totals.deaths());
        assertEquals(DEATHS, totals.byReason().get("heartbeat_expired"));
        Set<String> teams = new HashSet<>();
        int teamDeaths = 0;
        String next = null;
        int pages = 0;
        do {
            AlertWindowStore.Page<AlertWindowStore.TeamCount> page = windows.teams(START, next, 7);
            assertTrue(page.items().size() <= 7);
            for (AlertWindowStore.TeamCount t : page.items()) {
                assertTrue(teams.add(t.team()), "each team once: " + t.team());
                teamDeaths += t.deaths();
            }
            next = page.next();
            assertTrue(++pages < 1_000);
        } while (next != null);
        assertEquals(TEAMS, teams.size());
        assertEquals(DEATHS, teamDeaths);
        int hostDeaths = 0;
        next = null;
        do {
            AlertWindowStore.Page<AlertWindowStore.HostCount> page = windows.hosts(START, next, 50);
            hostDeaths += page.items().stream().mapToInt(AlertWindowStore.HostCount::deaths).sum();
            next = page.next();
        } while (next != null);
        assertEquals(DEATHS, hostDeaths);
        assertTrue(windows.mark(START, "team-3#agent-3#2").burst(), "a mark reads back from its partition");
    }
}
