package io.lifeline.local.contract.hosts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.agent.HostLeaseStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A silent host heard again: the first renewal after its lease was flagged expired removes
 * the flag with the outbox mark, and the publisher tells one {@code HostLeaseRestored} per silence, carrying the
 * silence's id ({@code expiredAt}) that its {@code HostLeaseExpired} carries too. Lifeline Local on the engine
 * with the test clock: stale after 60 s, sweeps every 15 s, so a host last renewed at 30 s is flagged at 105 s.
 */
@Tag("contract")
class HostLeaseRestoredTest {
    private static final Instant T0 = TestStack.START;
    private static final String TEAM = TestStack.TEAM;
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    private static TestStack deathsAllowed() throws Exception {
        return STACKS.open(TestStack.builder().parameter("SelfPreservationMinAlive", "100000"));
    }

    private static Instant t(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }

    private static void at(TestStack s, double seconds) {
        s.clock.set(t(seconds));
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

    private static void hosted(TestStack s, String hostId, List<String> ids) {
        TestStack.Reply r = s.team("batch-heartbeats", HostLeaseTest.hostedBody(hostId, ids, Map.of()));
        assertEquals(200, r.status(), r.body()::toString);
    }

    private static Map<String, AttributeValue> lease(TestStack s, String hostId) {
        Map<String, AttributeValue> item = s.item("TEAM#" + TEAM + "#HOST#" + hostId, "HOST");
        assertTrue(item != null && item.containsKey("at"), "no lease of " + hostId + ": " + item);
        return item;
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        s.pump.drain();
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().get("detail")).toList();
    }

    /** Agents ready and beating through {@code hostId} at 5 s and 30 s, then silent: flagged by the sweep at 105 s. */
    private static List<String> silentFrom30s(TestStack s, String hostId, String prefix) {
        List<String> ids = agents(prefix, 3);
        ids.forEach(id -> ok(s.ready(id)));
        at(s, 5);
        hosted(s, hostId, ids);
        at(s, 30);
        hosted(s, hostId, ids);
        for (double sec = 45; sec <= 105; sec += 15) {
            sweepAt(s, sec);
        }
        assertNotNull(lease(s, hostId).get("exp"), "flagged at 105 s");
        return ids;
    }

    @Test
    void silentHost_renewedAgain_isOneHostLeaseRestored_carryingTheExpiredEventsSilence() throws Exception {
        TestStack s = STACKS.open();
        List<String> ids = silentFrom30s(s, "host-r", "r");

        at(s, 110);
        hosted(s, "host-r", ids);
        Map<String, AttributeValue> lease = lease(s, "host-r");
        assertNull(lease.get("exp"), "the first renewal after the silence removes the flag");
        assertNull(lease.get("xa"), "and the agents it named");
        for (double sec = 111; sec <= 170; sec += 15) {
            at(s, sec);
            hosted(s, "host-r", ids);
            sweepAt(s, sec + 1);
        }

        List<JsonNode> expired = onBus(s, "HostLeaseExpired");
        List<JsonNode> restored = onBus(s, "HostLeaseRestored");
        assertEquals(1, expired.size());
        assertEquals(1, restored.size(), "one restored event however many renewals and sweeps follow");
        JsonNode d = restored.get(0);
        assertEquals("host-r", d.get("hostId").asText());
        assertEquals(TEAM, d.get("team").asText());
        assertEquals(t(105).toString(), d.get("expiredAt").asText());
        assertEquals(expired.get(0).get("expiredAt").asText(), d.get("expiredAt").asText(),
                "both events carry the silence's id");
        assertEquals(t(110).toString(), d.get("renewedAt").asText());
        assertEquals(t(110).toString(), d.get("at").asText());
        assertEquals(TEAM + "/host-r/lease-restored/" + t(105).toEpochMilli(), d.get("eventId").asText());
        assertFalse(lease(s, "host-r").containsKey("rx"), "a later renewal removes the restored fact");
    }

