package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.machine;
import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.testing.MutableClock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class DataFlowTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private final MutableClock clock = new MutableClock(T0);
    private final ScriptedTasks tasks = new ScriptedTasks(clock);

    /** A machine of one Task on resource "fn" with the given extra fields. */
    private Execution runTask(String fields, String input) {
        String definition = machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"fn\"" + fields + ", \"End\": true}");
        return new AslRunner(AslMachine.load(definition), tasks, clock, 1.0).start("run-1", parse(input));
    }

    private Execution runState(String state, String input) {
        return new AslRunner(AslMachine.load(machine("S", "\"S\": " + state)), tasks, clock, 1.0).start("run-1", parse(input));
    }

    @Test
    void parameters_pathsAndContext_buildEffectiveInput() {
        tasks.on("fn", "{}");
        clock.set(Instant.parse("2025-01-01T00:00:00.250Z"));

        runTask(", \"Parameters\": {\"agent.$\": \"$.agentId\", \"static\": \"x\", \"second.$\": \"$.list[1]\","
                + " \"nested\": {\"whole.$\": \"$\", \"deep\": [{\"a.$\": \"$.agentId\"}, 2]},"
                + " \"name.$\": \"$$.Execution.Name\", \"id.$\": \"$$.Execution.Id\", \"start.$\": \"$$.Execution.StartTime\","
                + " \"input.$\": \"$$.Execution.Input.agentId\", \"state.$\": \"$$.State.Name\","
                + " \"entered.$\": \"$$.State.EnteredTime\", \"retries.$\": \"$$.State.RetryCount\"}",
                "{\"agentId\": \"a1\", \"list\": [10, 20]}");

        assertEquals(parse("""
                {"agent": "a1", "static": "x", "second": 20,
                 "nested": {"whole": {"agentId": "a1", "list": [10, 20]}, "deep": [{"a": "a1"}, 2]},
                 "name": "run-1", "id": "arn:aws:states:local:000000000000:execution:local:run-1",
                 "start": "2025-01-01T00:00:00.250Z", "input": "a1", "state": "T",
                 "entered": "2025-01-01T00:00:00.250Z", "retries": 0}"""), tasks.inputs("fn").get(0));
    }

    @Test
    void parameters_retryCount_countsRetriesOfTheState() {
        tasks.on("fn", new TaskFailure("E", null), new TaskFailure("E", null), "{}");
        AslRunner runner = new AslRunner(AslMachine.load(machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"fn\","
                + " \"Parameters\": {\"n.$\": \"$$.State.RetryCount\"}, \"Retry\": [{\"ErrorEquals\": [\"E\"]}],"
                + " \"End\": true}")), tasks, clock, 0);

        runner.start("x", parse("{}"));

        assertEquals(List.of(parse("{\"n\": 0}"), parse("{\"n\": 1}"), parse("{\"n\": 2}")), tasks.inputs("fn"));
    }

    @Test
    void parameters_pathSelectsNothing_failsWithStatesRuntimeWithoutThrowing() {
        Execution e = runTask(", \"Parameters\": {\"a.$\": \"$.missing\"}", "{}");

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("States.Runtime", e.error());
        assertTrue(e.cause().contains("$.missing"), e.cause());
        assertEquals(0, tasks.count("fn"));
    }

    @Test
    void inputPath_selectsWhatTheTaskGets() {
        tasks.on("fn", "{}");

        runTask(", \"InputPath\": \"$.payload\"", "{\"payload\": {\"a\": 1}, \"other\": 2}");

        assertEquals(parse("{\"a\": 1}"), tasks.inputs("fn").get(0));
    }

    @Test
    void inputPath_null_givesEmptyObject() {
        tasks.on("fn", "{}");

        runTask(", \"InputPath\": null", "{\"a\": 1}");

        assertEquals(parse("{}"), tasks.inputs("fn").get(0));
    }

    @Test
    void resultPath_absent_replacesInputWithResult() {
        tasks.on("fn", "{\"r\": 1}");

        assertEquals(parse("{\"r\": 1}"), runTask("", "{\"a\": 1}").output());
    }

    @Test
    void resultPath_nested_mergesCreatingObjects() {
        tasks.on("fn", "{\"r\": 1}");

        Execution e = runTask(", \"ResultPath\": \"$.results.restart\"", "{\"a\": 1, \"results\": {\"old\": true}}");

        assertEquals(parse("{\"a\": 1, \"results\": {\"old\": true, \"restart\": {\"r\": 1}}}"), e.output());
    }

    @Test
    void resultPath_null_discardsResultAndKeepsInput() {
        tasks.on("fn", "{\"r\": 1}");

        assertEquals(parse("{\"a\": 1}"), runTask(", \"ResultPath\": null", "{\"a\": 1}").output());
    }

    @Test
    void resultPath_throughANonObject_failsWithStatesRuntime() {
        tasks.on("fn", "{}");

        Execution e = runTask(", \"ResultPath\": \"$.a.b\"", "{\"a\": 5}");

        assertEquals("States.Runtime", e.error());
    }

    @Test
    void outputPath_selectsPartOfTheOutput() {
        tasks.on("fn", "{\"status\": \"ok\", \"noise\": 1}");

        assertEquals(parse("\"ok\""), runTask(", \"OutputPath\": \"$.status\"", "{}").output());
    }

    @Test
    void outputPath_null_givesEmptyObject() {
        tasks.on("fn", "{\"r\": 1}");

        assertEquals(parse("{}"), runTask(", \"OutputPath\": null", "{\"a\": 1}").output());
    }

    @Test
    void resultSelector_picksFromTheRawResult() {
        tasks.on("fn", "{\"Payload\": {\"status\": \"accepted\"}, \"StatusCode\": 200}");

        Execution e = runTask(", \"ResultSelector\": {\"status.$\": \"$.Payload.status\", \"code\": 1}", "{}");

        assertEquals(parse("{\"status\": \"accepted\", \"code\": 1}"), e.output());
    }

    @Test
    void task_allFieldsTogether_applyInSpecOrder() {
        tasks.on("fn", "{\"raw\": {\"v\": 42}}");

        // InputPath -> Parameters -> task -> ResultSelector -> ResultPath (into the raw input) -> OutputPath.
        Execution e = runTask(", \"InputPath\": \"$.in\", \"Parameters\": {\"p.$\": \"$.x\"},"
                + " \"ResultSelector\": {\"v.$\": \"$.raw.v\"}, \"ResultPath\": \"$.out\", \"OutputPath\": \"$.out\"",
                "{\"in\": {\"x\": 1}, \"keep\": true}");

        assertEquals(parse("{\"p\": 1}"), tasks.inputs("fn").get(0));
        assertEquals(parse("{\"v\": 42}"), e.output());
    }

    @Test
    void pass_result_isPutAtResultPath() {
        Execution e = runState("{\"Type\": \"Pass\", \"Result\": {\"attempt\": 0}, \"ResultPath\": \"$.revive\", \"End\": true}",
                "{\"agentId\": \"a1\"}");

        assertEquals(parse("{\"agentId\": \"a1\", \"revive\": {\"attempt\": 0}}"), e.output());
    }

    @Test
    void pass_parameters_transformTheInput() {
        Execution e = runState("{\"Type\": \"Pass\", \"InputPath\": \"$.agent\", \"Parameters\": {\"id.$\": \"$.id\","
                + " \"run.$\": \"$$.Execution.Name\"}, \"End\": true}", "{\"agent\": {\"id\": \"a1\", \"x\": 1}}");

        assertEquals(parse("{\"id\": \"a1\", \"run\": \"run-1\"}"), e.output());
    }

    @Test
    void pass_noFields_passesInputThrough() {
        assertEquals(parse("{\"a\": [1]}"), runState("{\"Type\": \"Pass\", \"End\": true}", "{\"a\": [1]}").output());
    }

    @Test
    void fail_errorAndCause_failTheExecution() {
        Execution e = runState("{\"Type\": \"Fail\", \"Error\": \"ReviveExhausted\", \"Cause\": \"no heartbeat\"}", "{}");

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("ReviveExhausted", e.error());
        assertEquals("no heartbeat", e.cause());
        assertNull(e.output());
        assertEquals(T0, e.stoppedAt());
    }

    @Test
    void succeed_outputIsItsProcessedInput() {
        Execution e = runState("{\"Type\": \"Succeed\", \"InputPath\": \"$.a\", \"OutputPath\": \"$.b\"}",
                "{\"a\": {\"b\": {\"c\": 1}}}");

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(parse("{\"c\": 1}"), e.output());
    }

    @Test
    void task_success_recordsHistoryLikeStepFunctions() {
        tasks.on("fn", "{\"r\": 1}");

        Execution e = runTask("", "{\"a\": 1}");

        assertEquals(List.of("ExecutionStarted", "StateEntered", "TaskScheduled", "TaskSucceeded", "StateExited",
                "ExecutionSucceeded"), Json.types(e));
        HistoryEvent scheduled = e.history().get(2);
        assertEquals("T", scheduled.state());
        assertEquals(parse("{\"resource\": \"fn\", \"input\": {\"a\": 1}}"), scheduled.detail());
    }
}
