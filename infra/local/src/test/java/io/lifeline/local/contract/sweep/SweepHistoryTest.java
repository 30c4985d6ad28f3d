package io.lifeline.local.contract.sweep;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sweep's cost follows the number of agents, never their history (history lives
 * on the ledger): a team whose agents have 30 days of history written through the API (claims, completes, leaves and
 * joins, errors, heartbeats carrying metadata and checkpoints near their limits, every event through the
 * outbox) is swept, and the sweep's own log line says how many items it read per alive agent.
 */
@Tag("contract")
class SweepHistoryTest {
    private static final int AGENTS = 8;
    private static final int DAYS = 30;
    private static final int TASKS_A_DAY = 2;

    /** A JSON object of about {@code bytes} bytes, as an agent's metadata or checkpoint near its 4 KB limit. */
    private static String blob(String field, int bytes) {
        return "{\"" + field + "\":\"" + "x".repeat(bytes) + "\"}";
    }

    private static String agent(int i) {
        return "h-" + i;
    }

    /** Lines of {@code msg} "sweep" that report a scan. */
    private static List<JsonNode> sweepLines(List<String> lines) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : lines) {
            JsonNode n = Json.parse(line);
            if ("sweep".equals(n.path("msg").asText()) && n.has("itemsScanned")) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    @Timeout(600)
    void sweep_afterThirtyDaysOfHistory_scansAtMostOneAndAHalfItemsPerAliveAgent() throws Exception {
        try (TestStack s = TestStack.start()) {
            for (int i = 0; i < AGENTS; i++) {
                ok(s.ready(agent(i)));
            }
            String metadata = "{\"metadata\":" + blob("notes", 3_900) + ",\"checkpoint\":" + blob("state", 3_900)
                    + "}";
            for (int day = 0; day < DAYS; day++) {
                s.clock.set(TestStack.START.plus(Duration.ofDays(day)));
                for (int i = 0; i < AGENTS; i++) {
                    String a = agent(i);
                    for (int t = 0; t < TASKS_A_DAY; t++) {
                        String task = a + "-d" + day + "-t" + t;
                        ok(s.createTask(task));
                        ok(s.task("claim", task, "{\"agentId\":\"" + a + "\"}"));
                        s.clock.advance(Duration.ofSeconds(1));
                        ok(s.heartbeat(a, metadata));
                        s.clock.advance(Duration.ofSeconds(1));
                        ok(s.task("complete", task, "{\"agentId\":\"" + a + "\"}"));
                    }
                    ok(s.agent("errors", a, "{\"message\":\"429 rate limit: " + "y".repeat(3_000) + "\"}"));
                    ok(s.agent("leave", a, "{\"reason\":\"end of day " + day + "\"}"));
                    s.clock.advance(Duration.ofSeconds(1));
                    ok(s.agent("join", a, null));
                }
                s.pump.drain();
            }
            long ledgerItems = s.dynamo.scanPaginator(r -> r.tableName(s.tables.ledger()).select("COUNT")).stream()
                    .mapToLong(p -> p.count()).sum();
            // Per agent and day: 2 tasks, 7 transition records, 7 events (two copies each), side items...
            assertTrue(ledgerItems >= (long) AGENTS * DAYS * 20, "history on the ledger: " + ledgerItems);

            for (int i = 0; i < AGENTS; i++) {
                ok(s.heartbeat(agent(i), "{}"));
            }
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Log.sink(lines::add);
            try {
                assertEquals(List.of(), s.sweep());
            } finally {
                Log.sink(null);
            }
            List<JsonNode> swept = sweepLines(lines);
            assertEquals(1, swept.size(), lines::toString);
            JsonNode line = swept.get(0);
            int scanned = line.get("itemsScanned").asInt();
            int alive = line.get("aliveSeen").asInt();
            assertEquals(AGENTS, alive, line::toString);
            assertTrue((double) scanned / alive <= 1.5, "items scanned per alive agent: " + line);
            assertEquals(AGENTS + 1, scanned, "the agents and their team item, nothing of their history: " + line);
            System.out.printf("sweep after %d days: %d ledger items, %s%n", DAYS, ledgerItems, line);
        }
    }
}
