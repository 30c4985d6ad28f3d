package io.lifeline.local.contract.sweep;

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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A dead box is not a deaf Lifeline, through the template's functions, the outbox and the alert rules on DynamoDB
 * Local, with the template's defaults (a team's guard from 4 alive at 0.5) and the test clock. Each beat comes from a
 * source address of its own choosing (the fixtures' {@code requestContext.http.sourceIp}).
 * <ul>
 *   <li>One box: 10 of a team's 11 agents beat from one address and go silent together, while the 11th (elsewhere)
 *       and another team keep beating: the 10 die, each of the alerts topic, Slack and PagerDuty gets one message
 *       for the incident (the team's {@code MassStaleSuspected}, not held, naming the address; PagerDuty's keyed by
 *       the team and the silence's since), each death carries the silence as its cause, and a revive is asked for
 *       each of them (they name a host).</li>
 *   <li>A deaf Lifeline: 8 of 10 agents silent, each from its own address: held as before (nobody dies, one
 *       {@code MassStaleSuspected} with the counts, since and why), shown on the team's settings; an admin's release
 *       lets the sweep mark them dead.</li>
 * </ul>
 */
@Timeout(120)
@Tag("contract")
class DeadBoxTest {
    private static final Instant T0 = TestStack.START;
    private static final TestStack.Opened STACKS = new TestStack.Opened();
    private static final String BOX = "203.0.113.7";
    private static AlertSink sink;

    @AfterAll
    static void stop() {
        STACKS.closeAll();
        if (sink != null) {
            sink.close();
        }
    }

    /** A team whose agents {@code ids} are registered (on host {@code hostId}, or none) and joined. */
    private static String team(TestStack s, String team, List<String> ids, String hostId) {
        String key = s.key(team, Scope.ADMIN);
        for (String id : ids) {
            ok(s.send("register", key, Map.of("team", team), null, "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\""
                    + (hostId == null ? "" : ",\"hostId\":\"" + hostId + "\"") + "}"));
            ok(s.send("join", key, Map.of("team", team, "agentId", id), null, null));
        }
        return key;
    }

    private static void beat(TestStack s, String team, String key, String id, String from) {
        ok(s.sendFrom(from, "heartbeat", key, Map.of("team", team, "agentId", id), "{}"));
    }

    private static List<String> ids(String prefix, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().path("detail")).toList();
    }

    @Test
    void oneBoxDies_tenOfElevenFromOneSource_tenDeaths_onePage_revivesAsked() throws Exception {
        sink = new AlertSink();
        TestStack s = STACKS.open(sink.stack());
        List<String> onBox = ids("box-a", 1, 10);
        String key = team(s, "box", onBox, "box-1");
        team(s, "box", List.of("box-a11"), null);
        List<String> others = ids("other-a", 1, 5);
        String otherKey = team(s, "other", others, null);
        // Everyone beats once, the box's ten from one address, so the sweep knows each agent's source.
        s.clock.set(T0.plusSeconds(10));
        onBox.forEach(id -> beat(s, "box", key, id, BOX));
        beat(s, "box", key, "box-a11", "198.51.100.9");
        others.forEach(id -> beat(s, "other", otherKey, id, "198.51.100.20"));
        s.pump.drain();
        AlertSink.settled(s);
        int topicBefore = AlertSink.topic(s).size();
        int receivedBefore = sink.received.size();

        // The box dies; the 11th agent and the other team keep beating.
        Set<String> dead = new HashSet<>();
        for (int sec = 75; sec <= 150; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, "box", key, "box-a11", "198.51.100.9");
            others.forEach(id -> beat(s, "other", otherKey, id, "198.51.100.20"));
            dead.addAll(s.sweep());
        }
        assertEquals(10, dead.size(), dead::toString);
        onBox.forEach(id -> assertTrue(dead.contains("box/" + id), id));
        s.pump.drain();
        AlertSink.settled(s);

        List<String> pages = AlertSink.topic(s).subList(topicBefore, AlertSink.topic(s).size());
        assertEquals(List.of("MassStaleAlertRule MassStaleSuspected "), pages, "one page for the incident");
        List<JsonNode> flags = onBus(s, "MassStaleSuspected");
        assertEquals(1, flags.size());
        JsonNode flag = flags.get(0);
        // People hear of it once on each channel, as of a silent host; the ten deaths tell nobody on their own.
        List<AlertSink.Received> people = sink.received.subList(receivedBefore, sink.received.size());
        List<JsonNode> slack = people.stream().filter(r -> r.path().equals("/slack")).map(AlertSink.Received::body)
                .toList();
        List<JsonNode> pagerDuty = people.stream().filter(r -> r.path().equals("/pagerduty"))
                .map(AlertSink.Received::body).toList();
        assertEquals(1, slack.size(), slack::toString);
        assertTrue(slack.get(0).path("text").asText().contains("source " + BOX), slack::toString);
        assertEquals(1, pagerDuty.size(), pagerDuty::toString);
        assertEquals("trigger", pagerDuty.get(0).path("event_action").asText());
        assertEquals("lifeline/box/source/" + flag.get("since").asText(), pagerDuty.get(0).path("dedup_key").asText());
        assertFalse(flag.get("held").asBoolean(), flag::toString);
        assertEquals(11, flag.get("aliveAgents").asInt());
        assertEquals(10, flag.get("staleAgents").asInt());
        assertTrue(flag.get("why").asText().contains("source " + BOX), flag::toString);
        List<JsonNode> deaths = onBus(s, "AgentStatusChanged").stream()
                .filter(d -> d.path("to").asText().equals("dead")).toList();
        assertEquals(10, deaths.size());
        for (JsonNode d : deaths) {
            assertEquals("source_silent", d.path("cause").path("kind").asText(), d::toString);
            assertEquals(BOX, d.path("cause").path("source").asText());
            assertEquals(flag.get("since").asText(), d.path("cause").path("since").asText());
        }
        // A revive is asked for each of the ten: they name a host.
        for (String id : onBox) {
            assertEquals(1, s.stepFunctions.executions().stream()
                    .filter(e -> id.equals(e.input().path("agentId").asText())).count(), id);
        }
        assertEquals("ready", s.agentItem("box", "box-a11").get("status").s());
        System.out.printf("one box: %d of 11 dead, alerts topic %s, Slack %d, PagerDuty %d (%s), revives asked %d,"
                + " MassStaleSuspected %s%n", dead.size(), pages, slack.size(), pagerDuty.size(),
                pagerDuty.get(0).path("dedup_key").asText(), s.stepFunctions.executions().size(), flag);
    }

    @Test
    void deafLifeline_silenceAcrossManySources_held_shown_thenReleased() throws Exception {
        TestStack s = STACKS.open();
        List<String> agents = ids("deaf-a", 1, 10);
        String key = team(s, "deaf", agents, null);
        List<String> others = ids("ok-a", 1, 3);
        String otherKey = team(s, "ok", others, null);
        s.clock.set(T0.plusSeconds(10));
        for (int i = 0; i < agents.size(); i++) {
            beat(s, "deaf", key, agents.get(i), "192.0.2." + (i + 1));
        }
        others.forEach(id -> beat(s, "ok", otherKey, id, "198.51.100.30"));

        // Eight of ten go silent, each from its own address: Lifeline's own trouble could explain that.
        for (int sec = 75; sec <= 150; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, "deaf", key, agents.get(8), "192.0.2.9");
            beat(s, "deaf", key, agents.get(9), "192.0.2.10");
            others.forEach(id -> beat(s, "ok", otherKey, id, "198.51.100.30"));
            assertEquals(List.of(), s.sweep(), "held at " + sec + " s");
        }
        s.pump.drain();
        List<JsonNode> flags = onBus(s, "MassStaleSuspected");
        assertEquals(1, flags.size(), "one event for the hold");
        JsonNode flag = flags.get(0);
        assertTrue(flag.get("held").asBoolean());
        assertEquals(8, flag.get("staleAgents").asInt());
        assertEquals(10, flag.get("aliveAgents").asInt());
        assertTrue(flag.get("why").asText().contains("spans 8 failure domains"), flag::toString);
        System.out.printf("deaf Lifeline: 0 of 8 silent marked dead over 6 sweeps; MassStaleSuspected %s%n", flag);
        JsonNode hold = ok(s.send("get-settings", key, Map.of("team", "deaf"), null, null)).body().get("hold");
        assertTrue(hold.get("held").asBoolean(), hold::toString);
        assertEquals(flag.get("since").asText(), hold.get("since").asText());

        // A read key may not release it; the admin does, and the sweep marks the eight dead.
        String read = s.key("deaf", Scope.READ);
        assertEquals(403, s.send("release-hold", read, Map.of("team", "deaf"), null, null).status());
        JsonNode released = ok(s.send("release-hold", key, Map.of("team", "deaf"), null, null)).body();
        assertFalse(released.get("hold").get("held").asBoolean(), released::toString);
        assertEquals(409, s.send("release-hold", key, Map.of("team", "deaf"), null, null).status(),
                "released once");
        Set<String> dead = new HashSet<>();
        for (int sec = 165; sec <= 210; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, "deaf", key, agents.get(8), "192.0.2.9");
            beat(s, "deaf", key, agents.get(9), "192.0.2.10");
            dead.addAll(s.sweep());
        }
        assertEquals(8, dead.size(), dead::toString);
        s.pump.drain();
        assertEquals(1, onBus(s, "MassStaleSuspected").size(), "the release raised no second flag");
        assertTrue(ok(s.send("get-settings", key, Map.of("team", "deaf"), null, null)).body().path("hold")
                .isMissingNode(), "the flag came down once the silence ended");
    }
}
