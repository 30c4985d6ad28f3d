package io.lifeline.local.contract.hosts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Limits;
import io.lifeline.auth.Scope;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.contract.heartbeats.HeartbeatCostTest;
import io.lifeline.local.stack.TestStack;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Host leases, end to end in Lifeline Local with the test clock: a daemon's
 * batch that names its host is one write of the host's lease for all its agents, with no read; each agent is
 * still answered as by its own heartbeat; the sweep judges hosted agents from the lease with the same misses,
 * grace and self-preservation (stale after 60 s, grace 2, sweeps every 15 s: dead 75-90 s after the last sign
 * of life); a host gone silent is one {@code HostLeaseExpired}; agents move between direct and hosted beats
 * without a false death.
 */
@Tag("contract")
public class HostLeaseTest {
    private static final Instant T0 = TestStack.START;
    private static final String TEAM = TestStack.TEAM;
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    /** A stack whose self-preservation never holds (the tests that want deaths of whole hosts). */
    private static TestStack deathsAllowed() throws Exception {
        return STACKS.open(TestStack.builder().parameter("SelfPreservationMinAlive", "100000"));
    }

    private static void at(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
    }

    private static Instant t(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }

    private static List<String> sweepAt(TestStack s, double seconds) {
        at(s, seconds);
        return s.sweep();
    }

