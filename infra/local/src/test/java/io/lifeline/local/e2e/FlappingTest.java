package io.lifeline.local.e2e;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.AlertSink;
import io.lifeline.local.stack.TestStack;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Flapping (docs/alerts-noise.md), end to end in Lifeline Local with the template's rules, transformers, digest flow
 * and default thresholds (more than 4 changes between alive and down in 600 s; stable for 600 s), every destination
 * on a loopback sink: an agent crash-looping (a reported failure and a rejoin, a change every 2 s on the test clock
 * for 2 minutes) is named once on each destination, none of its later deaths or recoveries reaches a person, every
 * change is still a transition and an event, the agent view shows the flag, and one resolve follows once it has
 * been stable for the window.
 */
@Timeout(180)
@Tag("e2e")
class FlappingTest {
    private static final Instant T0 = TestStack.START;
    private static final String TEAM = "loop";

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static long count(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type)).count();
    }

    @Test
    void crashLoopForTwoMinutes_isOneFlappingNotice_noFurtherDeathAlerts_andOneResolveWhenStable() throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack().build()) {
            String key = s.key(TEAM, Scope.ADMIN);
            Map<String, String> agent = Map.of("team", TEAM, "agentId", "crashy");
            ok(s.send("register", key, Map.of("team", TEAM), null,
                    "{\"agentId\":\"crashy\",\"name\":\"crashy\",\"role\":\"worker\"}"));
            at(s, 1);
            ok(s.send("join", key, agent, null, null));
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            // A change every 2 s for 2 minutes: fail, rejoin, fail, ... (60 changes, the last a rejoin).
            List<Integer> slackAfterFlag = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                at(s, 10 + 2 * i);
                if (i % 2 == 0) {
                    ok(s.send("fail", key, agent, null, "{\"reason\":\"exit 1\"}"));
                } else {
                    ok(s.send("join", key, agent, null, null));
                }
                s.pump.drain();
                AlertSink.settled(s);
                if (count(s, "AgentFlapping") > 0) {
                    slackAfterFlag.add(sink.slack().size());
                }
            }
            assertEquals(1, count(s, "AgentFlapping"), "one flapping notice");
            List<JsonNode> flapping = sink.slack().stream()
                    .filter(m -> m.path("text").asText().contains("is flapping")).toList();
            assertEquals(1, flapping.size(), sink.slack()::toString);
            assertEquals(1, sink.pagerDuty("trigger").stream()
                    .filter(b -> b.path("dedup_key").asText().equals("lifeline/loop/crashy/flapping")).count());
            assertEquals(1, AlertSink.topic(s).stream().filter(m -> m.startsWith("FlappingAlertRule")).count());
            // From the flag on, nothing more reaches Slack, PagerDuty or the topic for the agent's changes.
            assertFalse(slackAfterFlag.isEmpty());
            assertEquals(slackAfterFlag.get(0), sink.slack().size(), sink.slack()::toString);
            int flaggedAt = 0;
            List<JsonNode> changes = s.bus.delivered().stream()
                    .filter(d -> d.detailType().equals("AgentStatusChanged"))
                    .map(d -> d.event().path("detail")).toList();
            assertEquals(61, changes.size(), "every change is an event (the first join and the 60)");
            for (JsonNode c : changes) {
                if (c.has("flapping")) {
                    flaggedAt++;
                }
            }
            assertTrue(flaggedAt >= 55, "the changes from the flag on carry it: " + flaggedAt);
            // Before the flag (the third death, the fifth change): the first death and its recovery alerted one
            // by one as ever; the second death fell in the first one's minute, so it waits for that window's
            // digest, and its return (the window's agents all back) resolves the burst. From the flag on: nothing.
            Map<String, Long> byRule = new TreeMap<>();
            AlertSink.topic(s).forEach(m -> byRule.merge(m.substring(0, m.indexOf(' ')), 1L, Long::sum));
            assertEquals(Map.of("DeathAlertRule", 1L, "RecoveryAlertRule", 1L, "BurstResolvedAlertRule", 1L,
                    "FlappingAlertRule", 1L), byRule, AlertSink.topic(s)::toString);
            assertEquals(4, sink.slack().size(), sink.slack()::toString);
            assertEquals(List.of(2L), sink.pagerDuty("trigger").stream()
                    .filter(b -> b.path("dedup_key").asText().equals("lifeline/loop/crashy"))
                    .map(b -> b.path("payload").path("custom_details").path("seq").asLong()).toList(),
                    "one page, for the first death");
            long deathAlertsAfterFlag = AlertSink.topic(s).stream()
                    .filter(m -> m.startsWith("DeathAlertRule") || m.startsWith("RecoveryAlertRule")).count();
            assertTrue(deathAlertsAfterFlag <= 4, "only the changes before the flag: " + AlertSink.topic(s));
            assertEquals(List.of(), s.bus.deadLetters());

            // Every change is a transition record and in the events route.
            JsonNode transitions = ok(s.send("transitions", key, agent, Map.of("limit", "100"), null)).body();
            assertEquals(61, transitions.get("transitions").size(), "the join and the 60 changes");
            // The agent view shows the flag.
            JsonNode view = ok(s.send("get-agent", key, agent, null, null)).body();
            assertTrue(view.path("flapping").has("since"), view::toString);
            JsonNode list = ok(s.send("list-agents", key, Map.of("team", TEAM), null, null)).body();
            assertTrue(list.toString().contains("\"flapping\""), list::toString);

            // Not stable yet at the flag's first check: the flow waits for the stable window after the newest change.
            at(s, 10 + 2 * 59 + 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);
            assertEquals(0, count(s, "AgentFlappingResolved"));
            at(s, 10 + 2 * 59 + 601);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);
            assertEquals(1, count(s, "AgentFlappingResolved"), "one resolve once stable");
            assertEquals(1, sink.slack().stream()
                    .filter(m -> m.path("text").asText().contains("is no longer flapping")).count());
            assertEquals(1, sink.pagerDuty("resolve").stream()
                    .filter(b -> b.path("dedup_key").asText().equals("lifeline/loop/crashy/flapping")).count());
            // The window's digest (its flow's wait ran with the flag's check here) carries the second death, the
            // one before the flag that went to the digest; it is the only other message.
            assertEquals(1, count(s, "AlertDigest"));
            assertEquals(6, sink.slack().size(), sink.slack()::toString);
            JsonNode after = ok(s.send("get-agent", key, agent, null, null)).body();
            assertFalse(after.has("flapping"), after::toString);
            JsonNode log = ok(s.send("events", key, Map.of("team", TEAM), Map.of("type", "AgentFlappingResolved"),
                    null)).body();
            assertEquals(1, log.get("events").size(), log::toString);
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }

    /**
     * A crash loop under a host daemon (docs/alerts-noise.md): each crash report claims the daemon's restart
     * ({@code restartInSeconds}, its backoff) and the daemon's join follows, four times, then the give-up. The loop is
     * flagged at its third crash as ever; its claimed deaths and joins reach nobody, the give-up is not held by the
     * flag: exactly one page for the loop and one for the give-up, and the revive flow never moves it to restarting.
     */
    @Test
    void aHostDaemonsCrashLoop_isOnePageForTheFlagAndOneForTheGiveUp_andTheReviveFlowNeverRestartsIt()
            throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack().build()) {
            String key = s.key(TEAM, Scope.ADMIN);
            Map<String, String> agent = Map.of("team", TEAM, "agentId", "looper");
            ok(s.send("register", key, Map.of("team", TEAM), null,
                    "{\"agentId\":\"looper\",\"name\":\"looper\",\"role\":\"worker\",\"hostId\":\"h1\"}"));
            at(s, 1);
            ok(s.send("join", key, agent, null, null));
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            int[] backoff = {0, 2, 4, 8};
            double t = 10;
            for (int i = 0; i < backoff.length; i++) {
                at(s, t);
                ok(s.send("fail", key, agent, null, "{\"reason\":\"crash " + (i + 1) + " of 5 in 10 min: exited with "
                        + "status 1\",\"restartInSeconds\":" + backoff[i] + ",\"restartsLastHour\":" + i + "}"));
                s.pump.drain();
                s.stepFunctions.runDue();
                t += backoff[i] + 0.5;
                at(s, t);
                ok(s.send("join", key, agent, null, null));
                s.pump.drain();
                s.stepFunctions.runDue();
                t += 0.5;
            }
            at(s, t);
            ok(s.send("fail", key, agent, null, "{\"reason\":\"5 crashes in 10 min; exited with status 1\","
                    + "\"giveUp\":true,\"restartsLastHour\":4}"));
            s.pump.drain();
            // Every revive execution waits out its claim and ends: none restarts the agent.
            at(s, t + 120);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);

            JsonNode transitions = ok(s.send("transitions", key, agent, Map.of("limit", "100"), null)).body();
            assertEquals(10, transitions.get("transitions").size(), transitions::toString);
            transitions.get("transitions").forEach(c -> assertFalse("restarting".equals(c.path("to").asText()),
                    transitions::toString));
            Map<String, Long> byRule = new TreeMap<>();
            AlertSink.topic(s).forEach(m -> byRule.merge(m.substring(0, m.indexOf(' ')), 1L, Long::sum));
            assertEquals(Map.of("FlappingAlertRule", 1L, "DeathAlertRule", 1L), byRule, AlertSink.topic(s)::toString);
            assertEquals(2, sink.slack().size(), sink.slack()::toString);
            assertTrue(sink.slack().get(1).path("text").asText().contains("-> dead_failed_revive"),
                    sink.slack()::toString);
            assertEquals(List.of("lifeline/loop/looper/flapping", "lifeline/loop/looper"), sink.pagerDuty("trigger")
                    .stream().map(b -> b.path("dedup_key").asText()).toList());
            assertEquals(List.of(), sink.pagerDuty("resolve"));
            JsonNode revivals = ok(s.send("revivals", key, agent, null, null)).body().get("revivals");
            assertEquals(4, revivals.size(), "one execution per crash: " + revivals);
            revivals.forEach(r -> assertFalse("in_progress".equals(r.path("outcome").asText()), revivals::toString));
            assertTrue(revivals.toString().contains("host_restarting"), "the flow waited out a claim: " + revivals);
            JsonNode view = ok(s.send("get-agent", key, agent, null, null)).body();
            assertEquals("dead_failed_revive", view.path("status").asText());
            assertEquals(4, view.path("stats").path("restartsLastHour").asInt(), view::toString);
            assertTrue(view.path("flapping").has("since"), "the flag still shows: " + view);
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }
}
