package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The stall rule engages for a frozen process. A real Lifeline Local runs as a child JVM on a
 * free loopback port (stale after 4 s, a sweep every second, self-preservation out of the way); agents with
 * {@code graceMisses: 1} beat through its HTTP front door from this test. Then the whole process is frozen with
 * SIGSTOP for 6 s, longer than stale-after, so every agent's deadline passes while its next beat waits at the
 * door, and resumed with SIGCONT. The first sweep after the freeze must judge nobody (its line says
 * {@code skipped_late}) and the queued beats land first: no beating agent dies. A control agent that joined just
 * before the freeze and never beats does die, so the sweeps after the freeze judge as usual.
 *
 * <p>Before the fix, Local stamped each schedule with the time it ran, after the freeze, so no sweep was ever
 * late by its own measure: the first sweep after the freeze judged at once, and grace-1 agents whose beat was
 * still queued died (the issue measured it in 3 runs of 5).
 *
 * <p>Against a false failure on a loaded machine: each agent beats every second on a fixed rate (3 s of slack
 * under stale-after, where 2 s would leave 2; the freeze puts every deadline in the past either way) and sends
 * its next beat at once when one was held up; the child's startup and every wait afterwards are bounded polls
 * on what the child printed, never a fixed sleep (except the freeze itself). A beat that crossed the freeze
 * mid-request and was stamped before it is followed at once by a fresh one, long before the next sweep, which
 * comes a whole interval after the skipped one.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("e2e")
class FreezeTest {
    static final String TEAM = "local";
    static final int AGENTS = 8;
    static final Duration BEAT = Duration.ofSeconds(1);
    static final Duration FREEZE = Duration.ofSeconds(6);
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    ChildLocal child;
    Process local;
    List<String> output = List.of();
    final List<Thread> beaters = new ArrayList<>();
    volatile boolean beating = true;

