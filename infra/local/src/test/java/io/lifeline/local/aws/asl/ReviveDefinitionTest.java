package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.events;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.template.SamTemplate;
import io.lifeline.testing.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The project's own revive.asl.json, as template.yaml names it, loaded by Local's interpreter (which refuses at
 * load time anything it would run differently from Step Functions) and run with scripted task outcomes: how its
 * Retry lists and Catches end an execution when the revive function itself keeps failing.
 */
@Tag("unit")
class ReviveDefinitionTest {
    private static final Instant T0 = Instant.parse("2026-11-24T12:00:00Z");
    private static final String TRANSIENT = "io.lifeline.revive.TransientReviveException";
    /** Lambda's service errors as AWS's Step Functions guide lists them, and the SnapStart invoke errors. */
    private static final List<String> LAMBDA_SERVICE_ERRORS = List.of("Lambda.ClientExecutionTimeoutException",
            "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
            "Lambda.TooManyRequestsException", "Lambda.SnapStartException", "Lambda.SnapStartTimeoutException",
            "Lambda.SnapStartNotReadyException");

    static AslMachine machine;
    static String resource;

    @BeforeAll
    static void load() throws Exception {
        SamTemplate template = SamTemplate.read(Path.of(System.getProperty("lifeline.template", "../../template.yaml")));
        List<SamTemplate.StateMachine> machines = template.stateMachines(Map.of(),
                Map.of("ReviveFunction", "ReviveFunction", "DigestFunction", "DigestFunction",
                        "FlapCheckFunction", "FlapCheckFunction"));
        List<SamTemplate.StateMachine> revive = machines.stream()
                .filter(m -> m.logicalId().equals("ReviveStateMachine")).toList();
        assertEquals(1, revive.size(), machines.stream().map(SamTemplate.StateMachine::logicalId).toList()::toString);
        machine = AslMachine.load(revive.get(0).definition());
        assertEquals(1, machine.taskResources().size(), machine.taskResources()::toString);
        resource = machine.taskResources().iterator().next();
    }

    static List<String> entered(Execution e) {
        return events(e, "StateEntered").stream().map(HistoryEvent::state).toList();
    }

    static List<Double> retryDelays(Execution e) {
        return events(e, "RetryScheduled").stream().map(r -> r.detail().get("delaySeconds").asDouble()).toList();
    }

    static TaskFailure failure(String error) {
        return new TaskFailure(error, "scripted");
    }

    static Object[] times(int n, Object outcome) {
        Object[] out = new Object[n];
        Arrays.fill(out, outcome);
        return out;
    }

    static Execution start(ScriptedTasks tasks, MutableClock clock) {
        AslRunner runner = new AslRunner(machine, tasks, clock, 1.0);
        Execution e = runner.start("revive-acme-a1-2", Json.parse(
                "{\"team\": \"acme\", \"agentId\": \"a1\", \"startSeq\": 2, \"hostId\": \"host-1\"}"));
        Json.runToEnd(runner, clock);
        return e;
    }

    @Test
    void everyTaskState_retriesLambdaServiceAndSnapStartErrors_andCatchesTheRest() {
        for (String name : machine.stateNames()) {
            if (!(machine.state(name) instanceof AslMachine.Task task)) {
                continue;
            }
            List<String> retried = new ArrayList<>();
            task.retry().forEach(r -> retried.addAll(r.errorEquals()));
            for (String error : LAMBDA_SERVICE_ERRORS) {
                assertTrue(retried.contains(error), name + " retries " + error + ": " + retried);
            }
            assertTrue(retried.contains(TRANSIENT), name + " retries the store's transient failures");
            assertTrue(task.retry().stream().noneMatch(r -> r.errorEquals().contains(AslMachine.ALL)),
                    name + ": an unexpected error is not retried");
            assertEquals(1, task.catchers().size(), name + " has a Catch");
            assertEquals(List.of(AslMachine.ALL), task.catchers().get(0).errorEquals(), name + " catches every error");
        }
    }

    @Test
    void recordError_failingThroughItsRetries_endsTheExecutionInTheNotRecordedFailState() {
        MutableClock clock = new MutableClock(T0);
        // Initiate hits a bug; recording it finds the store unavailable on the first try and all three retries.
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, failure("java.lang.IllegalStateException"),
                failure(TRANSIENT), failure(TRANSIENT), failure(TRANSIENT), failure(TRANSIENT));

