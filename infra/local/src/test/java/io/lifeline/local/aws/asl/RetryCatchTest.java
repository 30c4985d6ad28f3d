package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.events;
import static io.lifeline.local.aws.asl.Json.machine;
import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class RetryCatchTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private final MutableClock clock = new MutableClock(T0);
    private final ScriptedTasks tasks = new ScriptedTasks(clock);

    private AslRunner runner(String definition) {
        return new AslRunner(AslMachine.load(definition), tasks, clock, 1.0);
    }

    private static String flakyTask(String retry, String katch) {
        // Only the catch targets named, since a state nothing leads to is refused, as in Step Functions.
        return machine("Call", "\"Call\": {\"Type\": \"Task\", \"Resource\": \"flaky\", \"Retry\": " + retry
                + ", \"Catch\": " + katch + ", \"End\": true}"
                + (katch.contains("\"Recover\"") ? ", \"Recover\": {\"Type\": \"Pass\", \"End\": true}" : "")
                + (katch.contains("\"Other\"") ? ", \"Other\": {\"Type\": \"Pass\", \"Result\": \"other\", \"End\": true}" : ""));
    }

    private static List<Double> delays(Execution e) {
        return events(e, "RetryScheduled").stream().map(h -> h.detail().get("delaySeconds").asDouble()).toList();
    }

    @Test
    void retry_backoff_waitsTwoFourEightSecondsAndRunsNothingEarly() {
        tasks.on("flaky", new TaskFailure("Boom", "1"), new TaskFailure("Boom", "2"), new TaskFailure("Boom", "3"),
                "{\"ok\": true}");
        AslRunner runner = runner(flakyTask(
                "[{\"ErrorEquals\": [\"Boom\"], \"IntervalSeconds\": 2, \"BackoffRate\": 2, \"MaxAttempts\": 3}]", "[]"));

        Execution e = runner.start("x", parse("{}"));
        Instant wake = T0;
        for (int delay : new int[] {2, 4, 8}) {
            wake = wake.plusSeconds(delay);
            int callsBefore = tasks.count("flaky");
            assertEquals(Optional.of(wake), e.waitingUntil());
            clock.set(wake.minusMillis(1));
            assertEquals(0, runner.runDue());
            assertEquals(callsBefore, tasks.count("flaky"));
            clock.set(wake);
            runner.runDue();
            assertEquals(callsBefore + 1, tasks.count("flaky"));
        }

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(parse("{\"ok\": true}"), e.output());
        assertEquals(List.of(2.0, 4.0, 8.0), delays(e));
        assertEquals(List.of(1, 2, 3), events(e, "RetryScheduled").stream()
                .map(h -> h.detail().get("attempt").asInt()).toList());
        assertEquals(List.of(T0, T0.plusSeconds(2), T0.plusSeconds(6), T0.plusSeconds(14)),
                tasks.calls.stream().map(ScriptedTasks.Call::at).toList());
    }

    @Test
    void retry_maxDelaySeconds_capsEachDelay() {
        tasks.on("flaky", new TaskFailure("Boom", null));
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"Boom\"], \"IntervalSeconds\": 1, \"BackoffRate\": 10,"
                + " \"MaxAttempts\": 4, \"MaxDelaySeconds\": 15}]", "[]"));

        Execution e = runner.start("x", parse("{}"));
        Json.runToEnd(runner, clock);

        assertEquals(List.of(1.0, 10.0, 15.0, 15.0), delays(e));
        assertEquals(5, tasks.count("flaky"));
        assertEquals("Boom", e.error());
    }

    @Test
    void retry_defaults_retriesThreeTimesAfterOneTwoFourSeconds() {
        tasks.on("flaky", new TaskFailure("Boom", null));
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"Boom\"]}]", "[]"));

        Execution e = runner.start("x", parse("{}"));
        Json.runToEnd(runner, clock);

        assertEquals(List.of(1.0, 2.0, 4.0), delays(e));
        assertEquals(Execution.Status.FAILED, e.status());
    }

    @Test
    void retry_maxAttemptsZero_neverRetries() {
        tasks.on("flaky", new TaskFailure("Boom", null));
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"Boom\"], \"MaxAttempts\": 0},"
                + " {\"ErrorEquals\": [\"States.ALL\"]}]", "[]"));

        Execution e = runner.start("x", parse("{}"));

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals(1, tasks.count("flaky"));
        assertEquals(List.of(), delays(e));
    }

    @Test
    void retry_errorsMatchingDifferentRetriers_countAttemptsPerRetrier() {
        // Retrier 1 (ErrorA/ErrorB, MaxAttempts 2) is spent by ErrorA and ErrorB; ErrorC uses retrier 2; the next
        // ErrorB finds retrier 1 spent and goes to Catch. (The spec's prose example shows a third wait of 4 s here,
        // which contradicts its own MaxAttempts 2; we follow the rule, not the example.)
        tasks.on("flaky", new TaskFailure("ErrorA", null), new TaskFailure("ErrorB", null),
                new TaskFailure("ErrorC", null), new TaskFailure("ErrorB", null), "{\"unreached\": true}");
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"ErrorA\", \"ErrorB\"], \"IntervalSeconds\": 1,"
                + " \"BackoffRate\": 2.0, \"MaxAttempts\": 2}, {\"ErrorEquals\": [\"ErrorC\"], \"IntervalSeconds\": 5}]",
                "[{\"ErrorEquals\": [\"States.ALL\"], \"Next\": \"Recover\"}]"));

        Execution e = runner.start("x", parse("{}"));
        Json.runToEnd(runner, clock);

        assertEquals(List.of(1.0, 2.0, 5.0), delays(e));
        assertEquals(4, tasks.count("flaky"));
        assertEquals("ErrorB", events(e, "CatchTaken").get(0).detail().get("error").asText());
        assertEquals(Execution.Status.SUCCEEDED, e.status());
    }

    @Test
    void retry_laterVisitToTheState_startsWithFreshAttempts() {
        tasks.on("flaky", new TaskFailure("Boom", null), "{}", new TaskFailure("Boom", null), "{}");
        AslRunner runner = runner(machine("Call", "\"Call\": {\"Type\": \"Task\", \"Resource\": \"flaky\","
                + " \"ResultPath\": null, \"Retry\": [{\"ErrorEquals\": [\"Boom\"], \"MaxAttempts\": 1}], \"Next\": \"Again?\"},"
                + " \"Again?\": {\"Type\": \"Choice\", \"Choices\": [{\"Variable\": \"$.again\", \"BooleanEquals\": true,"
                + " \"Next\": \"Flip\"}], \"Default\": \"Done\"},"
                + " \"Flip\": {\"Type\": \"Pass\", \"Result\": false, \"ResultPath\": \"$.again\", \"Next\": \"Call\"},"
                + " \"Done\": {\"Type\": \"Succeed\"}"));

        Execution e = runner.start("x", parse("{\"again\": true}"));
        Json.runToEnd(runner, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(List.of(1.0, 1.0), delays(e));
    }

    @Test
    void retry_statesTaskFailed_matchesAnyTaskError() {
        tasks.on("flaky", new TaskFailure("Anything", null), "{\"ok\": 1}");
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"States.TaskFailed\"]}]", "[]"));

        Execution e = runner.start("x", parse("{}"));
        Json.runToEnd(runner, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(2, tasks.count("flaky"));
    }

    @Test
    void retry_attemptsRunOut_catchTakesOver() {
        tasks.on("flaky", new TaskFailure("Boom", "still broken"));
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"Boom\"], \"MaxAttempts\": 2}]",
                "[{\"ErrorEquals\": [\"Boom\"], \"Next\": \"Recover\"}]"));

        Execution e = runner.start("x", parse("{\"agent\": \"a1\"}"));
        Json.runToEnd(runner, clock);

        assertEquals(3, tasks.count("flaky"));
        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(parse("{\"Error\": \"Boom\", \"Cause\": \"still broken\"}"), e.output());
        assertEquals("Recover", events(e, "CatchTaken").get(0).detail().get("next").asText());
    }

    @Test
    void catch_resultPath_mergesErrorIntoInput() {
        tasks.on("flaky", new TaskFailure("Boom", "bad"));
        AslRunner runner = runner(flakyTask("[]",
                "[{\"ErrorEquals\": [\"Boom\"], \"ResultPath\": \"$.error\", \"Next\": \"Recover\"}]"));

        Execution e = runner.start("x", parse("{\"agent\": \"a1\"}"));

        assertEquals(parse("{\"agent\": \"a1\", \"error\": {\"Error\": \"Boom\", \"Cause\": \"bad\"}}"), e.output());
    }

    @Test
    void catch_statesAll_catchesWhatEarlierCatchersMiss() {
        tasks.on("flaky", new TaskFailure("Unexpected", "?"));
        AslRunner runner = runner(flakyTask("[]", "[{\"ErrorEquals\": [\"Boom\"], \"Next\": \"Recover\"},"
                + " {\"ErrorEquals\": [\"States.ALL\"], \"Next\": \"Other\"}]"));

        Execution e = runner.start("x", parse("{}"));

        assertEquals(parse("\"other\""), e.output());
    }

    @Test
    void catch_noMatchingCatcher_failsExecutionWithTaskError() {
        tasks.on("flaky", new TaskFailure("Boom", "bad"));
        AslRunner runner = runner(flakyTask("[]", "[{\"ErrorEquals\": [\"Unrelated\"], \"Next\": \"Recover\"}]"));

        Execution e = runner.start("x", parse("{}"));

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("Boom", e.error());
        assertEquals("bad", e.cause());
        assertEquals(List.of("ExecutionStarted", "StateEntered", "TaskScheduled", "TaskFailed", "ExecutionFailed"),
                Json.types(e));
    }

    @Test
    void task_throwsJavaException_errorIsClassNameAndCauseIsMessage() {
        tasks.on("flaky", new IllegalStateException("agent table unreachable"));
        AslRunner runner = runner(flakyTask("[]", "[{\"ErrorEquals\": [\"java.lang.IllegalStateException\"],"
                + " \"ResultPath\": \"$.err\", \"Next\": \"Recover\"}]"));

        Execution e = runner.start("x", parse("{}"));

        assertEquals(parse("{\"err\": {\"Error\": \"java.lang.IllegalStateException\","
                + " \"Cause\": \"agent table unreachable\"}}"), e.output());
    }

    @Test
    void retry_isAWait_executionParksUntilDelayHasPassed() {
        tasks.on("flaky", new TaskFailure("Boom", null), "{}");
        AslRunner runner = runner(flakyTask("[{\"ErrorEquals\": [\"Boom\"], \"IntervalSeconds\": 30}]", "[]"));

        Execution e = runner.start("x", parse("{}"));

        assertEquals(Execution.Status.RUNNING, e.status());
        assertEquals(Optional.of(T0.plusSeconds(30)), runner.nextWakeUp());
        clock.advance(Duration.ofSeconds(30));
        runner.runDue();
        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertFalse(e.waitingUntil().isPresent());
    }
}
