package io.lifeline.local.contract.outbox;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.stack.SharedDynamo;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequest;

/**
 * What one death costs the outbox: the death by the sweep of an agent that holds a
 * task, in a team with a leader, on a host (so the revive flow asks the host for a restart). Counted on the
 * live table's stream (records the pump read), on the publisher (invocations) and on the bus (PutEvents calls,
 * by an interceptor on the functions' EventBridge client).
 */
@Tag("contract")
class OutboxPassTest {
    private static final Instant T0 = TestStack.START;
    private static final String PUBLISHER = "PublisherFunction";

    /** One PutEvents call: the detail-type and event id of each entry. */
    record Call(List<String> types, List<String> eventIds) {
    }

    /** Records every PutEvents call the functions make. */
    static final class PutEventsCalls implements ExecutionInterceptor {
        final List<Call> calls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof PutEventsRequest put) {
                List<String> types = new ArrayList<>();
                List<String> ids = new ArrayList<>();
                put.entries().forEach(e -> {
                    types.add(e.detailType());
                    try {
                        ids.add(Json.parse(e.detail()).get("eventId").asText());
                    } catch (IOException notJson) {
                        throw new IllegalStateException("a detail that is not JSON: " + e.detail(), notJson);
                    }
                });
                calls.add(new Call(types, ids));
            }
        }

        List<Call> containing(String eventId) {
            return calls.stream().filter(c -> c.eventIds().contains(eventId)).toList();
        }

        List<Call> carrying(String type) {
            return calls.stream().filter(c -> c.types().contains(type)).toList();
        }
    }

    /** The scene up to the sweep that kills a1: lead (the leader) beats, a1 (on host-1, holding t1) is silent. */
    private static void upToTheDeathSweep(TestStack s) {
        ok(s.ready("lead"));
        ok(s.ready("a1"));
        ok(s.team("put-settings", "{\"leaderAgentId\":\"lead\"}"));
        ok(s.createTask("t1"));
        ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));
        s.clock.set(T0.plusSeconds(75));
        ok(s.heartbeat("lead", "{}"));
        assertEquals(List.of(), s.sweep(), "a1's first miss");
        s.clock.set(T0.plusSeconds(90));
        ok(s.heartbeat("lead", "{}"));
        s.pump.drain();
        s.stepFunctions.runDue();
    }

    /** Sweeps a1 dead and lets the outbox and the revive flow run until nothing is left to do. */
    private static void deathSweep(TestStack s) {
        assertEquals(List.of(TestStack.TEAM + "/a1"), s.sweep());
        for (int i = 0; i < 5; i++) {
            s.pump.drain();
            s.stepFunctions.runDue();
        }
    }

    /** The id of a1's AgentStatusChanged to dead, from its history. */
    private static String deathEventId(TestStack s) {
        List<JsonNode> deaths = s.transitions("a1", 100).stream().filter(t -> t.get("to").asText().equals("dead"))
                .toList();
        assertEquals(1, deaths.size(), deaths::toString);
        return "acme/a1/status/" + deaths.get(0).get("seq").asLong();
    }

    private static String taskStatus(TestStack s, String taskId) {
        for (JsonNode t : ok(s.team("list-tasks", null)).body().get("tasks")) {
            if (t.path("taskId").asText().equals(taskId)) {
                return t.get("status").asText();
            }
        }
        throw new AssertionError("no task " + taskId);
    }

    @Test
    void deathBySweep_ofAnAgentWithTaskLeaderAndHost_readsAtMostFourStreamRecords_inOnePublisherPass()
            throws Exception {
        PutEventsCalls bus = new PutEventsCalls();
        try (TestStack s = TestStack.builder().busInterceptor(bus).build()) {
            upToTheDeathSweep(s);
            long read = s.pump.recordsRead();
            long invoked = s.pump.invocations(PUBLISHER);
            long delivered = s.pump.recordsDelivered(PUBLISHER);
            int callsBefore = bus.calls.size();

            deathSweep(s);

            assertEquals("restarting", s.status("a1"), "the revive flow took over and asked host-1");
            assertEquals("pending", taskStatus(s, "t1"));
            long records = s.pump.recordsRead() - read;
            assertTrue(records <= 4, "stream records for the death: " + records);

            // Of those, the publisher is given only the two that carry a fact: the death, and the flow's restarting
            // with its restart command stamped in the same write (the publisher's finishing write, which clears a1's
            // task and moves the published watermark, is filtered out); the death in one pass: no invocation after
            // it carries anything the death caused (asserted on the bus below).
            assertEquals(2, s.pump.recordsDelivered(PUBLISHER) - delivered, "records that carry a fact");
            long passes = s.pump.invocations(PUBLISHER) - invoked;
            assertTrue(passes >= 1 && passes <= 2, "publisher invocations: " + passes);
            assertEquals(passes, bus.calls.size() - callsBefore, "one PutEvents per publisher invocation");

            String death = deathEventId(s);
            List<Call> withDeath = bus.containing(death);
            assertEquals(1, withDeath.size(), "the death went out in one PutEvents: " + bus.calls);
            assertTrue(withDeath.get(0).types().containsAll(List.of("AgentStatusChanged", "TasksReassigned",
                    "LeaderNotified")), "the same PutEvents carries what the death caused: " + withDeath);
            List<Call> since = bus.calls.subList(callsBefore, bus.calls.size());
            assertEquals(1, since.stream().filter(c -> c.types().contains("TasksReassigned")).count(), since::toString);
            assertEquals(1, since.stream().filter(c -> c.types().contains("LeaderNotified")).count(), since::toString);
            assertEquals(1, bus.carrying("AgentRestartRequested").size(), "the restart command, once");
        }
    }

    @Test
    void heartbeatsAndMisses_neverInvokeThePublisher() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready("b1"));
            ok(s.ready("b2"));
            s.pump.drain();
            long invoked = s.pump.invocations(PUBLISHER);
            long read = s.pump.recordsRead();

            for (int i = 0; i < 100; i++) {
                s.clock.advance(Duration.ofMillis(500));
                ok(s.heartbeat("b1", "{}"));
            }
            // b2 is silent long enough for one miss (grace 2: not yet dead); b1 keeps beating.
            s.clock.set(T0.plusSeconds(75));
            ok(s.heartbeat("b1", "{}"));
            assertEquals(List.of(), s.sweep());
            assertEquals(1, Integer.parseInt(s.agentItem("b2").get("misses").n()));
            s.pump.drain();

            assertTrue(s.pump.recordsRead() - read >= 101, "the beats and the miss are on the stream");
            assertEquals(invoked, s.pump.invocations(PUBLISHER), "but none of them invoked the publisher");
        }
    }

    @Test
    void replay_ofTheDeathRecord_sendsTasksReassignedAndLeaderNotifiedWithTheSameIds_onlyWhereTheLogLacksThem() throws Exception {
        PutEventsCalls bus = new PutEventsCalls();
        try (TestStack s = TestStack.builder().busInterceptor(bus).build()) {
            upToTheDeathSweep(s);
            deathSweep(s);
            String death = deathEventId(s);
            Call first = bus.containing(death).get(0);
            List<String> caused = causedIds(first);
            assertEquals(2, caused.size(), first::toString);

            // With the event log intact, a replay sends nothing already sent (the publisher reads the log first).
            replay(s);
            assertEquals(1, bus.containing(death).size(), "nothing sent twice: " + bus.calls);

            // As if the first pass's log write had been lost after its PutEvents: the replay sends the death and
            // what it caused again, in one PutEvents, with the very same ids, and logs each once.
            List<String> ids = new ArrayList<>(caused);
            ids.add(death);
            int removed = forgetLogged(s, ids);
            assertEquals(3, removed, "the team log's copies of the three events");
            replay(s);
            List<Call> again = bus.containing(death);
            assertEquals(2, again.size(), "the replay sent the death again, in one PutEvents: " + bus.calls);
            assertEquals(caused, causedIds(again.get(1)), "with the very same ids for what it caused");
            List<String> logged = new ArrayList<>();
            ok(s.send("events", s.adminKey, Map.of("team", TestStack.TEAM), Map.of("limit", "100"),
                    null)).body().get("events").forEach(e -> logged.add(e.get("eventId").asText()));
            for (String id : ids) {
                assertEquals(1, Collections.frequency(logged, id), id + " logged once: " + logged);
            }
        }
    }

    /** The whole stream again, from TRIM_HORIZON, through a fresh container (which remembers nothing). */
    private static void replay(TestStack s) throws Exception {
        try (DynamoDbStreamsClient streams = SharedDynamo.streams()) {
            StreamPump replay = new StreamPump(streams, s.streamArn(), StreamPump.consumers(s.freshHost()), null);
            assertTrue(replay.drain() > 0);
        }
    }

    /** Deletes the team event log's copies of {@code eventIds}; answers how many items it deleted. */
    private static int forgetLogged(TestStack s, List<String> eventIds) {
        int removed = 0;
        for (var page : s.dynamo.scanPaginator(r -> r.tableName(s.tables.ledger()))) {
            for (var item : page.items()) {
                AttributeValue id = item.get("eventId");
                if (id != null && eventIds.contains(id.s()) && item.get("pk").s().matches(".*#EVENTS(#[0-9]+)?")) {
                    s.dynamo.deleteItem(d -> d.tableName(s.tables.ledger())
                            .key(Map.of("pk", item.get("pk"), "sk", item.get("sk"))));
                    removed++;
                }
            }
        }
        return removed;
    }

    /** The ids of the TasksReassigned and LeaderNotified entries of a call, in order. */
    private static List<String> causedIds(Call c) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < c.types().size(); i++) {
            if (c.types().get(i).equals("TasksReassigned") || c.types().get(i).equals("LeaderNotified")) {
                ids.add(c.eventIds().get(i));
            }
        }
        return ids;
    }
}