    private static List<String> agents(String prefix, int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(prefix + i);
        }
        return ids;
    }

    /** The batch body: each agent with its local beat age in ms (null: none given). */
    public static String hostedBody(String hostId, List<String> ids, Map<String, Long> ages) {
        StringBuilder b = new StringBuilder("{\"hostId\":\"" + hostId + "\",\"heartbeats\":[");
        for (int i = 0; i < ids.size(); i++) {
            b.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(ids.get(i)).append('"');
            Long age = ages.get(ids.get(i));
            if (age != null) {
                b.append(",\"localBeatAgeMs\":").append(age);
            }
            b.append('}');
        }
        return b.append("]}").toString();
    }

    private static JsonNode hosted(TestStack s, String hostId, List<String> ids) {
        return hosted(s, hostId, ids, Map.of());
    }

    private static JsonNode hosted(TestStack s, String hostId, List<String> ids, Map<String, Long> ages) {
        TestStack.Reply r = s.team("batch-heartbeats", hostedBody(hostId, ids, ages));
        assertEquals(200, r.status(), r.body()::toString);
        JsonNode results = r.body().get("results");
        assertEquals(ids.size(), results.size());
        return results;
    }

    private static JsonNode result(JsonNode results, String agentId) {
        for (JsonNode r : results) {
            if (r.path("agentId").asText().equals(agentId)) {
                return r;
            }
        }
        throw new AssertionError("no result for " + agentId + " in " + results);
    }

    private static String status(TestStack s, String agentId) {
        return s.agentItem(agentId).get("status").s();
    }

    private static Map<String, AttributeValue> lease(TestStack s, String team, String hostId) {
        Map<String, AttributeValue> item = s.item("TEAM#" + team + "#HOST#" + hostId, "HOST");
        assertTrue(item != null && item.containsKey("at"), "no lease of " + hostId + ": " + item);
        return item;
    }

    private static List<LocalEventBus.Delivered> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type)).toList();
    }

    private static void readyAll(TestStack s, List<String> ids) {
        ids.forEach(id -> ok(s.ready(id)));
    }

    /** Cost: one write for the whole host, no read. */
    @Nested
    class Cost {
        @ParameterizedTest
        @ValueSource(ints = {10, 25})
        void hostedBatch_plainBeat_isOneUpdateItemOfTheLease_noRead_oneWriteUnit(int n) throws Exception {
            HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
            TestStack s = STACKS.open(TestStack.builder().interceptor(counter));
            List<String> ids = agents("c" + n + "-", n);
            readyAll(s, ids);
            at(s, 1);
            hosted(s, "host-c", ids); // the first beat through the host is written to each agent's item (the link)
            at(s, 31);
            s.send("get-agent", s.adminKey, Map.of("team", TEAM, "agentId", "warm-up"), null, null);
            counter.reset();
            counter.measureCapacity = true;

            JsonNode results = hosted(s, "host-c", ids);

            counter.measureCapacity = false;
            assertEquals(List.of("UpdateItem"), counter.operations, "one write, no read");
            assertEquals(List.of("HOST"), counter.updatedSortKeys);
            assertEquals(1, counter.capacities.size());
            double units = counter.capacities.get(0).capacityUnits();
            assertEquals(1.0, units, 0.0, counter.capacities.get(0)::toString);
            double perAgent = units / n;
            System.out.printf("host lease of %d agents: %.1f write unit per beat, %.4f per agent, 0 reads%n", n, units,
                    perAgent);
            assertEquals(1.0 / n, perAgent, 1e-12);
            for (String id : ids) {
                JsonNode r = result(results, id);
                assertTrue(r.get("success").asBoolean(), r::toString);
                assertEquals("ready", r.get("agentStatus").asText());
                assertEquals(t(31).toString(), r.get("heartbeatTs").asText());
                assertEquals(t(91).toString(), r.get("nextDeadline").asText());
                assertEquals(30, r.get("heartbeatIntervalSeconds").asInt());
            }
        }

        @Test
        void hostedBatch_ofTwentyFiveLongestIds_leaseStaysAtLeast64BytesUnderOneWriteUnit() throws Exception {
            HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
            TestStack s = STACKS.open(TestStack.builder().interceptor(counter));
            String team = "T".repeat(64);
            String hostId = "H".repeat(64);
            String key = s.key(team, Scope.ADMIN);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < Limits.MAX_BATCH_HEARTBEATS; i++) {
                String id = "A".repeat(60) + String.format("%04d", i);
                ids.add(id);
                ok(s.send("register", key, Map.of("team", team), null, "{\"agentId\":\"" + id + "\",\"name\":\"n\","
                        + "\"role\":\"r\",\"staleAfterSeconds\":" + Limits.MAX_STALE_AFTER_SECONDS + "}"));
                ok(s.send("join", key, Map.of("team", team, "agentId", id), null, null));
            }
            StringBuilder working = new StringBuilder("{\"hostId\":\"" + hostId + "\",\"heartbeats\":[");
            for (int i = 0; i < ids.size(); i++) {
                working.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(ids.get(i))
                        .append("\",\"status\":\"working\",\"localBeatAgeMs\":999999}");
            }
            working.append("]}");
            ok(s.send("batch-heartbeats", key, Map.of("team", team), null, working.toString()));
            s.clock.advance(Duration.ofDays(3650));
            s.send("get-agent", key, Map.of("team", team, "agentId", "warm-up"), null, null);
            counter.reset();
            counter.measureCapacity = true;
            TestStack.Reply r = s.send("batch-heartbeats", key, Map.of("team", team), null, working.toString());
            counter.measureCapacity = false;
            assertEquals(200, r.status(), r.body()::toString);
            r.body().get("results").forEach(x -> assertEquals("working", x.get("agentStatus").asText(), x::toString));

            assertEquals(List.of("UpdateItem"), counter.operations);
            assertEquals(1.0, counter.capacities.get(0).capacityUnits(), 0.0);
            Map<String, AttributeValue> item = lease(s, team, hostId);
            int size = sizeUpperBound(item);
            System.out.println("largest host lease (25 agents, longest ids and stale-after): at most " + size + " bytes");
            // Within one write unit with room to spare: at most 960 of the 1,024 bytes, by a bound that
            // counts each number as its decimal string (more than DynamoDB's published size). The renewal count `n`
            // is 1 digit here; ten years of 30 s renewals make it 8, 5 bytes more, still inside the margin.
            assertTrue(size <= 1024 - 64, "lease is up to " + size + " bytes, less than 64 under one write unit: " + item);
            assertEquals(25, item.get("a").m().size());
            assertEquals(25, item.get("s").m().size());
        }

        /**
         * The server bounds a lease at 25 agents whatever the client sends: a second batch of other agents under a full
         * lease is refused 409 LEASE_FULL and writes nothing (neither the lease nor an agent), the first batch goes on as
         * before, and those agents beat under another host id.
         */
        @Test
        void aLeaseCarriesAtMostTwentyFiveAgents_anotherBatchUnderItIsRefusedLeaseFull_writingNothing() throws Exception {
            TestStack s = STACKS.open(TestStack.builder());
            List<String> first = agents("full-a", 25);
            List<String> more = agents("full-b", 5);
            readyAll(s, first);
            readyAll(s, more);
            hosted(s, "full-host", first);
            Map<String, AttributeValue> before = lease(s, TestStack.TEAM, "full-host");
            Map<String, Map<String, AttributeValue>> items = new HashMap<>();
            more.forEach(id -> items.put(id, s.agentItem(id)));
            s.clock.advance(Duration.ofSeconds(5));

            TestStack.Reply refused = s.team("batch-heartbeats", hostedBody("full-host", more, Map.of()));
            assertEquals(409, refused.status(), refused.body()::toString);
            assertEquals("LEASE_FULL", refused.body().path("code").asText());
            assertEquals(before, lease(s, TestStack.TEAM, "full-host"), "the lease is unchanged");
            more.forEach(id -> assertEquals(items.get(id), s.agentItem(id), id + " is unchanged"));

            // Two of the first 25 and three others: 28 in all, refused too.
            List<String> mixed = new ArrayList<>(first.subList(0, 2));
            mixed.addAll(more.subList(0, 3));
            assertEquals(409, s.team("batch-heartbeats", hostedBody("full-host", mixed, Map.of())).status());
            // The lease's own agents still beat under it, and the others under a host id of their own.
            hosted(s, "full-host", first);
            hosted(s, "full-host", first.subList(0, 10));
            hosted(s, "full-host.2", more);
            assertEquals(25, lease(s, TestStack.TEAM, "full-host").get("a").m().size());
        }

        /** {@link HeartbeatCostTest#itemSizeUpperBound}, with maps: 3 bytes, and per entry 1 byte, its key and value. */
        static int sizeUpperBound(Map<String, AttributeValue> item) {
            int total = 0;
            for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
                AttributeValue v = e.getValue();
                if (v.hasM()) {
                    total += e.getKey().getBytes(StandardCharsets.UTF_8).length + 3 + sizeUpperBound(v.m())
                            + v.m().size();
                } else {
                    total += HeartbeatCostTest.itemSizeUpperBound(Map.of(e.getKey(), v));
                }
            }
            return total;
        }

        @Test
        void hostedBatch_renewal_carriesNoOutboxMark_soThePublisherIsNeverInvoked() throws Exception {
            TestStack s = STACKS.open();
            List<String> ids = agents("q", 3);
            readyAll(s, ids);
            hosted(s, "host-q", ids);
            s.pump.drain();
            int before = s.bus.delivered().size();
            at(s, 30);
            hosted(s, "host-q", ids);

            assertFalse(lease(s, TEAM, "host-q").containsKey("ob"));
            s.pump.drain();
            assertEquals(before, s.bus.delivered().size(), "a renewal tells the bus nothing");
        }
    }

    /** The per-agent answer. */
    @Nested
    class PerAgentAnswer {
        @Test
        void hostedBatch_answersEachAgentAsItsOwnHeartbeat_fromItsLocalBeat() throws Exception {
            TestStack s = STACKS.open();
            List<String> ids = agents("w", 2);
            readyAll(s, ids);
            at(s, 10);
            hosted(s, "host-w", ids);
            at(s, 40);

            JsonNode results = hosted(s, "host-w", ids, Map.of("w0", 5_000L));

            JsonNode r0 = result(results, "w0");
            assertTrue(r0.get("success").asBoolean());
            assertEquals(t(35).toString(), r0.get("heartbeatTs").asText(), "the local beat: 5 s before the renewal");
            assertEquals(t(95).toString(), r0.get("nextDeadline").asText());
            assertEquals("ready", r0.get("agentStatus").asText());
            JsonNode r1 = result(results, "w1");
            assertEquals(t(40).toString(), r1.get("heartbeatTs").asText(), "no age given: the renewal's time");
            assertEquals(t(100).toString(), r1.get("nextDeadline").asText());

            // The agent as shown (GET, list) is the agent as the sweep judges it: through its lease.
            JsonNode view = s.agentView("w0");
            assertEquals(t(35).toString(), view.get("heartbeatTs").asText());
            assertEquals(t(95).toString(), view.get("deadline").asText());
            for (JsonNode a : ok(s.team("list-agents", null)).body().get("agents")) {
                if (a.get("agentId").asText().equals("w1")) {
                    assertEquals(t(40).toString(), a.get("heartbeatTs").asText());
                    assertEquals(t(100).toString(), a.get("deadline").asText());
                }
            }
        }

        @Test
        void hostedBatch_statusChange_isWrittenToTheItemOnce_thenPlainBeatsAreLeaseOnly() throws Exception {
            HeartbeatCostTest.Counter counter = new HeartbeatCostTest.Counter();
            TestStack s = STACKS.open(TestStack.builder().interceptor(counter));
            List<String> ids = agents("sc", 3);
            readyAll(s, ids);
            hosted(s, "host-sc", ids);
            at(s, 30);
            String body = "{\"hostId\":\"host-sc\",\"heartbeats\":[{\"agentId\":\"sc0\",\"status\":\"working\"},"
                    + "{\"agentId\":\"sc1\"},{\"agentId\":\"sc2\"}]}";
            s.send("get-agent", s.adminKey, Map.of("team", TEAM, "agentId", "warm-up"), null, null);
            counter.reset();

            TestStack.Reply r = ok(s.team("batch-heartbeats", body));

            assertEquals("working", result(r.body().get("results"), "sc0").get("agentStatus").asText());
            assertEquals("working", status(s, "sc0"));
            // The lease, the refused assumption and the change on sc0's item, then the lease's new answer for sc0.
            assertEquals(List.of("HOST", "AGENT", "AGENT", "HOST"), counter.updatedSortKeys);
            assertEquals("report_working", s.agentView("sc0").get("lastTransition").get("trigger").asText());

            at(s, 60);
            counter.reset();
            r = ok(s.team("batch-heartbeats", body));
            assertEquals(List.of("HOST"), counter.updatedSortKeys, "working as cached: the lease alone");
            assertEquals("working", result(r.body().get("results"), "sc0").get("agentStatus").asText());
        }

        @Test
        void hostedBatch_afterTheSweepKilledAnAgent_answersRejoinRequired_thenJoinHealsIt() throws Exception {
            TestStack s = deathsAllowed();
            List<String> ids = agents("rj", 3);
            readyAll(s, ids);
            hosted(s, "host-rj", ids);
            // rj0 hangs: the daemon keeps renewing, but has not heard rj0 locally since 0 s.
            for (int sec = 30; sec <= 90; sec += 30) {
                at(s, sec);
                hosted(s, "host-rj", ids, Map.of("rj0", sec * 1000L));
            }
            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(TEAM + "/rj0"), sweepAt(s, 90.5));

            at(s, 100);
            JsonNode r = result(hosted(s, "host-rj", ids, Map.of("rj0", 100_000L)), "rj0");
            assertFalse(r.get("success").asBoolean());
            assertEquals("REJOIN_REQUIRED", r.get("code").asText());
            assertTrue(r.get("rejoinRequired").asBoolean());
            assertEquals("dead", r.get("agentStatus").asText());

            ok(s.agent("join", "rj0", null));
            at(s, 110);
            r = result(hosted(s, "host-rj", ids), "rj0");
            assertTrue(r.get("success").asBoolean(), r::toString);
            assertEquals("ready", r.get("agentStatus").asText());
            assertEquals(t(170).toString(), r.get("nextDeadline").asText());
        }

        @Test
        void leaseAnswer_ofAnAgentThatLeft_isDroppedByTheNextSweep_thenItsBeatAnswersRejoinRequired() throws Exception {
            TestStack s = STACKS.open();
            List<String> ids = agents("lv", 2);
            readyAll(s, ids);
            hosted(s, "host-lv", ids);
            ok(s.agent("leave", "lv0", null));
            at(s, 15);
            s.sweep();

            at(s, 30);
            JsonNode r = result(hosted(s, "host-lv", ids), "lv0");
            assertFalse(r.get("success").asBoolean());
            assertTrue(r.get("rejoinRequired").asBoolean());
            assertEquals("offline", r.get("agentStatus").asText());
            assertTrue(result(hosted(s, "host-lv", ids), "lv1").get("success").asBoolean());
        }

        @Test
        void hostedBatch_localBeatOlderThanTheAgentsLastBeat_neverMovesItsSignOfLifeBack() throws Exception {
            TestStack s = STACKS.open();
            ok(s.ready("old0")); // joined at 0
            at(s, 20);
            ok(s.heartbeat("old0", "{}"));
            at(s, 25);

            // First beat through the host (written to the item), reporting a local beat 10 s ago: before the item's 20 s.
            JsonNode r = result(hosted(s, "host-old", List.of("old0"), Map.of("old0", 10_000L)), "old0");
            assertTrue(r.get("success").asBoolean(), r::toString);
            assertEquals(t(20).toString(), s.agentView("old0").get("heartbeatTs").asText(), "kept at 20 s, not 15 s");
            assertEquals("host-old", s.agentItem("old0").get("lease").s());

            // A renewal whose age goes backwards (a later beat before an earlier one) is put back.
            at(s, 40);
            hosted(s, "host-old", List.of("old0"), Map.of("old0", 0L));
            at(s, 45);
            hosted(s, "host-old", List.of("old0"), Map.of("old0", 30_000L));
            assertEquals(t(40).toEpochMilli(), Long.parseLong(lease(s, TEAM, "host-old").get("a").m()
                    .get(HostLease.key("old0")).n()));
        }

        @Test
        void hostedBatch_withLocalBeatAgeButNoHost_isRefusedAndWritesNothing() throws Exception {
            TestStack s = STACKS.open();
            ok(s.ready("bad0"));
            TestStack.Reply r = s.writesNothing(() -> s.team("batch-heartbeats",
                    "{\"heartbeats\":[{\"agentId\":\"bad0\",\"localBeatAgeMs\":10}]}"));
            assertEquals(400, r.status());
            r = s.writesNothing(() -> s.team("batch-heartbeats",
                    "{\"hostId\":\"h 1\",\"heartbeats\":[{\"agentId\":\"bad0\"}]}"));
            assertEquals(400, r.status());
            r = s.writesNothing(() -> s.team("batch-heartbeats",
                    "{\"hostId\":\"h1\",\"heartbeats\":[{\"agentId\":\"bad0\",\"localBeatAgeMs\":-1}]}"));
            assertEquals(400, r.status());
            assertEquals("INVALID_FIELD", r.code());
        }
    }

    /** Detection. */
    @Nested
    class Detection {
        @Test
        void hungHostedAgent_processAliveLocalBeatsStopped_isDeadWithinStaleAfterPlusGrace_notBefore() throws Exception {
            TestStack s = deathsAllowed();
            List<String> ids = agents("hung", 3);
            readyAll(s, ids);
            double lastLocalBeat = 20;
            List<String> dead = new ArrayList<>();
            double diedAt = -1;
            for (int step = 1; step <= 20 && diedAt < 0; step++) {
                double now = step * 15;
                if (step % 2 == 0) { // the daemon renews every 30 s; hung0 last beat locally at 20 s
                    at(s, now);
                    long age = now >= lastLocalBeat ? Math.round((now - lastLocalBeat) * 1000) : 0;
                    hosted(s, "host-h", ids, Map.of("hung0", age));
                }
                List<String> d = sweepAt(s, now + 0.5);
                dead.addAll(d);
                if (d.contains(TEAM + "/hung0")) {
                    diedAt = now + 0.5;
                }
            }
            assertEquals(List.of(TEAM + "/hung0"), dead, "only the hung agent dies");
            double silent = diedAt - lastLocalBeat;
            System.out.printf("hung hosted agent: dead %.1f s after its last local beat (bound 60 + 2 x 15)%n", silent);
            assertTrue(silent > 60 + 15 && silent <= 60 + 2 * 15 + 0.5, "dead after " + silent + " s");
            assertEquals("heartbeat_expired", s.agentView("hung0").get("lastTransition").get("trigger").asText());
            assertEquals("ready", status(s, "hung1"));
            assertEquals("ready", status(s, "hung2"));
        }

        @Test
        void killedDaemon_itsAgentsDieWithinStaleAfterPlusGrace_andTheHostIsOneHostLeaseExpired() throws Exception {
            TestStack s = deathsAllowed();
            List<String> ids = agents("k", 4);
            readyAll(s, ids);
            at(s, 5);
            hosted(s, "host-k", ids);
            at(s, 30);
            hosted(s, "host-k", ids); // the daemon's last renewal: killed after it

            List<String> dead = new ArrayList<>();
            for (double sec = 45; sec <= 90; sec += 15) {
                dead.addAll(sweepAt(s, sec));
                assertEquals(List.of(), dead, "nobody dies before 60 s + grace: " + sec);
            }
            dead.addAll(sweepAt(s, 105));
            assertEquals(List.of(), dead, "one miss at 105");
            dead.addAll(sweepAt(s, 120));
            assertEquals(ids.stream().map(id -> TEAM + "/" + id).sorted().toList(), dead.stream().sorted().toList(),
                    "all dead 90 s after the last renewal");
            sweepAt(s, 135);
            s.pump.drain();

            List<LocalEventBus.Delivered> expired = onBus(s, "HostLeaseExpired");
            assertEquals(1, expired.size(), "one host event however many sweeps");
            JsonNode d = expired.get(0).event().get("detail");
            assertEquals("host-k", d.get("hostId").asText());
            assertEquals(4, d.get("agentCount").asInt());
            assertEquals(t(30).toString(), d.get("lastRenewedAt").asText());
            assertEquals(t(105).toString(), d.get("at").asText(), "flagged by the first sweep after 30 s + 60 s");
            assertEquals(4, onBus(s, "AgentStatusChanged").stream()
                    .filter(e -> "dead".equals(e.event().get("detail").path("to").asText())).count());

            // Heard again: the flag goes; a later silence is a new event.
            at(s, 200);
            ids.forEach(id -> ok(s.agent("join", id, null)));
            hosted(s, "host-k", ids);
            assertNull(lease(s, TEAM, "host-k").get("exp"));
        }

        @Test
        void silentHost_overTheThreshold_isHeldBySelfPreservation_andStillOneHostLeaseExpired() throws Exception {
            TestStack s = STACKS.open();
            List<String> ids = agents("sp", 10);
            readyAll(s, ids);
            hosted(s, "host-sp", ids);
            List<String> dead = new ArrayList<>();
            for (double sec = 15; sec <= 300; sec += 15) {
                dead.addAll(sweepAt(s, sec));
            }
            s.pump.drain();

            assertEquals(List.of(), dead, "self-preservation holds the whole team back");
            assertEquals(1, onBus(s, "MassStaleSuspected").size());
            assertEquals(1, onBus(s, "HostLeaseExpired").size());
            ids.forEach(id -> assertEquals("ready", status(s, id)));
        }
    }

    /** Direct and hosted beats. */
    @Nested
    class DirectAndHostedBeats {
        @Test
        void agentMovingBetweenDirectAndHostedBeats_neverDiesFalsely_andDiesOnlyAfterItsLastBeatOfEither()
                throws Exception {
            TestStack s = deathsAllowed();
            List<String> host = List.of("mv", "other");
            readyAll(s, host);
            List<String> dead = new ArrayList<>();
            // Alternate every 30 s: direct, hosted, hosted with mv left out (it beats directly), direct, hosted ...
            double last = 0;
            for (int step = 1; step <= 12; step++) {
                double now = step * 30;
                at(s, now);
                switch (step % 3) {
                    case 0 -> ok(s.heartbeat("mv", "{}"));
                    case 1 -> hosted(s, "host-mv", host);
                    default -> {
                        hosted(s, "host-mv", List.of("other"));
                        ok(s.heartbeat("mv", "{}"));
                    }
                }
                last = now;
                dead.addAll(sweepAt(s, now + 15));
                dead.addAll(sweepAt(s, now + 29.9));
            }
            assertEquals(List.of(), dead, "no false death while it beats either way");
            // Now hosted only; then the daemon drops mv and nobody beats it.
            at(s, last + 30);
            hosted(s, "host-mv", host);
            double lastBeat = last + 30;
            for (double sec = lastBeat + 15; sec <= lastBeat + 150; sec += 15) {
                at(s, sec);
                hosted(s, "host-mv", List.of("other"));
                dead.addAll(sweepAt(s, sec + 0.1));
                if (!dead.isEmpty()) {
                    double silent = sec + 0.1 - lastBeat;
                    assertTrue(silent > 75 && silent <= 90.1, "mv dead " + silent + " s after its last beat");
                    break;
                }
            }
            assertEquals(List.of(TEAM + "/mv"), dead);
            assertEquals("ready", status(s, "other"));
        }

        @Test
        void hostedAgentOnASchedule_isJudgedByItsSchedule_eachBeatWrittenToItsItem() throws Exception {
            TestStack s = deathsAllowed();
            ok(s.team("register", "{\"agentId\":\"sch\",\"name\":\"s\",\"role\":\"r\",\"schedule\":\"every:5m\"}"));
            ok(s.agent("join", "sch", null));
            at(s, 10);
            JsonNode r = result(hosted(s, "host-sch", List.of("sch")), "sch");
            assertTrue(r.get("success").asBoolean(), r::toString);
            assertNull(lease(s, TEAM, "host-sch").get("s"), "a scheduled agent's answer is never cached");
            // Its deadline follows the schedule (5 min + 60 s), not the lease beat + 60 s.
            assertEquals(List.of(), sweepAt(s, 10 + 90));
            assertEquals(List.of(), sweepAt(s, 10 + 300));
            assertEquals("ready", status(s, "sch"));
            assertNotNull(r.get("nextDeadline"));
        }
    }
}
