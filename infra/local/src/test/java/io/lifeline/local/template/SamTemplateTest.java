package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.api.DashboardHandler;
import io.lifeline.api.HttpApiHandler;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.support.Metrics;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import software.amazon.awssdk.services.dynamodb.model.StreamViewType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * template.yaml against the code: each API function's handler serves exactly the routes the template gives
 * it, every handler class exists, the table has what the outbox and TTL need, and the Globals and policies
 * a deployment needs are there. The template is read twice: as a tree (Jackson, tags dropped, as Local reads
 * it) and as SnakeYAML nodes where the CloudFormation tags ({@code !Ref}, {@code !GetAtt}) are kept.
 */
@Tag("contract")
class SamTemplateTest {
    static TestStack stack;
    static SamTemplate template;
    static JsonNode root;
    static MappingNode tagged;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        template = TestStack.template();
        Path path = Path.of(System.getProperty("lifeline.template", "../../template.yaml"));
        root = new ObjectMapper(new YAMLFactory()).readTree(path.toFile());
        try (Reader in = Files.newBufferedReader(path)) {
            tagged = (MappingNode) new Yaml().compose(in);
        }
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static Map<String, JsonNode> functionResources() {
        Map<String, JsonNode> out = new HashMap<>();
        root.path("Resources").fields().forEachRemaining(e -> {
            if ("AWS::Serverless::Function".equals(e.getValue().path("Type").asText())) {
                out.put(e.getKey(), e.getValue());
            }
        });
        return out;
    }

    private static Set<String> httpRouteKeys(JsonNode function) {
        Set<String> keys = new HashSet<>();
        for (Iterator<JsonNode> it = function.path("Properties").path("Events").elements(); it.hasNext(); ) {
            JsonNode event = it.next();
            if ("HttpApi".equals(event.path("Type").asText())) {
                keys.add(event.path("Properties").path("Method").asText().toUpperCase() + " "
                        + event.path("Properties").path("Path").asText());
            }
        }
        return keys;
    }

    @Test
    void apiFunctions_handlerRouteKeys_equalTheTemplatesRouteKeys() {
        int apiFunctions = 0;
        for (Map.Entry<String, JsonNode> f : functionResources().entrySet()) {
            Set<String> templateKeys = httpRouteKeys(f.getValue());
            RequestHandler<?, ?> handler = stack.host.handler(f.getKey());
            if ("DashboardFunction".equals(f.getKey())) {
                // The static page: public routes, not an HttpApiHandler (which requires a key on every route).
                assertInstanceOf(DashboardHandler.class, handler);
                assertEquals(Set.of("GET /", "GET /dashboard/{file}"), templateKeys);
                assertEquals(templateKeys, new HashSet<>(stack.gateway.publicRouteKeys()));
                continue;
            }
            if (template.functionUrls(Map.of("ConcurrencyProfile", "reserved")).containsKey(f.getKey())) {
                // The heartbeat URL's own function: no API route, the heartbeat routes through its Function URL.
                assertTrue(templateKeys.isEmpty(), f.getKey() + ": " + templateKeys);
                HttpApiHandler url = assertInstanceOf(HttpApiHandler.class, handler, f.getKey());
                assertEquals(httpRouteKeys(functionResources().get("HeartbeatFunction")), url.routeKeys(), f.getKey());
                continue;
            }
            if (templateKeys.isEmpty()) {
                assertFalse(handler instanceof HttpApiHandler, f.getKey() + " serves routes the template never sends it");
                continue;
            }
            apiFunctions++;
            HttpApiHandler api = assertInstanceOf(HttpApiHandler.class, handler, f.getKey());
            assertEquals(templateKeys, api.routeKeys(), f.getKey() + ": handler routes vs template routes");
        }
        assertEquals(6, apiFunctions, "Heartbeat, Agents, Tasks, Keys, Hosts and Team functions");
    }

    @Test
    void routes_eachRouteKeyBelongsToOneFunction_andTheGatewayServesThemAll() {
        List<String> all = new ArrayList<>();
        functionResources().values().forEach(f -> all.addAll(httpRouteKeys(f)));
        assertEquals(all.size(), new HashSet<>(all).size(), "a route key appears in two functions: " + all);
        assertEquals(new HashSet<>(all), new HashSet<>(stack.gateway.routeKeys()));
        // The SamTemplate reader Local uses agrees with this reading.
        Set<String> viaReader = new HashSet<>();
        template.functions(Map.of(), names("t")).forEach(
                f -> f.routes().forEach(r -> viaReader.add(r.routeKey())));
        assertEquals(new HashSet<>(all), viaReader);
    }

