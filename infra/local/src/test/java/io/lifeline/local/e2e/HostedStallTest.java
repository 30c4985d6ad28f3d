package io.lifeline.local.e2e;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.contract.heartbeats.HeartbeatCostTest;
import io.lifeline.local.stack.AlertSink;
import io.lifeline.local.stack.TestStack;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stall a host daemon judges, through the real handlers and outbox of Lifeline Local on its test clock. Under
 * {@code alert}: the daemon's {@code stalled} in a batch entry is one write of the agent's item (shown stalled, one
 * {@code AgentStalled}), the stalled agent's later beats are the host lease's one write as any hosted beat's, and its
 * end is one write more (one {@code AgentProgressResumed}). Under {@code restart}: the daemon's crash report with
 * {@code stalled} is a death with trigger {@code stalled}, counted by the flapping and burst rules as any death is
 * (the same alerts as {@code FlappingTest}'s crash loop of reported failures). Under {@code alert}, an agent whose
 * stream keeps going silent and coming back is counted by the flapping rule too (each stall's start a change into a
 * down status, its end the change back): flagged once, at its third stall as a crash loop is at its third death; its
 * later stalls and resumes reach no person, and the flag resolves once it is stable.
 */
@Timeout(180)
@Tag("e2e")
class HostedStallTest {
    private static final Instant T0 = TestStack.START;
    private static final String SILENT = "\"progressAgeMs\":25000,\"stallReason\":\"model stream silent\"";

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static long onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type)).count();
    }

    private static String batch(String entry) {
        return "{\"hostId\":\"box\",\"heartbeats\":[{\"agentId\":\"st0\"" + entry + "},{\"agentId\":\"st1\"}]}";
    }

    @Test
    void underAlert_theStallAndItsEnd_areOneItemWriteEach_andTheStalledAgentsBeatsCostTheLeaseAlone()
            throws Exception {
        HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
        try (TestStack s = TestStack.builder().interceptor(counter).build()) {
            ok(s.ready("st0"));
            ok(s.ready("st1"));
            at(s, 1);
            ok(s.team("batch-heartbeats", batch(",\"status\":\"working\",\"inTurn\":true")));
            at(s, 30);
            s.send("get-agent", s.adminKey, Map.of("team", TestStack.TEAM, "agentId", "st1"), null, null);
            counter.reset();

            ok(s.team("batch-heartbeats", batch("," + SILENT + ",\"stalled\":true")));
            assertEquals(List.of("HOST", "AGENT"), counter.updatedSortKeys, "the change: the lease and the item");
            JsonNode view = s.agentView("st0");
            assertEquals("working", view.get("status").asText(), "alert: alive, flagged");
            assertEquals("model stream silent", view.path("stalled").path("reason").asText(), view::toString);
            assertEquals(T0.plusSeconds(30).toString(), view.path("stalled").path("since").asText());
            assertEquals(T0.plusSeconds(5).toString(), view.path("lastProgressAt").asText(), "30 s less 25 s");
            s.pump.drain();
            assertEquals(1, onBus(s, "AgentStalled"));

            for (int i = 1; i <= 10; i++) {
                at(s, 30 + 10 * i);
                counter.reset();
                ok(s.team("batch-heartbeats", batch(",\"progressAgeMs\":" + (25000 + 10000 * i)
                        + ",\"stallReason\":\"model stream silent\"")));
                assertEquals(List.of("HOST"), counter.updatedSortKeys, "beat " + i + " of a stalled agent: the lease "
                        + "alone, 1/N of a write per hosted agent");
            }
            s.pump.drain();
            assertEquals(1, onBus(s, "AgentStalled"), "one event however long it lasts");
            assertEquals("model stream silent", s.agentView("st0").path("stalled").path("reason").asText());
            assertTrue(s.sweep().isEmpty(), "the sweep leaves the daemon's stall as it is");
            assertTrue(s.agentView("st0").has("stalled"));

            at(s, 200);
            counter.reset();
            ok(s.team("batch-heartbeats", batch(",\"progressAgeMs\":0,\"stalled\":false")));
            assertEquals(List.of("HOST", "AGENT"), counter.updatedSortKeys);
            assertFalse(s.agentView("st0").has("stalled"));
            s.pump.drain();
            assertEquals(1, onBus(s, "AgentProgressResumed"));
            assertEquals(1, onBus(s, "AgentStalled"));
        }
    }

    @Test
    void aStalledEntry_withoutTheProgressItWasJudgedFrom_isRefused_writingNothing() throws Exception {
        try (TestStack s = TestStack.builder().build()) {
            ok(s.ready("st0"));
            ok(s.ready("st1"));
            TestStack.Reply r = s.team("batch-heartbeats", batch(",\"stalled\":true"));
            assertEquals(400, r.status(), r.body()::toString);
            assertEquals("MISSING_FIELD", r.body().path("code").asText(), r.body()::toString);
            assertEquals(400, s.send("fail", s.adminKey, Map.of("team", TestStack.TEAM, "agentId", "st0"), null,
                    "{\"stallReason\":\"model stream silent\"}").status(), "a reason without the stall");
            assertEquals("ready", s.status("st0"));
        }
    }

    @Test
    void stallDeathsUnderRestart_areTriggerStalled_andCountInTheFlappingAndBurstRules_asAnyDeath() throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack().build()) {
            String team = "stalls";
            String key = s.key(team, Scope.ADMIN);
            Map<String, String> agent = Map.of("team", team, "agentId", "wedgy");
            ok(s.send("register", key, Map.of("team", team), null,
                    "{\"agentId\":\"wedgy\",\"name\":\"wedgy\",\"role\":\"worker\"}"));
            at(s, 1);
            ok(s.send("join", key, agent, null, null));
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            // A stall's death every 4 s for 2 minutes (its turn, its stall, its restart): 30 deaths, 30 rejoins. No
            // restart claim (restartInSeconds), as FlappingTest's crash reports: a claimed death reaches no person.
            for (int i = 0; i < 30; i++) {
                at(s, 10 + 4 * i);
                ok(s.send("heartbeat", key, agent, null, "{\"status\":\"working\",\"progressAgeMs\":0}"));
                at(s, 11 + 4 * i);
                ok(s.send("fail", key, agent, null, "{\"reason\":\"stalled (model stream silent), stopped\","
                        + "\"stalled\":true,\"stallReason\":\"model stream silent\"}"));
                at(s, 12 + 4 * i);
                ok(s.send("join", key, agent, null, null));
                s.pump.drain();
                AlertSink.settled(s);
            }
            JsonNode transitions = ok(s.send("transitions", key, agent, Map.of("limit", "100"), null)).body();
            long stalled = 0;
            for (JsonNode t : transitions.get("transitions")) {
                stalled += "stalled".equals(t.path("trigger").asText()) ? 1 : 0;
            }
            assertEquals(30, stalled, "every death's trigger is stalled");
            assertEquals(30, onBus(s, "AgentStalled"), "one AgentStalled a stall");
            assertEquals(30, onBus(s, "AgentProgressResumed"), "each ended by its new life's join");
            assertEquals(1, onBus(s, "AgentFlapping"), "flapping: named once");
            // As FlappingTest's crash loop: the first death and its recovery alerted one by one, the second held
            // for its window's digest (a burst) and resolved by its return, then the flag; nothing more reaches
            // people for the agent's deaths.
            Map<String, Long> byRule = new TreeMap<>();
            AlertSink.topic(s).stream().filter(m -> !m.startsWith("Stall"))
                    .forEach(m -> byRule.merge(m.substring(0, m.indexOf(' ')), 1L, Long::sum));
            assertEquals(Map.of("DeathAlertRule", 1L, "RecoveryAlertRule", 1L, "BurstResolvedAlertRule", 1L,
                    "FlappingAlertRule", 1L), byRule, AlertSink.topic(s)::toString);
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }

    @Test
    void underAlert_anAgentThatKeepsStalling_isFlaggedOnce_itsLaterStallsReachNobody_andTheFlagResolves()
            throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack().build()) {
            ok(s.ready("st0"));
            ok(s.ready("st1"));
            at(s, 1);
            ok(s.team("batch-heartbeats", batch(",\"status\":\"working\",\"inTurn\":true")));
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            // Four stalls 20 s apart, each ended by progress 10 s later: eight changes within the flapping window.
            for (int i = 0; i < 4; i++) {
                at(s, 30 + 20 * i);
                ok(s.team("batch-heartbeats", batch("," + SILENT + ",\"stalled\":true")));
                s.pump.drain();
                AlertSink.settled(s);
                at(s, 40 + 20 * i);
                ok(s.team("batch-heartbeats", batch(",\"progressAgeMs\":0,\"stalled\":false")));
                s.pump.drain();
                AlertSink.settled(s);
            }
            assertEquals("working", s.status("st0"), "alert: it stays working throughout");
            assertEquals(4, onBus(s, "AgentStalled"), "every stall is published");
            assertEquals(4, onBus(s, "AgentProgressResumed"));
            assertEquals(1, onBus(s, "AgentFlapping"), "flagged once");
            List<Boolean> held = s.bus.delivered().stream().filter(d -> d.detailType().equals("AgentStalled")
                    || d.detailType().equals("AgentProgressResumed"))
                    .map(d -> d.event().path("detail").has("flapping")).toList();
            assertEquals(List.of(false, false, false, false, true, true, true, true), held,
                    "from the third stall's start (the fifth change) on, each carries the flag");
            // As under restart: the first stall and its end one by one, the second held for its window's digest of
            // stalls (a burst, threshold 1) and its end resolving that burst, then the flag; nothing after it.
            Map<String, Long> byRule = new TreeMap<>();
            AlertSink.topic(s).forEach(m -> byRule.merge(m.substring(0, m.indexOf(' ')), 1L, Long::sum));
            assertEquals(Map.of("StallAlertRule", 2L, "StallBurstResolvedAlertRule", 1L, "FlappingAlertRule", 1L),
                    byRule, AlertSink.topic(s)::toString);
            assertEquals(1, sink.slack().stream()
                    .filter(m -> m.path("text").asText().contains("agent st0 of team " + TestStack.TEAM
                            + " is flapping: 5 changes")).count(), sink.slack()::toString);
            assertEquals(1, sink.pagerDuty("trigger").size(), "the flag's one page");
            assertTrue(s.agentView("st0").path("flapping").has("since"), "the agent view shows the flag");

            // Stable for the window after its newest change (the last resume, at 100 s): the check resolves it.
            at(s, 100 + 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);
            assertEquals(0, onBus(s, "AgentFlappingResolved"), "not stable yet");
            at(s, 100 + 601);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);
            assertEquals(1, onBus(s, "AgentFlappingResolved"));
            assertEquals(1, sink.pagerDuty("resolve").stream().filter(b -> b.path("dedup_key").asText()
                    .equals("lifeline/" + TestStack.TEAM + "/st0/flapping")).count(), "stable and working: resolved");
            assertFalse(s.agentView("st0").has("flapping"));
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }
}
