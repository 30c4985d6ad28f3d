package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.machine;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Tag("unit")
class AslMachineLoadTest {
    private static final String END = "\"Done\": {\"Type\": \"Succeed\"}";

    @Test
    void load_everySupportedField_loadsAndListsTaskResources() {
        AslMachine m = AslMachine.load("""
                {"Comment": "all of the subset", "Version": "1.0", "StartAt": "T", "States": {
                  "T": {"Type": "Task", "Comment": "c", "Resource": "fn:a", "InputPath": "$.in",
                        "Parameters": {"x.$": "$.x", "ctx.$": "$$.State.RetryCount", "k": [1, {"y.$": "$.y"}]},
                        "ResultSelector": {"s.$": "$.status"}, "ResultPath": "$.r", "OutputPath": "$",
                        "Retry": [{"ErrorEquals": ["E1"], "IntervalSeconds": 2, "MaxAttempts": 0, "BackoffRate": 1.5,
                                   "MaxDelaySeconds": 10, "JitterStrategy": "NONE", "Comment": "c"},
                                  {"ErrorEquals": ["States.ALL"]}],
                        "Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": null, "Next": "F"}],
                        "Next": "C"},
                  "C": {"Type": "Choice", "InputPath": null, "OutputPath": null,
                        "Choices": [{"Not": {"Variable": "$.a", "IsNull": true}, "Next": "W1", "Comment": "c"},
                                    {"Or": [{"Variable": "$.a", "NumericLessThanEqualsPath": "$.b"},
                                            {"Variable": "$.a", "StringEqualsPath": "$$.Execution.Name"}],
                                     "Next": "W2"}],
                        "Default": "T2"},
                  "W1": {"Type": "Wait", "Seconds": 5, "Next": "W3"},
                  "W2": {"Type": "Wait", "SecondsPath": "$.s", "Next": "W3"},
                  "W3": {"Type": "Wait", "Timestamp": "2030-01-01T00:00:00Z", "Next": "W4"},
                  "W4": {"Type": "Wait", "TimestampPath": "$.t", "End": true},
                  "T2": {"Type": "Task", "Resource": "fn:b", "Next": "P"},
                  "P": {"Type": "Pass", "Result": {"a": 1}, "ResultPath": "$.p", "Next": "S"},
                  "S": {"Type": "Succeed", "InputPath": "$", "OutputPath": "$.p"},
                  "F": {"Type": "Fail", "Error": "E", "Cause": "why"}
                }}""");

        assertEquals(Set.of("fn:a", "fn:b"), m.taskResources());
        assertEquals("T", m.startAt());
    }

