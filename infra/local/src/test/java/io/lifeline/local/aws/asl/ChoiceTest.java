package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.machine;
import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.testing.MutableClock;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Tag("unit")
class ChoiceTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));

    /** Runs a Choice with one rule (leading to "Yes") and, if asked, a Default ("No"); the output says which ran. */
    private Execution choose(String rule, String input, boolean withDefault) {
        String ruleWithNext = rule.substring(0, rule.lastIndexOf('}')) + ", \"Next\": \"Yes\"}";
        String definition = machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": [" + ruleWithNext + "]"
                + (withDefault ? ", \"Default\": \"No\"}, \"No\": {\"Type\": \"Pass\", \"Result\": \"no\", \"End\": true}" : "}")
                + ", \"Yes\": {\"Type\": \"Pass\", \"Result\": \"yes\", \"End\": true}");
        AslRunner runner = new AslRunner(AslMachine.load(definition), (r, i) -> null, clock, 1);
        return runner.start("x", parse(input));
    }

    static Stream<Arguments> operators() {
        return Stream.of(
                op("StringEquals true", "{\"Variable\": \"$.s\", \"StringEquals\": \"dead\"}", "{\"s\": \"dead\"}", true),
                op("StringEquals false", "{\"Variable\": \"$.s\", \"StringEquals\": \"dead\"}", "{\"s\": \"ready\"}", false),
                op("StringEqualsPath", "{\"Variable\": \"$.s\", \"StringEqualsPath\": \"$.t\"}", "{\"s\": \"a\", \"t\": \"a\"}", true),
                op("NumericEquals", "{\"Variable\": \"$.n\", \"NumericEquals\": 3}", "{\"n\": 3.0}", true),
                op("NumericEqualsPath", "{\"Variable\": \"$.n\", \"NumericEqualsPath\": \"$.m\"}", "{\"n\": 3, \"m\": 4}", false),
                op("NumericLessThan", "{\"Variable\": \"$.n\", \"NumericLessThan\": 3}", "{\"n\": 2}", true),
                op("NumericLessThan at the bound", "{\"Variable\": \"$.n\", \"NumericLessThan\": 3}", "{\"n\": 3}", false),
                op("NumericLessThanEquals", "{\"Variable\": \"$.n\", \"NumericLessThanEquals\": 3}", "{\"n\": 3}", true),
                op("NumericGreaterThan", "{\"Variable\": \"$.n\", \"NumericGreaterThan\": 3}", "{\"n\": 3}", false),
                op("NumericGreaterThanEquals", "{\"Variable\": \"$.n\", \"NumericGreaterThanEquals\": 3}", "{\"n\": 3}", true),
                op("NumericGreaterThanPath", "{\"Variable\": \"$.n\", \"NumericGreaterThanPath\": \"$.max\"}", "{\"n\": 4, \"max\": 3}", true),
                op("BooleanEquals", "{\"Variable\": \"$.b\", \"BooleanEquals\": true}", "{\"b\": true}", true),
                op("BooleanEquals false", "{\"Variable\": \"$.b\", \"BooleanEquals\": true}", "{\"b\": false}", false),
                op("IsPresent true", "{\"Variable\": \"$.a.b\", \"IsPresent\": true}", "{\"a\": {\"b\": null}}", true),
                op("IsPresent on a missing path", "{\"Variable\": \"$.a.b\", \"IsPresent\": true}", "{\"a\": {}}", false),
                op("IsPresent false", "{\"Variable\": \"$.x\", \"IsPresent\": false}", "{}", true),
                op("IsNull", "{\"Variable\": \"$.x\", \"IsNull\": true}", "{\"x\": null}", true),
                op("IsNull false", "{\"Variable\": \"$.x\", \"IsNull\": false}", "{\"x\": null}", false),
                op("And", "{\"And\": [{\"Variable\": \"$.n\", \"NumericGreaterThan\": 1}, {\"Variable\": \"$.n\","
                        + " \"NumericLessThan\": 5}]}", "{\"n\": 3}", true),
                op("And, one false", "{\"And\": [{\"Variable\": \"$.n\", \"NumericGreaterThan\": 1}, {\"Variable\": \"$.n\","
                        + " \"NumericLessThan\": 2}]}", "{\"n\": 3}", false),
                op("Or", "{\"Or\": [{\"Variable\": \"$.s\", \"StringEquals\": \"a\"}, {\"Variable\": \"$.s\","
                        + " \"StringEquals\": \"b\"}]}", "{\"s\": \"b\"}", true),
                op("Not", "{\"Not\": {\"Variable\": \"$.s\", \"StringEquals\": \"a\"}}", "{\"s\": \"b\"}", true),
                op("And guarded by IsPresent", "{\"And\": [{\"Variable\": \"$.maybe\", \"IsPresent\": true},"
                        + " {\"Variable\": \"$.maybe\", \"StringEquals\": \"x\"}]}", "{}", false),
                op("value of another type", "{\"Variable\": \"$.n\", \"StringEquals\": \"3\"}", "{\"n\": 3}", false),
                op("array index", "{\"Variable\": \"$.list[1].s\", \"StringEquals\": \"b\"}",
                        "{\"list\": [{\"s\": \"a\"}, {\"s\": \"b\"}]}", true),
                op("context object", "{\"Variable\": \"$$.Execution.Name\", \"StringEquals\": \"x\"}", "{}", true));
    }

    private static Arguments op(String name, String rule, String input, boolean matches) {
        return Arguments.of(name, rule, input, matches);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("operators")
    void choice_eachOperator_matchesAsSpecified(String name, String rule, String input, boolean matches) {
        Execution e = choose(rule, input, true);

        assertEquals(parse(matches ? "\"yes\"" : "\"no\""), e.output(), () -> e.history().toString());
    }

    @Test
    void choice_noRuleMatches_takesDefault() {
        assertEquals(parse("\"no\""), choose("{\"Variable\": \"$.s\", \"StringEquals\": \"a\"}", "{\"s\": \"b\"}", true)
                .output());
    }

    @Test
    void choice_noRuleMatchesAndNoDefault_failsWithNoChoiceMatched() {
        Execution e = choose("{\"Variable\": \"$.s\", \"StringEquals\": \"a\"}", "{\"s\": \"b\"}", false);

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("States.NoChoiceMatched", e.error());
    }

    @Test
    void choice_variableSelectsNothing_failsWithStatesRuntime() {
        Execution e = choose("{\"Variable\": \"$.missing\", \"StringEquals\": \"a\"}", "{}", true);

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("States.Runtime", e.error());
    }

    @Test
    void choice_firstMatchingRule_wins() {
        AslRunner runner = new AslRunner(AslMachine.load(machine("C", "\"C\": {\"Type\": \"Choice\", \"Choices\": ["
                + "{\"Variable\": \"$.n\", \"NumericGreaterThan\": 1, \"Next\": \"A\"},"
                + "{\"Variable\": \"$.n\", \"NumericGreaterThan\": 0, \"Next\": \"B\"}]},"
                + "\"A\": {\"Type\": \"Pass\", \"Result\": \"A\", \"End\": true},"
                + "\"B\": {\"Type\": \"Pass\", \"Result\": \"B\", \"End\": true}")), (r, i) -> null, clock, 1);

        assertEquals(parse("\"A\""), runner.start("x", parse("{\"n\": 5}")).output());
    }

    @Test
    void choice_inputPathAndOutputPath_applyToWhatItPassesOn() {
        AslRunner runner = new AslRunner(AslMachine.load(machine("C", "\"C\": {\"Type\": \"Choice\","
                + " \"InputPath\": \"$.agent\", \"OutputPath\": \"$.id\", \"Choices\": ["
                + "{\"Variable\": \"$.state\", \"StringEquals\": \"dead\", \"Next\": \"Done\"}]},"
                + "\"Done\": {\"Type\": \"Succeed\"}")), (r, i) -> null, clock, 1);

        Execution e = runner.start("x", parse("{\"agent\": {\"id\": \"a1\", \"state\": \"dead\"}}"));

        assertEquals(parse("\"a1\""), e.output());
    }
}
