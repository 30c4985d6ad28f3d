package io.lifeline.local.contract.heartbeats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.local.stack.TestStack;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One agent, {@value #THREADS} threads each sending {@value #BEATS} heartbeats that report ready or working
 * at random, and a leave part-way through, all against the same engine. Afterwards the item, the
 * outbox's records and the answers must tell one consistent story. The seed is printed; rerun a failure with
 * {@code -Dlifeline.raceSeed=<seed>} (thread interleaving still varies, the reported statuses do not).
 */
@Tag("contract")
class HeartbeatRaceTest {
    private static final int THREADS = 8;
    private static final int BEATS = 50;
    /** The leave is sent once this many heartbeats have been answered. */
    private static final int LEAVE_AFTER = THREADS * BEATS / 3;
    private static final String AGENT = "race-1";

    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** One request: what it reported, when it started and ended on a shared logical clock, what it got. */
    private record Call(String reported, long start, long end, int status, String code, String agentStatus,
                        String retryAfter) {
    }

    /** What one run produced: every heartbeat's call and the leave's. */
    private record Run(List<Call> calls, Call leave) {
    }

    /**
     * Registers and joins {@code agentId}, then {@value #THREADS} threads send {@value #BEATS} heartbeats each
     * (reporting a random status when {@code report} is set, none otherwise) while another sends a leave once
     * {@value #LEAVE_AFTER} heartbeats have been answered.
     */
    private static Run run(String agentId, long seed, boolean report) throws Exception {
        assertEquals(200, stack.ready(agentId).status());
        AtomicLong ticks = new AtomicLong();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch leaveGate = new CountDownLatch(LEAVE_AFTER);
        List<Call> calls = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
        List<Future<?>> beaters = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Random random = new Random(seed + t);
            beaters.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < BEATS; i++) {
                    String reported = report ? (random.nextBoolean() ? "ready" : "working") : null;
                    long start = ticks.incrementAndGet();
                    TestStack.Reply r = stack.heartbeat(agentId,
                            reported == null ? "{}" : "{\"status\":\"" + reported + "\"}");
                    long end = ticks.incrementAndGet();
                    calls.add(new Call(reported, start, end, r.status(), r.code(), r.text("agentStatus"),
                            r.headers().get("retry-after")));
                    leaveGate.countDown();
                }
                return null;
            }));
        }
        Future<Call> leaver = pool.submit(() -> {
            go.await();
            assertTrue(leaveGate.await(120, TimeUnit.SECONDS), "heartbeats did not get going");
            long start = ticks.incrementAndGet();
            TestStack.Reply r = stack.agent("leave", agentId, null);
            long end = ticks.incrementAndGet();
            return new Call(null, start, end, r.status(), r.code(), r.text("status"), null);
        });
        go.countDown();
        for (Future<?> f : beaters) {
            f.get(5, TimeUnit.MINUTES);
        }
        Call leave = leaver.get(5, TimeUnit.MINUTES);
        pool.shutdown();
        assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        return new Run(List.copyOf(calls), leave);
    }

    @Test
    void concurrentReportsAndLeave_leaveAConsistentChainOfAllowedTransitions() throws Exception {
        long seed = Long.getLong("lifeline.raceSeed", System.nanoTime());
        System.out.println("HeartbeatRaceTest seed: " + seed + " (rerun with -Dlifeline.raceSeed=" + seed + ")");
        Run run = run(AGENT, seed, true);
        List<Call> calls = run.calls();
        Call leave = run.leave();

        // ---- the answers ---------------------------------------------------------------------------
        assertEquals(200, leave.status(), "the leave succeeded");
        assertEquals("offline", leave.agentStatus());
        assertEquals(THREADS * BEATS, calls.size());
        int ok = 0;
        int rejoin = 0;
        int contended = 0;
        for (Call c : calls) {
            if (c.status() == 200) {
                ok++;
                assertEquals(c.reported(), c.agentStatus(), "an accepted heartbeat leaves the agent as it reported");
                assertTrue(c.start() < leave.end(), "a heartbeat started after the leave succeeded was accepted: "
                        + c + " vs " + leave);
            } else if (c.status() == 409) {
                rejoin++;
                assertEquals("REJOIN_REQUIRED", c.code(), c.toString());
                assertEquals("offline", c.agentStatus(), c.toString());
                assertTrue(c.end() > leave.start(), "refused before the leave was even sent: " + c);
            } else if (c.status() == 503 && "CONTENDED".equals(c.code())) {
                // Allowed: the status flipped under this heartbeat on every one of its attempts, which takes
                // other writers reporting the opposite status for the same agent. It wrote nothing (see the
                // beats count below) and asks the caller to retry. It cannot happen once the agent is offline.
                contended++;
                assertEquals("1", c.retryAfter(), "a CONTENDED answer says when to retry");
                assertTrue(c.start() < leave.end(), "CONTENDED after the leave: " + c);
            } else {
                throw new AssertionError("unexpected answer " + c);
            }
        }
        for (Call c : calls) {
            if (c.start() > leave.end()) {
                assertEquals(409, c.status(), "every heartbeat after the leave's success is refused: " + c);
            }
        }
        System.out.printf("HeartbeatRaceTest: %d accepted, %d REJOIN_REQUIRED, %d CONTENDED (503)%n",
                ok, rejoin, contended);
        assertTrue(contended <= ok, "CONTENDED stays the exception: " + contended + " vs " + ok + " accepted");
        assertTrue(rejoin > 0, "some heartbeats came after the leave");

        // ---- the item and the outbox -----------------------------------------------------------------
        stack.pump.drain();
        Map<String, AttributeValue> item = stack.agentItem(AGENT);
        assertEquals("offline", item.get("status").s());
        assertEquals(1 + ok, Long.parseLong(item.get("beats").n()),
                "beats counts the join and every accepted heartbeat exactly once (refused and CONTENDED: none)");
        List<Map<String, AttributeValue>> recorded = stack.recordedTransitions(AGENT);
        long tseq = Long.parseLong(item.get("tseq").n());
        assertEquals(tseq, recorded.size(), "one record per stamped transition, none lost, none doubled");

        AgentStatus previous = AgentStatus.OFFLINE;
        int reports = 0;
        for (int i = 0; i < recorded.size(); i++) {
            Map<String, AttributeValue> r = recorded.get(i);
            AgentStatus from = AgentStatus.fromWire(r.get("from").s()).orElseThrow();
            AgentStatus to = AgentStatus.fromWire(r.get("to").s()).orElseThrow();
            Trigger trigger = Trigger.fromWire(r.get("trigger").s()).orElseThrow();
            assertEquals(i + 1, Long.parseLong(r.get("seq").n()), "seq is contiguous from 1");
            assertEquals(previous, from, "record " + (i + 1) + " starts where the previous one ended");
            assertNotEquals(from, to, "record " + (i + 1) + " is a real change");
            assertTrue(TransitionTable.allows(from, trigger, to), "record " + (i + 1) + " is allowed: " + r);
            if (i == 0) {
                assertEquals(Trigger.JOIN, trigger);
            } else if (i == recorded.size() - 1) {
                assertEquals(Trigger.LEAVE, trigger);
            } else {
                assertTrue(trigger == Trigger.REPORT_READY || trigger == Trigger.REPORT_WORKING, r.toString());
                reports++;
            }
            previous = to;
        }
        assertEquals(AgentStatus.OFFLINE, previous);
        assertTrue(reports <= ok, "no more status changes than accepted heartbeats");
        System.out.printf("HeartbeatRaceTest: %d transitions (%d heartbeat-reported changes)%n",
                recorded.size(), reports);

        // GET transitions (newest first) agrees with the records.
        List<JsonNode> api = stack.transitions(AGENT, 100);
        assertEquals(Math.min(100, recorded.size()), api.size());
        for (int i = 0; i < api.size(); i++) {
            Map<String, AttributeValue> r = recorded.get(recorded.size() - 1 - i);
            assertEquals(Long.parseLong(r.get("seq").n()), api.get(i).get("seq").asLong());
            assertEquals(r.get("trigger").s(), api.get(i).get("trigger").asText());
        }
    }

    @Test
    void concurrentPlainHeartbeatsAndLeave_neverContend_andNothingButJoinAndLeaveIsRecorded() throws Exception {
        Run run = run("race-plain", 0, false);
        int ok = 0;
        for (Call c : run.calls()) {
            if (c.status() == 200) {
                ok++;
                assertTrue(c.start() < run.leave().end(), c.toString());
                assertTrue(AgentStatus.fromWire(c.agentStatus()).orElseThrow().isAlive(), c.toString());
            } else {
                assertEquals(409, c.status(), "without status reports there is nothing to contend over: " + c);
                assertEquals("REJOIN_REQUIRED", c.code());
                assertTrue(c.end() > run.leave().start(), c.toString());
            }
            if (c.start() > run.leave().end()) {
                assertEquals(409, c.status(), c.toString());
            }
        }
        assertEquals(200, run.leave().status());
        stack.pump.drain();
        Map<String, AttributeValue> item = stack.agentItem("race-plain");
        assertEquals("offline", item.get("status").s());
        assertEquals(1 + ok, Long.parseLong(item.get("beats").n()));
        List<Map<String, AttributeValue>> recorded = stack.recordedTransitions("race-plain");
        assertEquals(List.of("join", "leave"), recorded.stream().map(r -> r.get("trigger").s()).toList());
        assertEquals("2", item.get("tseq").n());
    }
}
