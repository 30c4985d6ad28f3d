package io.lifeline.local.contract.gateway;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.FunctionPolicy;
import io.lifeline.local.template.PolicyGuard;
import io.lifeline.local.template.SamTemplate;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * Every call a function makes is one its policy in template.yaml allows. The engine enforces no IAM, so
 * Local does ({@link PolicyGuard}): every test that runs through a {@link TestStack} fails at close if a
 * function asked for something its policy lacks. This class holds what no other test covers: SnapStart
 * priming of every function, a scenario that reaches every function, and proof that the check catches the
 * template as it was before (priming's GetItem not allowed to four functions).
 */
@Tag("contract")
public class IamPolicyTest {
    /** Functions whose handlers never build a {@link io.lifeline.config.Wiring}: they make no AWS call at all. */
    static final Set<String> NO_AWS_CALLS = Set.of("DashboardFunction");

    @Test
    void priming_ofEveryFunction_isAllowedByItsPolicy() throws Exception {
        try (TestStack stack = TestStack.start()) {
            int primed = 0;
            for (SamTemplate.Function f : stack.host.functions()) {
                if (NO_AWS_CALLS.contains(f.logicalId())) {
                    continue;
                }
                assertTrue(stack.host.prime(f.logicalId()), f.logicalId() + ": " + stack.host.policies().denied());
                primed++;
            }
            assertEquals(stack.host.functions().size() - NO_AWS_CALLS.size(), primed);
            assertEquals(List.of(), stack.host.policies().denied());
        }
    }

    /**
     * Grants the scenario below does not reach, each with the code path that needs it and a test whose calls (checked
     * by {@link PolicyGuard} there too) include it. Every other grant must be used by priming or the scenario: a
     * grant that is in neither is one no code uses, and the check fails on it.
     */
    static final Map<String, String> REACHED_ELSEWHERE = Map.ofEntries(
            Map.entry("ReviveFunction dynamodb:ConditionCheckItem LiveTable",
                    "a restart's acknowledgement stands only while its flow does (ReviveFlowTest)"),
            Map.entry("SweepFunction dynamodb:ConditionCheckItem LiveTable",
                    "a hosted agent's miss or death is conditional on its host lease (HostLeaseTest)"),
            Map.entry("SweepFunction dynamodb:PutItem LedgerTable",
                    "a sweep fanned out to parts ships each part to its round (SweepPartsTest)"),
            Map.entry("SweepFunction dynamodb:UpdateItem LedgerTable",
                    "a sweep fanned out to parts counts its round's parts and claims it (SweepPartsTest)"),
            Map.entry("SweepFunction dynamodb:Query LedgerTable",
                    "the part completing a round reads the parts back (SweepPartsTest)"),
            // The flap check runs when an agent has flapped and then stayed stable (FlappingTest, FlapFailOpenTest).
            Map.entry("FlapCheckFunction dynamodb:UpdateItem LiveTable",
                    "the flap check clears an agent's mark on its live item (FlappingTest)"),
            Map.entry("FlapCheckFunction dynamodb:UpdateItem LedgerTable",
                    "the flap check ends the flag on the agent's flap item (FlappingTest)"),
            Map.entry("FlapCheckFunction dynamodb:BatchGetItem LedgerTable",
                    "the event log's check that the resolve was not sent before (FlappingTest)"),
            Map.entry("FlapCheckFunction dynamodb:PutItem LedgerTable",
                    "the resolve logged in the team's event log (FlappingTest)"),
            Map.entry("FlapCheckFunction events:PutEvents EventBus",
                    "the one AgentFlappingResolved (FlappingTest)"),
            Map.entry("KeysFunction dynamodb:GetItem LiveTable",
                    "an admin key on a team whose item has no key counter yet counts the keys (AdminKeysTest)"),
            // The outbox repair re-drives parked records through the publisher's own code, and retires agents whose
            // offline retention ran out (OutboxDurabilityTest, AgentDeletionTest).
            Map.entry("OutboxRepairFunction dynamodb:GetItem LiveTable", "a re-driven record's agent (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction dynamodb:UpdateItem LiveTable",
                    "a re-driven record's outbox mark (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction dynamodb:ConditionCheckItem LiveTable",
                    "a re-driven death hands its task back only while the agent holds none (TaskStore; the "
                            + "publisher's own use: OutboxPassTest)"),
            Map.entry("OutboxRepairFunction dynamodb:DeleteItem LiveTable",
                    "an agent retired after its offline retention (AgentDeletionTest)"),
            Map.entry("OutboxRepairFunction dynamodb:PutItem LedgerTable",
                    "a replayed transition's record (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction dynamodb:UpdateItem LedgerTable",
                    "a record that fails again stays parked with one more attempt (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction dynamodb:DeleteItem LedgerTable",
                    "a parked record re-driven is removed (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction dynamodb:BatchGetItem LedgerTable",
                    "the event log's check of what an earlier pass sent (OutboxDurabilityTest)"),
            Map.entry("OutboxRepairFunction events:PutEvents EventBus",
                    "a re-driven record's events (OutboxDurabilityTest)"));

    /**
     * The grants of {@code functions}' policies (each Allow's action on each resource, as
     * "Function action Resource") that {@code used} does not hold and {@code elsewhere} does not name.
     */
    static List<String> unusedGrants(List<SamTemplate.Function> functions, Set<String> used,
            Map<String, String> elsewhere) {
        List<String> unused = new ArrayList<>();
        for (SamTemplate.Function f : functions) {
            for (FunctionPolicy.Statement st : f.policy().statements()) {
                for (String action : st.actions()) {
                    for (String resource : st.resources()) {
                        String grant = f.logicalId() + " " + action + " " + resource;
                        if (st.allow() && !used.contains(grant) && !elsewhere.containsKey(grant)) {
                            unused.add(grant);
                        }
                    }
                }
            }
        }
        return unused;
    }

    /**
     * A working day of one team, through every kind of invocation: the gateway (routes and authorizer), the
     * sweep's schedule, the stream (publisher), the bus's rules and the revive flow's Task states. Each function
     * must have made at least one call, each call allowed; the table of calls is written for reviewers. Every
     * action a policy grants must be used, here (priming included) or on a path {@link #REACHED_ELSEWHERE} names:
     * least privilege, checked from both sides.
     */
    @Test
    void aScenarioThroughEveryFunction_makesOnlyCallsTheirPoliciesAllow_andUsesEveryGrant() throws Exception {
        try (TestStack stack = TestStack.start()) {
            for (SamTemplate.Function f : stack.host.functions()) {
                if (!NO_AWS_CALLS.contains(f.logicalId())) {
                    assertTrue(stack.host.prime(f.logicalId()), f.logicalId());
                }
            }
            String admin = stack.adminKey;
            ok(stack.send("create-team", stack.operatorKey, Map.of(), null, "{\"team\":\"second\"}"));
            ok(stack.send("create-key", admin, Map.of("team", TestStack.TEAM), null, "{\"scope\":\"agent\"}"));
            ok(stack.send("list-keys", admin, Map.of("team", TestStack.TEAM), null, null));
            ok(stack.ready("w1"));
            ok(stack.ready("w2"));
            ok(stack.send("put-settings", admin, Map.of("team", TestStack.TEAM), null, "{\"leaderAgentId\":\"w2\"}"));
            ok(stack.send("create-task", admin, Map.of("team", TestStack.TEAM), null,
                    "{\"taskId\":\"t1\",\"title\":\"one\"}"));
            ok(stack.send("claim", admin, Map.of("team", TestStack.TEAM, "taskId", "t1"), null, "{\"agentId\":\"w1\"}"));
            ok(stack.heartbeat("w1", "{\"status\":\"working\",\"metadata\":{\"k\":1},\"checkpoint\":{\"step\":2}}"));
            ok(stack.team("batch-heartbeats", "{\"heartbeats\":[{\"agentId\":\"w2\"}]}"));
            // The same beat through the heartbeat Function URL's own function (it looks the key up itself).
            LocalGateway.Response viaUrl = stack.gateway.handle("POST",
                    LocalGateway.urlPath(LifelineLocal.HEARTBEAT_URL_FUNCTION) + "/v1/teams/" + TestStack.TEAM
                            + "/agents/w2/heartbeat", null, Map.of("Authorization",
                            List.of("Bearer " + stack.key(TestStack.TEAM, Scope.AGENT)),
                            "Content-Type", List.of("application/json")), "{}");
            assertEquals(200, viaUrl.status(), viaUrl.body());
            ok(stack.agent("errors", "w1", "{\"message\":\"context length exceeded\"}"));
            ok(stack.agent("recovery", "w1", null));
            ok(stack.agent("transitions", "w1", null));
            ok(stack.send("list-agents", admin, Map.of("team", TestStack.TEAM), null, null));
            // A status, and the changes since a time, read the roster's status index.
            ok(stack.send("list-agents", admin, Map.of("team", TestStack.TEAM), Map.of("status", "ready"), null));
            ok(stack.send("list-tasks", admin, Map.of("team", TestStack.TEAM), null, null));
            ok(stack.send("get-settings", admin, Map.of("team", TestStack.TEAM), null, null));

            // w1 dies holding t1: the sweep marks it, the outbox hands t1 back and tells the leader, the revive
            // flow asks w1's host to restart it; the host polls and acknowledges; w1 rejoins.
            List<String> dead = new ArrayList<>();
            for (int i = 0; i < 8 && dead.isEmpty(); i++) {
                stack.clock.advance(Duration.ofSeconds(15));
                ok(stack.heartbeat("w2", "{}"));
                dead.addAll(stack.sweep());
            }
            assertEquals(List.of(TestStack.TEAM + "/w1"), dead);
            stack.pump.drain();
            stack.stepFunctions.runDue();
            assertEquals("restarting", stack.status("w1"));
            TestStack.Reply commands = ok(stack.send("host-commands", admin,
                    Map.of("team", TestStack.TEAM, "hostId", "host-1"), null, null));
            String commandId = commands.body().path("commands").get(0).path("commandId").asText();
            ok(stack.send("ack-command", admin,
                    Map.of("team", TestStack.TEAM, "hostId", "host-1", "commandId", commandId), null, null));
            ok(stack.agent("join", "w1", null));
            stack.clock.advance(Duration.ofSeconds(31));
            stack.stepFunctions.runDue();
            stack.pump.drain();
            ok(stack.agent("inbox", "w2", null));
            ok(stack.agent("revivals", "w1", null));
            ok(stack.send("events", admin, Map.of("team", TestStack.TEAM), null, null));

            // A manual revive (Step Functions from the API), then a cleanup.
            ok(stack.agent("fail", "w2", "{\"reason\":\"crashed\"}"));
            assertEquals(202, stack.agent("revive", "w2", null).status());
            stack.pump.drain();
            stack.stepFunctions.runDue();
            // The outbox repair: re-drives parked records (none) and replays nothing unpublished.
            stack.host.<ScheduledEvent, Object>handler("OutboxRepairFunction")
                    .handleRequest(new ScheduledEvent(), null);
            // Two deaths in one alert window: past the burst threshold, the window's digest flow runs the digest
            // function once the window is over.
            ok(stack.ready("w3"));
            ok(stack.ready("w4"));
            ok(stack.agent("fail", "w3", "{\"reason\":\"crashed\"}"));
            ok(stack.agent("fail", "w4", "{\"reason\":\"crashed\"}"));
            stack.pump.drain();
            stack.stepFunctions.runDue();
            stack.clock.advance(Duration.ofSeconds(70));
            stack.stepFunctions.runDue();
            stack.pump.drain();
            ok(stack.agent("pause-agent", "w1", "{\"seconds\":60}"));
            ok(stack.agent("resume-agent", "w1", null));
            // An error that is no context limit, reported by the errors route and by a failure hook through the API
            // and through the URL (each written only for an agent that exists); then a session's end through each
            // (the agent read, to leave).
            ok(stack.agent("errors", "w1", "{\"message\":\"tool crashed\"}"));
            String failure = "{\"session_id\":\"s-2\",\"hook_event_name\":\"StopFailure\"}";
            String end = "{\"session_id\":\"s-2\",\"hook_event_name\":\"SessionEnd\"}";
            for (String body : List.of(failure, end)) {
                ok(stack.send("hook", admin, Map.of("team", TestStack.TEAM, "agentId", "w1", "runtime",
                        "claude-code"), null, body));
                LocalGateway.Response viaUrlHook = stack.gateway.handle("POST",
                        LocalGateway.urlPath(LifelineLocal.HEARTBEAT_URL_FUNCTION) + "/v1/teams/" + TestStack.TEAM
                                + "/agents/w2/hooks/claude-code", null, Map.of("Authorization",
                                List.of("Bearer " + stack.key(TestStack.TEAM, Scope.AGENT)),
                                "Content-Type", List.of("application/json")), body);
                assertEquals(200, viaUrlHook.status(), viaUrlHook.body());
            }
            // A key revoked; an agent that left, deleted.
            TestStack.Reply key = ok(stack.send("create-key", admin, Map.of("team", TestStack.TEAM), null,
                    "{\"scope\":\"admin\"}"));
            ok(stack.send("revoke-key", admin, Map.of("team", TestStack.TEAM, "keyId", key.text("keyId")), null, null));
            ok(stack.ready("w5"));
            ok(stack.agent("leave", "w5", "{\"reason\":\"done\"}"));
            stack.pump.drain();
            ok(stack.agent("delete-agent", "w5", null));

            Map<String, Set<String>> byFunction = new TreeMap<>();
            for (PolicyGuard.Call c : stack.host.policies().calls()) {
                byFunction.computeIfAbsent(c.function(), k -> new TreeSet<>()).add(c.action() + " " + c.resource());
            }
            Path out = Path.of("target", "iam-calls.txt");
            Files.createDirectories(out.getParent());
            Files.writeString(out, byFunction.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                    .collect(Collectors.joining("\n")) + "\n", StandardCharsets.UTF_8);

            assertEquals(List.of(), stack.host.policies().denied());
            for (SamTemplate.Function f : stack.host.functions()) {
                if (!NO_AWS_CALLS.contains(f.logicalId())) {
                    assertTrue(byFunction.containsKey(f.logicalId()), f.logicalId() + " was not reached: " + byFunction);
                }
            }
            assertTrue(byFunction.get("PublisherFunction").contains("events:PutEvents EventBus"), byFunction.toString());
            assertTrue(byFunction.get("SweepFunction").contains("dynamodb:Scan LiveTable"), byFunction.toString());

            Set<String> used = new TreeSet<>();
            stack.host.policies().calls().forEach(c -> used.add(c.function() + " " + c.action() + " " + c.resource()));
            assertEquals(List.of(), unusedGrants(stack.host.functions(), used, REACHED_ELSEWHERE),
                    "granted, and used by no call of the scenario nor named in REACHED_ELSEWHERE");
            Set<String> granted = new TreeSet<>();
            for (SamTemplate.Function f : stack.host.functions()) {
                granted.addAll(unusedGrants(List.of(f), Set.of(), Map.of()));
            }
            for (String grant : REACHED_ELSEWHERE.keySet()) {
                assertTrue(granted.contains(grant), "REACHED_ELSEWHERE names a grant the template no longer has: "
                        + grant);
                assertFalse(used.contains(grant), "the scenario reaches it now; REACHED_ELSEWHERE need not name it: "
                        + grant);
            }
        }
    }

    /** The check of unused grants finds a grant no call used, and passes one a listed path uses. */
    @Test
    void unusedGrants_areThoseNoCallUsedAndNoListedPathNeeds() {
        FunctionPolicy p = new FunctionPolicy("F", List.of(
                new FunctionPolicy.Statement(true, List.of("dynamodb:GetItem", "dynamodb:Query"),
                        List.of("LiveTable", "LedgerTable")),
                new FunctionPolicy.Statement(false, List.of("dynamodb:DeleteItem"), List.of("LiveTable"))));
        SamTemplate.Function f = new SamTemplate.Function("F", "x.Handler", Map.of(), List.of(), false, List.of(), p,
                "handleRequest");
        Set<String> used = Set.of("F dynamodb:GetItem LiveTable", "F dynamodb:GetItem LedgerTable");
        assertEquals(List.of("F dynamodb:Query LiveTable", "F dynamodb:Query LedgerTable"),
                unusedGrants(List.of(f), used, Map.of()));
        assertEquals(List.of("F dynamodb:Query LiveTable"),
                unusedGrants(List.of(f), used, Map.of("F dynamodb:Query LedgerTable", "a listed path")));
    }

    /**
     * The check fails on the template as it was: four functions' policies did not allow priming's GetItem, and
     * AWS's runtime turns a failing beforeCheckpoint into an init error, so the stack could not deploy.
     * Priming is best effort now, so the denial is logged, recorded, and not thrown.
     */
    @Test
    void priming_whenThePolicyLacksGetItem_isRecordedAsDeniedAndDoesNotThrow(@TempDir Path dir) throws Exception {
        Path template = variant(dir, "Action: [dynamodb:UpdateItem, dynamodb:GetItem]\n"
                + "              Resource: !GetAtt LedgerTable.Arn", "Action: [dynamodb:UpdateItem]\n"
                + "              Resource: !GetAtt LedgerTable.Arn");
        try (TestStack stack = TestStack.builder().template(template).build().expectingDenials()) {
            assertFalse(stack.host.prime("HeartbeatFunction"));
            assertEquals(List.of(new PolicyGuard.Call("HeartbeatFunction", "dynamodb:GetItem", "LedgerTable", false)),
                    stack.host.policies().denied());
        }
    }

    /** A handler's call that its policy lacks fails as in AWS: AccessDeniedException, and the request is a 500. */
    @Test
    void heartbeat_whenThePolicyLacksUpdateItem_isRefusedAsAwsWould(@TempDir Path dir) throws Exception {
        Path template = variant(dir, "Action: [dynamodb:UpdateItem, dynamodb:GetItem, dynamodb:ConditionCheckItem]",
                "Action: [dynamodb:GetItem, dynamodb:ConditionCheckItem]");
        try (TestStack stack = TestStack.builder().template(template).build().expectingDenials()) {
            ok(stack.ready("a1"));
            TestStack.Reply r = stack.heartbeat("a1", "{}");
            assertEquals(500, r.status(), r.body().toString());
            assertEquals("INTERNAL_ERROR", r.code());
            assertEquals(List.of(new PolicyGuard.Call("HeartbeatFunction", "dynamodb:UpdateItem", "LiveTable",
                    false)), stack.host.policies().denied());
        }
    }

    @Test
    void policy_matchesActionsWithoutCase_resourcesByGlob_andDenyWins() {
        FunctionPolicy p = new FunctionPolicy("F", List.of(
                new FunctionPolicy.Statement(true, List.of("dynamodb:*Item", "dynamodb:Query"), List.of("AgentsTable")),
                new FunctionPolicy.Statement(true, List.of("dynamodb:Query"), List.of("AgentsTable/index/*")),
                new FunctionPolicy.Statement(false, List.of("dynamodb:DeleteItem"), List.of("*"))));
        assertTrue(p.allows("dynamodb:GetItem", "AgentsTable"));
        assertTrue(p.allows("DynamoDB:getitem", "AgentsTable"));
        assertTrue(p.allows("dynamodb:Query", "AgentsTable/index/gsi1"));
        assertFalse(p.allows("dynamodb:GetItem", "AgentsTable/index/gsi1"), "an index is not its table");
        assertFalse(p.allows("dynamodb:Query", "OtherTable"));
        assertFalse(p.allows("dynamodb:DeleteItem", "AgentsTable"), "an explicit Deny wins");
        assertFalse(p.allows("dynamodb:Scan", "AgentsTable"));
    }

    @Test
    void policiesLocalCannotEvaluate_areRefusedAtLoad() {
        var yaml = new ObjectMapper();
        assertThrows(IllegalStateException.class, () -> FunctionPolicy.of("F",
                yaml.readTree("[{\"DynamoDBCrudPolicy\":{\"TableName\":\"t\"}}]")));
        assertThrows(IllegalStateException.class, () -> FunctionPolicy.of("F", yaml.readTree(
                "[{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"s3:*\",\"Resource\":\"*\","
                        + "\"Condition\":{\"Bool\":{\"aws:SecureTransport\":\"true\"}}}]}]")));
    }

    @Test
    void aDeniedCall_throwsTheServicesAccessDeniedException() throws Exception {
        PolicyGuard guard = new PolicyGuard(Map.of("AgentsTable", "t-local"));
        FunctionPolicy none = new FunctionPolicy("F", List.of());
        try (TestStack stack = TestStack.start()) {
            var dynamo = guard.dynamo(none, stack.dynamo);
            DynamoDbException e = assertThrows(DynamoDbException.class,
                    () -> dynamo.getItem(g -> g.tableName("t-local").key(Map.of())));
            assertEquals(400, e.statusCode());
            assertEquals("AccessDeniedException", e.awsErrorDetails().errorCode());
            assertEquals(List.of(new PolicyGuard.Call("F", "dynamodb:GetItem", "AgentsTable", false)), guard.denied());
        }
    }

    /** The repo's template with one text replaced, in a directory that also holds the state machines it names. */
    public static Path variant(Path dir, String from, String to) throws Exception {
        String text = Files.readString(TestStack.templatePath());
        assertTrue(text.contains(from), "the template no longer says " + from);
        Path file = dir.resolve("template.yaml");
        Files.writeString(file, text.replaceFirst(Pattern.quote(from),
                Matcher.quoteReplacement(to)));
        Path machines = dir.resolve("infra/statemachine");
        Files.createDirectories(machines);
        try (var files = Files.list(TestStack.templatePath().resolveSibling("infra/statemachine"))) {
            for (Path asl : files.toList()) {
                Files.copy(asl, machines.resolve(asl.getFileName()));
            }
        }
        return file;
    }
}
