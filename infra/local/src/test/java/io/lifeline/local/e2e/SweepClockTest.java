package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.aws.LocalQueues;
import io.lifeline.local.contract.gateway.IamPolicyTest;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.PolicyGuard;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.joda.time.DateTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * The sweep's clock without a Lambda that sleeps: the one-minute schedule sweeps once and queues the minute's other
 * sweeps on the template's SweepQueue, each delayed until it is due; the same function, fed by the queue's event
 * source, sweeps once per message and judges its lateness against the due time the message carries. Here through
 * Lifeline Local's stand-ins for SQS and Lambda's event source, with a test clock (four sweeps a minute, the death
 * on time at a queued sweep), through the JSON the Lambda runtime hands the function (EventBridge's and the event
 * source's), with the queue's permission missing (the schedule still sweeps, loudly), and in a running Local with
 * scaled intervals (the scheduler and the queue's deliveries on their own threads, bounded polls).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class SweepClockTest {
    private static final Instant T0 = TestStack.START;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    @AfterEach
    void restoreLog() {
        Log.sink(null);
    }

    private static List<JsonNode> sweepLines(List<String> lines) {
        List<JsonNode> out = new ArrayList<>();
        for (String l : lines) {
            if (l.contains("\"msg\":\"sweep\"")) {
                try {
                    out.add(Json.parse(l));
                } catch (IOException e) {
                    throw new AssertionError("a sweep line that is not JSON: " + l, e);
                }
            }
        }
        return out;
    }

    private static List<String> fireSchedule(TestStack s, Instant at) {
        s.clock.set(at);
        RequestHandler<ScheduledEvent, List<String>> sweep = s.host.handler("SweepFunction");
        ScheduledEvent event = new ScheduledEvent();
        event.setTime(new DateTime(at.toEpochMilli()));
        return sweep.handleRequest(event, new LocalContext("SweepFunction", "schedule-" + at));
    }

    private static String fixture(String name) throws IOException {
        try (InputStream in = SweepClockTest.class.getResourceAsStream("/events/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void productionPath_onATestClock_sweepsFourTimesAMinute_andAQueuedSweepMarksTheDeathOnTime() throws Exception {
        try (TestStack s = TestStack.builder().parameter("SelfPreservationMinAlive", "100000").build()) {
            TestStack.ok(s.ready("a1"));
            Log.sink(lines::add);
            // Three minutes of the template's clock: the schedule at each minute mark, then each queued sweep
            // delivered when the clock reaches its due time.
            for (int minute = 1; minute <= 3; minute++) {
                Instant mark = T0.plusSeconds(60L * minute);
                fireSchedule(s, mark);
                assertEquals(3, s.queues.pending().size(), "the minute's other sweeps are queued");
                for (LocalQueues.Message m : s.queues.pending()) {
                    s.clock.set(m.dueAt());
                    assertEquals(1, s.queues.deliverDue());
                }
            }
            List<JsonNode> sweeps = sweepLines(lines);
            assertEquals(12, sweeps.size(), "four sweeps a minute for three minutes: " + sweeps);
            assertEquals(3, sweeps.stream().filter(l -> l.path("queued").asInt() == 3).count(),
                    "one scheduled sweep a minute, each queuing three");
            assertEquals(12, sweeps.stream().filter(l -> l.path("outcome").asText().matches("idle|acted")).count(),
                    "every sweep on time judged");
            List<String> due = sweeps.stream().map(l -> l.path("due").asText()).toList();
            for (int k = 0; k < 12; k++) {
                assertEquals(T0.plusSeconds(60 + 15L * k).toString(), due.get(k), "sweep " + k + " 15 s apart");
            }
            // Stale after 60 s, grace 2: the first miss at the 75 s sweep, the death at the 90 s one, both queued.
            assertEquals(List.of(TestStack.TEAM + "/a1"), sweeps.stream()
                    .flatMap(l -> toList(l.path("markedDead")).stream()).toList(), "one death, once");
            JsonNode killer = sweeps.stream().filter(l -> l.path("markedDead").size() > 0).findFirst().orElseThrow();
            assertEquals(T0.plusSeconds(90).toString(), killer.path("due").asText());
            assertTrue(killer.path("queued").isMissingNode(), "a queued sweep: " + killer);
            assertEquals("dead", s.agentItem("a1").get("status").s());
            assertEquals(T0.plusSeconds(90).toString(), s.agentView("a1").get("lastTransition").get("at").asText());
            // The sweep function sends what its policy allows, and nothing else.
            assertTrue(s.host.policies().calls().contains(new PolicyGuard.Call("SweepFunction", "sqs:SendMessage",
                    "SweepQueue", true)), s.host.policies().calls().toString());
            assertEquals(List.of(), s.host.policies().denied());
        }
    }

    private static List<String> toList(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void runtimeEntry_readsEventBridgesScheduledEvent_andTheQueuesSqsEvent_asLambdaSendsThem() throws Exception {
        try (TestStack s = TestStack.builder().parameter("SelfPreservationMinAlive", "100000").build()) {
            Log.sink(lines::add);
            // EventBridge's event for the 12:01 schedule, arriving half a second after the minute mark.
            Instant start = Instant.parse("2026-03-01T12:01:00.500Z");
            s.clock.set(start);
            assertEquals("[]", s.host.invokeJson("SweepFunction", fixture("scheduled.json"),
                    new LocalContext("SweepFunction", "scheduled")));
            assertEquals(List.of(start.plusSeconds(15), start.plusSeconds(30), start.plusSeconds(45)),
                    s.queues.pending().stream().map(LocalQueues.Message::dueAt).toList(),
                    "queued sweeps are timed from the invocation's start");
            // The event source's batch of one queued sweep, due 12:01:15, arriving 0.2 s after it: on time.
            s.clock.set(Instant.parse("2026-03-01T12:01:15.200Z"));
            assertEquals("[]", s.host.invokeJson("SweepFunction", fixture("sqs-queued-sweep.json"),
                    new LocalContext("SweepFunction", "queued")));
            // The same message redelivered 25 s late (SQS offers it again after a failure): in Local, late.
            s.clock.set(Instant.parse("2026-03-01T12:01:40Z"));
            s.host.invokeJson("SweepFunction", fixture("sqs-queued-sweep.json"),
                    new LocalContext("SweepFunction", "redelivered"));
            List<JsonNode> sweeps = sweepLines(lines);
            assertEquals(3, sweeps.size(), sweeps.toString());
            assertEquals("2026-03-01T12:01:00Z", sweeps.get(0).path("due").asText(), "the schedule's own time");
            assertEquals(3, sweeps.get(0).path("queued").asInt());
            assertEquals("2026-03-01T12:01:15Z", sweeps.get(1).path("due").asText(), "the message's due time");
            assertEquals("idle", sweeps.get(1).path("outcome").asText());
            assertEquals("skipped_late", sweeps.get(2).path("outcome").asText());
            assertEquals(25_000, sweeps.get(2).path("lateMs").asLong());
        }
    }

    @Test
    void inAws_aQueuedSweepLateAgainstItsDueTime_stillJudges() throws Exception {
        try (TestStack s = TestStack.builder().parameter("SelfPreservationMinAlive", "100000")
                .skipLateSweeps(false).build()) {
            TestStack.ok(s.team("register", "{\"agentId\":\"g1\",\"name\":\"N\",\"role\":\"worker\",\"graceMisses\":1}"));
            TestStack.ok(s.agent("join", "g1", null));
            // Stale since 12:01:00; the queued sweep due 12:01:15 arrives 25 s late and judges all the same.
            s.clock.set(Instant.parse("2026-03-01T12:01:40Z"));
            assertEquals("[\"" + TestStack.TEAM + "/g1\"]", s.host.invokeJson("SweepFunction",
                    fixture("sqs-queued-sweep.json"), new LocalContext("SweepFunction", "late")));
        }
    }

    @Test
    void scheduledSweep_whenThePolicyLacksSendMessage_stillSweeps_andFailsTheInvocation(@TempDir Path dir)
            throws Exception {
        Path variant = IamPolicyTest.variant(dir, "Action: sqs:SendMessage", "Action: sqs:GetQueueUrl");
        try (TestStack s = TestStack.builder().template(variant).parameter("SelfPreservationMinAlive", "100000")
                .build().expectingDenials()) {
            TestStack.ok(s.team("register", "{\"agentId\":\"g1\",\"name\":\"N\",\"role\":\"worker\",\"graceMisses\":1}"));
            TestStack.ok(s.agent("join", "g1", null));
            Log.sink(lines::add);
            SqsException refused = assertThrows(SqsException.class, () -> fireSchedule(s, T0.plusSeconds(61)));
            assertEquals("AccessDeniedException", refused.awsErrorDetails().errorCode());
            // The queue refused the minute's other sweeps; the schedule's own sweep ran and marked the death.
            assertEquals("dead", s.agentItem("g1").get("status").s());
            assertEquals(List.of(), s.queues.pending());
            assertEquals(List.of(new PolicyGuard.Call("SweepFunction", "sqs:SendMessage", "SweepQueue", false)),
                    s.host.policies().denied());
            assertTrue(lines.stream().anyMatch(l -> l.contains("\"outcome\":\"queue_failed\"")), lines.toString());
        }
    }

    /**
     * A running Lifeline Local with scaled intervals (a sweep every 200 ms, so a schedule every 800 ms): its
     * scheduler fires the template's schedule and its SQS stand-in delivers the queued sweeps on their own thread.
     * Bounded polls on what the sweep logs; no sleeps.
     */
    @Test
    void lifelineLocal_withScaledIntervals_runsTheScheduleAndItsQueuedSweeps() throws Exception {
        Log.sink(lines::add);
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("SweepIntervalMillis", "200", "StaleAfterSeconds", "2"), Clock.systemUTC()))) {
            CrashRestartTest.poll(Duration.ofSeconds(60), "three schedules and six queued sweeps", () -> {
                List<JsonNode> sweeps = sweepLines(lines);
                return sweeps.stream().filter(l -> l.has("queued")).count() >= 3
                        && sweeps.stream().filter(l -> !l.has("queued")).count() >= 6;
            });
            List<JsonNode> sweeps = sweepLines(lines);
            assertTrue(sweeps.stream().filter(l -> l.has("queued")).allMatch(l -> l.path("queued").asInt() == 3),
                    "each schedule queues the three other sweeps of its (scaled) minute: " + sweeps);
            assertTrue(local.queues().delivered("SweepQueue") >= 6, "the queue's deliveries");
        }
    }
}