    @Test
    void twoSilencesOfOneHost_areTwoExpiredAndTwoRestored_eachPairSharingItsSilence() throws Exception {
        TestStack s = deathsAllowed();
        List<String> ids = silentFrom30s(s, "host-2", "two");
        at(s, 120);
        hosted(s, "host-2", ids);
        // Silent again from 120 s: the first sweep past 180 s flags it again.
        for (double sec = 135; sec <= 195; sec += 15) {
            sweepAt(s, sec);
        }
        at(s, 200);
        hosted(s, "host-2", ids);
        sweepAt(s, 210);

        List<JsonNode> expired = onBus(s, "HostLeaseExpired");
        List<JsonNode> restored = onBus(s, "HostLeaseRestored");
        assertEquals(2, expired.size());
        assertEquals(2, restored.size());
        assertEquals(List.of(t(105).toString(), t(195).toString()),
                expired.stream().map(e -> e.get("expiredAt").asText()).toList());
        assertEquals(List.of(t(105).toString(), t(195).toString()),
                restored.stream().map(e -> e.get("expiredAt").asText()).toList());
    }

    @Test
    void hostNeverSilent_renewalsAndSweeps_raiseNoHostLeaseRestored() throws Exception {
        TestStack s = STACKS.open();
        List<String> ids = agents("n", 3);
        ids.forEach(id -> ok(s.ready(id)));
        for (double sec = 5; sec <= 300; sec += 15) {
            at(s, sec);
            hosted(s, "host-n", ids);
            sweepAt(s, sec + 5);
        }

        assertEquals(0, onBus(s, "HostLeaseExpired").size());
        assertEquals(0, onBus(s, "HostLeaseRestored").size());
        assertNull(lease(s, "host-n").get("rx"));
    }

    @Test
    void flaggedLease_renewedWithoutTheBatchesRestore_isRestoredOnceByTheNextSweeps() throws Exception {
        TestStack s = STACKS.open();
        List<String> ids = silentFrom30s(s, "host-l", "l");
        // A renewal whose restore write was lost (the function died after the renewal): the flag stays.
        HostLeaseStore store = new HostLeaseStore(s.dynamo, s.tables);
        HostLeaseStore.Renewed renewed = store.renew(TEAM, "host-l",
                ids.stream().map(id -> new HostLeaseStore.Beat(id, t(110))).toList(), t(110));
        assertEquals(t(105), renewed.flagged(), "the renewal's answer names the flag it found, with no read");
        assertNotNull(lease(s, "host-l").get("exp"));
        assertEquals(0, onBus(s, "HostLeaseRestored").size());

        sweepAt(s, 120);
        sweepAt(s, 135);
        assertNull(lease(s, "host-l").get("exp"));
        List<JsonNode> restored = onBus(s, "HostLeaseRestored");
        assertEquals(1, restored.size(), "one restore, by the first sweep");
        assertEquals(t(120).toString(), restored.get(0).get("at").asText());
        assertEquals(t(110).toString(), restored.get(0).get("renewedAt").asText());
        assertFalse(store.restore(TEAM, "host-l", t(105), t(140)), "a second restore of that silence writes nothing");
        assertEquals(1, onBus(s, "HostLeaseRestored").size());
    }

    @Test
    void plainRenewal_ofAnUnflaggedLease_answersNoFlag() throws Exception {
        TestStack s = STACKS.open();
        HostLeaseStore store = new HostLeaseStore(s.dynamo, s.tables);
        List<HostLeaseStore.Beat> beats = List.of(new HostLeaseStore.Beat("p0", t(1)));
        assertNull(store.renew(TEAM, "host-p", beats, t(1)).flagged());
        assertNull(store.renew(TEAM, "host-p", beats, t(2)).flagged());
        assertFalse(store.restore(TEAM, "host-p", t(1), t(3)), "nothing to restore: no write");
        assertEquals(0, onBus(s, "HostLeaseRestored").size());
    }
}
