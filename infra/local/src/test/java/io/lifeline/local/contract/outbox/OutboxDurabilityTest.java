package io.lifeline.local.contract.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.outbox.OutboxParking;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/**
 * The outbox cannot be stalled by one record, and loses nothing silently. A record that fails
 * for a reason that does not pass is parked (with its images and error) and the records behind it are published;
 * one that keeps failing transiently past the outbox's wait is parked too and the repair re-drives it; and when
 * the stream itself loses records (a publisher stalled past the stream's retention), the repair replays what they
 * would have done: the transition record, the hand-back, the leader's notice and the events, each once.
 */
@Timeout(120)
@Tag("contract")
class OutboxDurabilityTest {

    private static OutboxParking parking(TestStack s) {
        return new OutboxParking(s.dynamo, s.tables, Duration.ofDays(30));
    }

    private static Map<?, ?> repair(TestStack s) {
        RequestHandler<ScheduledEvent, Map<?, ?>> repair = s.host.handler("OutboxRepairFunction");
        return repair.handleRequest(new ScheduledEvent(), null);
    }

    private static Set<String> statusEventsFor(TestStack s, String agentId) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals("AgentStatusChanged"))
                .filter(d -> agentId.equals(d.event().get("detail").get("agentId").asText()))
                .map(d -> d.event().get("detail").get("eventId").asText()).collect(Collectors.toSet());
    }

    private static void ok(TestStack.Reply r) {
        assertTrue(r.status() / 100 == 2, () -> r.status() + " " + r.body());
    }

    @Test
    void poisonRecord_betweenGoodOnes_isParkedWithItsError_andTheGoodOnesArePublished() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready("p-1"));
            ok(s.ready("p-2"));
            ok(s.ready("p-3"));
            s.pump.drain();
            ok(s.agent("fail", "p-1", "{\"reason\":\"crash\"}"));
            // An item edited by hand: a status no code knows, stamped as a transition for the outbox.
            s.dynamo.updateItem(u -> u.tableName(s.tables.live())
                    .key(Map.of("pk", AttributeValue.fromS(TestStack.agentPartition("p-2")),
                            "sk", AttributeValue.fromS("AGENT")))
                    .updateExpression("SET #s = :zombie, tseq = tseq + :one, ob = :t")
                    .expressionAttributeNames(Map.of("#s", "status"))
                    .expressionAttributeValues(Map.of(":zombie", AttributeValue.fromS("zombie"),
                            ":one", AttributeValue.fromN("1"), ":t", AttributeValue.fromBool(true))));
            ok(s.agent("fail", "p-3", "{\"reason\":\"crash\"}"));
            s.pump.drain();

            assertEquals(1, statusEventsFor(s, "p-1").stream().filter(id -> id.endsWith("/status/2")).count(),
                    "the death before the poison record is published");
            assertEquals(1, statusEventsFor(s, "p-3").stream().filter(id -> id.endsWith("/status/2")).count(),
                    "the death after it is published: the shard moved on");
            List<OutboxParking.Parked> parked = parking(s).list(10);
            assertEquals(1, parked.size(), parked.toString());
            assertEquals("zombie", parked.get(0).newImage().get("status").s());
            assertTrue(parked.get(0).error().contains("NoSuchElementException"), parked.get(0).error());
            // Re-driven, it fails the same way: it stays parked, its attempts counted, nothing sent.
            int before = s.bus.delivered().size();
            assertEquals(0, ((Number) repair(s).get("redriven")).intValue());
            assertEquals(2, parking(s).list(10).get(0).attempts());
            assertEquals(before, s.bus.delivered().size());
        }
    }

    @Test
    void transientFailure_longerThanTheOutboxWaits_isParked_thenTheRepairRedrivesIt_once() throws Exception {
        StoreFaults faults = new StoreFaults();
        try (TestStack s = TestStack.builder().interceptor(faults).build()) {
            ok(s.ready("t-1"));
            ok(s.ready("t-2"));
            s.pump.drain();
            // Every write of t-1's next transition record is throttled, twice: long enough to be parked.
            StoreFaults.Fault throttled = faults.fail(2, r -> r instanceof PutItemRequest p
                    && p.item().get("pk").s().equals(TestStack.agentPartition("t-1"))
                    && p.item().get("sk").s().startsWith("T#"), StoreFaults::throttled);
            ok(s.agent("fail", "t-1", "{\"reason\":\"crash\"}"));
            s.pump.drain();
            assertEquals(1, throttled.fired());
            assertTrue(parking(s).list(10).isEmpty(), "a transient failure is retried, not parked at once");
            s.clock.advance(Duration.ofMinutes(16));
            ok(s.agent("fail", "t-2", "{\"reason\":\"crash\"}"));
            s.pump.drain();
            assertEquals(2, throttled.fired());
            assertEquals(1, parking(s).list(10).size(), "failing for 16 minutes: parked, and the shard moved on");
            assertEquals(1, statusEventsFor(s, "t-2").stream().filter(id -> id.endsWith("/status/2")).count(),
                    "the record behind it is published");
            assertTrue(statusEventsFor(s, "t-1").stream().noneMatch(id -> id.endsWith("/status/2")));

            Map<?, ?> done = repair(s);
            assertEquals(1, ((Number) done.get("redriven")).intValue(), done.toString());
            assertTrue(parking(s).list(10).isEmpty());
            assertEquals(1, statusEventsFor(s, "t-1").stream().filter(id -> id.endsWith("/status/2")).count());
            assertEquals(2, s.recordedTransitions("t-1").size(), "the join and the death");
            assertEquals(0, ((Number) repair(s).get("redriven")).intValue(), "nothing left to re-drive");
        }
    }

    @Test
    void publisherOutage_longerThanTheStreamKeepsRecords_isRepaired_handBackNoticeAndEventsEachOnce()
            throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.send("put-settings", s.adminKey, Map.of("team", TestStack.TEAM), null,
                    "{\"leaderAgentId\":\"lead\"}"));
            ok(s.ready("lead"));
            ok(s.ready("o-1"));
            ok(s.createTask("o-task"));
            ok(s.task("claim", "o-task", "{\"agentId\":\"o-1\"}"));
            s.pump.drain();
            int before = s.bus.delivered().size();

            ok(s.agent("fail", "o-1", "{\"reason\":\"crash\"}"));
            assertTrue(s.pump.discardPending() > 0, "the death's record is lost to the stream");
            assertEquals(before, s.bus.delivered().size());
            assertEquals("in_progress", s.item("TEAM#" + TestStack.TEAM, "TASK#o-task").get("status").s());

            // Within the outbox's normal lag the repair does nothing; past it, it replays the death.
            assertEquals(0, ((Number) repair(s).get("replays")).intValue());
            s.clock.advance(Duration.ofMinutes(6));
            assertEquals(1, ((Number) repair(s).get("replays")).intValue());
            s.pump.drain();

            assertEquals("pending", s.item("TEAM#" + TestStack.TEAM, "TASK#o-task").get("status").s(),
                    "the task went back");
            Set<String> types = s.bus.delivered().subList(before, s.bus.delivered().size()).stream()
                    .map(LocalEventBus.Delivered::detailType).collect(Collectors.toSet());
            assertTrue(types.containsAll(Set.of("AgentStatusChanged", "TasksReassigned", "LeaderNotified")),
                    types.toString());
            assertNotNull(s.item(TestStack.agentPartition("o-1"), String.format("T#%012d", 3)),
                    "the death's transition record is written");
            Map<String, AttributeValue> item = s.agentItem("o-1");
            assertEquals(item.get("tseq").n(), item.get("ps").n(), "the watermark reached the death");

            // Published now: another repair replays nothing, and no event is sent twice.
            int after = s.bus.delivered().size();
            s.clock.advance(Duration.ofMinutes(20));
            assertEquals(0, ((Number) repair(s).get("replays")).intValue());
            s.pump.drain();
            assertEquals(after, s.bus.delivered().size());
            List<String> ids = s.bus.delivered().stream().map(d -> d.event().get("detail").get("eventId").asText())
                    .toList();
            assertEquals(ids.size(), Set.copyOf(ids).size(), "every event id reached the bus once");
        }
    }
}
