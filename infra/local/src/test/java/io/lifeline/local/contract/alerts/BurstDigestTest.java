package io.lifeline.local.contract.alerts;

import static io.lifeline.local.stack.Team.team;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.AlertSink;
import io.lifeline.local.stack.Team;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Digests for bursts (docs/alerts-noise.md), end to end in Lifeline Local with the template's rules, transformers,
 * digest flow and default thresholds (1 death a window one by one, windows of 60 s), every destination on a
 * loopback sink: 60 agents in 30 teams of 2 stop within 10 s; each window is at most 2 Slack messages (its first
 * death, its digest) and one PagerDuty incident (the digest joins the first death's key), all 60 deaths are counted
 * in the digests and reachable from them (the events route, the dashboard link), and nothing is dead-lettered;
 * when they are back, one resolve per window. Below the threshold, one alert per death as before. The fleet-wide
 * guard (another subject) is out of the way: it would hold a fleet this small.
 */
@Timeout(180)
@Tag("contract")
class BurstDigestTest {
    private static final Instant T0 = TestStack.START;

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static String windowOf(JsonNode body) {
        return body.path("window").asText();
    }

    @Test
    void sixtyAgentsOfThirtyTeamsStopWithinTenSeconds_atMostTwoSlackMessagesAndOneIncidentPerWindow()
            throws Exception {
        try (AlertSink sink = new AlertSink();
             TestStack s = sink.stack().parameter("FleetSelfPreservationMinAlive", "100000").build()) {
            List<Team> teams = new ArrayList<>();
            for (int t = 0; t < 30; t++) {
                teams.add(team(s, String.format("t%02d", t), 2));
            }
            // Each agent's last beat: spread over 10 s.
            int k = 0;
            for (Team t : teams) {
                for (String id : t.agents()) {
                    at(s, 20 + (k++ % 10));
                    ok(s.send("heartbeat", t.key(), Map.of("team", t.name(), "agentId", id), null, "{}"));
                }
            }
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            List<String> dead = new ArrayList<>();
            for (double sec = 30; sec <= 180 && dead.size() < 60; sec += 15) {
                at(s, sec);
                dead.addAll(s.sweep());
                s.pump.drain();
            }
            assertEquals(60, dead.size(), "all 60 died");
            AlertSink.settled(s);
            // The windows end; their digest flows run.
            at(s, 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);

            List<JsonNode> digests = s.bus.delivered().stream().filter(d -> d.detailType().equals("AlertDigest"))
                    .map(d -> d.event().path("detail")).toList();
            assertTrue(!digests.isEmpty() && digests.size() <= 2, digests::toString);
            Map<String, List<JsonNode>> slackByWindow = new TreeMap<>();
            List<JsonNode> slack = sink.slack();
            // Each Slack message is a death (its own window) or a digest (its window in the text).
            Set<String> windows = new HashSet<>();
            digests.forEach(d -> windows.add(windowOf(d)));
            for (JsonNode m : slack) {
                String text = m.path("text").asText();
                String w = windows.stream().filter(text::contains).findFirst().orElse("one by one");
                slackByWindow.computeIfAbsent(w, x -> new ArrayList<>()).add(m);
            }
            assertEquals(2 * digests.size(), slack.size(), slack::toString);
            assertTrue(slack.size() <= 2 * windows.size(), slack::toString);
            // PagerDuty: per window, one dedup key (the first death's, joined by the digest).
            Set<String> keys = new HashSet<>();
            sink.pagerDuty("trigger").forEach(b -> keys.add(b.path("dedup_key").asText()));
            assertEquals(digests.size(), keys.size(), sink.pagerDuty("trigger")::toString);
            for (JsonNode d : digests) {
                assertTrue(keys.contains(d.path("pagerDutyKey").asText()), d::toString);
                assertTrue(d.path("dashboard").asText().endsWith("#status=dead"), d::toString);
            }
            // All 60 counted: one by one (the windows' first deaths) and in the digests.
            int counted = digests.stream().mapToInt(d -> d.path("deaths").asInt()).sum();
            assertEquals(60, counted, digests::toString);
            int inDigests = digests.stream().mapToInt(d -> d.path("inDigest").asInt()).sum();
            assertEquals(60 - digests.size(), inDigests);
            // Bounded whatever the fleet: the ten largest teams, and how many teams in all.
            for (JsonNode d : digests) {
                int shown = 0;
                for (JsonNode c : d.path("byTeam")) {
                    shown += c.asInt();
                }
                assertTrue(d.path("byTeam").size() <= 10 && shown <= d.path("deaths").asInt(), d::toString);
                assertTrue(d.path("teams").asInt() >= d.path("byTeam").size(), d::toString);
            }
            assertTrue(digests.stream().mapToInt(d -> d.path("teams").asInt()).sum() >= 30, digests::toString);
            assertEquals(List.of(), s.bus.deadLetters());
            // Reachable: every death is in its team's events route, and the digest is in every team's it counts.
            int inViews = 0;
            for (Team t : teams) {
                JsonNode log = ok(s.send("events", t.key(), Map.of("team", t.name()),
                        Map.of("type", "AgentStatusChanged", "limit", "20"), null)).body();
                int deaths = 0;
                for (JsonNode e : log.get("events")) {
                    deaths += e.path("detail").path("to").asText().equals("dead") ? 1 : 0;
                }
                assertEquals(2, deaths, t.name());
                JsonNode digestLogged = ok(s.send("events", t.key(), Map.of("team", t.name()),
                        Map.of("type", "AlertDigest"), null)).body();
                assertTrue(digestLogged.get("count").asInt() >= 1, t.name() + " sees the digest that counts it");
                // Its own view: its deaths, and no other team.
                int own = 0;
                for (JsonNode e : digestLogged.get("events")) {
                    assertEquals(t.name(), e.path("detail").path("team").asText(), e::toString);
                    own += e.path("detail").path("deaths").asInt();
                    for (JsonNode agent : e.path("detail").path("agents")) {
                        assertTrue(t.agents().contains(agent.asText()), e::toString);
                    }
                }
                assertEquals(2, own, t.name() + "'s two deaths, in its views of the digests that count them");
                inViews += own;
            }
            assertEquals(60, inViews, "every death in its own team's view");

            // All back: one resolve per window on each destination, no other message.
            sink.received.clear();
            at(s, 400);
            for (Team t : teams) {
                for (String id : t.agents()) {
                    ok(s.send("join", t.key(), Map.of("team", t.name(), "agentId", id), null, null));
                }
            }
            s.pump.drain();
            AlertSink.settled(s);
            List<JsonNode> resolves = sink.pagerDuty("resolve");
            Set<String> resolved = new HashSet<>();
            resolves.forEach(r -> resolved.add(r.path("dedup_key").asText()));
            assertEquals(keys, resolved, resolves::toString);
            assertEquals(List.of(), sink.pagerDuty("trigger"));
            assertEquals(digests.size(), s.bus.delivered().stream()
                    .filter(d -> d.detailType().equals("AlertBurstResolved")).count());
            // The windows' first deaths recovered one by one only if they were back before the burst; here none.
            assertEquals(digests.size(), sink.slack().size(), sink.slack()::toString);
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }

    /** Below the threshold nothing changes: deaths in different windows are each alerted on their own. */
    @Test
    void deathsInDifferentWindows_areEachAlertedOnTheirOwn_andNoDigest() throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack().build()) {
            Team t = team(s, "solo", 3);
            Map<String, Integer> slackAfter = new LinkedHashMap<>();
            for (int i = 0; i < 3; i++) {
                at(s, 120 * i + 1);
                ok(s.send("fail", t.key(), Map.of("team", t.name(), "agentId", t.agents().get(i)), null,
                        "{\"reason\":\"oom\"}"));
                s.pump.drain();
                AlertSink.settled(s);
                slackAfter.put(t.agents().get(i), sink.slack().size());
            }
            assertEquals(Map.of("solo-a1", 1, "solo-a2", 2, "solo-a3", 3), slackAfter);
            assertEquals(3, sink.pagerDuty("trigger").size());
            s.clock.advance(Duration.ofMinutes(10));
            s.stepFunctions.runDue();
            assertEquals(0, s.bus.delivered().stream().filter(d -> d.detailType().startsWith("AlertBurst")
                    || d.detailType().equals("AlertDigest")).count());
        }
    }

    /**
     * The digest of a large window takes several steps (each answers {@code again} with where it stopped, and
     * {@code digestAt} now): the digest flow must call its step again while it answers so, through a Wait on
     * {@code $.digestAt}, or a window of many teams would never be sent.
     */
    @Test
    void theDigestFlow_runsItsStepAgainWhileTheStepAnswersAgain() throws Exception {
        JsonNode states = Json.parse(Files.readString(
                TestStack.templatePath().resolveSibling("infra/statemachine/digest.asl.json"))).path("States");
        String task = null;
        for (Iterator<Map.Entry<String, JsonNode>> it = states.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().path("Resource").asText().equals("${DigestFunctionArn}")) {
                task = e.getKey();
            }
        }
        assertTrue(task != null, "the digest's Task");
        JsonNode choice = states.path(states.path(task).path("Next").asText());
        String wait = null;
        for (JsonNode rule : choice.path("Choices")) {
            if (rule.toString().contains("\"$.again\"") && rule.toString().contains("\"BooleanEquals\":true")) {
                wait = rule.path("Next").asText();
            }
        }
        assertTrue(wait != null, "a Choice on $.again after the Task: " + choice);
        assertEquals("$.digestAt", states.path(wait).path("TimestampPath").asText());
        assertEquals(task, states.path(wait).path("Next").asText(), "the Wait leads back to the step");
    }
}
