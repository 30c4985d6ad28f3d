package io.lifeline.local.contract.alerts;

import static io.lifeline.local.stack.Team.team;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.stack.AlertSink;
import io.lifeline.local.stack.Team;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.SamTemplate;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A burst of stalls (docs/alerts-noise.md), end to end in Lifeline Local with the template's rules, transformers and
 * digest flow (threshold 2 a window): a provider brownout stalls every agent of two teams at once under
 * {@code onStall: alert}; the window's first two stalls are alerted one by one, the rest carry {@code burst} and skip
 * the stall rule, and the window's one {@code AlertStallDigest} says stalled (not died), counts them all, and each
 * team's view of it names only its own agents. When every stall is over (progress again, or ended by a death: the
 * dead agent's new life's join ends its stall) one
 * {@code AlertStallBurstResolved} says how many of each. A window with deaths and stalls gives one digest of each,
 * the deaths' as it always was.
 */
@Timeout(180)
@Tag("contract")
class StallBurstTest {
    private static final Instant T0 = TestStack.START;

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().path("detail")).toList();
    }

    private static long onTopic(TestStack s, String rule, String type) {
        return AlertSink.topic(s).stream().filter(m -> m.startsWith(rule + " " + type + " ")).count();
    }

    /**
     * Host {@code host}'s batches for every agent of {@code t}, each entry with {@code entry}: 25 agents a lease, as
     * a daemon sends them ({@code host}, {@code host.2}, ...).
     */
    private static void batch(TestStack s, Team t, String host, String entry) {
        for (int from = 0; from < t.agents().size(); from += 25) {
            String beats = t.agents().subList(from, Math.min(from + 25, t.agents().size())).stream()
                    .map(id -> "{\"agentId\":\"" + id + "\"" + entry + "}").collect(Collectors.joining(","));
            String lease = from == 0 ? host : host + "." + (from / 25 + 1);
            ok(s.send("batch-heartbeats", t.key(), Map.of("team", t.name()), null,
                    "{\"hostId\":\"" + lease + "\",\"heartbeats\":[" + beats + "]}"));
        }
    }

    private static void stallAll(TestStack s, Team t, String host) {
        batch(s, t, host, ",\"progressAgeMs\":25000,\"stallReason\":\"model stream silent\",\"stalled\":true");
    }

    private static TestStack.Builder stack(AlertSink sink) throws Exception {
        return sink.stack().parameter("AlertBurstThreshold", "2").parameter("FleetSelfPreservationMinAlive", "100000");
    }

    @Test
    void aBrownoutStallingTwoTeams_pagesOnce_saysStalled_heldStallsSkipTheStallRule_andItResolvesOnce()
            throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = stack(sink).build()) {
            Team brown = team(s, "brown", 6);
            Team other = team(s, "other", 2);
            at(s, 1);
            batch(s, brown, "box", ",\"status\":\"working\",\"inTurn\":true");
            batch(s, other, "rig", ",\"status\":\"working\",\"inTurn\":true");
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();

            at(s, 30);
            stallAll(s, brown, "box");
            stallAll(s, other, "rig");
            s.pump.drain();
            AlertSink.settled(s);
            List<JsonNode> stalls = onBus(s, "AgentStalled");
            assertEquals(8, stalls.size(), stalls::toString);
            assertEquals(6, stalls.stream().filter(d -> d.has("burst")).count(), "past the threshold of 2: held");
            assertEquals(2, onTopic(s, "StallAlertRule", "AgentStalled"), "the first two, one by one");
            assertEquals(1, onBus(s, "AlertStallBurstStarted").size());
            assertEquals(List.of(), onBus(s, "AlertBurstStarted"), "no death was counted");

            at(s, 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);
            List<JsonNode> digests = onBus(s, "AlertStallDigest");
            assertEquals(1, digests.size(), digests::toString);
            JsonNode digest = digests.get(0);
            assertEquals(8, digest.path("stalls").asInt(), digest::toString);
            assertEquals(2, digest.path("sentOneByOne").asInt(), digest::toString);
            assertEquals(6, digest.path("inDigest").asInt(), digest::toString);
            assertEquals(6, digest.path("byTeam").path("brown").asInt(), digest::toString);
            assertEquals(2, digest.path("byTeam").path("other").asInt(), digest::toString);
            // The fixture's agents were registered without a host: counted under "-".
            assertEquals(8, digest.path("byHost").path("-").asInt(), digest::toString);
            assertFalse(digest.path("allOver").asBoolean(), digest::toString);
            assertFalse(digest.has("deaths"), "a digest of stalls counts no death: " + digest);
            assertEquals(List.of(), onBus(s, "AlertDigest"), "no digest of deaths");
            assertEquals(1, onTopic(s, "StallDigestAlertRule", "AlertStallDigest"), "paged once");
            assertEquals(List.of(), sink.slack(), "a stall reaches the alerts topic only");
            assertEquals(List.of(), sink.pagerDuty("trigger"));
            // Each team's own view: its stalls, its agents only.
            for (Team t : List.of(brown, other)) {
                JsonNode logged = ok(s.send("events", t.key(), Map.of("team", t.name()),
                        Map.of("type", "AlertStallDigest"), null)).body();
                assertEquals(1, logged.get("count").asInt(), logged::toString);
                JsonNode view = logged.get("events").get(0).path("detail");
                assertEquals(t.name(), view.path("team").asText(), view::toString);
                assertEquals(t.agents().size(), view.path("stalls").asInt(), view::toString);
                for (JsonNode agent : view.path("agents")) {
                    assertTrue(t.agents().contains(agent.asText()), view::toString);
                }
                assertEquals(8, view.path("fleetStalls").asInt(), view::toString);
            }

            // Over: brown's six and other-a2 progress again, other-a1 dies (over as a stall, not back).
            sink.received.clear();
            at(s, 320);
            batch(s, brown, "box", ",\"progressAgeMs\":0,\"stalled\":false");
            ok(s.send("batch-heartbeats", other.key(), Map.of("team", other.name()), null,
                    "{\"hostId\":\"rig\",\"heartbeats\":[{\"agentId\":\"other-a2\",\"progressAgeMs\":0,"
                            + "\"stalled\":false}]}"));
            s.pump.drain();
            assertTrue(onBus(s, "AlertStallBurstResolved").isEmpty(), "other-a1 is still stalled");
            ok(s.send("fail", other.key(), Map.of("team", other.name(), "agentId", "other-a1"), null,
                    "{\"reason\":\"oom\"}"));
            s.pump.drain();
            // The dead agent keeps its stall's mark until its new life's join ends it (state ended).
            ok(s.send("join", other.key(), Map.of("team", other.name(), "agentId", "other-a1"), null, null));
            s.pump.drain();
            AlertSink.settled(s);
            List<JsonNode> ends = onBus(s, "AgentProgressResumed");
            assertEquals(8, ends.size(), ends::toString);
            assertEquals(6, ends.stream().filter(d -> d.has("burst")).count(), "an end is held as its start was");
            assertEquals(1, ends.stream().filter(d -> d.path("state").asText().equals("ended")).count(), ends::toString);
            assertEquals(2, onTopic(s, "StallAlertRule", "AgentProgressResumed"));
            List<JsonNode> resolved = onBus(s, "AlertStallBurstResolved");
            assertEquals(1, resolved.size(), resolved::toString);
            assertEquals(8, resolved.get(0).path("stalls").asInt(), resolved::toString);
            assertEquals(7, resolved.get(0).path("back").asInt(), resolved::toString);
            assertEquals(1, resolved.get(0).path("ended").asInt(), resolved::toString);
            assertEquals(1, onTopic(s, "StallBurstResolvedAlertRule", "AlertStallBurstResolved"));
            assertEquals(List.of(), onBus(s, "AlertBurstResolved"));
            assertEquals(List.of(), s.bus.deadLetters());
        }
    }

    @Test
    void aWindowOfDeathsAndStalls_givesADigestOfEach_eachSayingItsOwn() throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = stack(sink).build()) {
            Team stalling = team(s, "slow", 3);
            Team dying = team(s, "crash", 3);
            at(s, 1);
            batch(s, stalling, "box", ",\"status\":\"working\",\"inTurn\":true");
            s.pump.drain();
            at(s, 30);
            stallAll(s, stalling, "box");
            for (String id : dying.agents()) {
                ok(s.send("fail", dying.key(), Map.of("team", dying.name(), "agentId", id), null,
                        "{\"reason\":\"oom\"}"));
            }
            s.pump.drain();
            at(s, 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);

            List<JsonNode> deaths = onBus(s, "AlertDigest");
            assertEquals(1, deaths.size(), deaths::toString);
            assertEquals(3, deaths.get(0).path("deaths").asInt(), deaths::toString);
            assertEquals(1, deaths.get(0).path("inDigest").asInt(), deaths::toString);
            assertEquals(Map.of("crash", 3), Map.of("crash", deaths.get(0).path("byTeam").path("crash").asInt()));
            assertEquals(1, deaths.get(0).path("byTeam").size(), "no stall in the digest of deaths: " + deaths);
            List<JsonNode> stalls = onBus(s, "AlertStallDigest");
            assertEquals(1, stalls.size(), stalls::toString);
            assertEquals(3, stalls.get(0).path("stalls").asInt(), stalls::toString);
            assertEquals(1, stalls.get(0).path("inDigest").asInt(), stalls::toString);
            assertEquals(1, stalls.get(0).path("byTeam").size(), "no death in the digest of stalls: " + stalls);
            assertEquals(1, onTopic(s, "DigestAlertRule", "AlertDigest"));
            assertEquals(1, onTopic(s, "StallDigestAlertRule", "AlertStallDigest"));
            assertEquals(2, onTopic(s, "StallAlertRule", "AgentStalled"));
            assertEquals(2, onTopic(s, "DeathAlertRule", "AgentStatusChanged"));
        }
    }

    /**
     * Under the defaults (threshold 1, windows of 60 s) a brownout stalls 40 agents of one team at once: the alerts
     * topic gets the window's first stall and one digest that says 40 agents stalled, nothing else; Slack and
     * PagerDuty nothing.
     */
    @Test
    void fortyAgentsOfATeamStallAtOnce_underTheDefaults_theTopicGetsOneStallAndOneDigestSaying40Stalled()
            throws Exception {
        try (AlertSink sink = new AlertSink(); TestStack s = sink.stack()
                .parameter("FleetSelfPreservationMinAlive", "100000").build()) {
            Team acme = team(s, "brownout", 40);
            at(s, 1);
            batch(s, acme, "box", ",\"status\":\"working\",\"inTurn\":true");
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();
            at(s, 30);
            stallAll(s, acme, "box");
            s.pump.drain();
            at(s, 300);
            s.stepFunctions.runDue();
            s.pump.drain();
            AlertSink.settled(s);

            List<String> topic = AlertSink.topic(s).stream().filter(m -> !m.startsWith("RecoveryAlertRule")).toList();
            assertEquals(List.of("StallAlertRule AgentStalled", "StallDigestAlertRule AlertStallDigest"),
                    topic.stream().map(m -> m.substring(0, m.lastIndexOf(' '))).toList(), topic::toString);
            JsonNode delivered = s.bus.delivered().stream().filter(d -> d.detailType().equals("AlertStallDigest"))
                    .findFirst().orElseThrow().event();
            SamTemplate.Target target = TestStack.template().rules(Map.of()).stream()
                    .filter(r -> r.logicalId().equals("StallDigestAlertRule")).findFirst().orElseThrow()
                    .targets().get(0);
            String text = LocalEventBus.transform(target, delivered).asText();
            assertTrue(text.startsWith("Lifeline: 40 agents stalled (no progress in a turn) between "
                    + T0 + " and " + T0.plusSeconds(60) + ", 39 of them in this digest; by team: brownout 40;"), text);
            assertFalse(text.contains("died"), text);
            assertEquals(List.of(), sink.slack());
            assertEquals(List.of(), sink.at("/pagerduty"));
        }
    }
}