    @Test
    void httpApiEvents_allAttachToTheOneHttpApi() {
        for (Map.Entry<String, Node> f : resourcesTagged().entrySet()) {
            Node events = get(f.getValue(), "Properties", "Events");
            if (events == null) {
                continue;
            }
            for (NodeTuple e : ((MappingNode) events).getValue()) {
                if ("HttpApi".equals(scalar(get(e.getValueNode(), "Type")))) {
                    Node apiId = get(e.getValueNode(), "Properties", "ApiId");
                    assertEquals("!Ref", apiId.getTag().getValue(), f.getKey());
                    assertEquals("HttpApi", scalar(apiId), f.getKey());
                }
            }
        }
    }

    @Test
    void handlerClasses_allExist_andAreLambdaRequestHandlers() throws Exception {
        for (Map.Entry<String, JsonNode> f : functionResources().entrySet()) {
            String handler = f.getValue().path("Properties").path("Handler").asText();
            Class<?> type = Class.forName(handler.substring(0, handler.indexOf("::")));
            assertTrue(RequestHandler.class.isAssignableFrom(type), type + " is a RequestHandler");
            String method = handler.substring(handler.indexOf("::") + 2);
            if (!method.equals("handleRequest")) {
                // A function that reads more than one kind of event (the sweep: its schedule and its queue) reads the
                // JSON itself: the method the Handler names is its only one of that name, so the Lambda runtime
                // cannot pick another overload, and takes the runtime's (InputStream, OutputStream, Context).
                List<Method> named = Arrays.stream(type.getMethods())
                        .filter(m -> m.getName().equals(method)).toList();
                assertEquals(1, named.size(), f.getKey() + ": " + handler);
                assertEquals(List.of(InputStream.class, OutputStream.class,
                        Context.class),
                        List.of(named.get(0).getParameterTypes()), f.getKey() + ": " + handler);
            }
            assertNotNull(type.getConstructor(), type + " has the no-arg constructor the Lambda runtime uses");
            assertNotNull(stack.host.handler(f.getKey()), f.getKey() + " starts in Local");
        }
    }

    @Test
    void liveTable_streamsNewAndOldImages_ledgerExpiresByExpiresAt_withoutAStream() throws Exception {
        String liveId = template.globalEnvironmentReference("LIVE_TABLE");
        String ledgerId = template.globalEnvironmentReference("LEDGER_TABLE");
        assertEquals(Set.of(liveId, ledgerId), Set.copyOf(template.tableLogicalIds()), "two tables, each named once");
        JsonNode live = root.path("Resources").path(liveId).path("Properties");
        JsonNode ledger = root.path("Resources").path(ledgerId).path("Properties");
        assertEquals("NEW_AND_OLD_IMAGES", live.path("StreamSpecification").path("StreamViewType").asText());
        assertTrue(ledger.path("StreamSpecification").isMissingNode(), "the ledger has no stream");
        assertEquals("expiresAt", ledger.path("TimeToLiveSpecification").path("AttributeName").asText());
        assertTrue(ledger.path("TimeToLiveSpecification").path("Enabled").asBoolean());
        assertEquals("expiresAt", template.timeToLiveAttribute(ledgerId));
        // The publisher reads the live table's stream, and only it.
        assertEquals(liveId + ".StreamArn", root.path("Resources").path("PublisherFunction").path("Properties")
                .path("Events").path("Stream").path("Properties").path("Stream").asText());
        // And the tables Local built from it.
        TableDescription built = stack.dynamo.describeTable(d -> d.tableName(stack.tables.live())).table();
        assertEquals(StreamViewType.NEW_AND_OLD_IMAGES, built.streamSpecification().streamViewType());
        assertTrue(built.streamSpecification().streamEnabled());
        TableDescription builtLedger = stack.dynamo.describeTable(d -> d.tableName(stack.tables.ledger())).table();
        assertTrue(builtLedger.streamSpecification() == null || !builtLedger.streamSpecification().streamEnabled());
        // Local enables the template's TTL on the tables it builds; built here once as Local builds it, on an empty
        // table of its own.
        String ttlTable = stack.tables.ledger() + "-ttl";
        LocalTables.ensureTable(stack.dynamo, TestStack.template(), "LedgerTable", ttlTable);
        assertEquals("expiresAt", stack.dynamo.describeTimeToLive(d -> d.tableName(ttlTable))
                .timeToLiveDescription().attributeName());
    }

