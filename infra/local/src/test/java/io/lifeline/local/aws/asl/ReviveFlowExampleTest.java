package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.testing.MutableClock;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A machine shaped like the revive flow (Task -> Choice -> Wait(SecondsPath) -> Task -> Choice ... -> Succeed/Fail),
 * run end to end with scripted tasks. It is an example for the engine, not the project's real definition.
 */
@Tag("unit")
class ReviveFlowExampleTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final String FLOW = """
            {
              "Comment": "Revive a dead agent: ask for a restart, then check for a heartbeat a few times.",
              "StartAt": "InitiateRestart",
              "States": {
                "InitiateRestart": {
                  "Type": "Task",
                  "Resource": "revive-initiate",
                  "Parameters": {"agentId.$": "$.agentId", "attempt.$": "$$.State.RetryCount",
                                 "execution.$": "$$.Execution.Name"},
                  "ResultPath": "$.restart",
                  "Retry": [{"ErrorEquals": ["Lambda.ServiceException"], "IntervalSeconds": 2, "MaxAttempts": 3,
                             "BackoffRate": 2}],
                  "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "MarkExhausted"}],
                  "Next": "RestartAccepted?"
                },
                "RestartAccepted?": {
                  "Type": "Choice",
                  "Choices": [{"Variable": "$.restart.status", "StringEquals": "accepted", "Next": "WaitForHeartbeat"}],
                  "Default": "MarkExhausted"
                },
                "WaitForHeartbeat": {"Type": "Wait", "SecondsPath": "$.restart.checkAfterSeconds", "Next": "CheckAlive"},
                "CheckAlive": {
                  "Type": "Task",
                  "Resource": "revive-check",
                  "Parameters": {"agentId.$": "$.agentId"},
                  "ResultPath": "$.check",
                  "Next": "Alive?"
                },
                "Alive?": {
                  "Type": "Choice",
                  "Choices": [
                    {"Variable": "$.check.alive", "BooleanEquals": true, "Next": "Revived"},
                    {"Variable": "$.check.checks", "NumericLessThan": 3, "Next": "WaitForHeartbeat"}
                  ],
                  "Default": "MarkExhausted"
                },
                "MarkExhausted": {
                  "Type": "Task",
                  "Resource": "revive-exhausted",
                  "Parameters": {"agentId.$": "$.agentId"},
                  "ResultPath": null,
                  "Next": "ReviveFailed"
                },
                "ReviveFailed": {"Type": "Fail", "Error": "ReviveExhausted", "Cause": "the agent did not come back"},
                "Revived": {"Type": "Succeed", "OutputPath": "$.check"}
              }
            }""";

    private final MutableClock clock = new MutableClock(T0);
    private final ScriptedTasks tasks = new ScriptedTasks(clock);
    private final AslRunner runner = new AslRunner(AslMachine.load(FLOW), tasks, clock, 1.0);

    private static List<String> statesEntered(Execution e) {
        return e.history().stream().filter(h -> h.type().equals("StateEntered")).map(HistoryEvent::state).toList();
    }

    @Test
    void reviveFlow_taskResources_listsEveryResourceForWiring() {
        assertEquals(Set.of("revive-initiate", "revive-check", "revive-exhausted"), AslMachine.load(FLOW).taskResources());
    }

    @Test
    void reviveFlow_agentComesBackOnSecondCheck_succeeds() {
        tasks.on("revive-initiate", "{\"status\": \"accepted\", \"checkAfterSeconds\": 30}")
                .on("revive-check", "{\"alive\": false, \"checks\": 1}", "{\"alive\": true, \"checks\": 2}");

        Execution e = runner.start("agent-7-1", parse("{\"agentId\": \"agent-7\"}"));
        int jumps = Json.runToEnd(runner, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(parse("{\"alive\": true, \"checks\": 2}"), e.output());
        assertEquals(2, jumps);
        assertEquals(List.of(T0.plusSeconds(30), T0.plusSeconds(60)),
                tasks.calls.stream().filter(c -> c.resource().equals("revive-check")).map(ScriptedTasks.Call::at).toList());
        assertEquals(parse("{\"agentId\": \"agent-7\", \"attempt\": 0, \"execution\": \"agent-7-1\"}"),
                tasks.inputs("revive-initiate").get(0));
        assertEquals(List.of("InitiateRestart", "RestartAccepted?", "WaitForHeartbeat", "CheckAlive", "Alive?",
                "WaitForHeartbeat", "CheckAlive", "Alive?", "Revived"), statesEntered(e));
        assertEquals(T0.plusSeconds(60), e.stoppedAt());
    }

    @Test
    void reviveFlow_agentNeverComesBack_marksExhaustedAndFails() {
        tasks.on("revive-initiate", "{\"status\": \"accepted\", \"checkAfterSeconds\": 30}")
                .on("revive-check", "{\"alive\": false, \"checks\": 1}", "{\"alive\": false, \"checks\": 2}",
                        "{\"alive\": false, \"checks\": 3}")
                .on("revive-exhausted", "{\"ignored\": true}");

        Execution e = runner.start("agent-7-1", parse("{\"agentId\": \"agent-7\"}"));
        Json.runToEnd(runner, clock);

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("ReviveExhausted", e.error());
        assertEquals("the agent did not come back", e.cause());
        assertEquals(3, tasks.count("revive-check"));
        assertEquals(List.of(parse("{\"agentId\": \"agent-7\"}")), tasks.inputs("revive-exhausted"));
        assertEquals(T0.plusSeconds(90), e.stoppedAt());
    }

    @Test
    void reviveFlow_restartServiceFlaky_retriesThenCarriesOn() {
        tasks.on("revive-initiate", new TaskFailure("Lambda.ServiceException", "503"),
                        new TaskFailure("Lambda.ServiceException", "503"),
                        "{\"status\": \"accepted\", \"checkAfterSeconds\": 10}")
                .on("revive-check", "{\"alive\": true, \"checks\": 1}");

        Execution e = runner.start("agent-7-1", parse("{\"agentId\": \"agent-7\"}"));
        Json.runToEnd(runner, clock);

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(List.of(0, 1, 2), tasks.inputs("revive-initiate").stream().map(i -> i.get("attempt").asInt()).toList());
        // Retries after 2 s and 4 s, then the 10 s wait for a heartbeat.
        assertEquals(T0.plusSeconds(16), e.stoppedAt());
    }

    @Test
    void reviveFlow_restartRejected_takesDefaultToFailure() {
        tasks.on("revive-initiate", "{\"status\": \"no_restart_channel\"}").on("revive-exhausted", "{}");

        Execution e = runner.start("agent-7-1", parse("{\"agentId\": \"agent-7\"}"));

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("ReviveExhausted", e.error());
        assertEquals(List.of("InitiateRestart", "RestartAccepted?", "MarkExhausted", "ReviveFailed"), statesEntered(e));
    }

    @Test
    void reviveFlow_restartTaskBroken_catchRecordsErrorAndFails() {
        tasks.on("revive-initiate", new IllegalArgumentException("unknown agent")).on("revive-exhausted", "{}");

        Execution e = runner.start("agent-7-1", parse("{\"agentId\": \"agent-7\"}"));

        assertEquals("ReviveExhausted", e.error());
        HistoryEvent exhaustedEntered = e.history().stream()
                .filter(h -> h.type().equals("StateEntered") && h.state().equals("MarkExhausted")).findFirst().orElseThrow();
        assertEquals(parse("{\"agentId\": \"agent-7\", \"error\": {\"Error\": \"java.lang.IllegalArgumentException\","
                + " \"Cause\": \"unknown agent\"}}"), exhaustedEntered.detail().get("input"));
    }
}
