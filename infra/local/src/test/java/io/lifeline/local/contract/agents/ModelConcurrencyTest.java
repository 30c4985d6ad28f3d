package io.lifeline.local.contract.agents;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.local.stack.TestStack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A seeded random driver. {@value #THREADS} threads fire {@value #OPS} operations each over a
 * pool of {@value #AGENTS} agents (all with a host, so deaths start the revive flow) and {@value #TASKS} tasks:
 * heartbeats reporting a random status (directly, or in a daemon's batch through one of two host leases), joins,
 * leaves, fail reports, manual revives, task claims and completes.
 * Thread 0 also moves the clock, sweeps, runs due revive-flow steps and drains the outbox, while the others
 * call. After each run the outbox is drained and the end state and the records are checked against an
 * oracle of the answers (see {@link #check}). The seed is printed; replay with {@code -Dlifeline.modelSeed=N}
 * (which fixes every thread's choice of operations; the thread interleaving still varies).
 */
@Tag("contract")
class ModelConcurrencyTest {
    private static final int THREADS = 4;
    private static final int OPS = 80;
    private static final int RUNS = 3;
    private static final int AGENTS = 6;
    private static final int TASKS = 5;
    private static final Set<String> SIX = Set.of("offline", "ready", "working", "dead", "restarting",
            "dead_failed_revive");

    static TestStack stack;

    @BeforeAll
    static void start() throws Exception {
        // Self-preservation would hold back most deaths of a 6-agent team going quiet together; the model
        // wants deaths, so it is off (the sweep's other rules are unchanged).
        stack = TestStack.builder().parameter("SelfPreservationMinAlive", "100000").build();
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    /** One answered call: what, on what, on the shared logical clock [start, end], and the answer. */
    record Call(String op, String agent, String task, long start, long end, int status, String code, JsonNode body) {
    }

    /** One sweep: on the logical clock [start, end], at test-clock time {@code now}, marking {@code dead}. */
    record Sweep(long start, long end, Instant now, List<String> dead) {
    }

    private final AtomicLong ticks = new AtomicLong();
    private final AtomicLong hostedBeats = new AtomicLong();

    @Test
    void randomInterleavings_keepEveryInvariant() throws Exception {
        long base = Long.getLong("lifeline.modelSeed", System.nanoTime());
        System.out.println("ModelConcurrencyTest seed: " + base + " (replay with -Dlifeline.modelSeed=" + base + ")");
        int operations = 0;
        int transitions = 0;
        int deaths = 0;
        int sweeps = 0;
        for (int run = 0; run < RUNS; run++) {
            long seed = base + run * 1_000_003L;
            Result r = run("m" + run + "-", seed);
            operations += r.calls.size() + r.sweeps.size();
            sweeps += r.sweeps.size();
            int[] counts = check("m" + run + "-", r, seed);
            transitions += counts[0];
            deaths += counts[1];
        }
        String report = String.format("ModelConcurrencyTest (seed %d): %d runs (interleavings) x %d threads, %d"
                + " operations (%d sweeps, %d hosted batches), %d transitions checked, %d heartbeat_expired deaths%n",
                base, RUNS, THREADS, operations, sweeps, hostedBeats.get(), transitions, deaths);
        assertTrue(hostedBeats.get() > 0, "the model beat through host leases");
        System.out.print(report);
        Path out = Path.of("target", "reliability");
        Files.createDirectories(out);
        Files.writeString(out.resolve("model-concurrency.txt"), report);
    }

    record Result(List<Call> calls, List<Sweep> sweeps) {
    }

    private Result run(String prefix, long seed) throws Exception {
        for (int a = 0; a < AGENTS; a++) {
            assertEquals(201, stack.register(prefix + "a" + a).status());
        }
        for (int t = 0; t < TASKS; t++) {
            assertEquals(201, stack.createTask(prefix + "t" + t).status());
        }
        List<Call> calls = Collections.synchronizedList(new ArrayList<>());
        List<Sweep> sweeps = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> futures = new ArrayList<>();
        for (int th = 0; th < THREADS; th++) {
            Random random = new Random(seed * 31 + th);
            boolean clockThread = th == 0;
            futures.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < OPS; i++) {
                    if (clockThread && random.nextInt(100) < 35) {
                        // A clock move and a sweep on this thread while the others call.
                        stack.clock.advance(Duration.ofSeconds(random.nextInt(50)));
                        long start = ticks.incrementAndGet();
                        Instant now = stack.clock.instant();
                        List<String> dead = stack.sweep();
                        long end = ticks.incrementAndGet();
                        sweeps.add(new Sweep(start, end, now, List.copyOf(dead)));
                        if (random.nextBoolean()) {
                            stack.pump.drain();
                            stack.stepFunctions.runDue();
                        }
                        continue;
                    }
                    calls.addAll(call(prefix, random));
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : futures) {
            f.get(3, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        // Let the outbox and the revive flows settle: deliveries start executions, whose first step stamps.
        for (int i = 0; i < 20; i++) {
            int drained = stack.pump.drain();
            int ran = stack.stepFunctions.runDue();
            if (drained == 0 && ran == 0) {
                break;
            }
        }
        assertEquals(0, stack.pump.drain());
        return new Result(List.copyOf(calls), List.copyOf(sweeps));
    }

    /**
     * A daemon's batch through a host lease: agents a0, a2, a4 are on host h0, the others on h1; one to
     * three of the host's agents, each reporting a random status or none. Each entry's answer is a call of
     * {@code heartbeat} (hosted), checked as a heartbeat is.
     */
    private List<Call> hostedCall(String prefix, Random random) {
        int host = random.nextInt(2);
        List<String> ids = new ArrayList<>();
        for (int a = host; a < AGENTS; a += 2) {
            if (random.nextInt(3) > 0) {
                ids.add(prefix + "a" + a);
            }
        }
        if (ids.isEmpty()) {
            ids.add(prefix + "a" + host);
        }
        StringBuilder body = new StringBuilder("{\"hostId\":\"" + prefix + "h" + host + "\",\"heartbeats\":[");
        for (int i = 0; i < ids.size(); i++) {
            int st = random.nextInt(3);
            body.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(ids.get(i)).append('"')
                    .append(st == 0 ? "" : st == 1 ? ",\"status\":\"ready\"" : ",\"status\":\"working\"")
                    .append('}');
        }
        body.append("]}");
        long start = ticks.incrementAndGet();
        TestStack.Reply r = stack.team("batch-heartbeats", body.toString());
        long end = ticks.incrementAndGet();
        assertTrue(r.status() == 200 || "CONTENDED".equals(r.code()) || "THROTTLED".equals(r.code()),
                "hosted batch answered " + r.status() + " " + r.body());
        List<Call> out = new ArrayList<>();
        if (r.status() != 200) {
            return out;
        }
        for (JsonNode result : r.body().get("results")) {
            boolean ok = result.get("success").asBoolean();
            out.add(new Call("heartbeat", result.get("agentId").asText(), null, start, end, ok ? 200
                    : result.path("rejoinRequired").asBoolean() ? 409 : 503, ok ? null : result.path("code").asText(),
                    result));
        }
        hostedBeats.incrementAndGet();
        return out;
    }

    private List<Call> call(String prefix, Random random) {
        if (random.nextInt(100) < 20) {
            return hostedCall(prefix, random);
        }
        return List.of(directCall(prefix, random));
    }

    private Call directCall(String prefix, Random random) {
        String agent = prefix + "a" + random.nextInt(AGENTS);
        String task = prefix + "t" + random.nextInt(TASKS);
        int p = random.nextInt(100);
        String op;
        String body = null;
        boolean onTask = false;
        if (p < 38) {
            op = "heartbeat";
            int s = random.nextInt(3);
            body = s == 0 ? "{}" : s == 1 ? "{\"status\":\"ready\"}" : "{\"status\":\"working\"}";
        } else if (p < 53) {
            op = "join";
        } else if (p < 59) {
            op = "leave";
        } else if (p < 64) {
            op = "fail";
            body = "{\"reason\":\"model\"}";
        } else if (p < 67) {
            op = "revive";
            body = "{}";
        } else if (p < 84) {
            op = "claim";
            onTask = true;
            body = "{\"agentId\":\"" + agent + "\"}";
        } else {
            op = "complete";
            onTask = true;
            body = "{\"agentId\":\"" + agent + "\"}";
        }
        long start = ticks.incrementAndGet();
        TestStack.Reply r = onTask ? stack.task(op, task, body) : stack.agent(op, agent, body);
        long end = ticks.incrementAndGet();
        assertTrue(r.status() < 500 || "CONTENDED".equals(r.code()) || "THROTTLED".equals(r.code()),
                op + " " + agent + " " + task + " answered " + r.status() + " " + r.body());
        return new Call(op, agent, onTask ? task : null, start, end, r.status(), r.code(), r.body());
    }

    private static Instant at(Map<String, AttributeValue> record) {
        AttributeValue v = record.get("at");
        return v.n() != null ? Instant.ofEpochMilli(Long.parseLong(v.n())) : Instant.parse(v.s());
    }

    /**
     * The invariants, on the drained end state, the outbox's records and the bus; returns {transitions,
     * heartbeat_expired deaths}.
     *
     * <p>The liveness invariant, as checked: for a {@code heartbeat_expired} record of agent A stamped at time T
     * by sweep S (the sweep that returned A and ran at test-clock T), every heartbeat of A that answered 200
     * before S began answered a {@code nextDeadline} that is not after T. Such a heartbeat was written before
     * the sweep's read, and the sweep's write is conditional on the beats count it read, so a sweep that kills
     * A at T must have seen a deadline at least as late as that heartbeat's and found it passed.
     */
    private int[] check(String prefix, Result r, long seed) {
        String where = " (seed " + seed + ")";
        Map<String, Map<String, AttributeValue>> agents = new HashMap<>();
        Map<String, List<Map<String, AttributeValue>>> records = new HashMap<>();
        int transitions = 0;
        int deaths = 0;
        for (int a = 0; a < AGENTS; a++) {
            String id = prefix + "a" + a;
            Map<String, AttributeValue> item = stack.agentItem(id);
            agents.put(id, item);
            String status = item.get("status").s();
            assertTrue(SIX.contains(status), id + " has status " + status + where);

            // Transitions: allowed, chained, contiguous, one per stamp.
            List<Map<String, AttributeValue>> recs = stack.recordedTransitions(id);
            records.put(id, recs);
            long tseq = item.containsKey("tseq") ? Long.parseLong(item.get("tseq").n()) : 0;
            assertEquals(tseq, recs.size(), id + ": one record per stamped transition" + where);
            AgentStatus previous = AgentStatus.OFFLINE;
            for (int i = 0; i < recs.size(); i++) {
                Map<String, AttributeValue> rec = recs.get(i);
                AgentStatus from = AgentStatus.fromWire(rec.get("from").s()).orElseThrow();
                AgentStatus to = AgentStatus.fromWire(rec.get("to").s()).orElseThrow();
                Trigger trigger = Trigger.fromWire(rec.get("trigger").s()).orElseThrow();
                assertEquals(i + 1, Long.parseLong(rec.get("seq").n()), id + ": seq contiguous from 1" + where);
                assertEquals(previous, from, id + " record " + (i + 1) + " chains: " + rec + where);
                assertTrue(TransitionTable.allows(from, trigger, to), id + " record " + (i + 1) + " allowed: "
                        + rec + where);
                previous = to;
                transitions++;
            }
            assertEquals(status, previous.wire(), id + ": the last record ends in the item's status" + where);

            // Liveness: no 200 heartbeat is followed by a death from a sweep that read an older one.
            for (Map<String, AttributeValue> rec : recs) {
                if (!"heartbeat_expired".equals(rec.get("trigger").s())) {
                    continue;
                }
                deaths++;
                Instant t = at(rec);
                List<Sweep> by = r.sweeps.stream().filter(s -> s.dead.contains(TestStack.TEAM + "/" + id) && s.now.equals(t)).toList();
                assertEquals(1, by.size(), id + ": one sweep at " + t + " marked it dead" + where);
                Sweep s = by.get(0);
                for (Call c : r.calls) {
                    if (c.op.equals("heartbeat") && c.agent.equals(id) && c.status == 200 && c.end < s.start) {
                        Instant deadline = Instant.parse(c.body.get("nextDeadline").asText());
                        assertTrue(!deadline.isAfter(t), id + " died (heartbeat_expired) at " + t
                                + " although a heartbeat answered 200 before that sweep began with deadline "
                                + deadline + ": " + c + where);
                    }
                }
            }
        }

        // Tasks: never held by two agents, never lost.
        Map<String, String> holder = new HashMap<>();
        for (Map.Entry<String, Map<String, AttributeValue>> e : agents.entrySet()) {
            AttributeValue taskId = e.getValue().get("taskId");
            if (taskId != null && taskId.s() != null) {
                assertEquals("working", e.getValue().get("status").s(),
                        e.getKey() + " holds " + taskId.s() + " but is not working" + where);
                String other = holder.put(taskId.s(), e.getKey());
                assertTrue(other == null, taskId.s() + " held by " + other + " and " + e.getKey() + where);
            }
        }
        for (int t = 0; t < TASKS; t++) {
            String id = prefix + "t" + t;
            Map<String, AttributeValue> task = stack.item("TEAM#" + TestStack.TEAM, "TASK#" + id);
            String status = task.get("status").s();
            AttributeValue assignee = task.get("assignee");
            String who = assignee == null ? null : assignee.s();
            long completes = r.calls.stream().filter(c -> c.op.equals("complete") && id.equals(c.task)
                    && c.status == 200).count();
            switch (status) {
                case "pending" -> {
                    assertTrue(who == null, id + " is pending with assignee " + who + where);
                    assertEquals(0, completes, id + " was completed yet is pending" + where);
                }
                case "in_progress" -> {
                    assertNotNull(who, id + " in progress with no assignee" + where);
                    AttributeValue held = agents.containsKey(who) ? agents.get(who).get("taskId") : null;
                    assertEquals(id, held == null ? null : held.s(),
                            id + " in progress for " + who + ", who does not hold it (status "
                                    + agents.get(who).get("status").s() + ")" + where);
                    assertEquals(0, completes, id + " was completed yet is in progress" + where);
                }
                case "done" -> {
                    assertEquals(1, completes, id + " is done: exactly one complete answered 200" + where);
                    Call done = r.calls.stream().filter(c -> c.op.equals("complete") && id.equals(c.task)
                            && c.status == 200).findFirst().orElseThrow();
                    assertTrue(r.calls.stream().anyMatch(c -> c.op.equals("claim") && id.equals(c.task)
                            && c.agent.equals(done.agent) && c.status == 200 && c.start < done.end),
                            id + " completed by an agent that never claimed it" + where);
                }
                default -> throw new AssertionError(id + " has status " + status + where);
            }
        }
        for (Map.Entry<String, String> h : holder.entrySet()) {
            Map<String, AttributeValue> task = stack.item("TEAM#" + TestStack.TEAM, "TASK#" + h.getKey());
            assertEquals("in_progress", task.get("status").s(), h.getValue() + " holds a task not in progress"
                    + where);
            assertEquals(h.getValue(), task.get("assignee").s(), where);
        }

        // Events: each recorded status change reached the bus exactly once, and nothing else did.
        Map<String, Long> onBus = stack.bus.delivered().stream()
                .filter(d -> "AgentStatusChanged".equals(d.detailType()))
                .map(d -> d.event().get("detail"))
                .filter(d -> d.path("agentId").asText().startsWith(prefix))
                .collect(Collectors.groupingBy(d -> d.get("eventId").asText(), Collectors.counting()));
        Set<String> expected = new HashSet<>();
        records.forEach((id, recs) -> recs.forEach(rec -> expected.add(TestStack.TEAM + "/" + id + "/status/"
                + rec.get("seq").n())));
        assertEquals(expected, onBus.keySet(), "one AgentStatusChanged per recorded transition" + where);
        onBus.forEach((id, n) -> assertEquals(1L, n, id + " delivered " + n + " times" + where));

        long ok = r.calls.stream().filter(c -> c.status == 200 || c.status == 201).count();
        Map<String, Long> byOp = r.calls.stream().filter(c -> c.status / 100 == 2)
                .collect(Collectors.groupingBy(Call::op, TreeMap::new, Collectors.counting()));
        System.out.printf("ModelConcurrencyTest run %s: %d calls (%d accepted: %s), %d sweeps, %d transitions%n",
                prefix, r.calls.size(), ok, byOp, r.sweeps.size(), transitions);
        return new int[] {transitions, deaths};
    }
}