    @Test
    void globals_java25_snapStartOnPublishedVersions_autoPublishAlias() {
        JsonNode g = root.path("Globals").path("Function");
        // java17 runs on Amazon Linux 2: AWS closed stack creation with it on 2026-07-31
        // (docs/design/deploy-and-cost/decisions.md).
        assertEquals("java25", g.path("Runtime").asText());
        assertEquals("PublishedVersions", g.path("SnapStart").path("ApplyOn").asText());
        assertFalse(g.path("AutoPublishAlias").asText().isBlank(), "SnapStart needs a published alias");
        for (Map.Entry<String, JsonNode> f : functionResources().entrySet()) {
            JsonNode p = f.getValue().path("Properties");
            for (String overridden : List.of("Runtime", "SnapStart", "AutoPublishAlias")) {
                assertTrue(p.path(overridden).isMissingNode(), f.getKey() + " overrides " + overridden);
            }
        }
    }

    @Test
    void tables_surviveStackDeleteAndReplacement() {
        for (String id : template.logicalIds("AWS::DynamoDB::Table")) {
            JsonNode table = root.path("Resources").path(id);
            assertEquals("Retain", table.path("DeletionPolicy").asText(), id);
            assertEquals("Retain", table.path("UpdateReplacePolicy").asText(), id);
        }
    }

    /**
     * The functions every request passes deploy gradually and roll back on alarms the template defines, in every
     * alarm set (no condition); which alarms those are, and that they are scoped to the function's own alias, is
     * {@link ReliabilityTemplateTest}'s.
     */
    @Test
    void heartbeatAndAuthorizer_deployAsCanaries_rollingBackOnTheirAlarms() {
        for (String id : List.of("HeartbeatFunction", "HeartbeatUrlFunction", "AuthorizerFunction")) {
            JsonNode preference = root.path("Resources").path(id).path("Properties").path("DeploymentPreference");
            assertTrue(preference.path("Type").asText().startsWith("Canary"), id + ": " + preference);
            JsonNode alarms = preference.path("Alarms");
            assertTrue(alarms.isArray() && alarms.size() > 0, id + " has no rollback alarm: " + alarms);
            for (JsonNode alarm : alarms) {
                String alarmId = alarm.asText(); // Jackson reads `!Ref X` as X
                JsonNode resource = root.path("Resources").path(alarmId);
                assertEquals("AWS::CloudWatch::Alarm", resource.path("Type").asText(), id + " rolls back on " + alarm);
                assertTrue(resource.path("Condition").isMissingNode(), id + ": " + alarmId + " exists in both sets");
            }
        }
    }

    @Test
    void everyFunction_getsBothTableNamesAsRefsToTheTables() {
        for (String variable : List.of("LIVE_TABLE", "LEDGER_TABLE")) {
            String tableId = template.globalEnvironmentReference(variable);
            Node globalValue = get(tagged, "Globals", "Function", "Environment", "Variables", variable);
            for (Map.Entry<String, Node> f : resourcesTagged().entrySet()) {
                Node own = get(f.getValue(), "Properties", "Environment", "Variables", variable);
                Node value = own != null ? own : globalValue;
                assertNotNull(value, f.getKey() + " has no " + variable);
                assertEquals("!Ref", value.getTag().getValue(), f.getKey() + ": " + variable + " is a !Ref, not a name");
                assertEquals(tableId, scalar(value), f.getKey());
            }
        }
        // Resolved as Local resolves it, every function sees the tables' names.
        LocalTables tables = LocalTables.named(template, "the");
        template.functions(Map.of(), LifelineLocal.resourceNames(template, tables, "bus")).forEach(f -> {
            assertEquals("the-live", f.environment().get("LIVE_TABLE"), f.logicalId());
            assertEquals("the-ledger", f.environment().get("LEDGER_TABLE"), f.logicalId());
        });
    }

    /** Local names for the resources functions' environments refer to. */
    private static Map<String, String> names(String prefix) {
        return LifelineLocal.resourceNames(template, LocalTables.named(template, prefix), "bus");
    }