    static Stream<Arguments> badDefinitions() {
        return Stream.of(
                bad("Map state", machine("Fan", "\"Fan\": {\"Type\": \"Map\", \"End\": true}"),
                        "State 'Fan': state type 'Map' is not supported"),
                bad("Parallel state", machine("Par", "\"Par\": {\"Type\": \"Parallel\", \"Branches\": [], \"End\": true}"),
                        "State 'Par': state type 'Parallel' is not supported"),
                bad("unknown field", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"Foo\": 1, \"End\": true}"),
                        "State 'T': field 'Foo' is not supported"),
                bad("Task TimeoutSeconds", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"TimeoutSeconds\": 5, \"End\": true}"),
                        "State 'T': field 'TimeoutSeconds' is not supported"),
                bad("Task HeartbeatSeconds", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"HeartbeatSeconds\": 5, \"End\": true}"),
                        "State 'T': field 'HeartbeatSeconds' is not supported"),
                bad("ItemsPath", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"ItemsPath\": \"$.a\", \"End\": true}"),
                        "State 'T': field 'ItemsPath' is not supported"),
                bad("dangling Next", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"Next\": \"Nowhere\"}"),
                        "State 'T': field 'Next' names no state: 'Nowhere'"),
                bad("dangling Catch Next", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"End\": true,"
                        + " \"Catch\": [{\"ErrorEquals\": [\"States.ALL\"], \"Next\": \"Gone\"}]}"),
                        "State 'T': field 'Catch[0].Next' names no state: 'Gone'"),
                bad("dangling Default", machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": [{\"Variable\": \"$.a\","
                        + " \"IsPresent\": true, \"Next\": \"Done\"}], \"Default\": \"Gone\"}, " + END),
                        "State 'C': field 'Default' names no state: 'Gone'"),
                bad("unsupported Choice operator", machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": [{\"Variable\":"
                        + " \"$.a\", \"StringMatches\": \"a*\", \"Next\": \"Done\"}]}, " + END),
                        "State 'C': Choices[0]: unsupported Choice operator 'StringMatches'"),
                bad("nested unsupported operator", machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": [{\"And\": [{\"Variable\":"
                        + " \"$.t\", \"TimestampEquals\": \"2020-01-01T00:00:00Z\"}], \"Next\": \"Done\"}]}, " + END),
                        "State 'C': Choices[0]: And[0]: unsupported Choice operator 'TimestampEquals'"),
                bad("Choice operand of the wrong type", machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": [{\"Variable\":"
                        + " \"$.a\", \"NumericEquals\": \"3\", \"Next\": \"Done\"}]}, " + END),
                        "State 'C': Choices[0]: NumericEquals has a value of the wrong type"),
                bad("intrinsic function in Parameters", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\","
                        + " \"Parameters\": {\"msg.$\": \"States.Format('hi {}', $.name)\"}, \"End\": true}"),
                        "State 'T': field 'Parameters': 'msg.$': intrinsic function 'States.Format('hi {}', $.name)' is not supported"),
                bad("missing End", machine("P", "\"P\": {\"Type\": \"Pass\"}"),
                        "State 'P': needs 'Next' or \"End\": true"),
                bad("both Next and End", machine("P", "\"P\": {\"Type\": \"Pass\", \"Next\": \"P\", \"End\": true}"),
                        "State 'P': has both 'Next' and 'End'"),
                bad("Choice with End", machine("C", "\"C\": {\"Type\": \"Choice\", \"End\": true, \"Choices\": [{\"Variable\":"
                        + " \"$.a\", \"IsPresent\": true, \"Next\": \"Done\"}]}, " + END),
                        "State 'C': field 'End' is not supported"),
                bad("missing StartAt", "{\"States\": {" + END + "}}",
                        "Top level: field 'StartAt' is required"),
                bad("StartAt names no state", machine("Nope", END),
                        "Top level: 'StartAt' names no state: 'Nope'"),
                bad("top-level TimeoutSeconds", "{\"StartAt\": \"Done\", \"TimeoutSeconds\": 60, \"States\": {" + END + "}}",
                        "Top level: field 'TimeoutSeconds' is not supported"),
                bad("unreachable state", machine("Done", END + ", \"Orphan\": {\"Type\": \"Succeed\"}"),
                        "State 'Orphan': cannot be reached from StartAt 'Done'"),
                bad("no terminal state", machine("A", "\"A\": {\"Type\": \"Pass\", \"Next\": \"B\"},"
                        + " \"B\": {\"Type\": \"Pass\", \"Next\": \"A\"}"),
                        "Top level: no state ends the execution"),
                bad("States.ALL not last", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"End\": true,"
                        + " \"Retry\": [{\"ErrorEquals\": [\"States.ALL\"]}, {\"ErrorEquals\": [\"E\"]}]}"),
                        "State 'T': Retry[0]: 'States.ALL' must appear alone, in the last retrier or catcher"),
                bad("JitterStrategy FULL", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"End\": true,"
                        + " \"Retry\": [{\"ErrorEquals\": [\"E\"], \"JitterStrategy\": \"FULL\"}]}"),
                        "State 'T': Retry[0]: field 'JitterStrategy' supports NONE only"),
                bad("BackoffRate below 1", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"End\": true,"
                        + " \"Retry\": [{\"ErrorEquals\": [\"E\"], \"BackoffRate\": 0.5}]}"),
                        "State 'T': Retry[0]: field 'BackoffRate' must be a number >= 1.0"),
                bad("IntervalSeconds 0", machine("T", "\"T\": {\"Type\": \"Task\", \"Resource\": \"r\", \"End\": true,"
                        + " \"Retry\": [{\"ErrorEquals\": [\"E\"], \"IntervalSeconds\": 0}]}"),
                        "State 'T': Retry[0]: field 'IntervalSeconds' must be an integer >= 1"),
                bad("Wait with two durations", machine("W", "\"W\": {\"Type\": \"Wait\", \"Seconds\": 1, \"SecondsPath\": \"$.s\", \"End\": true}"),
                        "State 'W': a Wait needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath"),
                bad("Wait with a bad Timestamp", machine("W", "\"W\": {\"Type\": \"Wait\", \"Timestamp\": \"tomorrow\", \"End\": true}"),
                        "State 'W': field 'Timestamp' is not an RFC 3339 timestamp"),
                bad("wildcard path", machine("P", "\"P\": {\"Type\": \"Pass\", \"InputPath\": \"$.a[*]\", \"End\": true}"),
                        "State 'P': field 'InputPath': '$.a[*]' is not a supported reference path"),
                bad("unknown context field", machine("P", "\"P\": {\"Type\": \"Pass\", \"Parameters\": {\"i.$\": \"$$.Map.Item.Value\"}, \"End\": true}"),
                        "State 'P': field 'Parameters': 'i.$': '$$.Map.Item.Value' is not in the supported context object"),
                bad("ResultPath with an index", machine("P", "\"P\": {\"Type\": \"Pass\", \"ResultPath\": \"$.a[0]\", \"End\": true}"),
                        "State 'P': field 'ResultPath' must be $ or $.field.field..."),
                bad("Fail with ErrorPath", machine("F", "\"F\": {\"Type\": \"Fail\", \"ErrorPath\": \"$.e\"}"),
                        "State 'F': field 'ErrorPath' is not supported"),
                bad("Task without Resource", machine("T", "\"T\": {\"Type\": \"Task\", \"End\": true}"),
                        "State 'T': field 'Resource' is required"),
                bad("duplicate state name", "{\"StartAt\": \"A\", \"States\": {\"A\": {\"Type\": \"Succeed\"}, \"A\": {\"Type\": \"Succeed\"}}}",
                        "Duplicate field 'A'"),
                bad("not JSON", "{\"StartAt\": ", "Definition is not valid JSON"));
    }

    private static Arguments bad(String name, String definition, String message) {
        return Arguments.of(name, definition, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badDefinitions")
    void load_definitionOutsideSubset_throwsNamingStateAndField(String name, String definition, String message) {
        AslException e = assertThrows(AslException.class, () -> AslMachine.load(definition));

        assertTrue(e.getMessage().contains(message), () -> "expected \"" + message + "\" in: " + e.getMessage());
    }
}
