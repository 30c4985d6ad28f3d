package io.lifeline.local.contract.hosts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.contract.outbox.PublisherTest;
import io.lifeline.local.stack.AlertSink;
import io.lifeline.local.stack.TestStack;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A silent host is one incident (docs/alerts-noise.md), end to end in Lifeline Local with the template's rules and
 * transformers and every alert destination on a loopback sink: a daemon host of 25 agents (one lease) and one of 60
 * (three leases: {@code h60}, {@code h60.2}, {@code h60.3}) stop; each host's incident is exactly one page and one
 * Slack message (and one message on the alerts topic), and when it is back exactly one resolve of each; every agent's
 * death is still a transition and an event in the events route, carrying the host's silence as its cause. Stale
 * after 60 s, grace 2, sweeps every 15 s (the test clock); self-preservation is out of the way (its own alert is
 * another subject).
 */
@Timeout(120)
@Tag("contract")
class HostIncidentTest {
    private static final Instant T0 = TestStack.START;

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static List<String> agents(String prefix, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(prefix + i);
        }
        return ids;
    }

    /** The daemon's leases: 25 agents each, named like the daemon names them. */
    private static Map<String, List<String>> leases(String host, List<String> ids) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (int k = 0; k * 25 < ids.size(); k++) {
            out.put(k == 0 ? host : host + "." + (k + 1), ids.subList(k * 25, Math.min(ids.size(), (k + 1) * 25)));
        }
        return out;
    }

    private static void renew(TestStack s, Map<String, List<String>> leases) {
        leases.forEach((lease, ids) -> {
            TestStack.Reply r = s.team("batch-heartbeats", HostLeaseTest.hostedBody(lease, ids, Map.of()));
            assertEquals(200, r.status(), r.body()::toString);
        });
    }

    @Test
    void silentHostsOf25And60Agents_areOnePageAndOneSlackMessageEach_andOneResolveOfEachWhenBack() throws Exception {
        try (AlertSink sink = new AlertSink();
             TestStack s = sink.stack().parameter("SelfPreservationMinAlive", "100000")
                     .parameter("FleetSelfPreservationMinAlive", "100000").build()) {
            List<String> small = agents("s", 25);
            List<String> large = agents("l", 60);
            Map<String, List<String>> all = new LinkedHashMap<>(leases("h25", small));
            all.putAll(leases("h60", large));
            assertEquals(List.of("h25", "h60", "h60.2", "h60.3"), List.copyOf(all.keySet()));
            small.forEach(id -> ok(s.ready(id)));
            large.forEach(id -> ok(s.ready(id)));
            at(s, 5);
            renew(s, all);
            at(s, 30);
            renew(s, all); // the daemons' last renewals: both hosts go silent after them
            s.pump.drain();
            AlertSink.settled(s);
            sink.received.clear();
            int topicBefore = AlertSink.topic(s).size();

            List<String> dead = new ArrayList<>();
            for (double sec = 45; sec <= 150; sec += 15) {
                at(s, sec);
                dead.addAll(s.sweep());
            }
            assertEquals(85, dead.size(), "every agent of both hosts died");
            s.pump.drain();
            AlertSink.settled(s);

            List<JsonNode> slack = sink.slack();
            assertEquals(2, slack.size(), slack::toString);
            assertTrue(slack.stream().anyMatch(m -> m.path("text").asText().contains("host h25 ")
                    && m.path("text").asText().contains("its 25 agents")), slack::toString);
            assertTrue(slack.stream().anyMatch(m -> m.path("text").asText().contains("host h60 ")
                    && m.path("text").asText().contains("its 60 agents")), slack::toString);
            List<JsonNode> pages = sink.pagerDuty("trigger");
            assertEquals(2, pages.size(), pages::toString);
            assertEquals(List.of(), sink.pagerDuty("resolve"));
            JsonNode page60 = pages.stream().filter(p -> p.path("dedup_key").asText().contains("/host/h60/"))
                    .findFirst().orElseThrow();
            assertEquals(25, page60.path("payload").path("custom_details").path("agentIds").size(),
                    "the page names the host's agents (the first 25 of all its leases), and counts all 60");
            assertTrue(page60.path("payload").path("summary").asText().contains("its 60 agents"), page60::toString);
            assertEquals(2, AlertSink.topic(s).size() - topicBefore, () -> AlertSink.topic(s).toString());
            assertEquals(List.of(), s.bus.deadLetters());
            assertEquals(4, s.bus.delivered().stream().filter(d -> d.detailType().equals("HostLeaseExpired")).count(),
                    "each lease's silence is still its own event");

            // Every death is a transition and an event (bus, events route), carrying the host's silence.
            for (List<String> ids : all.values()) {
                for (String id : ids) {
                    assertTrue(s.transitions(id, 10).stream().anyMatch(t -> t.path("to").asText().equals("dead")
                            && t.path("trigger").asText().equals("heartbeat_expired")), id);
                    List<JsonNode> events = PublisherTest.logged(s, Map.of("agentId", id, "type", "AgentStatusChanged",
                            "limit", "20"));
                    JsonNode death = events.stream().filter(e -> e.path("detail").path("to").asText().equals("dead"))
                            .findFirst().orElseThrow(() -> new AssertionError("no death event of " + id));
                    JsonNode cause = death.path("detail").path("cause");
                    assertEquals("host_silent", cause.path("kind").asText(), death::toString);
                    assertEquals(all.entrySet().stream().filter(e -> e.getValue().contains(id)).findFirst()
                            .orElseThrow().getKey(), cause.path("hostId").asText());
                }
            }

            // Both daemons are back: renewals, then each agent joins again.
            sink.received.clear();
            int topicSilent = AlertSink.topic(s).size();
            at(s, 200);
            renew(s, all);
            all.values().forEach(ids -> ids.forEach(id -> ok(s.agent("join", id, null))));
            renew(s, all);
            s.pump.drain();
            AlertSink.settled(s);
            all.values().forEach(ids -> ids.forEach(id -> assertEquals("ready", s.status(id))));

            slack = sink.slack();
            assertEquals(2, slack.size(), slack::toString);
            assertTrue(slack.stream().allMatch(m -> m.path("text").asText().contains(" is back")), slack::toString);
            assertEquals(List.of(), sink.pagerDuty("trigger"));
            List<JsonNode> resolves = sink.pagerDuty("resolve");
            assertEquals(2, resolves.size(), resolves::toString);
            assertEquals(List.of(page60.path("dedup_key").asText()), resolves.stream()
                    .map(r -> r.path("dedup_key").asText()).filter(k -> k.contains("/host/h60/")).toList(),
                    "the resolve names the page's key");
            assertEquals(2, AlertSink.topic(s).size() - topicSilent, () -> AlertSink.topic(s).toString());
            assertEquals(4, s.bus.delivered().stream().filter(d -> d.detailType().equals("HostLeaseRestored")).count());
            assertEquals(List.of(), s.bus.deadLetters());
            assertNull(s.agentItem("l59").get("hc"), "the return removes the cause");
        }
    }

    /**
     * A death the daemon reports while its host's lease is silent (the report reached the API while its renewals do
     * not) is part of the host's incident too; once the host is heard again, a reported death alerts as ever.
     */
    @Test
    void deathReportedWhileTheHostIsSilent_isPartOfTheHostsIncident() throws Exception {
        try (AlertSink sink = new AlertSink();
             TestStack s = sink.stack().parameter("SelfPreservationMinAlive", "100000")
                     .parameter("FleetSelfPreservationMinAlive", "100000").build()) {
            List<String> ids = agents("k", 3);
            Map<String, List<String>> lease = leases("hk", ids);
            ids.forEach(id -> ok(s.ready(id)));
            at(s, 5);
            renew(s, lease);
            at(s, 30);
            renew(s, lease);
            for (double sec = 45; sec <= 105; sec += 15) {
                at(s, sec);
                assertEquals(List.of(), s.sweep());
            }
            at(s, 106);
            ok(s.agent("fail", "k0", "{\"reason\":\"oom\"}"));
            s.pump.drain();
            AlertSink.settled(s);
            assertEquals(1, sink.slack().size(), sink.slack()::toString);
            assertTrue(sink.slack().get(0).path("text").asText().contains("host hk "));
            assertEquals(1, sink.pagerDuty("trigger").size(), sink.pagerDuty("trigger")::toString);
            JsonNode death = PublisherTest.logged(s, Map.of("agentId", "k0", "type", "AgentStatusChanged", "limit", "5"))
                    .stream().map(e -> e.path("detail")).filter(d -> d.path("to").asText().equals("dead")).findFirst()
                    .orElseThrow();
            assertEquals("reported_failure", death.path("trigger").asText());
            assertEquals("hk", death.path("cause").path("hostId").asText(), death::toString);

            // Heard again: k1 joins; a later crash of it is its own alert, as ever.
            at(s, 120);
            renew(s, lease);
            at(s, 121);
            ok(s.agent("fail", "k1", "{\"reason\":\"oom\"}"));
            s.pump.drain();
            AlertSink.settled(s);
            assertTrue(sink.slack().stream().anyMatch(m -> m.path("text").asText().contains("agent k1 ")),
                    sink.slack()::toString);
        }
    }
}
