package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.app.LocalEngine;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.testing.MutableClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restart of Lifeline Local longer than stale-after does not blame agents for Local's own outage: after a
 * start, the sweep judges each alive agent only after one full stale-after from the start; after that window
 * an agent that stays silent is judged as before. A real stop and start of Local on one data dir; the clock is
 * a test clock (the outage is a jump of it), the sweeps run on Local's own scheduler and are counted, not timed.
 */
@Timeout(120)
@Tag("e2e")
class RestartGraceTest {
    static final String TEAM = LifelineLocal.LOCAL_TEAM;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dataDir;
    final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T10:00:00Z"));
    final List<String> sweeps = new CopyOnWriteArrayList<>();

    @BeforeEach
    void captureSweeps() {
        Log.sink(line -> {
            if (line.contains("\"msg\":\"sweep\"")) {
                sweeps.add(line);
            }
        });
    }

    @AfterEach
    void restoreLog() {
        Log.sink(null);
    }

    @Test
    void restartLongerThanStaleAfter_judgesNoAgentForOneStaleAfterFromTheStart_thenJudgesTheSilentOnes()
            throws Exception {
        String key;
        try (LifelineLocal first = start()) {
            key = first.adminKey();
            for (String agent : List.of("beater", "silent")) {
                assertEquals(201, send(first.url(), key, "POST", "/agents",
                        "{\"agentId\":\"" + agent + "\",\"name\":\"" + agent + "\",\"role\":\"worker\"}").statusCode());
                assertEquals(200, send(first.url(), key, "POST", "/agents/" + agent + "/join", null).statusCode());
                assertEquals(200, send(first.url(), key, "POST", "/agents/" + agent + "/heartbeat", "{}").statusCode());
            }
        }
        clock.advance(Duration.ofMinutes(10)); // Local is down for 10 min; stale-after is 60 s
        sweeps.clear(); // count the second Local's sweeps only

        try (LifelineLocal second = start()) {
            URI url = second.url();
            awaitSweeps(3);
            assertTrue(sweeps.get(2).contains("\"aliveSeen\":2"), "the sweeps saw both agents: " + sweeps.get(2));
            for (String agent : List.of("beater", "silent")) {
                JsonNode view = agent(url, key, agent);
                assertEquals("ready", view.get("status").asText(), view.toString());
                assertEquals(0, view.get("consecutiveMisses").asInt(), "no miss within the window: " + view);
            }
            // The beater's client, which kept beating through the outage, is heard again: alive, no rejoin.
            assertEquals(200, send(url, key, "POST", "/agents/beater/heartbeat", "{}").statusCode());

            clock.advance(Duration.ofSeconds(61)); // one stale-after from the start, and a moment more
            int before = sweeps.size();
            awaitSweeps(before + 3);
            JsonNode silent = agent(url, key, "silent");
            assertTrue(silent.get("consecutiveMisses").asInt() >= 1 || "dead".equals(silent.get("status").asText()),
                    "past the window the silent agent is judged: " + silent);
        }
        // The stream pump's checkpoints, written by the second run, are the owner's only (DataDirModesTest has the rest).
        Path checkpoints = dataDir.resolve(LocalEngine.STREAM_CHECKPOINTS_FILE);
        assertTrue(Files.exists(checkpoints), "the pump checkpointed");
        assertEquals("rw-------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(checkpoints)));
    }

    @Test
    void restartOnADataDir_replaysNoEvent_andANewWriteGivesExactlyOne() throws Exception {
        String key;
        List<String> firstEvents;
        try (LifelineLocal first = start()) {
            key = first.adminKey();
            join(first.url(), key, "before");
            awaitStatusEvents(first, "before", 1);
            // The outbox finishes a change after its events are on the bus (the event log, then the agent's published
            // watermark, "ps"), and the pump checkpoints the page after that: this run stops once both are done.
            Path checkpoints = dataDir.resolve(LocalEngine.STREAM_CHECKPOINTS_FILE);
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.exists(checkpoints) || unfinished(first) > 0) {
                assertTrue(System.nanoTime() < end, "the first run's outbox finished and its pump checkpointed");
                Thread.sleep(20); // a bounded poll for the outbox and the pump
            }
            firstEvents = statusEvents(first).stream().map(d -> d.event().get("detail").toString()).toList();
        }

        try (LifelineLocal second = start()) {
            // The reopened engine's stream is the same, its records kept: the pump goes on after the first run's
            // checkpoint, so the first run's records are not delivered again.
            join(second.url(), key, "after");
            awaitStatusEvents(second, "after", 1);
            // The pump delivers in the stream's order: a replayed event of the first run would be here already.
            assertEquals(List.of("after"), statusEvents(second).stream()
                    .map(d -> d.event().get("detail").get("agentId").asText()).toList(),
                    () -> "first run: " + firstEvents + "; second run: " + statusEvents(second).stream()
                            .map(d -> d.event().get("detail").toString()).toList());
        }
    }

    /** Agents whose newest transition ("tseq") the outbox has not finished (its watermark "ps" below it). */
    private static long unfinished(LifelineLocal local) {
        return local.dynamo().scan(r -> r.tableName(local.tables().live())).items().stream()
                .filter(i -> i.containsKey("tseq"))
                .filter(i -> !i.containsKey("ps") || Long.parseLong(i.get("ps").n()) < Long.parseLong(i.get("tseq").n()))
                .count();
    }

    private static void join(URI url, String key, String agent) throws Exception {
        assertEquals(201, send(url, key, "POST", "/agents",
                "{\"agentId\":\"" + agent + "\",\"name\":\"" + agent + "\",\"role\":\"worker\"}").statusCode());
        assertEquals(200, send(url, key, "POST", "/agents/" + agent + "/join", null).statusCode());
    }

    private static List<LocalEventBus.Delivered> statusEvents(LifelineLocal local) {
        return local.bus().delivered().stream().filter(d -> d.detailType().equals("AgentStatusChanged")).toList();
    }

    private static void awaitStatusEvents(LifelineLocal local, String agent, int count) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (statusEvents(local).stream()
                .filter(d -> agent.equals(d.event().get("detail").get("agentId").asText())).count() < count) {
            assertTrue(System.nanoTime() < end, "no AgentStatusChanged event for " + agent + ": "
                    + statusEvents(local));
            Thread.sleep(20); // a bounded poll for the outbox's event
        }
    }

    private LifelineLocal start() throws Exception {
        return LifelineLocal.start(new LifelineLocal.Options(0, dataDir, TestStack.template(),
                Map.of("StaleAfterSeconds", "60", "SweepIntervalMillis", "100", "SelfPreservationMinAlive", "100000"),
                clock));
    }

    private void awaitSweeps(int count) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (sweeps.size() < count) {
            assertTrue(System.nanoTime() < end, "Local's scheduler ran " + sweeps.size() + " sweeps, not " + count);
            Thread.sleep(20); // a bounded poll for sweeps that run on Local's own schedule
        }
    }

    private static JsonNode agent(URI url, String key, String agentId) throws Exception {
        HttpResponse<String> r = send(url, key, "GET", "/agents/" + agentId, null);
        assertEquals(200, r.statusCode(), r.body());
        return Json.parse(r.body());
    }

    private static HttpResponse<String> send(URI url, String key, String method, String path, String body)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(url.resolve("/v1/teams/" + TEAM + path))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