    @Test
    void everyFunction_hasPolicies_scopedToTheTableOrTheBus() {
        Set<String> allowed = new HashSet<>(Set.of(template.eventBusLogicalId() + ".Arn", "ReviveStateMachine",
                "SweepQueue.Arn"));
        for (String table : template.tableLogicalIds()) {
            allowed.add(table + ".Arn");
            // An index the template declares on that table, by its name (never the table's every index, '/index/*').
            for (JsonNode index : root.path("Resources").path(table).path("Properties").path("GlobalSecondaryIndexes")) {
                allowed.add("${" + table + ".Arn}/index/" + index.path("IndexName").asText());
            }
        }
        for (Map.Entry<String, Node> f : resourcesTagged().entrySet()) {
            Node policies = get(f.getValue(), "Properties", "Policies");
            if ("DashboardFunction".equals(f.getKey())) {
                // Serves a static page from its jar: no access to anything, so no policy at all (logs only).
                assertTrue(policies == null, "DashboardFunction reads nothing and needs no policy");
                continue;
            }
            assertNotNull(policies, f.getKey() + " has no Policies");
            JsonNode tree = functionResources().get(f.getKey()).path("Properties").path("Policies");
            assertTrue(tree.isArray() && !tree.isEmpty(), f.getKey() + " has an empty Policies list");
            for (JsonNode policy : tree) {
                for (JsonNode statement : policy.path("Statement")) {
                    JsonNode resource = statement.path("Resource");
                    List<String> named = new ArrayList<>();
                    if (resource.isArray()) {
                        resource.forEach(r -> named.add(r.isTextual() ? r.asText() : r.path("Fn::Sub").asText()));
                    } else {
                        named.add(resource.isTextual() ? resource.asText() : resource.path("Fn::Sub").asText());
                    }
                    named.forEach(r -> assertTrue(allowed.contains(r),
                            f.getKey() + ": statements name a table, an index or the bus, not '*': " + statement));
                    assertTrue(statement.path("Action").size() > 0 || statement.path("Action").isTextual());
                }
            }
        }
    }

