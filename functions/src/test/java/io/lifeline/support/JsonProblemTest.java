package io.lifeline.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Why a body is not JSON we accept, in words for a person: never the parser's names for its settings. */
@Tag("unit")
class JsonProblemTest {
    private static String problem(String text) {
        JsonProcessingException e = assertThrows(JsonProcessingException.class, () -> Json.parse(text));
        return Json.problem(e);
    }

    @Test
    void problem_duplicateKey_namesTheFieldInPlainWords() {
        assertEquals("duplicate field \"status\" (each field may appear only once)",
                problem("{\"status\":\"ready\",\"status\":\"working\"}"));
    }

    @Test
    void problem_duplicateKeyDeepInside_namesThatField() {
        assertTrue(problem("{\"metadata\":{\"a\":1,\"a\":2}}").startsWith("duplicate field \"a\""));
    }

    @Test
    void problem_twoValues_saysSendOne() {
        assertTrue(problem("{} {}").startsWith("more than one JSON value"), problem("{} {}"));
    }

    @Test
    void problem_tooDeep_saysHowDeepIsAllowed() {
        String deep = "{\"a\":" + "[".repeat(70) + "]".repeat(70) + "}";
        assertTrue(problem(deep).startsWith("it is nested more than 64 levels deep"), problem(deep));
    }

    @Test
    void problem_cutShort_saysItEndsEarly() {
        assertTrue(problem("{\"a\":[1,2").startsWith("it ends before the JSON value is complete"));
    }

    @Test
    void problem_singleQuotes_namesWhereItStopped() {
        String p = problem("{'a':1}");
        assertTrue(p.endsWith("(line 1, column 2)") || p.endsWith("(line 1, column 3)"), p);
    }

    @Test
    void problem_numberOfMoreThan1000Digits_saysTooManyDigits() {
        assertTrue(problem("{\"a\":" + "9".repeat(1200) + "}").startsWith("a number has too many digits"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"a\":1,\"a\":2}", "{} []", "{", "{\"a\":}", "{'a':1}", "nul", "{\"a\":1,}",
        "{\"a\":\"\u0001\"}", "{\"a\":01}", "{\"a\":NaN}", "\"abc", "{\"a\":1}x", "{\"a\":tru}", "{\"a\" 1}",
        "{\"a\":\"\\x\"}", "{\"a\":-Infinity}", "[1,]"})
    void problem_ofAnyBadBody_namesNoParserSettingOrType(String text) {
        String p = problem(text);
        assertFalse(p.isBlank());
        for (String jargon : new String[] {"`", "Feature", "StreamRead", "Constraints", "ObjectNode", "JsonNode",
            "jackson", "[Source", "REDACTED", "code 1"}) {
            assertFalse(p.contains(jargon), text + " -> " + p);
        }
    }
}
