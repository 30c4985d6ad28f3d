package io.lifeline.local.contract.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.local.aws.LocalQueues;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Log;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.joda.time.DateTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A sweep that starts well after its schedule fired (more than half a sweep interval: the function, or the
 * whole of Lifeline Local, was stalled by a GC pause or a frozen host) judges nobody: heartbeats that queued
 * during the stall are landing at that moment, and judging first would blame agents for the service's own
 * silence. The next sweep on time judges as usual. Found by the soak's stop-the-world pauses (SoakTest); here
 * with a test clock and an agent of grace 1, where one wrong miss is a death. Only where heartbeats share the
 * sweep's process (Local hands the sweep function its {@code LateSweepGate}); in AWS a late schedule is normal. The
 * minute's queued sweeps are judged late against the due time their message carries.
 */
@Tag("contract")
class LateSweepTest {
    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.builder().parameter("SelfPreservationMinAlive", "100000").build();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** The template's SweepFunction, invoked as the schedule would have at {@code firedAt}. */
    private static List<String> sweepFiredAt(Instant firedAt) {
        RequestHandler<ScheduledEvent, List<String>> sweep = stack.host.handler("SweepFunction");
        ScheduledEvent event = new ScheduledEvent();
        event.setTime(new DateTime(firedAt.toEpochMilli()));
        return sweep.handleRequest(event, new LocalContext("SweepFunction", UUID.randomUUID().toString()));
    }

    private static void registerGraceOne(String id) {
        assertEquals(201, stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"N\",\"role\":\"worker\","
                + "\"graceMisses\":1}").status());
        assertEquals(200, stack.agent("join", id, null).status());
    }

    @Test
    void sweepStartingLateAfterAStall_judgesNobody_soTheQueuedHeartbeatLandsFirst() {
        registerGraceOne("late-1");
        // Stale by 1 s when the stalled sweep finally runs, 10 s after its schedule fired (interval 15 s).
        stack.clock.advance(Duration.ofSeconds(61));
        assertEquals(List.of(), sweepFiredAt(stack.clock.instant().minusSeconds(10)), "nobody judged");
        assertEquals("ready", stack.agentItem("late-1").get("status").s());
        var misses = stack.agentItem("late-1").get("misses");
        assertEquals("0", misses == null ? "0" : misses.n(), "not even a miss");
        // The heartbeat that queued during the stall lands; the next sweep, on time, finds the agent alive.
        assertEquals(200, stack.heartbeat("late-1", "{}").status());
        stack.clock.advance(Duration.ofSeconds(15));
        assertEquals(false, sweepFiredAt(stack.clock.instant()).contains("acme/late-1"));
        assertEquals("ready", stack.agentItem("late-1").get("status").s());
    }

    @Test
    void sweepOnTime_orLateByLessThanHalfAnInterval_judgesAsUsual() {
        registerGraceOne("ontime-1");
        registerGraceOne("ontime-2");
        stack.clock.advance(Duration.ofSeconds(61));
        assertEquals(List.of("acme/ontime-1", "acme/ontime-2"), sweepFiredAt(stack.clock.instant().minusSeconds(7))
                .stream().filter(id -> id.startsWith("acme/ontime-")).sorted().toList());
    }

    @Test
    void inAws_aLateScheduleSaysNothingAboutHeartbeats_soTheSweepJudges() throws Exception {
        // The Lambda runtime's handler judges every sweep: EventBridge fires a 1-minute schedule at some second of the minute while the
        // event's time is the minute mark, and the heartbeat function does not share the sweep's process.
        try (TestStack aws = TestStack.builder().parameter("SelfPreservationMinAlive", "100000")
                .skipLateSweeps(false).build()) {
            assertEquals(201, aws.team("register", "{\"agentId\":\"aws-1\",\"name\":\"N\",\"role\":\"worker\","
                    + "\"graceMisses\":1}").status());
            assertEquals(200, aws.agent("join", "aws-1", null).status());
            aws.clock.advance(Duration.ofSeconds(61));
            RequestHandler<ScheduledEvent, List<String>> sweep = aws.host.handler("SweepFunction");
            ScheduledEvent event = new ScheduledEvent();
            event.setTime(new DateTime(aws.clock.instant().minusSeconds(40).toEpochMilli()));
            assertEquals(List.of("acme/aws-1"), sweep.handleRequest(event,
                    new LocalContext("SweepFunction", UUID.randomUUID().toString())));
        }
    }

    @Test
    void sweepWithoutAScheduledTime_judgesAsUsual() {
        registerGraceOne("notime-1");
        stack.clock.advance(Duration.ofSeconds(61));
        assertEquals(true, stack.sweep().contains("acme/notime-1"));
    }

    @Test
    void queuedSweepOfTheMinute_deliveredLateAgainstItsDueTime_judgesNobody_norDoesTheNextWithinAnInterval()
            throws Exception {
        // A stack of its own: the shared one holds the sweeps other tests' schedules queued.
        try (TestStack s = TestStack.builder().parameter("SelfPreservationMinAlive", "100000").build()) {
            assertEquals(201, s.team("register", "{\"agentId\":\"queued-1\",\"name\":\"N\",\"role\":\"worker\","
                    + "\"graceMisses\":1}").status());
            assertEquals(200, s.agent("join", "queued-1", null).status());
            s.clock.advance(Duration.ofSeconds(50));
            // The minute's schedule, on time: it judges (nobody is stale yet) and queues the minute's other
            // sweeps, due 15, 30 and 45 s later.
            Instant scheduled = s.clock.instant();
            RequestHandler<ScheduledEvent, List<String>> sweep = s.host.handler("SweepFunction");
            ScheduledEvent event = new ScheduledEvent();
            event.setTime(new DateTime(scheduled.toEpochMilli()));
            assertEquals(List.of(), sweep.handleRequest(event, new LocalContext("SweepFunction", "schedule")));
            assertEquals(List.of(scheduled.plusSeconds(15), scheduled.plusSeconds(30), scheduled.plusSeconds(45)),
                    s.queues.pending().stream().map(LocalQueues.Message::dueAt).toList());
            List<String> lines = new CopyOnWriteArrayList<>();
            Log.sink(lines::add);
            try {
                // The first queued sweep arrives 8 s after its due time (more than half an interval): the process
                // was stalled. The agent has been stale since 60 s, so judging would kill it (grace 1).
                s.clock.set(scheduled.plusSeconds(15 + 8));
                assertEquals(1, s.queues.deliverDue());
                // The next, on time but 7 s after the skipped one, judges nobody either: the heartbeats queued
                // behind the stall get a whole interval to land.
                s.clock.set(scheduled.plusSeconds(30));
                assertEquals(1, s.queues.deliverDue());
            } finally {
                Log.sink(null);
            }
            List<String> sweeps = lines.stream().filter(l -> l.contains("\"msg\":\"sweep\"")).toList();
            assertEquals(2, sweeps.size(), lines::toString);
            assertEquals(true, sweeps.get(0).contains("\"outcome\":\"skipped_late\""), sweeps.get(0));
            assertEquals(true, sweeps.get(1).contains("\"outcome\":\"skipped_late\"")
                    && sweeps.get(1).contains("\"heldUntil\""), sweeps.get(1));
            assertEquals("ready", s.agentItem("queued-1").get("status").s());
            // The last queued sweep of the minute, on time and more than an interval after the skip, judges.
            s.clock.set(scheduled.plusSeconds(45));
            assertEquals(1, s.queues.deliverDue());
            assertEquals("dead", s.agentItem("queued-1").get("status").s());
        }
    }
}