    /** On a failure, the child's last lines, for the reason. */
    @RegisterExtension
    final TestWatcher printChildOutput = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.out.println("---- Lifeline Local's last lines ----\n" + tail());
        }
    };

    @AfterEach
    void stopAll() throws Exception {
        beating = false;
        for (Thread t : beaters) {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        if (local != null && local.isAlive()) {
            signal("CONT");
            local.destroyForcibly();
            local.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void frozenLocal_withGraceOneAgentsBeating_skipsTheFirstSweepAfter_andNoBeatingAgentDies() throws Exception {
        URI url = launch();
        String key = adminKey();
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= AGENTS; i++) {
            ids.add("beating-" + i);
        }
        for (String id : ids) {
            registerAndJoin(url, key, id);
        }
        ConcurrentHashMap<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
        List<String> refused = new CopyOnWriteArrayList<>();
        for (String id : ids) {
            accepted.put(id, new AtomicInteger());
            Thread t = new Thread(() -> beat(url, key, id, accepted.get(id), refused), "beat-" + id);
            t.setDaemon(true);
            beaters.add(t);
            t.start();
        }
        // Steady state: every agent beat at least twice, and two sweeps judged after that.
        CrashRestartTest.poll(Duration.ofSeconds(60), "every agent beating", () -> accepted.values().stream()
                .allMatch(n -> n.get() >= 2));
        int before = sweepLines().size();
        CrashRestartTest.poll(Duration.ofSeconds(30), "two sweeps while all beat", () -> judged(before) >= 2);
        assertEquals(List.of(), refused, "no beat refused before the freeze");

        // The control: joined just before the freeze, never beats. Its deadline passes during the freeze too.
        registerAndJoin(url, key, "quiet");
        int beforeFreeze = sweepLines().size();
        signal("STOP");
        try {
            Thread.sleep(FREEZE.toMillis()); // the freeze itself
        } finally {
            signal("CONT");
        }

        CrashRestartTest.poll(Duration.ofSeconds(30), "the sweep after the freeze to skip",
                () -> skipped(beforeFreeze).size() >= 1);
        JsonNode skip = skipped(beforeFreeze).get(0);
        assertTrue(skip.get("lateMs").asLong() >= FREEZE.toMillis() - 2_000,
                "late by about the freeze: " + skip);
        CrashRestartTest.poll(Duration.ofSeconds(30), "the sweeps after the skip to judge the silent agent",
                () -> status(url, key, "quiet").equals("dead"));
        int afterQuiet = sweepLines().size();
        CrashRestartTest.poll(Duration.ofSeconds(30), "two more sweeps", () -> judged(afterQuiet) >= 2);
        beating = false;
        for (Thread t : beaters) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }

        assertEquals(List.of(), refused, "every beat was accepted, before, during and after the freeze");
        for (String id : ids) {
            assertEquals("ready", status(url, key, id), id);
            JsonNode transitions = CrashRestartTest.ok(call(url, key, "GET",
                    "/v1/teams/" + TEAM + "/agents/" + id + "/transitions", null)).get("transitions");
            assertEquals(1, transitions.size(), id + " only ever joined: " + transitions);
        }
        List<String> died = new ArrayList<>();
        for (JsonNode line : sweepLines()) {
            line.path("markedDead").forEach(d -> died.add(d.asText()));
        }
        assertEquals(List.of(TEAM + "/quiet"), died, "only the agent that never beat died");
        JsonNode quiet = CrashRestartTest.ok(call(url, key, "GET", "/v1/teams/" + TEAM + "/agents/quiet", null));
        assertEquals("heartbeat_expired", quiet.get("lastTransition").get("trigger").asText());
        System.out.printf("freeze: %d agents, %d beats accepted, 0 refused; frozen %d s; %d sweep(s) skipped late "
                        + "(first by %d ms); the silent control died; no beating agent died%n", AGENTS,
                accepted.values().stream().mapToInt(AtomicInteger::get).sum(), FREEZE.toSeconds(),
                skipped(beforeFreeze).size(), skip.get("lateMs").asLong());
    }

    // ---- the child process ------------------------------------------------------------------------------

    URI launch() throws Exception {
        child = ChildLocal.start("384m", "--port", "0", "--in-memory", "--verbose",
                "--param", "StaleAfterSeconds=4", "--param", "SweepIntervalMillis=1000",
                "--param", "SelfPreservationMinAlive=100000");
        local = child.process();
        output = child.output();
        child.awaitRunning(Duration.ofSeconds(120), true);
        return child.url();
    }

    String adminKey() {
        return child.adminKey();
    }

    void signal(String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(local.pid())).inheritIO().start();
        assertTrue(kill.waitFor(30, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + name);
    }

    /** The child's sweep lines so far, in order. */
    List<JsonNode> sweepLines() {
        List<JsonNode> out = new ArrayList<>();
        for (String line : output) {
            if (line.startsWith("{") && line.contains("\"msg\":\"sweep\"")) {
                try {
                    out.add(Json.parse(line));
                } catch (JsonProcessingException e) {
                    throw new AssertionError("a sweep line that is not JSON: " + line, e);
                }
            }
        }
        return out;
    }

    /** Sweeps that judged (any outcome but skipped_late) after the first {@code from} sweep lines. */
    long judged(int from) {
        List<JsonNode> lines = sweepLines();
        return lines.subList(Math.min(from, lines.size()), lines.size()).stream()
                .filter(l -> !l.path("outcome").asText().equals("skipped_late")).count();
    }

    List<JsonNode> skipped(int from) {
        List<JsonNode> lines = sweepLines();
        return lines.subList(Math.min(from, lines.size()), lines.size()).stream()
                .filter(l -> l.path("outcome").asText().equals("skipped_late")).toList();
    }

    String tail() {
        List<String> all = new ArrayList<>(output);
        return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
    }

    // ---- the agents ---------------------------------------------------------------------------------------

    static JsonNode call(URI url, String key, String method, String path, String body) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(url.resolve(path)).timeout(Duration.ofSeconds(60))
                    .header("Authorization", "Bearer " + key).header("Content-Type", "application/json");
            b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode n = Json.parse(r.body());
            ((ObjectNode) n).put("_status", r.statusCode());
            return n;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(method + " " + path + " interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException(method + " " + path, e);
        }
    }

    static void registerAndJoin(URI url, String key, String id) {
        CrashRestartTest.ok(call(url, key, "POST", "/v1/teams/" + TEAM + "/agents", "{\"agentId\":\"" + id
                + "\",\"name\":\"Agent " + id + "\",\"role\":\"worker\",\"graceMisses\":1}"));
        CrashRestartTest.ok(call(url, key, "POST", "/v1/teams/" + TEAM + "/agents/" + id + "/join", null));
    }

    static String status(URI url, String key, String id) {
        return CrashRestartTest.ok(call(url, key, "GET", "/v1/teams/" + TEAM + "/agents/" + id, null))
                .get("status").asText();
    }

    /** Beats every {@link #BEAT} on a fixed rate; a beat held up (by the freeze) is followed by the next at once. */
    void beat(URI url, String key, String id, AtomicInteger accepted, List<String> refused) {
        long next = System.nanoTime();
        while (beating) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                continue;
            }
            JsonNode answer;
            try {
                answer = call(url, key, "POST", "/v1/teams/" + TEAM + "/agents/" + id + "/heartbeat", "{}");
            } catch (IllegalStateException e) {
                if (beating) {
                    refused.add(id + ": " + e);
                }
                return;
            }
            if (answer.get("_status").asInt() == 200) {
                accepted.incrementAndGet();
            } else {
                refused.add(id + ": " + answer);
            }
            next = Math.max(next + BEAT.toNanos(), System.nanoTime());
        }
    }
}