    @Test
    void alarms_onTheSweepThePublisherAndTheDeathRate_notifyTheAlertsTopic() {
        Map<String, Node> alarms = new HashMap<>();
        for (NodeTuple r : ((MappingNode) get(tagged, "Resources")).getValue()) {
            if ("AWS::CloudWatch::Alarm".equals(scalar(get(r.getValueNode(), "Type")))) {
                alarms.put(scalar(r.getKeyNode()), r.getValueNode());
            }
        }
        assertEquals(Set.of("SweepNotRunningAlarm", "PublishFailuresAlarm", "PublisherErrorsAlarm", "PublisherLagAlarm",
                "DeadAgentRateAlarm", "HeartbeatErrorsAlarm", "HeartbeatInternalErrorsAlarm", "AuthorizerErrorsAlarm",
                "OutboxParkedAlarm", "OutboxFailedAlarm",
                // Deliveries, starvation, the store, revives and the sweep's writes
                "SweepWriteErrorsAlarm", "DeliveryDeadLettersAlarm", "ApiServerErrorsAlarm",
                "HeartbeatThrottlesAlarm", "HeartbeatStageThrottlesAlarm", "AuthorizerThrottlesAlarm",
                "ControlLoopThrottlesAlarm", "ReviveFailuresAlarm", "StoreThrottlesAlarm", "FaultsAlarm", "AlertFlowsAlarm"),
                alarms.keySet());
        // AlarmSet essential (the default) deploys the alarms without a condition; full adds the rest.
        assertEquals("essential", root.path("Parameters").path("AlarmSet").path("Default").asText());
        Set<String> essential = new HashSet<>();
        for (String id : alarms.keySet()) {
            JsonNode condition = root.path("Resources").path(id).path("Condition");
            if (condition.isMissingNode()) {
                essential.add(id);
            } else {
                assertEquals("FullAlarms", condition.asText(), id);
            }
        }
        assertEquals(Set.of("SweepNotRunningAlarm", "FaultsAlarm", "DeliveryDeadLettersAlarm", "HeartbeatThrottlesAlarm",
                "HeartbeatStageThrottlesAlarm", "HeartbeatErrorsAlarm", "HeartbeatInternalErrorsAlarm",
                "AuthorizerErrorsAlarm"), essential);
        JsonNode faults = root.path("Resources").path("FaultsAlarm").path("Properties");
        assertEquals(Metrics.FAULTS, faults.path("MetricName").asText());
        assertTrue(faults.path("Dimensions").isMissingNode(), "Faults has no dimension: one metric for every function");
        assertEquals("notBreaching", faults.path("TreatMissingData").asText(), "published only when not 0");
        for (Map.Entry<String, Node> a : alarms.entrySet()) {
            for (String actions : List.of("AlarmActions", "OKActions")) {
                Node list = get(a.getValue(), "Properties", actions);
                assertNotNull(list, a.getKey() + " has " + actions);
                List<Node> targets = ((SequenceNode) list).getValue();
                assertEquals(1, targets.size(), a.getKey());
                assertEquals("!Ref", targets.get(0).getTag().getValue(), a.getKey());
                assertEquals("AlertsTopic", scalar(targets.get(0)), a.getKey() + " notifies the alerts topic");
            }
            // A threshold from a parameter has a default, so a deployment without it still gets the alarm.
            Node threshold = get(a.getValue(), "Properties", "Threshold");
            if ("!Ref".equals(threshold.getTag().getValue())) {
                assertFalse(root.path("Parameters").path(scalar(threshold)).path("Default").isMissingNode(),
                        a.getKey() + ": " + scalar(threshold) + " has a default");
            }
        }
        JsonNode sweep = root.path("Resources").path("SweepNotRunningAlarm").path("Properties");
        assertEquals("AWS/Lambda", sweep.path("Namespace").asText(), "free, and published for every invocation");
        assertEquals("Duration", sweep.path("MetricName").asText());
        // The share of the minute's sweeps that ended before their 60 s timeout: a timed-out sweep breaches too.
        assertEquals("PR(0:55000)", sweep.path("ExtendedStatistic").asText());
        assertEquals(60, root.path("Resources").path("SweepFunction").path("Properties").path("Timeout").asInt());
        assertEquals("SweepFunction", sweep.path("Dimensions").get(0).path("Value").asText());
        assertEquals("breaching", sweep.path("TreatMissingData").asText(), "no sweep at all is the failure");
        JsonNode dead = root.path("Resources").path("DeadAgentRateAlarm").path("Properties");
        assertEquals(Metrics.AGENTS_MARKED_DEAD, dead.path("MetricName").asText());
        assertEquals(Metrics.EVENTS_FAILED,
                root.path("Resources").path("PublishFailuresAlarm").path("Properties").path("MetricName").asText());
        // Lambda's own metrics name the deployed publisher (its FunctionName), not a literal.
        for (String id : List.of("PublisherErrorsAlarm", "PublisherLagAlarm")) {
            Node value = get(alarms.get(id), "Properties", "Dimensions");
            Node first = ((SequenceNode) value).getValue().get(0);
            assertEquals("FunctionName", scalar(get(first, "Name")), id);
            assertEquals("!Ref", get(first, "Value").getTag().getValue(), id);
            assertEquals("PublisherFunction", scalar(get(first, "Value")), id);
        }
        // The topic's policy (which replaces the default one) lets CloudWatch publish the alarms.
        boolean cloudWatchMayPublish = false;
        for (JsonNode st : root.path("Resources").path("AlertsTopicPolicy").path("Properties").path("PolicyDocument")
                .path("Statement")) {
            cloudWatchMayPublish |= "cloudwatch.amazonaws.com".equals(st.path("Principal").path("Service").asText())
                    && "sns:Publish".equals(st.path("Action").asText());
        }
        assertTrue(cloudWatchMayPublish);
        // Lifeline Local still reads the template with the alarms in it (they are cloud-only).
        assertEquals(new HashSet<>(functionResources().keySet()), template.functions(Map.of(), names("t")).stream()
                .map(SamTemplate.Function::logicalId).collect(Collectors.toSet()));
    }

    // ---- SnakeYAML nodes, tags kept ----------------------------------------------------------------

    private static Map<String, Node> resourcesTagged() {
        Map<String, Node> out = new HashMap<>();
        for (NodeTuple r : ((MappingNode) get(tagged, "Resources")).getValue()) {
            if ("AWS::Serverless::Function".equals(scalar(get(r.getValueNode(), "Type")))) {
                out.put(scalar(r.getKeyNode()), r.getValueNode());
            }
        }
        return out;
    }

    private static Node get(Node node, String... path) {
        Node at = node;
        for (String key : path) {
            if (!(at instanceof MappingNode m)) {
                return null;
            }
            Node next = null;
            for (NodeTuple t : m.getValue()) {
                if (key.equals(scalar(t.getKeyNode()))) {
                    next = t.getValueNode();
                }
            }
            if (next == null) {
                return null;
            }
            at = next;
        }
        return at;
    }

    private static String scalar(Node node) {
        return node instanceof ScalarNode s ? s.getValue() : null;
    }
}
