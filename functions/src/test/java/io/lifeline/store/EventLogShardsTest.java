package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.store.ledger.EventLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The team event log over its shards, on the engine's tables made from template.yaml: one team's events spread over
 * every shard, about evenly; a read merges them newest first (time, then id), and a walk of pages through
 * {@link EventLog.Page#next} answers every event once, in that order, however the page size cuts it; an event logged
 * before the log was sharded is read beside them, and one logged both ways is answered once; a page reads about its
 * own size, not a page of every shard.
 */
@Tag("store")
class EventLogShardsTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");

    static StoreTables store;
    static MeteredDynamo metered;
    static EventLog log;

    @BeforeAll
    static void start() {
        store = StoreTables.create();
        metered = new MeteredDynamo(store.dynamo);
        log = new EventLog(metered, store.tables, Duration.ofDays(7));
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    private static String team() {
        return "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** {@code n} events, a few sharing a millisecond (so the id orders them), each about agent a-(k mod 5). */
    private static List<EventLog.Entry> logged(String team, int n) {
        List<EventLog.Entry> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            EventLog.Entry e = new EventLog.Entry(team + "/a-" + (k % 5) + "/status/" + k, "AgentStatusChanged",
                    T0.plusMillis(250L * (k / 3)), "{\"k\":" + k + "}", "a-" + (k % 5));
            log.append(team, e);
            out.add(e);
        }
        return out;
    }

    private static List<String> newestFirst(List<EventLog.Entry> entries) {
        List<EventLog.Entry> sorted = new ArrayList<>(entries);
        sorted.sort((x, y) -> y.at().equals(x.at()) ? y.eventId().compareTo(x.eventId()) : y.at().compareTo(x.at()));
        return sorted.stream().map(EventLog.Entry::eventId).toList();
    }

    private static List<String> walk(String team, String agentId, String type, int limit) {
        List<String> seen = new ArrayList<>();
        String next = null;
        int pages = 0;
        do {
            EventLog.Page page = log.page(team, agentId, type, null, null, limit, next);
            assertTrue(page.entries().size() <= limit);
            page.entries().forEach(e -> seen.add(e.eventId()));
            next = page.next();
            assertTrue(++pages < 1_000, "the walk ends");
        } while (next != null);
        return seen;
    }

    @Test
    void aTeamsEvents_spreadOverEveryShard_andAWalkOfPagesAnswersEachOnceInTimeOrder() {
        String team = team();
        List<EventLog.Entry> events = logged(team, 160);
        Map<String, Integer> perShard = new HashMap<>();
        for (Map<String, AttributeValue> item : store.dynamo.scanPaginator(s -> s.tableName(store.tables.ledger()))
                .items()) {
            String pk = item.get("pk").s();
            if (pk.startsWith("TEAM#" + team + "#EVENTS")) {
                perShard.merge(pk, 1, Integer::sum);
            }
        }
        assertEquals(EventLog.SHARDS, perShard.size(), "every shard holds some: " + perShard);
        perShard.values().forEach(n -> assertTrue(n >= 160 / EventLog.SHARDS / 3 && n <= 3 * 160 / EventLog.SHARDS,
                "about evenly: " + perShard));

        List<String> expected = newestFirst(events);
        for (int limit : List.of(1, 7, 25, 100, 160, 500)) {
            assertEquals(expected, walk(team, null, null, limit), "pages of " + limit);
        }
        EventLog.Page whole = log.page(team, null, null, null, null, 160, null);
        assertEquals(160, whole.entries().size());
        assertNull(whole.next(), "nothing older remains: no cursor");

        List<String> aboutA2 = newestFirst(events.stream().filter(e -> e.agentId().equals("a-2")).toList());
        assertEquals(aboutA2, walk(team, "a-2", null, 5), "the agent's own copy pages the same way");
        assertEquals(List.of(), walk(team, null, "AgentStalled", 10), "a type filter on every shard");
    }

    @Test
    void aWindow_andACursor_together_stayInsideTheWindow() {
        String team = team();
        List<EventLog.Entry> events = logged(team, 60);
        Instant since = T0.plusSeconds(2);
        Instant until = T0.plusSeconds(4);
        List<String> inWindow = newestFirst(events.stream()
                .filter(e -> !e.at().isBefore(since) && !e.at().isAfter(until)).toList());
        List<String> seen = new ArrayList<>();
        String next = null;
        do {
            EventLog.Page page = log.page(team, null, null, since, until, 4, next);
            page.entries().forEach(e -> seen.add(e.eventId()));
            next = page.next();
        } while (next != null);
        assertEquals(inWindow, seen);
    }

    @Test
    void eventsLoggedBeforeTheShards_areReadBesideThem_andOneLoggedBothWays_isAnsweredOnce() {
        String team = team();
        List<EventLog.Entry> events = logged(team, 20);
        // As the log was written before it was sharded: TEAM#<team>#EVENTS, the same sort key and attributes.
        List<EventLog.Entry> old = new ArrayList<>();
        for (int k = 0; k < 6; k++) {
            Instant at = T0.minusSeconds(60 - k);
            old.add(new EventLog.Entry(team + "/old/" + k, "AgentStatusChanged", at, "{}", null));
        }
        old.add(events.get(4)); // a record replayed across the change: logged in its shard and in the old log
        for (EventLog.Entry e : old) {
            String sk = String.format("E#%013d#%s", e.at().toEpochMilli(), e.eventId());
            store.dynamo.putItem(p -> p.tableName(store.tables.ledger()).item(Map.of(
                    "pk", AttributeValue.fromS("TEAM#" + team + "#EVENTS"), "sk", AttributeValue.fromS(sk),
                    "eventId", AttributeValue.fromS(e.eventId()), "type", AttributeValue.fromS(e.type()),
                    "at", AttributeValue.fromN(Long.toString(e.at().toEpochMilli())),
                    "detail", AttributeValue.fromS(e.detailJson()))));
        }
        List<EventLog.Entry> all = new ArrayList<>(events);
        all.addAll(old.subList(0, 6));
        assertEquals(newestFirst(all), walk(team, null, null, 3));
        assertEquals(26, log.page(team, null, null, null, null, 100, null).entries().size());
    }

    @Test
    void aPage_readsAboutItsOwnSize_notAPageOfEveryShard() {
        String team = team();
        logged(team, 400);
        metered.reset();
        EventLog.Page page = log.page(team, null, null, null, null, 25, null);
        assertEquals(25, page.entries().size());
        assertNotNull(page.next());
        List<MeteredDynamo.Call> queries = metered.calls().stream().filter(c -> c.operation().equals("Query"))
                .toList();
        queries.forEach(c -> assertTrue(c.units() != null && c.units() > 0));
        // 9 partitions (8 shards and the log before them) read 4 at a time, and the few the merge reads on.
        int partitions = EventLog.SHARDS + 1;
        assertTrue(queries.size() >= partitions && queries.size() <= 2 * partitions, queries.size() + " queries");
        double units = queries.stream().mapToDouble(MeteredDynamo.Call::units).sum();
        System.out.println("a page of 25 of 400 events over " + EventLog.SHARDS + " shards: " + queries.size()
                + " queries, " + units + " read units");
    }
}
