package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.config.Config;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.SamTemplate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Read from template.yaml: the control loop (sweep, outbox, revive) reserves concurrency, the
 * authorizer and the API functions are capped, the defaults leave Lambda's 100 unreserved in an account at the
 * default quota of 1,000, and every function's DynamoDB call ends well inside its Timeout.
 */
@Tag("unit")
class ConcurrencyTemplateTest {
    static JsonNode root;
    static SamTemplate template;

    @BeforeAll
    static void read() throws Exception {
        root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
        template = TestStack.template();
    }

    /** The reserved profile, with every other parameter at its default. */
    static final Map<String, String> RESERVED = Map.of("ConcurrencyProfile", "reserved");

    /** Each function's ReservedConcurrentExecutions under {@code parameters} (0: none). */
    static Map<String, Integer> reservations(Map<String, String> parameters) {
        Map<String, Integer> out = new LinkedHashMap<>();
        root.path("Resources").fields().forEachRemaining(r -> {
            if (!"AWS::Serverless::Function".equals(r.getValue().path("Type").asText())) {
                return;
            }
            JsonNode reserved = r.getValue().path("Properties").path("ReservedConcurrentExecutions");
            // !If [Condition, value, NoValue] reads as [Condition, value, "AWS::NoValue"]: the value when it holds.
            assertTrue(reserved.isArray() && reserved.size() == 3, r.getKey() + " reserves or caps nothing: " + reserved);
            out.put(r.getKey(), template.reservedConcurrency(r.getKey(), parameters).orElse(0));
        });
        return out;
    }

    /**
     * The sweep reserves one unit per part, and its parts follow FleetSize (one invocation up to 100,000 agents, four
     * at 1,000,000) unless SweepParts names a number.
     */
    @Test
    void theSweepsParts_followFleetSize_unlessSweepPartsNamesThem() {
        assertEquals(1, template.reservedConcurrency("SweepFunction", RESERVED).orElseThrow());
        assertEquals(1, template.reservedConcurrency("SweepFunction",
                Map.of("ConcurrencyProfile", "reserved", "FleetSize", "100000")).orElseThrow());
        assertEquals(4, template.reservedConcurrency("SweepFunction",
                Map.of("ConcurrencyProfile", "reserved", "FleetSize", "1000000")).orElseThrow());
        assertEquals(2, template.reservedConcurrency("SweepFunction",
                Map.of("ConcurrencyProfile", "reserved", "FleetSize", "1000000", "SweepParts", "2")).orElseThrow());
    }

    @Test
    void everyFunction_reservesOrIsCapped_andTheDefaultsLeaveTheAccountItsUnreservedHundred() {
        Map<String, Integer> reserved = reservations(RESERVED);
        assertEquals(new TreeSet<>(template.logicalIds("AWS::Serverless::Function")), new TreeSet<>(reserved.keySet()));
        assertEquals(1, reserved.get("SweepFunction"), "one sweep at a time");
        for (String loop : Set.of("PublisherFunction", "ReviveFunction", "AuthorizerFunction", "HeartbeatFunction",
                "HeartbeatUrlFunction")) {
            assertTrue(reserved.get(loop) > 0, loop);
        }
        int total = reserved.values().stream().mapToInt(Integer::intValue).sum();
        assertTrue(total <= 1000 - 100, "Lambda keeps 100 of a 1,000 quota unreserved; the defaults reserve " + total);
        assertTrue(reserved.get("AuthorizerFunction") < reserved.get("HeartbeatFunction"),
                "a flood of wrong keys is capped below the fleet's beats");
    }

    /**
     * The reserved-concurrency total, derived here from template.yaml (each function's ReservedConcurrentExecutions
     * under the profile's parameters, defaults for the rest), is the one every page quotes. A page quotes it as
     * "N reserved in all"; any other phrase a total was quoted in before ("N in all", "N with the defaults",
     * "(N reserved") must carry the same N, so a function added to the template cannot leave an old total behind.
     */
    @Test
    void everyReservedConcurrencyTotal_theDocsQuote_isTheTemplates() throws Exception {
        int reserved = reservations(RESERVED).values().stream().mapToInt(Integer::intValue).sum();
        int unreserved = reservations(Map.of()).values().stream().mapToInt(Integer::intValue).sum();
        assertEquals("unreserved", root.path("Parameters").path("ConcurrencyProfile").path("Default").asText());
        assertEquals(0, unreserved, "the default profile reserves nothing");
        Path repo = TestStack.templatePath().getParent();
        List<Path> pages = new ArrayList<>(List.of(repo.resolve("README.md"), repo.resolve("BENCHMARKS.md"),
                repo.resolve("RELIABILITY.md"), repo.resolve("template.yaml")));
        try (Stream<Path> docs = Files.walk(repo.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        // A number that is not the tail of another ($3.341, 1.5): digits and commas after a space or a bracket.
        Pattern quoted = Pattern.compile("(?<![\\d.,$])(\\d[\\d,]*) (?:units )?(?:reserved )?in all\\b"
                + "|(?<![\\d.,$])(\\d[\\d,]*) with the (?:defaults|URL's)\\b|\\((\\d[\\d,]*) reserved\\b");
        Map<String, Integer> found = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        for (Path page : pages) {
            String text = Files.readString(page).replaceAll("\\s+", " ");
            Matcher m = quoted.matcher(text);
            while (m.find()) {
                String n = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
                int value = Integer.parseInt(n.replace(",", ""));
                String where = repo.relativize(page) + ": \"" + m.group() + "\"";
                if (value != reserved) {
                    wrong.add(where);
                }
                found.merge(repo.relativize(page).toString(), value == reserved ? 1 : 0, Integer::sum);
            }
        }
        assertEquals(List.of(), wrong, "totals other than the template's " + reserved + " (reserved profile)");
        for (String page : List.of("template.yaml", "docs/deploy.md", "BENCHMARKS.md")) {
            String text = Files.readString(repo.resolve(page)).replaceAll("\\s+", " ");
            assertTrue(text.contains(reserved + " reserved in all"), page + " quotes the total: " + reserved
                    + " reserved in all; found " + found);
        }
    }

    @Test
    void dynamoDbCallTimeout_isWellInsideEveryFunctionsTimeout() {
        Map<String, String> env = new LinkedHashMap<>();
        root.path("Globals").path("Function").path("Environment").path("Variables").fields()
                .forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        Config.CallTimeouts timeouts = Config.CallTimeouts.fromEnvironment(env);
        assertTrue(env.containsKey("DYNAMODB_CALL_TIMEOUT_MS") && env.containsKey("DYNAMODB_ATTEMPT_TIMEOUT_MS"));
        int globalTimeout = root.path("Globals").path("Function").path("Timeout").asInt();
        root.path("Resources").fields().forEachRemaining(r -> {
            if (!"AWS::Serverless::Function".equals(r.getValue().path("Type").asText())) {
                return;
            }
            Duration timeout = Duration.ofSeconds(r.getValue().path("Properties").path("Timeout").asInt(globalTimeout));
            assertTrue(timeouts.call().multipliedBy(2).compareTo(timeout) <= 0,
                    r.getKey() + ": a DynamoDB call of " + timeouts.call() + " in a Timeout of " + timeout);
            assertTrue(timeouts.attempt().multipliedBy(2).compareTo(timeouts.call()) <= 0,
                    "the call leaves room for a retry of a timed-out attempt");
        });
    }
}
