package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.machine;
import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class AslRunnerTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private final MutableClock clock = new MutableClock(T0);
    private static final String WAIT_SECONDS_PATH = machine("W", "\"W\": {\"Type\": \"Wait\", \"SecondsPath\": \"$.s\","
            + " \"Next\": \"Done\"}, \"Done\": {\"Type\": \"Succeed\"}");

    private AslRunner runner(String definition, double timeScale) {
        return new AslRunner(AslMachine.load(definition), (r, i) -> i, clock, timeScale);
    }

    @Test
    void start_duplicateName_throws() {
        AslRunner runner = runner(WAIT_SECONDS_PATH, 1);
        runner.start("agent-7-revive", parse("{\"s\": 5}"));

        assertThrows(ExecutionAlreadyExistsException.class, () -> runner.start("agent-7-revive", parse("{\"s\": 5}")));
        assertEquals(1, runner.executions().size());
    }

    @Test
    void start_nullInput_isEmptyObject() {
        Execution e = runner(machine("P", "\"P\": {\"Type\": \"Pass\", \"End\": true}"), 1).start("x", null);

        assertEquals(parse("{}"), e.output());
        assertEquals(parse("{}"), e.input());
    }

    @Test
    void nextWakeUp_severalWaiting_isTheEarliestAndEmptyWhenAllDone() {
        AslRunner runner = runner(WAIT_SECONDS_PATH, 1);
        assertEquals(Optional.empty(), runner.nextWakeUp());

        runner.start("late", parse("{\"s\": 50}"));
        runner.start("early", parse("{\"s\": 20}"));

        assertEquals(Optional.of(T0.plusSeconds(20)), runner.nextWakeUp());
        clock.advance(Duration.ofSeconds(20));
        runner.runDue();
        assertEquals(Optional.of(T0.plusSeconds(50)), runner.nextWakeUp());
        clock.advance(Duration.ofSeconds(30));
        runner.runDue();
        assertEquals(Optional.empty(), runner.nextWakeUp());
    }

    @Test
    void runDue_nothingDue_runsNothing() {
        AslRunner runner = runner(WAIT_SECONDS_PATH, 1);
        runner.start("x", parse("{\"s\": 5}"));

        assertEquals(0, runner.runDue());
    }

    @Test
    void runDue_severalDue_resumesEachInWakeOrder() {
        List<String> order = new ArrayList<>();
        AslRunner runner = new AslRunner(AslMachine.load(machine("W", "\"W\": {\"Type\": \"Wait\", \"SecondsPath\":"
                + " \"$.s\", \"Next\": \"T\"}, \"T\": {\"Type\": \"Task\", \"Resource\": \"fn\", \"End\": true}")),
                (r, input) -> {
                    order.add(input.get("name").asText());
                    return input;
                }, clock, 1);
        Execution a = runner.start("a", parse("{\"s\": 3, \"name\": \"a\"}"));
        Execution b = runner.start("b", parse("{\"s\": 1, \"name\": \"b\"}"));
        clock.advance(Duration.ofSeconds(3));

        assertEquals(4, runner.runDue()); // each: the end of its Wait, then its Task

        assertEquals(List.of("b", "a"), order);
        assertEquals(Execution.Status.SUCCEEDED, a.status());
        assertEquals(Execution.Status.SUCCEEDED, b.status());
    }

    @Test
    void timeScale_hundredthScale_makesWaitsAndRetriesHundredTimesShorter() {
        ScriptedTasks tasks = new ScriptedTasks(clock).on("fn", new TaskFailure("E", null), "{}");
        AslRunner runner = new AslRunner(AslMachine.load(machine("W", "\"W\": {\"Type\": \"Wait\", \"Seconds\": 60,"
                + " \"Next\": \"T\"}, \"T\": {\"Type\": \"Task\", \"Resource\": \"fn\", \"Retry\": [{\"ErrorEquals\":"
                + " [\"E\"], \"IntervalSeconds\": 30}], \"End\": true}")), tasks, clock, 0.01);

        Execution e = runner.start("x", parse("{}"));
        assertEquals(Optional.of(T0.plusMillis(600)), e.waitingUntil());
        clock.advanceMillis(600);
        runner.runDue();
        assertEquals(Optional.of(T0.plusMillis(900)), e.waitingUntil());
        // The history keeps the machine's own numbers; only the wall-clock wait is scaled.
        assertEquals(30.0, Json.events(e, "RetryScheduled").get(0).detail().get("delaySeconds").asDouble());
        clock.advanceMillis(300);
        runner.runDue();

        assertEquals(Execution.Status.SUCCEEDED, e.status());
    }

    @Test
    void timeScale_negative_isRefused() {
        assertThrows(IllegalArgumentException.class, () -> runner(WAIT_SECONDS_PATH, -1));
    }

    @Test
    void execution_lookups_findByNameAndListInStartOrder() {
        AslRunner runner = runner(WAIT_SECONDS_PATH, 1);
        Execution b = runner.start("b", parse("{\"s\": 1}"));
        Execution a = runner.start("a", parse("{\"s\": 1}"));

        assertEquals(Optional.of(a), runner.execution("a"));
        assertEquals(Optional.empty(), runner.execution("c"));
        assertEquals(List.of(b, a), runner.executions());
        assertEquals(T0, a.startedAt());
    }

    @Test
    void run_loopWithoutWaits_failsAtHistoryLimitInsteadOfHanging() {
        Execution e = runner(machine("A", "\"A\": {\"Type\": \"Pass\", \"Next\": \"B\"},"
                + " \"B\": {\"Type\": \"Choice\", \"Choices\": [{\"Variable\": \"$.stop\", \"IsPresent\": true,"
                + " \"Next\": \"Done\"}], \"Default\": \"A\"}, \"Done\": {\"Type\": \"Succeed\"}"), 1)
                .start("x", parse("{}"));

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("States.Runtime", e.error());
        int size = e.history().size();
        assertTrue(size >= AslRunner.MAX_HISTORY_EVENTS && size <= AslRunner.MAX_HISTORY_EVENTS + 2, "size " + size);
    }

    @Test
    void startAndRunDue_fromManyThreads_runEveryExecutionOnce() throws Exception {
        AslRunner runner = runner(WAIT_SECONDS_PATH, 1);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicBoolean starting = new AtomicBoolean(true);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> starters = new ArrayList<>();
        try {
            for (int t = 0; t < 6; t++) {
                int thread = t;
                starters.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 50; i++) {
                        runner.start("t" + thread + "-" + i, parse("{\"s\": " + (i % 3) + "}"));
                    }
                    return null;
                }));
            }
            Future<?> scheduler = pool.submit(() -> {
                go.await();
                while (starting.get()) {
                    clock.advanceMillis(100);
                    runner.runDue();
                }
                return null;
            });
            go.countDown();
            for (Future<?> f : starters) {
                f.get(30, TimeUnit.SECONDS);
            }
            starting.set(false);
            scheduler.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        clock.advance(Duration.ofSeconds(5));
        runner.runDue();

        assertEquals(300, runner.executions().size());
        assertTrue(runner.executions().stream().allMatch(e -> e.status() == Execution.Status.SUCCEEDED));
        assertTrue(runner.executions().stream().allMatch(e -> Json.types(e).stream()
                .filter("ExecutionSucceeded"::equals).count() == 1));
        assertFalse(runner.nextWakeUp().isPresent());
    }
}
