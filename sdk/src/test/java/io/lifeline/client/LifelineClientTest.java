package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.model.AgentChanges;
import io.lifeline.client.model.AgentList;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.BatchEntry;
import io.lifeline.client.model.BatchResult;
import io.lifeline.client.model.EventList;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.NewTask;
import io.lifeline.client.model.Pause;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.Stats;
import io.lifeline.client.model.TaskChange;
import io.lifeline.client.model.Transitions;
import io.lifeline.local.app.LifelineLocal;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("e2e")
class LifelineClientTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @Test
    void registerJoinHeartbeatLeave_happyPath_walksTheStateMachine() {
        AgentView registered = client.register(RegisterAgent.of("sdk-1", "First", "worker").withHost("h-sdk"));
        assertEquals("offline", registered.status());
        assertEquals("h-sdk", registered.hostId());

        AgentView joined = client.join("sdk-1");
        assertEquals("ready", joined.status());
        assertNotNull(joined.heartbeatIntervalSeconds());

        HeartbeatResult beat = client.heartbeat("sdk-1", Heartbeat.status("working")
                .withStats(new Stats(3L, 2L, 1L, 10L)).withMetadata(Map.of("task", "x")));
        assertTrue(beat.success());
        assertEquals("working", beat.agentStatus());
        assertTrue(beat.nextDeadline().isAfter(beat.heartbeatTs()));

        AgentView one = client.agent("sdk-1");
        assertEquals(3L, one.stats().messagesProcessed());
        assertEquals("x", one.metadata().get("task").asText());

        AgentView left = client.leave("sdk-1", "done");
        assertEquals("offline", left.status());
        assertFalse(client.transitions("sdk-1", 10).transitions().isEmpty());
    }

    @Test
    void allTransitions_followsTheCursorPageByPage_andGetsEveryChangeOnce() throws Exception {
        client.register(RegisterAgent.of("sdk-pages", "Pages", "worker"));
        client.join("sdk-pages");
        client.leave("sdk-pages", "done");
        client.join("sdk-pages");
        client.leave("sdk-pages", "done");
        // The outbox records the history the pages are read from; Local runs it in the background.
        List<Long> seqs = List.of();
        for (int i = 0; i < 200 && seqs.size() < 4; i++) {
            seqs = client.allTransitions("sdk-pages").stream().map(t -> t.seq()).toList();
            if (seqs.size() < 4) {
                Thread.sleep(50);
            }
        }
        assertEquals(List.of(4L, 3L, 2L, 1L), seqs);
        Transitions first = client.transitions("sdk-pages", 3, null);
        assertEquals(3, first.transitions().size());
        Transitions rest = client.transitions("sdk-pages", 3, first.nextCursor());
        assertEquals(1, rest.transitions().size());
        assertEquals(null, rest.nextCursor());
    }

    @Test
    void heartbeat_whenAgentOffline_throwsRejoinRequiredWithCodeAndStatus() {
        client.register(RegisterAgent.of("sdk-off", "Off", "worker"));
        LifelineApiException e = assertThrows(LifelineApiException.class,
                () -> client.heartbeat("sdk-off", Heartbeat.empty()));
        assertEquals(409, e.status());
        assertEquals("REJOIN_REQUIRED", e.code());
        assertTrue(e.rejoinRequired());
        assertEquals("offline", e.agentStatus());
    }

    @Test
    void agent_whenUnknown_throwsAgentNotFound() {
        LifelineApiException e = assertThrows(LifelineApiException.class, () -> client.agent("nobody-here"));
        assertEquals(404, e.status());
        assertEquals("AGENT_NOT_FOUND", e.code());
    }

    @Test
    void heartbeats_batchWithAnOfflineAgent_answersAResultPerEntryInOrder() {
        client.register(RegisterAgent.of("sdk-b1", "B1", "worker"));
        client.register(RegisterAgent.of("sdk-b2", "B2", "worker"));
        client.join("sdk-b1");
        BatchResult r = client.heartbeats(List.of(new BatchEntry("sdk-b1", Heartbeat.empty()),
                new BatchEntry("sdk-b2", Heartbeat.empty())));
        assertEquals(2, r.results().size());
        assertEquals("sdk-b1", r.results().get(0).agentId());
        assertTrue(r.results().get(0).success());
        assertFalse(r.results().get(1).success());
        assertTrue(r.results().get(1).needsRejoin());
    }

    @Test
    void heartbeats_moreThan25_refusedBeforeSending() {
        List<BatchEntry> many = new ArrayList<>();
        for (int i = 0; i < 26; i++) {
            many.add(new BatchEntry("a" + i, null));
        }
        assertThrows(IllegalArgumentException.class, () -> client.heartbeats(many));
    }

    @Test
    void tasks_createClaimComplete_movesAgentWorkingThenReady() {
        client.register(RegisterAgent.of("sdk-t", "T", "worker"));
        client.join("sdk-t");
        assertEquals("pending", client.createTask(new NewTask("task-1", "Do it", null)).status());
        TaskChange claimed = client.claimTask("task-1", "sdk-t");
        assertEquals("working", claimed.agentStatus());
        assertEquals("in_progress", claimed.task().status());
        TaskChange done = client.completeTask("task-1", "sdk-t", "ok");
        assertEquals("ready", done.agentStatus());
        assertEquals("done", client.tasks("done").tasks().get(0).status());
    }

    @Test
    void failPauseResumeCleanup_onOneAgent_answerTheAgent() {
        client.register(RegisterAgent.of("sdk-f", "F", "worker"));
        client.join("sdk-f");
        AgentView paused = client.pause("sdk-f", Pause.lasting(Duration.ofMinutes(5), "maintenance"));
        assertNotNull(paused.pausedUntil());
        assertEquals("maintenance", paused.pauseReason());
        assertTrue(client.resume("sdk-f").pausedUntil() == null);
        assertEquals("dead", client.fail("sdk-f", "crashed").status());
        assertEquals("offline", client.cleanup("sdk-f", null).status());
        assertEquals("transient", client.reportError("sdk-f", "upstream timed out").category());
    }

    @Test
    void teamRoutes_settingsEventsKeysInbox_answerTyped() {
        assertEquals("local", client.settings().team());
        assertEquals("sdk-1x", client.updateSettings(Map.of("leaderAgentId", "sdk-1x")).leaderAgentId());
        assertNotNull(client.pauseTeam(Pause.lasting(Duration.ofMinutes(1), "deploy")).pausedUntil());
        assertTrue(client.resumeTeam().pausedUntil() == null);
        assertNotNull(client.events(null, 5).events());
        var key = client.createKey("agent", "fleet");
        assertNotNull(key.key());
        assertTrue(client.keys().keys().stream().anyMatch(k -> k.keyId().equals(key.keyId())));
        LifelineClient agentClient = LifelineClient.builder().url(local.url()).team("local").apiKey(key.key()).build();
        LifelineApiException e = assertThrows(LifelineApiException.class,
                () -> agentClient.register(RegisterAgent.of("nope", "N", "w")));
        assertEquals(403, e.status());
        assertEquals("INSUFFICIENT_SCOPE", e.code());
        client.revokeKey(key.keyId());
        client.register(RegisterAgent.of("sdk-i", "I", "worker"));
        assertEquals("sdk-i", client.inbox("sdk-i", 5).agentId());
        assertEquals(0, client.hostCommands("no-such-host").count());
        assertEquals("sdk-i", client.revivals("sdk-i", 5).agentId());
    }

    /** Spins (at most a millisecond) until the clock leaves this millisecond, so the next change is stamped later. */
    static void nextMillisecond() {
        long ms = System.currentTimeMillis();
        while (System.currentTimeMillis() <= ms) {
            Thread.onSpinWait();
        }
    }

    private static List<String> ids(EventList list) {
        return list.events().stream().map(EventView::eventId).toList();
    }

    @Test
    void events_withSinceUntilAgentTypeLimit_answerOnlyTheMatchingEvents() throws Exception {
        client.register(RegisterAgent.of("sdk-ev", "Ev", "worker").withStaleAfterSeconds(600));
        client.register(RegisterAgent.of("sdk-ev2", "Ev2", "worker").withStaleAfterSeconds(600));
        client.join("sdk-ev");
        client.join("sdk-ev2");
        nextMillisecond();
        client.heartbeat("sdk-ev", Heartbeat.status("working"));
        nextMillisecond();
        client.leave("sdk-ev", "done");
        EventQuery mine = EventQuery.all().withAgent("sdk-ev");
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> client.events(mine).count() >= 3));

        // The agent's own events, newest first, at the times the server reports.
        EventList all = client.events(mine);
        assertEquals(3, all.count());
        assertEquals(List.of("offline", "working", "ready"),
                all.events().stream().map(e -> e.detail().path("to").asText()).toList());
        assertTrue(all.events().stream().allMatch(e -> "sdk-ev".equals(e.detail().path("agentId").asText())));
        EventView left = all.events().get(0);
        EventView working = all.events().get(1);
        EventView joined = all.events().get(2);
        assertTrue(joined.at().isBefore(working.at()) && working.at().isBefore(left.at()), ids(all).toString());

        // since and until are inclusive; together they make a window.
        assertEquals(List.of(left.eventId(), working.eventId()), ids(client.events(mine.withSince(working.at()))));
        assertEquals(List.of(working.eventId(), joined.eventId()), ids(client.events(mine.withUntil(working.at()))));
        assertEquals(List.of(working.eventId()),
                ids(client.events(mine.withSince(working.at()).withUntil(working.at()))));
        assertEquals(List.of(working.eventId()), ids(client.events(mine.withSince(joined.at().plusMillis(1))
                .withUntil(left.at().minusMillis(1)))));
        assertEquals(List.of(left.eventId()), ids(client.events(mine.withLimit(1))));
        assertEquals(3, client.events(mine.withType("AgentStatusChanged")).count());
        assertEquals(0, client.events(mine.withType("TasksReassigned")).count());

        // Without agentId, the team's events in the window: this agent's and sdk-ev2's join, nothing outside it.
        EventList window = client.events(EventQuery.all().withSince(joined.at()).withUntil(left.at()).withLimit(100));
        assertTrue(ids(window).containsAll(ids(all)), ids(window).toString());
        assertTrue(window.events().stream().anyMatch(e -> "sdk-ev2".equals(e.detail().path("agentId").asText())));
        assertTrue(window.events().stream().noneMatch(e -> e.at().isBefore(joined.at()) || e.at().isAfter(left.at())));
        assertTrue(ids(all).stream().noneMatch(id -> id.contains("sdk-ev2")));
        // The older two-argument method still answers the team's events.
        assertEquals(1, client.events("AgentStatusChanged", 1).count());

        // A page at a time: each page's nextCursor asks for the next, the last has none, the walk is the whole.
        List<String> walked = new ArrayList<>();
        EventQuery page = mine.withLimit(1);
        for (int pages = 0; page != null; pages++) {
            EventList got = client.events(page);
            walked.addAll(ids(got));
            page = got.nextCursor() == null ? null : page.withCursor(got.nextCursor());
            assertTrue(pages < 10);
        }
        assertEquals(ids(all), walked);
        assertEquals(null, all.nextCursor(), "one page held them all");
    }

    @Test
    void events_sinceAfterUntilOrOutOfRange_throwsInvalidQuery() {
        Instant t = Instant.parse("2026-03-01T12:00:00Z");
        for (EventQuery bad : List.of(EventQuery.all().withSince(t.plusSeconds(1)).withUntil(t),
                EventQuery.all().withSince(Instant.parse("2300-01-01T00:00:00Z")),
                EventQuery.all().withUntil(Instant.parse("1969-12-31T23:59:59Z")))) {
            LifelineApiException e = assertThrows(LifelineApiException.class, () -> client.events(bad), bad.toString());
            assertEquals(400, e.status());
            assertEquals("INVALID_QUERY", e.code());
        }
    }

    @Test
    void events_query_isUrlEncoded_andLeavesOutWhatIsNotSet() throws IOException {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(200, "{\"count\":0,\"events\":[]}");
            LifelineClient c = stubClient(stub.url().toString(), new ArrayList<>());
            c.events(EventQuery.all().withSince(Instant.parse("2026-03-01T12:00:00.5Z")).withAgent("a.1")
                    .withType("A&b=c d").withLimit(7).withCursor("ZTE6dDpF"));
            c.events(EventQuery.all());
            c.events(null, null);
            assertEquals("/v1/teams/t/events", stub.seen().get(0).path());
            assertEquals("since=2026-03-01T12%3A00%3A00.500Z&agentId=a.1&type=A%26b%3Dc%20d&limit=7&cursor=ZTE6dDpF",
                    stub.seen().get(0).query());
            assertEquals(null, stub.seen().get(1).query());
            assertEquals(null, stub.seen().get(2).query());
        }
    }

    @Test
    void revive_offlineAgent_refusedAsInvalidTransition() {
        client.register(RegisterAgent.of("sdk-r", "R", "worker").withHost("h-r"));
        LifelineApiException e = assertThrows(LifelineApiException.class, () -> client.revive("sdk-r"));
        assertEquals(409, e.status());
    }

    /** Retries, against a stub that injects faults. */
    @Nested
    class Retries {
        @Test
        void call_on503ThenSuccess_retriesAfterBackoffAndAnswers() throws IOException {
            try (StubServer stub = new StubServer()) {
                stub.then(503, "{\"success\":false,\"code\":\"THROTTLED\",\"error\":\"slow down\"}", null)
                        .then(429, "{\"success\":false,\"code\":\"THROTTLED\",\"error\":\"slow down\"}", null)
                        .otherwise(200, "{\"success\":true,\"agentStatus\":\"ready\"}");
                List<Duration> slept = new ArrayList<>();
                LifelineClient c = stubClient(stub.url().toString(), slept);
                assertTrue(c.heartbeat("a1", null).success());
                assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4)), slept);
                assertEquals(3, stub.seen().size());
            }
        }

        @Test
        void call_always503_waits2s4s8sThenThrowsWithCode() throws IOException {
            try (StubServer stub = new StubServer()) {
                stub.otherwise(503, "{\"success\":false,\"code\":\"STORE_UNAVAILABLE\",\"error\":\"down\"}");
                List<Duration> slept = new ArrayList<>();
                LifelineClient c = stubClient(stub.url().toString(), slept);
                LifelineApiException e = assertThrows(LifelineApiException.class, () -> c.heartbeat("a1", null));
                assertEquals(503, e.status());
                assertEquals("STORE_UNAVAILABLE", e.code());
                assertEquals(List.of(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8)), slept);
                assertEquals(4, stub.seen().size());
            }
        }

        @Test
        void call_retryAfterLongerThanBackoff_waitsRetryAfter() throws IOException {
            try (StubServer stub = new StubServer()) {
                stub.then(503, "{\"code\":\"CONTENDED\"}", "7").otherwise(200, "{\"success\":true}");
                List<Duration> slept = new ArrayList<>();
                stubClient(stub.url().toString(), slept).heartbeat("a1", null);
                assertEquals(List.of(Duration.ofSeconds(7)), slept);
            }
        }

        @Test
        void call_on4xx_neverRetries() throws IOException {
            try (StubServer stub = new StubServer()) {
                stub.otherwise(400, "{\"success\":false,\"code\":\"INVALID_BODY\",\"error\":\"bad\"}");
                List<Duration> slept = new ArrayList<>();
                LifelineApiException e = assertThrows(LifelineApiException.class,
                        () -> stubClient(stub.url().toString(), slept).heartbeat("a1", null));
                assertEquals("INVALID_BODY", e.code());
                assertTrue(slept.isEmpty());
                assertEquals(1, stub.seen().size());
            }
        }

        @Test
        void call_whenNothingListens_retriesThenThrowsConnectionException() throws IOException {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            List<Duration> slept = new ArrayList<>();
            LifelineClient c = stubClient("http://127.0.0.1:" + port, slept);
            assertThrows(LifelineConnectionException.class, () -> c.agents());
            assertEquals(3, slept.size());
        }

        @Test
        void delay_withJitter_staysWithinTwentyPercentAboveBackoff() {
            RetryPolicy p = RetryPolicy.defaults();
            for (int i = 0; i < 50; i++) {
                long ms = p.delay(1, null).toMillis();
                assertTrue(ms >= 4000 && ms <= 4800, "delay " + ms);
            }
        }
    }

    @Test
    void agentPages_iteratesEveryPageOnce_asksAPageOnlyWhenReached_andAgentsJoinsThemAll() throws Exception {
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            mine.add("sdk-list-" + i);
            client.register(RegisterAgent.of("sdk-list-" + i, "Lister", "worker"));
        }
        List<String> seen = new ArrayList<>();
        int pages = 0;
        for (AgentList page : client.agentPages(null, 2)) {
            assertTrue(page.agents().size() <= 2, page::toString);
            page.agents().forEach(a -> seen.add(a.agentId()));
            pages++;
        }
        assertEquals(seen.stream().distinct().toList(), seen, "no agent twice");
        assertTrue(seen.containsAll(mine), seen::toString);
        assertEquals(seen.stream().sorted().toList(), seen, "in id order");
        assertEquals((seen.size() + 1) / 2, pages);
        assertEquals(seen, client.agents().agents().stream().map(AgentView::agentId).toList());

        AgentList first = client.agentPages(null, 1).iterator().next();
        assertEquals(1, first.count());
        assertNotNull(first.nextCursor(), "a page before others has a cursor");
        assertEquals(List.of(seen.get(1)), client.agentsPage(null, 1, first.nextCursor()).agents().stream()
                .map(AgentView::agentId).toList());
        LifelineApiException otherStatus = assertThrows(LifelineApiException.class,
                () -> client.agentsPage("dead", 1, first.nextCursor()));
        assertEquals("INVALID_QUERY", otherStatus.code());

        // The outbox moves the roster's status index in the background: a bounded wait for the join to show there.
        Instant before = client.agentsChangedSince(Instant.EPOCH, 1).nextChangedSince();
        client.join("sdk-list-3");
        boolean ready = false;
        for (int i = 0; i < 200 && !ready; i++) {
            ready = client.agents("ready").agents().stream().anyMatch(a -> a.agentId().equals("sdk-list-3"));
            if (!ready) {
                Thread.sleep(50);
            }
        }
        assertTrue(ready, "the list by status shows the agent once the outbox has passed");
        AgentChanges changed = client.agentsChangedSince(before, 100);
        assertTrue(changed.agents().stream().anyMatch(a -> a.agentId().equals("sdk-list-3")
                && a.status().equals("ready")), changed::toString);
        assertFalse(changed.truncated());
    }

    private static LifelineClient stubClient(String url, List<Duration> slept) {
        return LifelineClient.builder().url(url).team("t").apiKey("k")
                .retry(RetryPolicy.defaults().withJitter(() -> 0)).sleeper(slept::add).build();
    }
}
