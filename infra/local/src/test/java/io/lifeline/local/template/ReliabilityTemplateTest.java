package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.SamTemplate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What keeps things the operator does not control from killing a fleet or blocking a deploy, read from template.yaml:
 * the public heartbeat URL runs on a function of its own with its own reserved concurrency; the canaries roll back on
 * their own live alias's alarms only, in every alarm set; a throttled heartbeat path alarms in the essential set; the
 * default parameters reserve no concurrency a new account does not have; the sweep's queue follows AWS's visibility
 * rule, and its memory follows FleetSize; the guided deploy asks the few parameters that matter first.
 */
@Tag("unit")
class ReliabilityTemplateTest {
    /** A new account's Lambda concurrency quota, of which Lambda keeps 100 (or the account's minimum) unreserved. */
    static final int NEW_ACCOUNT_QUOTA = 10;
    static final Set<String> HEARTBEAT_FUNCTIONS = Set.of("HeartbeatFunction", "HeartbeatUrlFunction");

    static JsonNode root;
    static JsonNode resources;
    static SamTemplate template;

    @BeforeAll
    static void read() throws Exception {
        root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
        resources = root.path("Resources");
        template = TestStack.template();
    }

    @Test
    void theUrl_runsOnItsOwnFunction_withItsOwnReservedConcurrency_andNoApiRoute() {
        Map<String, String> reserved = Map.of("ConcurrencyProfile", "reserved");
        Map<String, String> urls = template.functionUrls(reserved);
        assertEquals(Set.of("HeartbeatUrlFunction"), urls.keySet(), "the URL's function");
        String urlFunction = urls.keySet().iterator().next();
        assertNotEquals("HeartbeatFunction", urlFunction, "not the function behind the API's heartbeat routes");
        JsonNode p = resources.path(urlFunction).path("Properties");
        assertEquals(resources.at("/HeartbeatFunction/Properties/Handler").asText(), p.path("Handler").asText(),
                "the same handler, from the same jar");
        assertTrue(p.path("Events").isMissingNode(), "no HTTP API route reaches it: " + p.path("Events"));
        int own = template.reservedConcurrency(urlFunction, reserved).orElse(0);
        assertTrue(own > 0, "its own reserved concurrency");
        // Left at fleet, it takes FleetSize's figure (FleetCaps); a number overrides it.
        assertEquals("fleet", template.parameter("HeartbeatUrlMaxConcurrency", Map.of()));
        assertEquals(template.tree().at("/Mappings/FleetCaps/" + template.parameter("FleetSize", Map.of())
                + "/HeartbeatUrl").asInt(), own);
        Map<String, String> overridden = new HashMap<>(reserved);
        overridden.put("HeartbeatUrlMaxConcurrency", "7");
        assertEquals(7, template.reservedConcurrency(urlFunction, overridden).orElse(0));
        assertTrue(template.reservedConcurrency("HeartbeatFunction", reserved).orElse(0) > 0,
                "the API's heartbeats keep a reservation the URL cannot take");
    }

    @Test
    void theSweep_hasItsOwnMemory_sizedByFleetSize_growingWithIt_withinLambdasRange() {
        JsonNode memory = resources.at("/SweepFunction/Properties/MemorySize");
        assertTrue(memory.isArray() && memory.size() == 3 && "SweepSizing".equals(memory.get(0).asText())
                && "MemorySize".equals(memory.get(2).asText()), "FindInMap [SweepSizing, FleetSize, ...]: " + memory);
        int previous = 0;
        for (JsonNode size : root.at("/Parameters/FleetSize/AllowedValues")) {
            int mb = root.at("/Mappings/SweepSizing/" + size.asText() + "/MemorySize").asInt();
            assertTrue(mb >= 1024 && mb <= 10_240 && mb >= previous, size.asText() + ": " + mb + " MB");
            previous = mb;
        }
        assertTrue(previous > root.at("/Globals/Function/MemorySize").asInt(), "the largest fleet's sweep gets more");
    }

