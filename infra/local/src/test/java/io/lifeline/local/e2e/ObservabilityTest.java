package io.lifeline.local.e2e;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LocalMain;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.StageThrottlesFilterTest;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Logs and metrics of every function during one realistic run on the TestStack: heartbeats (some refused, one
 * batch with a refused entry), a publish the bus refuses and then accepts, three sweeps that mark two agents
 * dead while self-preservation holds another team back, and two revive flows (one agent comes back, one
 * never does). Every line must be one valid JSON object with the required fields; every EMF document must be
 * well formed and its counts must be the scenario's; template.yaml's alarms must watch metrics that were
 * actually emitted, with the same dimensions.
 */
@Tag("e2e")
public class ObservabilityTest {
    static final String TEAM = TestStack.TEAM;
    static final String HERD = "herd";
    static final Set<String> UNITS = Set.of("Count", "Milliseconds");

    static TestStack stack;
    static final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    /** What the scenario did, counted as it went. */
    static int accepted;
    static final Map<String, Integer> rejected = new TreeMap<>();
    static int sweeps;

    @BeforeAll
    static void scenario() throws Exception {
        StoreFaults faults = new StoreFaults();
        stack = TestStack.builder().interceptor(faults).build();
        Log.sink(lines::add);
        for (String id : List.of("a1", "a2", "a3")) {
            ok(stack.ready(id));
        }
        String herdKey = stack.key(HERD, Scope.ADMIN);
        for (String id : List.of("h1", "h2", "h3", "h4")) {
            ok(stack.send("register", herdKey, Map.of("team", HERD), null,
                    "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}"));
            ok(stack.send("join", herdKey, Map.of("team", HERD, "agentId", id), null, null));
        }

        // The bus refuses every entry: the outbox retries, then hands its batch back; then it accepts.
        stack.bus.refuseWhen(entry -> true);
        stack.pump.drain();
        stack.bus.refuseWhen(entry -> false);
        stack.pump.drain();

        for (String id : List.of("a1", "a2", "a3")) {
            beat(id);
        }
        refused(stack.heartbeat("ghost", "{}"), 404, "AGENT_NOT_FOUND");
        // The store refuses a write in a way the handler does not expect (as IAM refuses a call a policy lacks):
        // 500 INTERNAL_ERROR, the code the heartbeat canary's rollback alarm watches.
        faults.fail(1, StoreFaults.touching(TEAM, "a3"), () -> (RuntimeException) DynamoDbException.builder()
                .statusCode(400).message("not authorized to perform: dynamodb:UpdateItem")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("AccessDeniedException").build()).build());
        refused(stack.heartbeat("a3", "{}"), 500, "INTERNAL_ERROR");
        refused(stack.send("heartbeat", "not-a-key", Map.of("team", TEAM, "agentId", "a3"), null, "{}"), 401,
                "UNAUTHENTICATED");
        // A batch: a3 accepted, ghost refused on its own while the request succeeds.
        TestStack.Reply batch = ok(stack.team("batch-heartbeats",
                "{\"heartbeats\":[{\"agentId\":\"a3\"},{\"agentId\":\"ghost\"}]}"));
        assertEquals("AGENT_NOT_FOUND", batch.body().get("results").get(1).get("code").asText());
        accepted++;
        rejected.merge("AGENT_NOT_FOUND", 1, Integer::sum);

        // a1 and a2 go silent; a3 keeps beating; herd (4 of 4 silent) is held by self-preservation. The store
        // throttles the first sweep's write of a2's miss (SweepWriteErrors: counts of 0 are not published, so the
        // alarm's metric must be made by a real fault): a2's misses start a sweep later.
        List<String> dead = new ArrayList<>();
        for (int sec = 75; sec <= 105; sec += 15) {
            stack.clock.set(TestStack.START.plusSeconds(sec));
            beat("a3");
            if (sec == 75) {
                faults.fail(1000, r -> r instanceof UpdateItemRequest
                        && StoreFaults.touching(TEAM, "a2").test(r), StoreFaults::throttled);
            }
            dead.addAll(stack.sweep());
            if (sec == 75) {
                faults.clear();
            }
            sweeps++;
        }
        assertEquals(Set.of(TEAM + "/a1", TEAM + "/a2"), new HashSet<>(dead));