        Execution e = start(tasks, clock);

        assertEquals(Execution.Status.FAILED, e.status(), e::toString);
        assertEquals("ReviveErrorNotRecorded", e.error());
        assertTrue(e.cause().contains("recording it on the agent failed"), e.cause());
        assertEquals(List.of("Initiate", "RecordError", "ReviveErrorNotRecorded"), entered(e));
        assertEquals(List.of(2.0, 4.0, 8.0), retryDelays(e));
        assertEquals(5, tasks.count(resource), "Initiate once, RecordError once and three retries");
        HistoryEvent caught = events(e, "CatchTaken").get(1);
        assertEquals("RecordError", caught.state());
        assertEquals(TRANSIENT, caught.detail().get("error").asText());
        // RecordError was handed the step's own error, as it would record it.
        assertEquals("java.lang.IllegalStateException",
                tasks.inputs(resource).get(1).get("error").get("Error").asText());
        assertEquals(T0.plusSeconds(14), e.stoppedAt());
    }

    @Test
    void recordError_withAnErrorItDoesNotRetry_endsInTheNotRecordedFailStateAtOnce() {
        MutableClock clock = new MutableClock(T0);
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, failure("Lambda.Unknown"),
                failure("software.amazon.awssdk.services.dynamodb.model.DynamoDbException"));

        Execution e = start(tasks, clock);

        assertEquals(Execution.Status.FAILED, e.status(), e::toString);
        assertEquals("ReviveErrorNotRecorded", e.error());
        assertEquals(List.of("Initiate", "RecordError", "ReviveErrorNotRecorded"), entered(e));
        assertTrue(retryDelays(e).isEmpty());
    }

    @Test
    void recordError_thatSucceeds_stillEndsInReviveError() {
        MutableClock clock = new MutableClock(T0);
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, failure("Lambda.Unknown"),
                "{\"outcome\": \"error\", \"attempt\": 0, \"waitSeconds\": 0, \"seq\": 0}");

        Execution e = start(tasks, clock);

        assertEquals("ReviveError", e.error());
        assertEquals(List.of("Initiate", "RecordError", "ReviveErrored"), entered(e));
    }

    @Test
    void snapStartNotReady_isRetriedForAboutTenMinutesThenTheFlowGoesOn() {
        MutableClock clock = new MutableClock(T0);
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, times(8, failure("Lambda.SnapStartNotReadyException")))
                .on(resource, "{\"outcome\": \"superseded\", \"attempt\": 0, \"waitSeconds\": 0, \"seq\": 0}");

        Execution e = start(tasks, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
        assertEquals(List.of("Initiate", "Started", "NotNeeded"), entered(e));
        assertEquals(List.of(10.0, 20.0, 40.0, 80.0, 120.0, 120.0, 120.0, 120.0), retryDelays(e));
        assertEquals(T0.plus(Duration.ofSeconds(630)), tasks.calls.get(8).at(), "the ninth try, 630 s later, works");
    }

    @Test
    void snapStartNotReady_pastItsRetries_isCaughtAndRecorded() {
        MutableClock clock = new MutableClock(T0);
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, times(9, failure("Lambda.SnapStartNotReadyException")))
                .on(resource, "{\"outcome\": \"error\", \"attempt\": 0, \"waitSeconds\": 0, \"seq\": 0}");

        Execution e = start(tasks, clock);

        assertEquals("ReviveError", e.error());
        assertEquals(List.of("Initiate", "RecordError", "ReviveErrored"), entered(e));
        assertEquals("Lambda.SnapStartNotReadyException",
                tasks.inputs(resource).get(9).get("error").get("Error").asText());
    }

    @ParameterizedTest
    @ValueSource(strings = {"Lambda.ClientExecutionTimeoutException", "Lambda.ServiceException",
            "Lambda.SnapStartTimeoutException", "Lambda.SnapStartException", TRANSIENT})
    void serviceError_isRetriedAfterTwoFourAndEightSeconds(String error) {
        MutableClock clock = new MutableClock(T0);
        ScriptedTasks tasks = new ScriptedTasks(clock).on(resource, times(3, failure(error)))
                .on(resource, "{\"outcome\": \"superseded\", \"attempt\": 0, \"waitSeconds\": 0, \"seq\": 0}");

        Execution e = start(tasks, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
        assertEquals(List.of(2.0, 4.0, 8.0), retryDelays(e));
    }
}