    @Test
    void canaries_rollBackOnTheirOwnAliasAlarmsOnly_inEverySet() {
        for (String function : List.of("HeartbeatFunction", "HeartbeatUrlFunction", "AuthorizerFunction")) {
            JsonNode alarms = resources.path(function).at("/Properties/DeploymentPreference/Alarms");
            assertTrue(alarms.isArray() && alarms.size() > 0, function + ": " + alarms);
            Set<String> own = function.equals("AuthorizerFunction") ? Set.of(function) : HEARTBEAT_FUNCTIONS;
            boolean aliasErrors = false;
            for (JsonNode a : alarms) {
                String id = a.asText();
                assertNotEquals("FaultsAlarm", id, function + ": a fault elsewhere never rolls a deploy back");
                JsonNode alarm = resources.path(id);
                assertTrue(alarm.path("Condition").isMissingNode(), id + " is in the essential set");
                for (JsonNode metric : metrics(alarm)) {
                    String name = metric.path("Namespace").asText() + "/" + metric.path("MetricName").asText();
                    Map<String, String> dims = dimensions(metric);
                    if (name.equals("AWS/Lambda/Errors")) {
                        String fn = dims.get("FunctionName");
                        assertTrue(own.contains(fn), id + " reads another function's errors: " + fn);
                        assertEquals("${" + fn + "}:live", dims.get("Resource"), id + ": alias-scoped");
                        aliasErrors = true;
                    } else {
                        assertEquals("Lifeline/HeartbeatsRejected", name, id);
                        assertEquals("INTERNAL_ERROR", dims.get("code"), id);
                        assertTrue(HEARTBEAT_FUNCTIONS.containsAll(own), id + ": the heartbeat handler's own rejects");
                    }
                }
            }
            assertTrue(aliasErrors, function + " rolls back on its live alias's Lambda errors");
        }
        assertTrue(resources.path("FaultsAlarm").path("Condition").isMissingNode(), "FaultsAlarm stays an alert");
    }

    @Test
    void theEssentialSet_alarmsOnAThrottledHeartbeatPath_theApisAndTheUrls() {
        assertEquals("essential", template.parameter("AlarmSet", Map.of()));
        JsonNode alarm = resources.path("HeartbeatThrottlesAlarm");
        assertTrue(alarm.path("Condition").isMissingNode(), "in the essential set");
        Set<String> throttled = new HashSet<>();
        for (JsonNode metric : metrics(alarm)) {
            assertEquals("AWS/Lambda/Throttles", metric.path("Namespace").asText() + "/"
                    + metric.path("MetricName").asText());
            throttled.add(dimensions(metric).get("FunctionName"));
        }
        assertEquals(HEARTBEAT_FUNCTIONS, throttled);
    }

    @Test
    void theDefaults_reserveNoConcurrencyANewAccountLacks() {
        int total = 0;
        for (String id : template.logicalIds("AWS::Serverless::Function")) {
            total += template.reservedConcurrency(id, Map.of()).orElse(0);
        }
        // Lambda keeps at least 100 unreserved: an account at the new-account quota can reserve nothing at all.
        int reservable = Math.max(0, NEW_ACCOUNT_QUOTA - 100);
        assertTrue(total <= reservable, "the default parameters reserve " + total + " of a new account's "
                + NEW_ACCOUNT_QUOTA);
        assertEquals("unreserved", template.parameter("ConcurrencyProfile", Map.of()));
        assertEquals(Map.of(), template.functionUrls(Map.of()), "no uncapped public URL on the default profile");
    }

    @Test
    void theSweepQueue_hidesAMessageForSixTimesTheSweepsTimeout() {
        int timeout = resources.at("/Resources/SweepFunction/Properties/Timeout").asInt();
        int visibility = resources.at("/Resources/SweepQueue/Properties/VisibilityTimeout").asInt();
        assertTrue(visibility >= 6 * timeout, "AWS: at least 6 x the function's timeout; " + visibility + " s");
        assertTrue(resources.at("/Resources/SweepQueue/Properties/MessageRetentionPeriod").asInt() >= visibility);
    }

    @Test
    void theGuidedDeploy_groupsEveryParameterOnce_theProfileFirst() {
        JsonNode groups = root.at("/Metadata/AWS::CloudFormation::Interface/ParameterGroups");
        List<String> grouped = new ArrayList<>();
        groups.forEach(g -> g.path("Parameters").forEach(p -> grouped.add(p.asText())));
        assertEquals(new LinkedHashSet<>(grouped).size(), grouped.size(), "each parameter once: " + grouped);
        assertEquals(new HashSet<>(template.parameterNames()), new HashSet<>(grouped));
        assertEquals("ConcurrencyProfile", grouped.get(0));
        assertFalse(root.at("/Metadata/AWS::CloudFormation::Interface/ParameterLabels/ConcurrencyProfile").isMissingNode());
    }

    /** An alarm's metrics: its own, or each MetricStat of its metric math (an optional one's too). */
    static List<JsonNode> metrics(JsonNode alarm) {
        JsonNode p = alarm.path("Properties");
        List<JsonNode> out = new ArrayList<>();
        if (p.path("Metrics").isMissingNode()) {
            out.add(p);
            return out;
        }
        for (JsonNode m : p.path("Metrics")) {
            // `!If [Condition, item, NoValue]` reads as [Condition, item, "AWS::NoValue"].
            JsonNode item = m.isArray() ? m.get(1) : m;
            if (item.has("MetricStat")) {
                out.add(item.at("/MetricStat/Metric"));
            }
        }
        return out;
    }

    static Map<String, String> dimensions(JsonNode metric) {
        Map<String, String> out = new HashMap<>();
        metric.path("Dimensions").forEach(d -> out.put(d.path("Name").asText(), d.path("Value").asText()));
        return out;
    }
}
