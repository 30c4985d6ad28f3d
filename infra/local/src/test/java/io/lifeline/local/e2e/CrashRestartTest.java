package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifeline Local as a separate process, killed with SIGKILL in the middle of a sweep burst (see
 * {@link CrashRestartReviveTest} for the revive flow), then restarted on the same data directory. Timing is scaled: agents are stale
 * after 2 s, the sweep runs every 300 ms, and state machine waits run at 0.05 x (the revive flow's first wait of
 * 30 s takes 1.5 s). Every wait is a bounded poll.
 */
@Tag("e2e")
public class CrashRestartTest {
    static final String TEAM = "local";
    static final int AGENTS = 16;
    static final int TASKS = 5;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final List<Process> started = new ArrayList<>();
    Path dataDir;

    /** One running Lifeline Local process. */
    record Local(Process process, URI url, String key, List<String> output) {
    }

    @AfterEach
    void killAll() throws Exception {
        for (Process p : started) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    Local launch() throws Exception {
        ChildLocal child = ChildLocal.start("384m", "--port", "0", "--data-dir", dataDir.toString(),
                "--time-scale", "0.05", "--param", "StaleAfterSeconds=2", "--param", "SweepIntervalMillis=300",
                "--param", "SelfPreservationMinAlive=100000");
        started.add(child.process());
        child.awaitRunning(Duration.ofSeconds(45), true);
        return new Local(child.process(), child.url(), child.adminKey(), child.output());
    }

    static void kill(Local l) throws Exception {
        l.process().destroyForcibly(); // SIGKILL on Unix: no shutdown hook runs
        assertTrue(l.process().waitFor(10, TimeUnit.SECONDS), "killed");
    }

    /**
     * Waits, with a bound, until {@code done}. The outbox writes history records a moment after the change, so
     * a check may see a chain with a gap; that counts as "not yet" (the last such failure is kept as the
     * cause if the wait times out), and the assertions after the wait still see the whole chain.
     */
    public static void poll(Duration max, String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        AssertionError lastSeen = null;
        while (true) {
            try {
                if (done.getAsBoolean()) {
                    return;
                }
            } catch (AssertionError notYet) {
                lastSeen = notYet;
            }
            if (System.nanoTime() > deadline) {
                AssertionError timedOut = new AssertionError("timed out after " + max + " waiting for " + what);
                if (lastSeen != null) {
                    timedOut.initCause(lastSeen);
                }
                throw timedOut;
            }
            Thread.sleep(25);
        }
    }

    static JsonNode call(Local l, String method, String path, String body) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(l.url().resolve(path)).timeout(Duration.ofSeconds(10))
                    .header("Authorization", "Bearer " + l.key()).header("Content-Type", "application/json");
            b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode n = Json.parse(r.body());
            ((ObjectNode) n).put("_status", r.statusCode());
            return n;
        } catch (Exception e) {
            throw new IllegalStateException(method + " " + path, e);
        }
    }

    static JsonNode ok(JsonNode n) {
        assertTrue(n.get("_status").asInt() / 100 == 2, n.toString());
        return n;
    }

    static String agents() {
        return "/v1/teams/" + TEAM + "/agents";
    }

    static Map<String, String> statuses(Local l) {
        Map<String, String> out = new HashMap<>();
        ok(call(l, "GET", agents() + "?limit=100", null)).get("agents")
                .forEach(a -> out.put(a.get("agentId").asText(), a.get("status").asText()));
        return out;
    }

    static Map<String, JsonNode> tasks(Local l) {
        Map<String, JsonNode> out = new HashMap<>();
        ok(call(l, "GET", "/v1/teams/" + TEAM + "/tasks?limit=100", null)).get("tasks")
                .forEach(t -> out.put(t.get("taskId").asText(), t));
        return out;
    }

    /** The agent's transitions, oldest first, checked: seq contiguous from 1, chained, allowed by the table. */
    static List<JsonNode> chain(Local l, String agentId) {
        List<JsonNode> list = new ArrayList<>();
        ok(call(l, "GET", agents() + "/" + agentId + "/transitions?limit=100", null)).get("transitions")
                .forEach(list::add);
        Collections.reverse(list);
        AgentStatus previous = AgentStatus.OFFLINE;
        for (int i = 0; i < list.size(); i++) {
            JsonNode t = list.get(i);
            AgentStatus from = AgentStatus.fromWire(t.get("from").asText()).orElseThrow();
            AgentStatus to = AgentStatus.fromWire(t.get("to").asText()).orElseThrow();
            Trigger trigger = Trigger.fromWire(t.get("trigger").asText()).orElseThrow();
            assertEquals(i + 1, t.get("seq").asLong(), agentId + ": seq contiguous " + list);
            assertEquals(previous, from, agentId + ": chained " + list);
            assertTrue(TransitionTable.allows(from, trigger, to), agentId + ": allowed " + t);
            previous = to;
        }
        return list;
    }

    /** Event ids of AgentStatusChanged in the team's event log. */
    static Set<String> loggedStatusEvents(Local l) {
        Set<String> ids = new HashSet<>();
        ok(call(l, "GET", "/v1/teams/" + TEAM + "/events?type=AgentStatusChanged&limit=100", null)).get("events")
                .forEach(e -> ids.add(e.get("eventId").asText()));
        return ids;
    }

    static Set<String> expectedEvents(Local l, List<String> agentIds) {
        Set<String> ids = new HashSet<>();
        for (String a : agentIds) {
            for (JsonNode t : chain(l, a)) {
                ids.add(TEAM + "/" + a + "/status/" + t.get("seq").asLong());
            }
        }
        return ids;
    }

    @Test
    void sigkillDuringSweepBurst_losesNoTransitionTaskOrEvent() throws Exception {
        dataDir = Files.createTempDirectory("lifeline-crash");
        long t0 = System.nanoTime();

        // ---- 1. a sweep burst: AGENTS agents go silent together; kill as soon as the first is dead -----------
        Local first = launch();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) {
            ok(call(first, "POST", "/v1/teams/" + TEAM + "/tasks", "{\"taskId\":\"k-" + i + "\",\"title\":\"K\"}"));
        }
        for (int i = 0; i < AGENTS; i++) {
            String id = "s-" + i;
            ids.add(id);
            ok(call(first, "POST", agents(), "{\"agentId\":\"" + id + "\",\"name\":\"S " + i + "\",\"role\":\"w\"}"));
            ok(call(first, "POST", agents() + "/" + id + "/join", null));
            if (i < TASKS) {
                ok(call(first, "POST", "/v1/teams/" + TEAM + "/tasks/k-" + i + "/claim", "{\"agentId\":\"" + id + "\"}"));
            }
        }
        int[] deadAtKill = new int[1];
        poll(Duration.ofSeconds(20), "the first death", () -> {
            deadAtKill[0] = (int) statuses(first).values().stream().filter("dead"::equals).count();
            return deadAtKill[0] > 0;
        });
        kill(first);
        System.out.printf("CrashRestartTest: killed during the sweep burst with %d of %d agents dead%n",
                deadAtKill[0], AGENTS);

        Local second = launch();
        poll(Duration.ofSeconds(20), "every silent agent dead after the restart", () ->
                ids.stream().allMatch(a -> "dead".equals(statuses(second).get(a))));
        poll(Duration.ofSeconds(20), "every task of a dead agent handed back", () ->
                tasks(second).values().stream().allMatch(t -> "pending".equals(t.get("status").asText())
                        && !t.hasNonNull("assignee")));
        poll(Duration.ofSeconds(20), "every transition's event logged", () ->
                loggedStatusEvents(second).containsAll(expectedEvents(second, ids)));
        for (String a : ids) {
            List<JsonNode> c = chain(second, a);
            assertEquals(List.of("join", "heartbeat_expired"), c.stream().filter(t -> !t.get("trigger").asText()
                    .equals("claim_task")).map(t -> t.get("trigger").asText()).toList(), a + ": " + c);
        }

        kill(second);
        System.out.printf("CrashRestartTest: 1 SIGKILL, 2 starts, %d agents, %d tasks, %.1f s%n", AGENTS, TASKS,
                (System.nanoTime() - t0) / 1e9);
    }
}