        // The deaths start revive flows: a1's host brings it back, a2 never rejoins.
        stack.pump.drain();
        stack.stepFunctions.runDue();
        assertEquals("restarting", stack.status("a1"));
        ok(stack.agent("join", "a1", null));
        for (int wait : new int[] {30, 60, 120}) {
            stack.clock.advance(Duration.ofSeconds(wait + 1));
            stack.stepFunctions.runDue();
        }
        stack.pump.drain();
        assertEquals("ready", stack.status("a1"));
        assertEquals("dead_failed_revive", stack.status("a2"));

        // A stream record the outbox cannot handle (an item edited by hand: a status no code knows) is parked
        // (RecordsParked, a fault).
        ok(stack.ready("z1"));
        stack.pump.drain();
        stack.dynamo.updateItem(u -> u.tableName(stack.tables.live())
                .key(Map.of("pk", AttributeValue.fromS(
                        TestStack.agentPartition("z1")), "sk",
                        AttributeValue.fromS("AGENT")))
                .updateExpression("SET #s = :zombie, tseq = tseq + :one, ob = :t")
                .expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(
                        ":zombie", AttributeValue.fromS("zombie"),
                        ":one", AttributeValue.fromN("1"),
                        ":t", AttributeValue.fromBool(true))));
        stack.pump.drain();

        // Routine beats are counted in the heartbeat function's summary, written once its interval (300 s) is
        // over: one more beat after that writes it.
        stack.clock.advance(Duration.ofSeconds(300));
        beat("a3");
    }

    @AfterAll
    static void stop() {
        Log.sink(null);
        stack.close();
    }

    static void beat(String id) {
        ok(stack.heartbeat(id, "{}"));
        accepted++;
    }

    static void refused(TestStack.Reply r, int status, String code) {
        assertEquals(status, r.status(), () -> r.body().toString());
        assertEquals(code, r.code());
        rejected.merge(code, 1, Integer::sum);
    }

    static List<JsonNode> parsed() throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : List.copyOf(lines)) {
            assertFalse(line.contains("\n"), () -> "one line: " + line);
            out.add(Json.parse(line));
        }
        return out;
    }

    static List<JsonNode> withMsg(String msg) throws Exception {
        return parsed().stream().filter(l -> msg.equals(l.path("msg").asText())).toList();
    }

    /** The EMF documents among the lines. */
    static List<JsonNode> documents() throws Exception {
        return parsed().stream().filter(l -> l.has("_aws")).toList();
    }

    /** The sum of a metric over the documents that declare it (with service {@code service}). */
    static long sum(String service, String metric) throws Exception {
        long total = 0;
        for (JsonNode d : documents()) {
            if (service.equals(d.path(Metrics.SERVICE).asText()) && declared(d).contains(metric)) {
                total += d.get(metric).asLong();
            }
        }
        return total;
    }

    public static Set<String> declared(JsonNode doc) {
        Set<String> names = new HashSet<>();
        for (JsonNode directive : doc.path("_aws").path("CloudWatchMetrics")) {
            directive.path("Metrics").forEach(m -> names.add(m.path("Name").asText()));
        }
        return names;
    }

    @Test
    void everyLine_isOneJsonObject_withTheRequiredFields() throws Exception {
        List<JsonNode> all = parsed();
        Set<String> kinds = new HashSet<>();
        for (JsonNode l : all) {
            String where = l.toString();
            assertTrue(Set.of("INFO", "WARN", "ERROR").contains(l.path("level").asText()), where);
            String msg = l.path("msg").asText();
            kinds.add(msg);
            if (msg.equals("stream record parked")) {
                // A detail line of a publish batch (its outcome and time are on the batch's publish line).
                assertFalse(l.path("requestId").asText().isEmpty() || l.path("error").asText().isEmpty(), where);
                continue;
            }
            if (msg.equals("summary")) {
                // A function's summary of an interval belongs to no one request: its service and its counts only.
                assertEquals(Metrics.HEARTBEAT_FUNCTION, l.path(Metrics.SERVICE).asText(), where);
                assertTrue(l.path(Metrics.HEARTBEATS).asLong() > 0, where);
                continue;
            }
            assertFalse(l.path("requestId").asText().isEmpty(), "requestId: " + where);
            assertTrue(l.path("route").isTextual() || l.path("operation").isTextual(), "route or operation: " + where);
            assertFalse(l.path("outcome").asText().isEmpty(), "outcome: " + where);
            assertTrue(l.path("durationMs").isNumber() && l.path("durationMs").asDouble() >= 0, "durationMs: " + where);
            if (l.path("route").asText().contains("{team}")) {
                assertFalse(l.path("team").asText().isEmpty(), "team: " + where);
            }
            if (l.path("route").asText().contains("{agentId}")) {
                assertFalse(l.path("agentId").asText().isEmpty(), "agentId: " + where);
            }
            if (msg.equals("revive")) {
                assertFalse(l.path("team").asText().isEmpty() || l.path("agentId").asText().isEmpty(), where);
            }
            if (msg.equals("authorize") && l.path("outcome").asText().equals("known_key")) {
                assertFalse(l.path("team").asText().isEmpty(), where);
            }
            assertFalse(where.contains("not-a-key"), "a key never appears in a log line: " + where);
        }
        assertTrue(kinds.containsAll(Set.of("request", "heartbeats rejected", "summary", "authorize", "sweep",
                "publish", "revive")), "every function logged: " + kinds);
        // The authorizer's line carries the request's id, so both can be found together.
        JsonNode unknown = withMsg("authorize").stream().filter(l -> l.path("outcome").asText().equals("unknown_key"))
                .findFirst().orElseThrow();
        assertTrue(withMsg("request").stream().anyMatch(r -> r.path("requestId").equals(unknown.path("requestId"))
                && r.path("code").asText().equals("UNAUTHENTICATED")));
    }

    @Test
    void emfDocuments_areWellFormed() throws Exception {
        List<JsonNode> docs = documents();
        assertFalse(docs.isEmpty());
        for (JsonNode d : docs) {
            String where = d.toString();
            JsonNode aws = d.get("_aws");
            assertTrue(aws.path("Timestamp").isIntegralNumber() && aws.path("Timestamp").asLong() > 0, where);
            JsonNode directives = aws.path("CloudWatchMetrics");
            assertTrue(directives.isArray() && !directives.isEmpty(), where);
            for (JsonNode directive : directives) {
                assertEquals(Metrics.NAMESPACE, directive.path("Namespace").asText(), where);
                JsonNode dimensionSets = directive.path("Dimensions");
                assertTrue(dimensionSets.isArray() && !dimensionSets.isEmpty(), where);
                if (directive.path("Metrics").toString().contains("\"" + Metrics.FAULTS + "\"")) {
                    // Faults: one metric for every function, so no dimension at all (EMF's empty dimension set).
                    assertEquals("[[]]", dimensionSets.toString(), where);
                    assertEquals(1, directive.path("Metrics").size(), where);
                    assertTrue(d.path(Metrics.FAULTS).asLong() > 0, "published only when not 0: " + where);
                    continue;
                }
                for (JsonNode set : dimensionSets) {
                    assertTrue(set.isArray() && set.size() >= 1 && set.size() <= 30, where);
                    assertEquals(Metrics.SERVICE, set.get(0).asText(), "the service dimension first: " + where);
                    for (JsonNode name : set) {
                        assertTrue(d.path(name.asText()).isTextual() && !d.path(name.asText()).asText().isEmpty(),
                                "dimension " + name + " is a top-level string: " + where);
                    }
                }
                JsonNode metrics = directive.path("Metrics");
                assertTrue(metrics.isArray() && !metrics.isEmpty(), where);
                for (JsonNode m : metrics) {
                    String name = m.path("Name").asText();
                    assertFalse(name.isEmpty(), where);
                    assertTrue(UNITS.contains(m.path("Unit").asText()), where);
                    assertTrue(d.path(name).isNumber(), "metric " + name + " has a numeric value: " + where);
                    if ("Count".equals(m.path("Unit").asText())) {
                        assertTrue(d.path(name).asDouble() != 0, "a count of 0 is not published: " + where);
                    }
                }
            }
            assertFalse(isDimension(d, "team"), "team is a property, never a dimension: " + where);
        }
    }

    static boolean isDimension(JsonNode doc, String name) {
        for (JsonNode directive : doc.path("_aws").path("CloudWatchMetrics")) {
            for (JsonNode set : directive.path("Dimensions")) {
                for (JsonNode n : set) {
                    if (n.asText().equals(name)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    @Test
    void heartbeatMetrics_countAcceptedInTheSummary_andRejectedByCodeOnTheRequestLine() throws Exception {
        assertEquals(8, accepted, "the scenario's own count");
        // Accepted beats are a property of the summary (AWS/Lambda's Invocations counts requests), not a metric.
        assertEquals(accepted, withMsg("summary").stream().mapToLong(l -> l.path(Metrics.HEARTBEATS).asLong()).sum());
        assertTrue(documents().stream().noneMatch(d -> declared(d).contains(Metrics.HEARTBEATS)));
        Map<String, Integer> byCode = new TreeMap<>();
        for (JsonNode d : documents()) {
            if (declared(d).contains(Metrics.HEARTBEATS_REJECTED)) {
                assertTrue(isDimension(d, Metrics.CODE), d.toString());
                byCode.merge(d.get(Metrics.CODE).asText(), d.get(Metrics.HEARTBEATS_REJECTED).asInt(), Integer::sum);
            }
        }
        assertEquals(Map.of("AGENT_NOT_FOUND", 2, "INTERNAL_ERROR", 1, "UNAUTHENTICATED", 1), byCode);
        assertEquals(rejected, byCode);
        // A routine heartbeat writes no line; a refused one writes its request line, which is its metrics document.
        List<JsonNode> heartbeatLines = parsed().stream().filter(l -> l.path("route").asText().endsWith("/heartbeat"))
                .toList();
        assertEquals(3, heartbeatLines.size(), "7 accepted single heartbeats write nothing, 3 refused one line each");
        heartbeatLines.forEach(l -> assertTrue(l.has("_aws") && l.path("msg").asText().equals("request")
                && Set.of("refused", "error").contains(l.path("outcome").asText()), l.toString()));
        assertEquals(1, withMsg("summary").size(), "one summary: the scenario's beats fell in one interval");
        // Other functions' request lines carry no metrics.
        assertTrue(withMsg("request").stream().filter(l -> !l.path("route").asText().contains("heartbeat"))
                .noneMatch(l -> l.has("_aws")));
    }

    @Test
    void sweepMetrics_oneDocumentPerSweep_withDeathsHoldsAndScans() throws Exception {
        List<JsonNode> sweepLines = withMsg("sweep");
        assertEquals(sweeps, sweepLines.size());
        assertEquals(3, sweeps);
        assertEquals(2, sum(Metrics.SWEEP_FUNCTION, Metrics.AGENTS_MARKED_DEAD));
        assertEquals(3, sum(Metrics.SWEEP_FUNCTION, Metrics.SELF_PRESERVATION_HOLDS), "herd held in each sweep");
        Set<String> markedDead = new HashSet<>();
        for (JsonNode l : sweepLines) {
            assertEquals("held", l.path("outcome").asText(), l.toString());
            assertEquals(List.of(HERD), List.of(l.path("teamsHeld").get(0).asText()));
            l.path("markedDead").forEach(id -> markedDead.add(id.asText()));
            assertTrue(l.path("durationMs").isNumber());
        }
        assertEquals(Set.of(TEAM + "/a1", TEAM + "/a2"), markedDead);
        assertEquals(7, sweepLines.get(0).path("aliveSeen").asInt(), "3 of acme and 4 of herd alive");
        assertEquals(6, sweepLines.get(2).path("aliveSeen").asInt(),
                "a1 died in the second sweep; a2, whose first miss the store refused, dies in this one");
        assertEquals(1, sum(Metrics.SWEEP_FUNCTION, Metrics.SWEEP_WRITE_ERRORS), "a2's throttled miss, once");
    }

    @Test
    void publisherMetrics_countWhatReachedTheBus_andWhatDidNot() throws Exception {
        // The outbox's events, and a burst's digest (put on the bus by the digest flow's function).
        assertEquals(stack.bus.delivered().size(), sum(Metrics.PUBLISHER_FUNCTION, Metrics.EVENTS_PUBLISHED)
                + sum(Metrics.DIGEST_FUNCTION, Metrics.EVENTS_PUBLISHED),
                "every event on the bus counted once, replays included");
        assertTrue(sum(Metrics.PUBLISHER_FUNCTION, Metrics.EVENTS_FAILED) > 0);
        JsonNode handedBack = withMsg("publish").stream().filter(l -> l.path("outcome").asText().equals("retry"))
                .findFirst().orElseThrow();
        assertTrue(handedBack.path(Metrics.EVENTS_FAILED).asInt() > 0);
        assertEquals(0, handedBack.path(Metrics.EVENTS_PUBLISHED).asInt());
        assertEquals("WARN", handedBack.path("level").asText());
        assertNotNull(handedBack.get("retryFrom"));
        assertTrue(handedBack.path("teams").toString().contains(TEAM), handedBack.toString());
    }

    /**
     * Faults (no dimension) adds up every fault of the scenario, from every function: the events the refusing bus
     * did not take, records parked, skipped sweep writes, the heartbeat answered 500. FaultsAlarm watches it.
     */
    @Test
    void faults_addUpEveryFunctionsFaults_inOneMetricWithNoDimension() throws Exception {
        long faults = 0;
        for (JsonNode d : documents()) {
            if (emits(d, Metrics.FAULTS, Map.of())) {
                faults += d.get(Metrics.FAULTS).asLong();
            }
        }
        long expected = sum(Metrics.PUBLISHER_FUNCTION, Metrics.EVENTS_FAILED)
                + sum(Metrics.PUBLISHER_FUNCTION, Metrics.RECORDS_PARKED)
                + sum(Metrics.SWEEP_FUNCTION, Metrics.SWEEP_WRITE_ERRORS) + rejected.get("INTERNAL_ERROR");
        assertTrue(sum(Metrics.PUBLISHER_FUNCTION, Metrics.EVENTS_FAILED) > 0 && rejected.get("INTERNAL_ERROR") == 1);
        assertEquals(expected, faults);
    }

    @Test
    void reviveMetrics_countEachStepsOutcome() throws Exception {
        Map<String, Integer> outcomes = new TreeMap<>();
        for (JsonNode d : documents()) {
            if (declared(d).contains(Metrics.REVIVE_OUTCOMES)) {
                assertTrue(isDimension(d, Metrics.STEP) && isDimension(d, Metrics.OUTCOME), d.toString());
                outcomes.merge(d.get(Metrics.STEP).asText() + "/" + d.get(Metrics.OUTCOME).asText(),
                        d.get(Metrics.REVIVE_OUTCOMES).asInt(), Integer::sum);
            }
        }
        // a1: restart requested, then back at the first check. a2: restart requested, two retries, exhausted, failed.
        assertEquals(Map.of("initiate/restart_requested", 2, "check/revived", 1, "check/retry", 2,
                "check/exhausted", 1, "giveUp/failed", 1), outcomes);
    }

    @Test
    void localConsole_hidesRoutineLines_only() throws Exception {
        for (String line : List.copyOf(lines)) {
            JsonNode l = Json.parse(line);
            boolean routine = l.path("level").asText().equals("INFO")
                    && (Set.of("ok", "idle", "known_key").contains(l.path("outcome").asText())
                            || l.path("msg").asText().equals("summary"));
            assertEquals(routine, LocalMain.routine(line), line);
        }
        assertTrue(lines.stream().anyMatch(l -> !LocalMain.routine(l) && l.contains("\"msg\":\"sweep\"")),
                "a held sweep shows");
    }

    /** One metric an alarm watches: its namespace, name and dimensions (values as the template writes them). */
    record Watched(String alarm, String namespace, String metric, Map<String, JsonNode> dimensions) {
    }

    /**
     * Every metric every alarm watches: the alarm's own, or each MetricStat of a metric-math alarm (an item under
     * {@code !If} counts as the metric it names when deployed).
     */
    static List<Watched> watchedMetrics() throws Exception {
        JsonNode resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile())
                .path("Resources");
        List<Watched> out = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> r = it.next();
            if (!"AWS::CloudWatch::Alarm".equals(r.getValue().path("Type").asText())) {
                continue;
            }
            JsonNode p = r.getValue().path("Properties");
            List<JsonNode> metrics = new ArrayList<>();
            if (p.has("MetricName")) {
                metrics.add(p);
            }
            for (JsonNode item : p.path("Metrics")) {
                JsonNode m = item.isArray() ? item.get(1) : item; // !If [Condition, metric, NoValue]
                if (m.has("MetricStat")) {
                    metrics.add(m.path("MetricStat").path("Metric"));
                } else {
                    assertTrue(m.has("Expression"), r.getKey() + ": a metric query is a MetricStat or an expression");
                }
            }
            assertFalse(metrics.isEmpty(), r.getKey() + " watches no metric");
            for (JsonNode m : metrics) {
                Map<String, JsonNode> dims = new LinkedHashMap<>();
                m.path("Dimensions").forEach(d -> dims.put(d.path("Name").asText(), d.path("Value")));
                out.add(new Watched(r.getKey(), m.path("Namespace").asText(), m.path("MetricName").asText(), dims));
            }
        }
        return out;
    }

    /**
     * Each alarm on a Lifeline metric names a metric, with exactly the dimensions and values, that some
     * function emitted in this run; each alarm notifies the alerts topic.
     */
    @Test
    void templateAlarms_watchMetricsTheFunctionsEmit() throws Exception {
        Set<String> watched = new HashSet<>();
        for (Watched w : watchedMetrics()) {
            // A metric a template metric filter publishes from the access log: StageThrottlesFilterTest's.
            if (!Metrics.NAMESPACE.equals(w.namespace()) || StageThrottlesFilterTest.filtered().contains(w.metric())) {
                continue;
            }
            Map<String, String> dims = new HashMap<>();
            w.dimensions().forEach((k, v) -> dims.put(k, v.asText()));
            boolean emitted = documents().stream().anyMatch(d -> emits(d, w.metric(), dims));
            assertTrue(emitted, w.alarm() + ": no document emitted " + w.metric() + " with dimensions " + dims);
            watched.add(w.metric());
        }
        assertTrue(watched.containsAll(Set.of(Metrics.FAULTS, Metrics.EVENTS_FAILED,
                Metrics.AGENTS_MARKED_DEAD, Metrics.SWEEP_WRITE_ERRORS)),
                "faults, publish failures, dead-agent rate, sweep write errors: " + watched);
    }

    /**
     * The metrics AWS publishes that the template's alarms may watch, as each service documents them (the
     * CloudWatch metrics pages of Lambda, EventBridge, SQS, API Gateway HTTP APIs, Step Functions and DynamoDB):
     * namespace, metric, and the dimension set the alarm must use.
     */
    static final Map<String, Set<String>> AWS_METRICS = Map.ofEntries(
            Map.entry("AWS/Lambda Errors", Set.of("FunctionName", "FunctionName,Resource")),
            Map.entry("AWS/Lambda Duration", Set.of("FunctionName", "FunctionName,Resource")),
            Map.entry("AWS/Lambda Throttles", Set.of("FunctionName", "FunctionName,Resource")),
            Map.entry("AWS/Lambda IteratorAge", Set.of("FunctionName", "FunctionName,Resource")),
            // A rule on a custom bus: both dimensions (a RuleName alone is the default bus's).
            Map.entry("AWS/Events FailedInvocations", Set.of("EventBusName,RuleName")),
            Map.entry("AWS/Events InvocationsSentToDlq", Set.of("EventBusName,RuleName")),
            Map.entry("AWS/SQS ApproximateNumberOfMessagesVisible", Set.of("QueueName")),
            Map.entry("AWS/ApiGateway 5xx", Set.of("ApiId,Stage")),
            Map.entry("AWS/States ExecutionsFailed", Set.of("StateMachineArn")),
            Map.entry("AWS/DynamoDB ReadThrottleEvents", Set.of("TableName")),
            Map.entry("AWS/DynamoDB WriteThrottleEvents", Set.of("TableName")));

    /** What each AWS dimension names, as a resource type of the template (Stage: the HTTP API's default stage). */
    static final Map<String, String> DIMENSION_RESOURCE = Map.of("FunctionName", "AWS::Serverless::Function",
            "Resource", "AWS::Serverless::Function", "EventBusName", "AWS::Events::EventBus",
            "RuleName", "AWS::Events::Rule", "QueueName", "AWS::SQS::Queue", "ApiId", "AWS::Serverless::HttpApi",
            "StateMachineArn", "AWS::Serverless::StateMachine", "TableName", "AWS::DynamoDB::Table");

    /**
     * Each alarm on an AWS namespace watches a metric that service publishes, with the dimensions it publishes it
     * under, each naming a resource of the right kind in this template; together they cover what a deployment needs to
     * watch.
     */
    @Test
    void templateAlarms_onAwsMetrics_watchMetricsAwsPublishes_forResourcesOfTheTemplate() throws Exception {
        JsonNode resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile())
                .path("Resources");
        Set<String> watched = new HashSet<>();
        for (Watched w : watchedMetrics()) {
            if (Metrics.NAMESPACE.equals(w.namespace())) {
                continue;
            }
            String key = w.namespace() + " " + w.metric();
            assertTrue(AWS_METRICS.containsKey(key), w.alarm() + ": " + key + " is not a metric AWS documents here");
            String dims = String.join(",", new TreeSet<>(w.dimensions().keySet()));
            assertTrue(AWS_METRICS.get(key).contains(dims), w.alarm() + ": " + key + " is not published by " + dims);
            w.dimensions().forEach((name, value) -> {
                if (name.equals("Stage")) {
                    assertEquals("$default", value.asText(), w.alarm());
                    return;
                }
                String type = DIMENSION_RESOURCE.get(name);
                List<String> named = new ArrayList<>();
                collectText(value, named);
                boolean found = named.stream().map(ObservabilityTest::logicalId)
                        .anyMatch(id -> type.equals(resources.path(id).path("Type").asText()));
                assertTrue(found, w.alarm() + ": " + name + " " + value + " names no " + type);
            });
            watched.add(key);
        }
        assertTrue(watched.containsAll(Set.of("AWS/SQS ApproximateNumberOfMessagesVisible",
                "AWS/ApiGateway 5xx", "AWS/Lambda Throttles", "AWS/Lambda Errors", "AWS/States ExecutionsFailed",
                "AWS/DynamoDB WriteThrottleEvents")), watched.toString());
    }

    private static void collectText(JsonNode n, List<String> out) {
        if (n.isTextual()) {
            out.add(n.asText());
        }
        n.forEach(child -> collectText(child, out));
    }

    /** The logical id in a reference as the YAML reader leaves it: X, X.Attr, ${X}:live. */
    private static String logicalId(String text) {
        String t = text.replace("${", "").replaceAll("[}].*$", "");
        return t.contains(".") ? t.substring(0, t.indexOf('.')) : t;
    }

    /** Whether {@code doc} declares {@code metric} under a dimension set of exactly {@code dims}'s names and values. */
    static boolean emits(JsonNode doc, String metric, Map<String, String> dims) {
        for (JsonNode directive : doc.path("_aws").path("CloudWatchMetrics")) {
            boolean declares = false;
            for (JsonNode m : directive.path("Metrics")) {
                declares |= m.path("Name").asText().equals(metric);
            }
            if (!declares || !Metrics.NAMESPACE.equals(directive.path("Namespace").asText())) {
                continue;
            }
            for (JsonNode set : directive.path("Dimensions")) {
                Map<String, String> values = new HashMap<>();
                set.forEach(n -> values.put(n.asText(), doc.path(n.asText()).asText()));
                if (values.equals(dims)) {
                    return true;
                }
            }
        }
        return false;
    }
}
