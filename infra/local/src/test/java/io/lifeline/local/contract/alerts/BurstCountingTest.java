package io.lifeline.local.contract.alerts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Burst counting never holds a death back, and a failed revive is never "back" (docs/alerts-noise.md). With the
 * alert window's store refusing every call (DynamoDB's ValidationException, as past an item's 400 KB, or
 * throttling), each death in a burst is still its own AgentStatusChanged on the bus, alerted one by one (no
 * {@code burst}), its revive flow starts, and no record is parked. A burst whose agent ended dead_failed_revive is
 * not resolved and its digest does not say {@code allBack}, even once that agent is cleaned up; the same agent
 * rejoining is back. Counting a stall fails open the same way: each stall is still its own AgentStalled.
 */
@Timeout(120)
@Tag("contract")
class BurstCountingTest {
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    static Stream<Arguments> failures() {
        return Stream.of(Arguments.of("ValidationException", (Supplier<RuntimeException>) StoreFaults::validation),
                Arguments.of("throttled", (Supplier<RuntimeException>) StoreFaults::throttled));
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().path("detail")).toList();
    }

    private static JsonNode death(TestStack s, String agentId) {
        List<JsonNode> deaths = onBus(s, "AgentStatusChanged").stream().filter(d -> d.path("agentId").asText()
                .equals(agentId) && d.path("to").asText().equals("dead")).toList();
        assertEquals(1, deaths.size(), () -> agentId + ": " + deaths);
        return deaths.get(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void aCountingFailure_isNotABurst_eachDeathIsPublishedAndRevived_andNothingIsParked(
            String what, Supplier<RuntimeException> failure) throws Exception {
        StoreFaults faults = new StoreFaults();
        TestStack s = STACKS.open(TestStack.builder().interceptor(faults).parameter("AlertBurstThreshold", "1")
                .parameter("FleetSelfPreservationMinAlive", "100000"));
        List<String> agents = List.of("w-1", "w-2", "w-3", "w-4");
        agents.forEach(id -> ok(s.ready(id)));
        s.pump.drain();
        // The window's first death counts as ever; from then on every call on the window's items fails.
        ok(s.agent("fail", "w-1", "{\"reason\":\"oom\"}"));
        s.pump.drain();
        StoreFaults.Fault refused = faults.fail(100_000, StoreFaults.alertWindow(), failure);
        for (String id : agents.subList(1, 4)) {
            s.clock.advance(Duration.ofSeconds(1));
            ok(s.agent("fail", id, "{\"reason\":\"oom\"}"));
        }
        s.pump.drain();

        assertTrue(refused.fired() >= 3, "the window's store refused the counting: " + refused.fired());
        for (String id : agents) {
            JsonNode d = death(s, id);
            assertFalse(d.has("burst"), () -> "not in a burst: alerted on its own: " + d);
            assertEquals(1, s.executionsFor(id).size(), () -> "its revive flow started: " + id);
        }
        assertEquals(List.of(), s.allItems().stream().filter(i -> i.get("pk").s().equals("OUTBOX#PARKED")).toList(),
                "nothing parked");
        assertEquals(List.of(), onBus(s, "AlertBurstStarted"), "no burst was counted, so none started");
    }

    /** Three agents of one team die in one window (threshold 1): the first alerted alone, two in the digest. */
    private static TestStack burstOfThree() throws Exception {
        TestStack s = STACKS.open(TestStack.builder().parameter("AlertBurstThreshold", "1")
                .parameter("FleetSelfPreservationMinAlive", "100000"));
        for (String id : List.of("b-1", "b-2", "b-3")) {
            ok(s.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}"));
            ok(s.agent("join", id, null));
        }
        s.pump.drain();
        for (String id : List.of("b-1", "b-2", "b-3")) {
            s.clock.advance(Duration.ofSeconds(1));
            ok(s.agent("fail", id, "{\"reason\":\"oom\"}"));
        }
        s.pump.drain();
        assertEquals(1, onBus(s, "AlertBurstStarted").size());
        return s;
    }

    private static JsonNode digestAfterTheWindow(TestStack s) {
        s.clock.advance(Duration.ofMinutes(2));
        s.stepFunctions.runDue();
        s.pump.drain();
        List<JsonNode> digests = onBus(s, "AlertDigest");
        assertEquals(1, digests.size(), digests::toString);
        return digests.get(0);
    }

    @Test
    void anAgentOfTheBurstEndedDeadFailedRevive_andCleanedUp_theBurstIsNotResolved_andItsDigestIsNotAllBack() throws Exception {
        TestStack s = burstOfThree();
        // b-3's host gives up on it; then an operator cleans it up. b-1 and b-2 come back.
        ok(s.agent("fail", "b-3", "{\"reason\":\"crash loop\",\"giveUp\":true}"));
        ok(s.agent("cleanup", "b-3", null));
        ok(s.agent("join", "b-1", null));
        ok(s.agent("join", "b-2", null));
        s.pump.drain();
        assertEquals(List.of(), onBus(s, "AlertBurstResolved"), "a failed revive is not back");
        JsonNode digest = digestAfterTheWindow(s);
        assertEquals(3, digest.path("deaths").asInt(), digest::toString);
        assertEquals(1, digest.path("failed").asInt(), digest::toString);
        assertFalse(digest.path("allBack").asBoolean(), digest::toString);
    }

    @Test
    void anAgentOfTheBurstRejoinsAfterDeadFailedRevive_isBack_andTheBurstResolvesOnce() throws Exception {
        TestStack s = burstOfThree();
        ok(s.agent("fail", "b-3", "{\"reason\":\"crash loop\",\"giveUp\":true}"));
        s.pump.drain();
        for (String id : List.of("b-1", "b-2", "b-3")) {
            ok(s.agent("join", id, null));
        }
        s.pump.drain();
        List<JsonNode> resolved = onBus(s, "AlertBurstResolved");
        assertEquals(1, resolved.size(), resolved::toString);
        assertEquals(Map.of("deaths", 3, "back", 3), Map.of("deaths", resolved.get(0).path("deaths").asInt(),
                "back", resolved.get(0).path("back").asInt()));
        JsonNode digest = digestAfterTheWindow(s);
        assertTrue(digest.path("allBack").asBoolean(), digest::toString);
        assertEquals(0, digest.path("failed").asInt(), digest::toString);
    }

    /**
     * Counting a stall fails open as a death's does: with the window's store refusing every call after the window's
     * first stall, each later stall is still its own AgentStalled without {@code burst}, alerted one by one, and no
     * burst of stalls starts.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void aStallCountingFailure_isNotABurst_eachStallIsPublishedOnItsOwn(String what,
                                                                      Supplier<RuntimeException> failure)
            throws Exception {
        StoreFaults faults = new StoreFaults();
        TestStack s = STACKS.open(TestStack.builder().interceptor(faults).parameter("AlertBurstThreshold", "1")
                .parameter("FleetSelfPreservationMinAlive", "100000"));
        List<String> agents = List.of("st-1", "st-2", "st-3", "st-4");
        agents.forEach(id -> ok(s.ready(id)));
        s.clock.advance(Duration.ofSeconds(1));
        for (String id : agents) {
            ok(s.team("batch-heartbeats", "{\"hostId\":\"box\",\"heartbeats\":[{\"agentId\":\"" + id
                    + "\",\"status\":\"working\",\"inTurn\":true}]}"));
        }
        s.pump.drain();
        s.clock.advance(Duration.ofSeconds(20));
        String stalled = ",\"progressAgeMs\":15000,\"stallReason\":\"model stream silent\",\"stalled\":true}]}";
        ok(s.team("batch-heartbeats", "{\"hostId\":\"box\",\"heartbeats\":[{\"agentId\":\"st-1\"" + stalled));
        s.pump.drain();
        StoreFaults.Fault refused = faults.fail(100_000, StoreFaults.alertWindow(), failure);
        for (String id : agents.subList(1, 4)) {
            ok(s.team("batch-heartbeats", "{\"hostId\":\"box\",\"heartbeats\":[{\"agentId\":\"" + id + "\""
                    + stalled));
        }
        s.pump.drain();

        assertTrue(refused.fired() >= 3, "the window's store refused the counting: " + refused.fired());
        List<JsonNode> stalls = onBus(s, "AgentStalled");
        assertEquals(4, stalls.size(), stalls::toString);
        for (JsonNode d : stalls) {
            assertFalse(d.has("burst"), () -> "not in a burst: alerted on its own: " + d);
        }
        assertEquals(List.of(), s.allItems().stream().filter(i -> i.get("pk").s().equals("OUTBOX#PARKED")).toList(),
                "nothing parked");
        assertEquals(List.of(), onBus(s, "AlertStallBurstStarted"), "no burst of stalls was counted");
    }
}
