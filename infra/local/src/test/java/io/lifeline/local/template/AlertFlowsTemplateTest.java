package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The digest and flap-check flows are watched, read from template.yaml and the ASL files it names: a flap check runs
 * on a function and a flow of its own (its own reservation), so it never queues behind a digest; each flow's task
 * that calls its function catches what its retries did not fix, counts one {@code Faults} itself (CloudWatch's
 * PutMetricData from the flow, allowed in Lifeline's namespace only) and ends in a Fail state; FaultsAlarm, in every
 * alarm set, reads exactly that metric; the full set adds both flows' failed executions and both functions' errors
 * and throttles, in one alarm of at most 10 metrics. FlapFailOpenTest runs the Catch in Local's ASL interpreter.
 */
@Tag("unit")
class AlertFlowsTemplateTest {
    static final Map<String, String> FLOWS = Map.of("DigestStateMachine", "DigestFunction",
            "FlapCheckStateMachine", "FlapCheckFunction");
    static JsonNode resources;

    @BeforeAll
    static void read() throws Exception {
        resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile()).path("Resources");
    }

    static JsonNode definition(String machine) throws Exception {
        Path root = TestStack.templatePath().toAbsolutePath().getParent();
        return Json.parse(Files.readString(root.resolve(
                resources.path(machine).path("Properties").path("DefinitionUri").asText())));
    }

    @Test
    void aFlapCheck_hasItsOwnFlowFunctionAndReservation() throws Exception {
        assertEquals("FlapCheckStateMachine",
                resources.at("/FlapCheckOnFlappingRule/Properties/Targets/0/Arn").asText());
        assertEquals("DigestStateMachine",
                resources.at("/DigestOnBurstRule/Properties/Targets/0/Arn").asText());
        for (Map.Entry<String, String> flow : FLOWS.entrySet()) {
            JsonNode p = resources.path(flow.getKey()).path("Properties");
            assertEquals(flow.getValue() + ".Alias",
                    p.path("DefinitionSubstitutions").elements().next().asText(), flow.getKey());
        }
        assertEquals("io.lifeline.events.FlapCheckHandler::handleRequest",
                resources.at("/FlapCheckFunction/Properties/Handler").asText());
        assertNotEquals(resources.at("/DigestFunction/Properties/Handler").asText(),
                resources.at("/FlapCheckFunction/Properties/Handler").asText());
        Map<String, String> reserved = Map.of("ConcurrencyProfile", "reserved");
        assertEquals(1, TestStack.template().reservedConcurrency("FlapCheckFunction", reserved).orElse(0),
                "a reservation of its own: a digest cannot take it");
    }

    @Test
    void eachFlowCatchesWhatItsRetriesLeft_countsOneFault_andFails() throws Exception {
        for (String machine : FLOWS.keySet()) {
            JsonNode states = definition(machine).path("States");
            List<String> tasks = new ArrayList<>();
            states.fields().forEachRemaining(e -> {
                if (e.getValue().path("Resource").asText().startsWith("${")) {
                    tasks.add(e.getKey());
                }
            });
            assertEquals(1, tasks.size(), machine + ": one task calls the function");
            JsonNode task = states.path(tasks.get(0));
            assertTrue(task.path("Retry").size() > 0, machine);
            JsonNode c = task.path("Catch").get(0);
            assertEquals("[\"States.ALL\"]", c.path("ErrorEquals").toString(), machine);
            JsonNode count = states.path(c.path("Next").asText());
            assertEquals("arn:aws:states:::aws-sdk:cloudwatch:putMetricData", count.path("Resource").asText(),
                    machine);
            assertEquals("Lifeline", count.at("/Parameters/Namespace").asText());
            JsonNode datum = count.at("/Parameters/MetricData/0");
            assertEquals("Faults", datum.path("MetricName").asText());
            assertEquals(1, datum.path("Value").asInt());
            assertTrue(datum.path("Dimensions").isMissingNode(), "Faults has no dimension");
            // Counted or not, the execution then fails (ExecutionsFailed).
            assertEquals("Fail", states.path(count.path("Next").asText()).path("Type").asText(), machine);
            assertEquals("Fail", states.path(count.path("Catch").get(0).path("Next").asText()).path("Type").asText());
            // Its role may put that metric, in Lifeline's namespace only.
            String policies = resources.path(machine).path("Properties").path("Policies").toString();
            assertTrue(policies.contains("\"cloudwatch:PutMetricData\"") && policies.contains(
                    "{\"StringEquals\":{\"cloudwatch:namespace\":\"Lifeline\"}}"), policies);
        }
    }

    @Test
    void faultsAlarm_isEssential_andReadsTheFlowsCount() {
        JsonNode alarm = resources.path("FaultsAlarm");
        assertTrue(alarm.path("Condition").isMissingNode(), "in every alarm set");
        JsonNode p = alarm.path("Properties");
        assertEquals("Lifeline", p.path("Namespace").asText());
        assertEquals("Faults", p.path("MetricName").asText());
        assertTrue(p.path("Dimensions").isMissingNode(), "no dimension, as the flows put it");
        assertEquals("Sum", p.path("Statistic").asText());
        assertEquals("GreaterThanThreshold", p.path("ComparisonOperator").asText());
        assertEquals(0, p.path("Threshold").asInt());
    }

    @Test
    void theFullSet_watchesFailedExecutions_errorsAndThrottles_ofBothFlows() {
        JsonNode alarm = resources.path("AlertFlowsAlarm");
        assertEquals("FullAlarms", alarm.path("Condition").asText());
        Set<String> read = new HashSet<>();
        int metrics = 0;
        for (JsonNode m : alarm.path("Properties").path("Metrics")) {
            JsonNode metric = m.at("/MetricStat/Metric");
            if (metric.isMissingNode()) {
                continue;
            }
            metrics++;
            read.add(metric.path("Namespace").asText() + " " + metric.path("MetricName").asText() + " "
                    + metric.at("/Dimensions/0/Value").asText());
        }
        assertEquals(Set.of("AWS/States ExecutionsFailed DigestStateMachine",
                "AWS/States ExecutionsFailed FlapCheckStateMachine",
                "AWS/Lambda Errors DigestFunction", "AWS/Lambda Throttles DigestFunction",
                "AWS/Lambda Errors FlapCheckFunction", "AWS/Lambda Throttles FlapCheckFunction"), read);
        assertTrue(metrics <= 10, "CloudWatch's limit per metric-math alarm: " + metrics);
    }
}
