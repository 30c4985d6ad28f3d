package io.lifeline.local.contract.revive;

import static io.lifeline.local.stack.TestStack.newId;
import static io.lifeline.local.stack.TestStack.ok;
import static io.lifeline.local.stack.TestStack.statesEntered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import io.lifeline.local.aws.LocalStepFunctions;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.aws.asl.HistoryEvent;
import io.lifeline.local.contract.outbox.PublisherTest;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.stack.ReviveFixture;
import io.lifeline.local.stack.StoreFaults;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;

/**
 * The revive flow as it runs: the ASL interpreter over infra/statemachine/revive.asl.json (as template.yaml
 * names it), its Task states invoking the real ReviveFunction against the engine, started by the template's
 * ReviveOnDeathRule when the outbox publishes a death, with time moved by the test clock only. Waits are the
 * template's defaults: 30 s, 60 s, 120 s, three attempts.
 */
@Tag("contract")
class ReviveFlowTest {
    static final String TEAM = TestStack.TEAM;
    static final String HOST = "host-1";
    static final Duration FIRST_WAIT = Duration.ofSeconds(30);
    static final Duration SECOND_WAIT = Duration.ofSeconds(60);
    static final Duration THIRD_WAIT = Duration.ofSeconds(120);
    static final String THROTTLED = "io.lifeline.revive.TransientReviveException";

    @RegisterExtension
    static final ReviveFixture fixture = new ReviveFixture();
    static final StoreFaults faults = fixture.faults;
    static TestStack stack;

    @BeforeAll
    static void start() {
        stack = fixture.stack();
    }

    // ---- helpers ---------------------------------------------------------------------------------------

    static void join(String id) {
        ok(stack.agent("join", id, null));
    }

    /** $$.Execution.Id of an execution, as the state machine passes it to its steps. */
    static String executionId(Execution e) {
        return "arn:aws:states:local:000000000000:execution:local:" + e.name();
    }

    static List<HistoryEvent> events(Execution e, String type) {
        return e.history().stream().filter(h -> h.type().equals(type)).toList();
    }

    /** The restart commands host-1 would receive now for this agent, oldest first. */
    static List<JsonNode> commandsFor(String id) {
        TestStack.Reply r = ok(stack.send("host-commands", stack.adminKey, Map.of("team", TEAM, "hostId", HOST),
                null, null));
        List<JsonNode> out = new ArrayList<>();
        r.body().get("commands").forEach(c -> {
            if (id.equals(c.get("agentId").asText())) {
                out.add(c);
            }
        });
        return out;
    }

    /** Every restart command item ever written for this agent, acknowledged or not. */
    static List<Map<String, AttributeValue>> commandItemsFor(String id) {
        return stack.allItems().stream().filter(i -> i.get("sk").s().startsWith("CMD#")
                && AttributeValue.fromS(id).equals(i.get("agentId"))).toList();
    }

    static List<JsonNode> onBus(String type, String id) {
        return PublisherTest.onBus(stack, type, "agentId", id);
    }

    static List<JsonNode> revivals(String id) {
        List<JsonNode> out = new ArrayList<>();
        ok(stack.agent("revivals", id, null)).body().get("revivals").forEach(out::add);
        return out;
    }

    static List<Integer> attemptsOf(List<JsonNode> commands) {
        return commands.stream().map(c -> c.get("attempt").asInt()).toList();
    }

    /** The agent's transition triggers as GET transitions tells them, oldest first. */
    static List<String> triggers(String id) {
        List<String> out = new ArrayList<>();
        List<JsonNode> newestFirst = stack.transitions(id, 50);
        for (int i = newestFirst.size() - 1; i >= 0; i--) {
            out.add(newestFirst.get(i).get("trigger").asText());
        }
        return out;
    }

    /** The paths. */
    @Nested
    class Paths {
        @Test
        void revive_agentRejoinsAfterFirstAttempt_succeedsAtRevivedWithoutGivingUp() {
            String id = fixture.readyOnHost("back-1");
            Execution e = fixture.kill(id);
            assertEquals("restarting", stack.status(id));
            assertEquals(List.of(1), attemptsOf(commandsFor(id)));

            join(id);
            stack.advanceAndRunDue(FIRST_WAIT);

            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals(List.of("Initiate", "Started", "WaitForJoin", "Check", "Decide", "Revived"), statesEntered(e));
            assertEquals("ready", stack.status(id));
            assertEquals(List.of("join", "reported_failure", "restart_initiated", "join"), triggers(id));
            assertEquals(1, commandItemsFor(id).size(), "no second restart was asked for");
            stack.pump.drain();
            assertTrue(onBus("AgentStatusChanged", id).stream().noneMatch(d -> d.get("to").asText()
                    .equals("dead_failed_revive")), "no give-up reached the bus");
            JsonNode revival = revivals(id).get(0);
            assertEquals("revived", revival.get("outcome").asText());
            assertEquals(1, revival.get("attempts").asInt());
        }

        /** Its host daemon reports the crash and claims the restart, due in {@code seconds} (its backoff). */
        static Execution crashUnderDaemon(String id, int seconds) {
            ok(stack.agent("fail", id, "{\"reason\":\"crash 2 of 5 in 10 min: exited with status 1\","
                    + "\"restartInSeconds\":" + seconds + ",\"restartsLastHour\":1}"));
            stack.pump.drain();
            List<Execution> started = stack.executionsFor(id);
            assertEquals(1, started.size(), () -> "one execution for the death of " + id + ": " + started);
            return started.get(0);
        }

        @Test
        void revive_ofADeathItsHostDaemonRestarts_waitsOutTheClaim_asksNothing_andEndsWithTheDaemonsJoin() {
            String id = fixture.readyOnHost("claimed-1");
            Execution e = crashUnderDaemon(id, 4);
            assertEquals("dead", stack.status(id), "the flow does not race the daemon");
            assertEquals(List.of(), commandsFor(id));
            assertEquals("host_restarting", revivals(id).get(0).get("steps").get(0).get("outcome").asText());
            JsonNode death = onBus("AgentStatusChanged", id).stream().filter(d -> d.get("to").asText().equals("dead"))
                    .findFirst().orElseThrow();
            assertTrue(death.has("hostRestart"), death::toString);

            stack.advanceAndRunDue(Duration.ofSeconds(4));
            join(id); // the daemon's restart, when its backoff ended
            stack.advanceAndRunDue(Duration.ofSeconds(31));

            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals(List.of("Initiate", "Started", "WaitForHost", "Initiate", "Started", "Revived"),
                    statesEntered(e));
            assertEquals(List.of("join", "reported_failure", "join"), triggers(id));
            assertEquals(0, commandItemsFor(id).size(), "no restart was asked of the host");
            stack.pump.drain();
            JsonNode back = onBus("AgentStatusChanged", id).stream().filter(d -> d.get("seq").asLong() == 3)
                    .findFirst().orElseThrow();
            assertEquals(death.get("hostRestart"), back.get("hostRestart"), "the join carries the claim it ended");
            assertEquals(1L, stack.agentView(id).path("stats").path("restartsLastHour").asLong(), "the daemon's count");
        }

        @Test
        void revive_whenTheDaemonsClaimLapsesWithTheAgentStillDead_takesOverAsForAnyDeath() {
            String id = fixture.readyOnHost("claimed-2");
            Execution e = crashUnderDaemon(id, 0);
            assertEquals("dead", stack.status(id));

            stack.advanceAndRunDue(Duration.ofSeconds(31)); // the daemon died with its host: no join came

            assertEquals("restarting", stack.status(id));
            assertEquals(List.of(1), attemptsOf(commandsFor(id)));
            assertEquals(Execution.Status.RUNNING, e.status(), e::toString);
            assertEquals(List.of("Initiate", "Started", "WaitForHost", "Initiate", "Started", "WaitForJoin"),
                    statesEntered(e));
            assertEquals(List.of("join", "reported_failure", "restart_initiated"), triggers(id));
        }

        @Test
        void revive_agentRejoinsAfterSecondAttempt_asksTwiceAndSucceeds() {
            String id = fixture.readyOnHost("back-2");
            Execution e = fixture.kill(id);

            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(Execution.Status.RUNNING, e.status());
            assertEquals("restarting", stack.status(id));
            assertEquals(List.of(1, 2), attemptsOf(commandsFor(id)));
            assertEquals("agent did not rejoin after attempt 1", commandsFor(id).get(1).get("reason").asText());

            join(id);
            stack.advanceAndRunDue(SECOND_WAIT);

            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals(List.of("Initiate", "Started", "WaitForJoin", "Check", "Decide", "WaitForJoin", "Check",
                    "Decide", "Revived"), statesEntered(e));
            assertEquals("ready", stack.status(id));
            assertEquals(2, commandItemsFor(id).size());
            JsonNode revival = revivals(id).get(0);
            assertEquals("revived", revival.get("outcome").asText());
            assertEquals(2, revival.get("attempts").asInt());
        }

        /**
         * What a client written from openapi.yaml sees: after a two-attempt revive, GET .../revivals validates against
         * the Revivals schema and tells the same story, in the same words, as the documented example.
         */
        @Test
        void revivals_afterTwoAttemptRevive_answerAsOpenApiDocumentsIt() throws Exception {
            String id = fixture.readyOnHost("documented");
            Instant died = stack.clock.instant();
            List<String> console = Collections.synchronizedList(new ArrayList<>());
            Log.sink(console::add);
            Execution e;
            try {
                e = fixture.kill(id);
                stack.advanceAndRunDue(FIRST_WAIT);
                join(id);
                stack.advanceAndRunDue(SECOND_WAIT);
            } finally {
                Log.sink(null);
            }
            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);

            TestStack.Reply answer = ok(stack.agent("revivals", id, null));

            JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(
                    TestStack.templatePath().resolveSibling("openapi.yaml").toFile());
            ObjectNode schema = Json.object()
                    .put("$schema", "https://json-schema.org/draft/2020-12/schema")
                    .put("$ref", "#/components/schemas/Revivals");
            schema.set("components", spec.get("components"));
            var errors = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema,
                    SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build())
                    .validate(answer.body());
            assertTrue(errors.isEmpty(), answer.body() + ": " + errors);
            JsonNode example = spec.at("/paths/~1v1~1teams~1{team}~1agents~1{agentId}~1revivals/get/responses/200"
                    + "/content/application~1json/examples/revived/value/revivals/0");
            assertFalse(example.isMissingNode(), "openapi.yaml has the example");
            JsonNode revival = answer.body().get("revivals").get(0);
            assertEquals(example.get("outcome").asText(), revival.get("outcome").asText());
            assertEquals(example.get("attempts").asInt(), revival.get("attempts").asInt());
            assertEquals(stepWords(example), stepWords(revival));
            assertEquals(List.of("initiate #1 restart_requested", "check #1 retry", "check #2 revived"), stepWords(revival));
            List<String> lines = new ArrayList<>();
            for (String line : List.copyOf(console)) {
                JsonNode l = Json.parse(line);
                if (l.path("msg").asText().equals("revive") && l.path("agentId").asText().equals(id)) {
                    lines.add(l.get("step").asText() + " #" + l.get("attempt").asInt() + " " + l.get("outcome").asText());
                }
            }
            assertEquals(stepWords(revival), lines, "the console names the attempt and outcome the record does");
            assertEquals(died.toString(), revival.get("startedAt").asText());
            assertEquals(died.plus(FIRST_WAIT).toString(), revival.get("steps").get(1).get("at").asText());
        }

        static List<String> stepWords(JsonNode revival) {
            List<String> out = new ArrayList<>();
            revival.get("steps").forEach(st -> out.add(st.get("step").asText() + " #" + st.get("attempt").asInt() + " "
                    + st.get("outcome").asText()));
            return out;
        }

        @Test
        void revive_everyAttemptFails_endsDeadFailedReviveAndFailsRestartExhausted() {
            String id = fixture.readyOnHost("never");
            Execution e = fixture.kill(id);

            stack.advanceAndRunDue(FIRST_WAIT);
            stack.advanceAndRunDue(SECOND_WAIT);
            assertEquals(Execution.Status.RUNNING, e.status());
            assertEquals("restarting", stack.status(id), "still restarting during the last wait");
            stack.advanceAndRunDue(THIRD_WAIT);

            assertEquals(Execution.Status.FAILED, e.status(), e::toString);
            assertEquals("RestartExhausted", e.error());
            assertEquals(List.of("Check", "Decide", "GiveUp", "GaveUp", "RestartExhausted"),
                    statesEntered(e).subList(statesEntered(e).size() - 5, statesEntered(e).size()));
            JsonNode agent = stack.agentView(id);
            assertEquals("dead_failed_revive", agent.get("status").asText(), "visible at once, before any outbox run");
            assertEquals("restart_exhausted", agent.get("lastTransition").get("trigger").asText());
            assertEquals(List.of(1, 2, 3), commandItemsFor(id).stream().map(c -> Integer.parseInt(c.get("attempt").n()))
                    .sorted().toList());
            assertTrue(commandsFor(id).isEmpty(), "the flow is over: its commands are superseded");

            stack.pump.drain();
            List<JsonNode> gaveUp = onBus("AgentStatusChanged", id).stream()
                    .filter(d -> d.get("to").asText().equals("dead_failed_revive")).toList();
            assertEquals(1, gaveUp.size(), gaveUp::toString);
            assertEquals("restarting", gaveUp.get(0).get("from").asText());
            assertEquals("restart_exhausted", gaveUp.get(0).get("trigger").asText());
            assertEquals("no rejoin after 3 restart attempts", gaveUp.get(0).get("reason").asText());
            assertEquals(HOST, gaveUp.get(0).get("hostId").asText());
            JsonNode revival = revivals(id).get(0);
            assertEquals("failed", revival.get("outcome").asText());
            assertEquals(3, revival.get("attempts").asInt());
        }

        @Test
        void revive_agentRejoinsDuringWait_flowKeepsItsScheduleAndCheckFindsItAlive() {
            String id = fixture.readyOnHost("mid-wait");
            Execution e = fixture.kill(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            Instant due = e.waitingUntil().orElseThrow();
            assertEquals(stack.clock.instant().plus(SECOND_WAIT), due);

            stack.advanceAndRunDue(Duration.ofSeconds(20));
            join(id);
            int historyBefore = e.history().size();
            stack.advanceAndRunDue(Duration.ofSeconds(39));

            assertEquals(historyBefore, e.history().size(), "nothing runs before the wait is over");
            assertEquals(due, e.waitingUntil().orElseThrow());
            assertEquals("ready", stack.status(id));

            stack.advanceAndRunDue(Duration.ofSeconds(1));

            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals("Revived", statesEntered(e).get(statesEntered(e).size() - 1));
            HistoryEvent check = events(e, "TaskSucceeded").get(events(e, "TaskSucceeded").size() - 1);
            assertEquals("Check", check.state());
            assertEquals("revived", check.detail().get("output").get("outcome").asText());
            assertEquals(2, check.detail().get("output").get("attempt").asInt());
            assertEquals(2, commandItemsFor(id).size(), "no third restart was asked for");
            assertTrue(commandsFor(id).isEmpty(), "the agent is back: nothing is offered");
            assertEquals("ready", stack.status(id));
        }

        @Test
        void revive_joinJustBeforeLastCheck_endsReadyWithoutGivingUp() {
            String id = fixture.readyOnHost("last-minute");
            Execution e = fixture.kill(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            stack.advanceAndRunDue(SECOND_WAIT);
            stack.clock.advance(THIRD_WAIT);

            join(id);
            stack.stepFunctions.runDue();

            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertFalse(statesEntered(e).contains("GiveUp"));
            assertEquals("ready", stack.status(id));
        }

        @Test
        void giveUp_whenJoinLandsBetweenCheckAndItsWrite_answersAliveAndAgentStaysReady() {
            String id = fixture.readyOnHost("race");
            Execution e = fixture.kill(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            stack.advanceAndRunDue(SECOND_WAIT);
            // The last check has found the agent still restarting; the join lands just before the give-up's write.
            StoreFaults.Fault joined = faults.before(StoreFaults.transition(TEAM, id, "restart_exhausted"),
                    () -> join(id));

            stack.advanceAndRunDue(THIRD_WAIT);

            assertEquals(1, joined.fired(), "the give-up write was attempted, after the join");
            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals(List.of("Check", "Decide", "GiveUp", "GaveUp", "Revived"),
                    statesEntered(e).subList(statesEntered(e).size() - 5, statesEntered(e).size()));
            HistoryEvent giveUp = events(e, "TaskSucceeded").get(events(e, "TaskSucceeded").size() - 1);
            assertEquals("GiveUp", giveUp.state());
            assertEquals("revived", giveUp.detail().get("output").get("outcome").asText());
            assertEquals("ready", stack.status(id));
            assertEquals(List.of("join", "reported_failure", "restart_initiated", "join"), triggers(id));
            stack.pump.drain();
            assertTrue(onBus("AgentStatusChanged", id).stream()
                    .noneMatch(d -> d.get("trigger").asText().equals("restart_exhausted")));
        }

        @Test
        void check_throttledTwiceThenSucceeds_retriesAfterTwoThenFourSeconds() {
            String id = fixture.readyOnHost("throttled");
            Execution e = fixture.kill(id);
            stack.clock.advance(FIRST_WAIT);
            Instant t0 = stack.clock.instant();
            StoreFaults.Fault throttling = faults.fail(2, StoreFaults.touching(TEAM, id), StoreFaults::throttled);

            stack.stepFunctions.runDue();
            assertEquals(1, throttling.fired());
            assertEquals(t0.plusSeconds(2), e.waitingUntil().orElseThrow());
            int history = e.history().size();
            stack.advanceAndRunDue(Duration.ofMillis(1999));
            assertEquals(history, e.history().size(), "no retry before 2 s");
            stack.advanceAndRunDue(Duration.ofMillis(1));
            assertEquals(2, throttling.fired());
            assertEquals(t0.plusSeconds(6), e.waitingUntil().orElseThrow());
            history = e.history().size();
            stack.advanceAndRunDue(Duration.ofMillis(3999));
            assertEquals(history, e.history().size(), "no retry before 4 s more");
            stack.advanceAndRunDue(Duration.ofMillis(1));

            List<HistoryEvent> retries = events(e, "RetryScheduled");
            assertEquals(2, retries.size());
            assertEquals(List.of(2.0, 4.0), retries.stream().map(r -> r.detail().get("delaySeconds").asDouble()).toList());
            assertTrue(retries.stream().allMatch(r -> r.state().equals("Check")
                    && r.detail().get("error").asText().equals(THROTTLED)), retries::toString);
            List<Instant> checkAttempts = events(e, "TaskScheduled").stream().filter(t -> t.state().equals("Check"))
                    .map(HistoryEvent::at).toList();
            assertEquals(List.of(t0, t0.plusSeconds(2), t0.plusSeconds(6)), checkAttempts);
            // The third attempt went through: attempt 2 was asked for once, and the flow waits 60 s for it.
            assertEquals("WaitForJoin", statesEntered(e).get(statesEntered(e).size() - 1));
            assertEquals(t0.plusSeconds(6).plus(SECOND_WAIT), e.waitingUntil().orElseThrow());
            assertEquals(List.of(1, 2), attemptsOf(commandsFor(id)));

            join(id);
            stack.advanceAndRunDue(SECOND_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
        }

        @Test
        void initiate_throttledAfterItsRestartingWrite_retriesAndStillRevives() {
            String id = fixture.readyOnHost("replay-init");
            // The status write goes through; the command's put is throttled, so the whole step is retried.
            StoreFaults.Fault throttling = faults.fail(1, StoreFaults.commandPut(TEAM, id), StoreFaults::throttled);

            Execution e = fixture.kill(id);
            assertEquals(1, throttling.fired());
            assertEquals("restarting", stack.status(id));
            assertEquals(1, events(e, "RetryScheduled").size());

            stack.advanceAndRunDue(Duration.ofSeconds(2));

            assertEquals(Execution.Status.RUNNING, e.status(), () -> e + " " + statesEntered(e));
            assertEquals("WaitForJoin", statesEntered(e).get(statesEntered(e).size() - 1));
            assertEquals(List.of(1), attemptsOf(commandsFor(id)), "the retried step asked the host once");
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(List.of(1, 2), attemptsOf(commandsFor(id)), "and the flow goes on asking");
            join(id);
            stack.advanceAndRunDue(SECOND_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, e.status(), e::toString);
            assertEquals("Revived", statesEntered(e).get(statesEntered(e).size() - 1));
        }

        @Test
        void giveUp_throttledAfterItsWrite_retriesAndStillFailsRestartExhausted() {
            String id = fixture.readyOnHost("replay-giveup");
            Execution e = fixture.kill(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            stack.advanceAndRunDue(SECOND_WAIT);
            stack.clock.advance(THIRD_WAIT);
            // The check's record goes through; the give-up's record (after its status write) is throttled.
            StoreFaults.Fault afterWrite = faults.before(StoreFaults.transition(TEAM, id, "restart_exhausted"),
                    () -> faults.fail(1, StoreFaults.revivalRecord(TEAM, id), StoreFaults::throttled));

            stack.stepFunctions.runDue();
            assertEquals(1, afterWrite.fired());
            assertEquals("dead_failed_revive", stack.status(id));
            assertEquals(1, events(e, "RetryScheduled").size(), () -> e.history().toString());
            stack.advanceAndRunDue(Duration.ofSeconds(2));

            assertEquals(Execution.Status.FAILED, e.status(), () -> e + " " + statesEntered(e));
            assertEquals("RestartExhausted", e.error());
            assertEquals("failed", revivals(id).get(0).get("outcome").asText());
        }

        @Test
        void check_unexpectedError_isCaughtAndRecordedAsTheAgentsLastError() {
            String id = fixture.readyOnHost("broken");
            Execution e = fixture.kill(id);
            faults.fail(1, r -> r instanceof GetItemRequest g && StoreFaults.touching(TEAM, id).test(g),
                    StoreFaults::validation);

            stack.advanceAndRunDue(FIRST_WAIT);

            assertEquals(Execution.Status.FAILED, e.status(), e::toString);
            assertEquals("ReviveError", e.error());
            assertEquals(List.of("Check", "RecordError", "ReviveErrored"),
                    statesEntered(e).subList(statesEntered(e).size() - 3, statesEntered(e).size()));
            assertTrue(events(e, "RetryScheduled").isEmpty(), "an unexpected error is not retried");
            HistoryEvent caught = events(e, "CatchTaken").get(0);
            assertEquals("Check", caught.state());
            assertEquals("software.amazon.awssdk.services.dynamodb.model.DynamoDbException",
                    caught.detail().get("error").asText());
            JsonNode lastError = stack.agentView(id).get("lastError");
            assertNotNull(lastError, "the error is on the agent");
            assertTrue(lastError.get("message").asText().startsWith(
                    "revive flow failed: software.amazon.awssdk.services.dynamodb.model.DynamoDbException"),
                    lastError::toString);
            assertTrue(lastError.get("message").asText().contains("One or more parameter values were invalid"));
            assertEquals(stack.clock.instant().toString(), lastError.get("at").asText());
            assertEquals("error", revivals(id).get(0).get("outcome").asText());
            // No flow drives it any more: it does not stay restarting, and an operator can revive it again.
            assertEquals("dead_failed_revive", stack.status(id));
        }

        @Test
        void initiate_unexpectedErrorBeforeAnyWrite_isCaughtAndRecorded() {
            String id = fixture.readyOnHost("broken-init");
            faults.fail(1, StoreFaults.transition(TEAM, id, "restart_initiated"), StoreFaults::validation);

            Execution e = fixture.kill(id);

            assertEquals(Execution.Status.FAILED, e.status(), e::toString);
            assertEquals("ReviveError", e.error());
            assertEquals(List.of("Initiate", "RecordError", "ReviveErrored"), statesEntered(e));
            assertEquals("dead", stack.status(id), "nothing was changed");
            assertTrue(stack.agentView(id).get("lastError").get("message").asText().startsWith("revive flow failed: "));
            assertTrue(commandItemsFor(id).isEmpty());
        }
    }

    /** Timing and visibility. */
    @Nested
    class TimingAndVisibility {
        @Test
        void waitForJoin_acrossAttempts_growsThirtySixtyOneTwentySeconds() {
            String id = fixture.readyOnHost("waits");
            Instant died = stack.clock.instant();
            Execution e = fixture.kill(id);
            assertEquals(died.plus(FIRST_WAIT), e.waitingUntil().orElseThrow());
            stack.advanceAndRunDue(FIRST_WAIT);
            Instant second = stack.clock.instant();
            assertEquals(second.plus(SECOND_WAIT), e.waitingUntil().orElseThrow());
            stack.advanceAndRunDue(SECOND_WAIT);
            Instant third = stack.clock.instant();
            assertEquals(third.plus(THIRD_WAIT), e.waitingUntil().orElseThrow());
            stack.advanceAndRunDue(THIRD_WAIT);

            List<HistoryEvent> waits = events(e, "WaitStarted");
            assertEquals(List.of(died, second, third), waits.stream().map(HistoryEvent::at).toList());
            assertEquals(List.of(died.plus(FIRST_WAIT), second.plus(SECOND_WAIT), third.plus(THIRD_WAIT)),
                    waits.stream().map(w -> Instant.parse(w.detail().get("until").asText())).toList());
            List<Long> waitSeconds = events(e, "TaskSucceeded").stream()
                    .filter(t -> t.detail().get("output").get("outcome").asText().matches("restart_requested|retry"))
                    .map(t -> t.detail().get("output").get("waitSeconds").asLong()).toList();
            assertEquals(List.of(30L, 60L, 120L), waitSeconds);
        }

        @Test
        void initiate_marksRestartingAtOnce_beforeAnyWait() {
            String id = fixture.readyOnHost("visible");
            Instant died = stack.clock.instant();

            Execution e = fixture.kill(id);

            assertEquals(died, stack.clock.instant(), "no time passed");
            JsonNode agent = stack.agentView(id);
            assertEquals("restarting", agent.get("status").asText());
            assertFalse(agent.get("alive").asBoolean());
            assertEquals("restart_initiated", agent.get("lastTransition").get("trigger").asText());
            assertEquals("dead", agent.get("lastTransition").get("from").asText());
            assertEquals(died.toString(), agent.get("lastTransition").get("at").asText());
            assertEquals(List.of("Initiate", "Started", "WaitForJoin"), statesEntered(e));
            assertTrue(events(e, "TaskScheduled").stream().noneMatch(t -> t.state().equals("Check")));
            JsonNode command = commandsFor(id).get(0);
            assertEquals(1, command.get("attempt").asInt());
            assertEquals(died.toString(), command.get("createdAt").asText());
            stack.pump.drain();
            List<JsonNode> restarting = onBus("AgentStatusChanged", id).stream()
                    .filter(d -> d.get("to").asText().equals("restarting")).toList();
            assertEquals(1, restarting.size());
            assertEquals("dead", restarting.get(0).get("from").asText());
            join(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, e.status());
        }
    }

    /** One flow per death, and only for hosted agents. */
    @Nested
    class OneFlowPerDeath {
        @Test
        void secondExecution_forSameDeath_endsNotNeededAndIssuesNoCommand() {
            String id = fixture.readyOnHost("twice");
            Execution first = fixture.kill(id);
            stack.pump.drain();
            List<Map<String, AttributeValue>> commandsBefore = commandItemsFor(id);
            Map<String, AttributeValue> agentBefore = stack.agentItem(id);
            int restartEventsBefore = onBus("AgentRestartRequested", id).size();

            Execution second = stack.stepFunctions.start(LocalStepFunctions.arn("ReviveStateMachine"),
                    "dup-" + id, first.input());

            assertEquals(Execution.Status.SUCCEEDED, second.status(), second::toString);
            assertEquals("NotNeeded", statesEntered(second).get(statesEntered(second).size() - 1));
            assertEquals(commandsBefore, commandItemsFor(id));
            assertEquals(agentBefore, stack.agentItem(id));
            stack.pump.drain();
            assertEquals(restartEventsBefore, onBus("AgentRestartRequested", id).size());
            List<JsonNode> records = revivals(id);
            assertEquals(1, records.size());
            assertEquals(executionId(first), records.get(0).get("executionId").asText(),
                    () -> "the record is still the first execution's: " + records);
            assertEquals("in_progress", records.get(0).get("outcome").asText());
            assertEquals(1, records.get(0).get("attempts").asInt());

            // The first goes on as if alone.
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(List.of(1, 2), attemptsOf(commandsFor(id)));
            join(id);
            stack.advanceAndRunDue(SECOND_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, first.status());
        }

        @Test
        void death_whileEarlierFlowWaits_oldFlowStandsDownAndNewOneActs() {
            String id = fixture.readyOnHost("again");
            Execution old = fixture.kill(id);
            join(id);
            Execution next;
            ok(stack.agent("fail", id, "{\"reason\":\"oom again\"}"));
            stack.pump.drain();
            List<Execution> all = stack.executionsFor(id);
            assertEquals(2, all.size());
            next = all.get(1);
            assertEquals("restarting", stack.status(id));

            stack.advanceAndRunDue(FIRST_WAIT);

            assertEquals(Execution.Status.SUCCEEDED, old.status(), old::toString);
            assertEquals("NotNeeded", statesEntered(old).get(statesEntered(old).size() - 1));
            assertEquals(Execution.Status.RUNNING, next.status());
            long newStart = next.input().get("startSeq").asLong();
            assertEquals(3, commandItemsFor(id).size(), "the old flow's command is still stored");
            assertEquals(List.of("restart-" + id + "-" + newStart + "-1", "restart-" + id + "-" + newStart + "-2"),
                    commandsFor(id).stream().map(c -> c.get("commandId").asText()).toList(),
                    "only the newer flow's commands are offered");
            join(id);
            stack.advanceAndRunDue(SECOND_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, next.status());
        }

        @Test
        void death_ofAgentWithoutHost_startsNoExecution() {
            String id = newId("hostless");
            ok(stack.team("register", "{\"agentId\":\"" + id + "\",\"name\":\"No host\",\"role\":\"worker\"}"));
            join(id);
            ok(stack.agent("fail", id, null));

            stack.pump.drain();

            assertEquals(1, onBus("AgentStatusChanged", id).stream().filter(d -> d.get("to").asText().equals("dead"))
                    .count(), "the death was published");
            assertTrue(stack.executionsFor(id).isEmpty());
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals("dead", stack.status(id));
            assertTrue(commandItemsFor(id).isEmpty());
        }
    }

    /** Every status write is conditional. */
    @Nested
    class ConditionalWrites {
        @Test
        void reviveSteps_withStaleSeqs_neverOverwriteAJoinedAgent() {
            String id = fixture.readyOnHost("stale");
            Execution e = fixture.kill(id);
            long startSeq = e.input().get("startSeq").asLong();
            long restartingSeq = startSeq + 1;
            join(id);
            Map<String, AttributeValue> joined = stack.agentItem(id);
            RequestHandler<Map<String, Object>, Map<String, Object>> revive = stack.host.handler("ReviveFunction");

            // Each step as this execution would replay it, late: after the agent joined.
            for (String action : List.of("initiate", "check", "giveUp")) {
                Map<String, Object> in = new HashMap<>(Map.of("action", action, "team", TEAM, "agentId", id,
                        "startSeq", startSeq, "seq", restartingSeq, "attempt", 3, "executionId", executionId(e)));
                Map<String, Object> out = revive.handleRequest(in, new LocalContext("ReviveFunction", "t"));
                assertEquals("revived", out.get("outcome"), action + " answers revived: " + out);
                assertEquals(joined, stack.agentItem(id), action + " wrote nothing to the agent");
            }
            assertEquals(1, commandItemsFor(id).size(), "and asked nothing more of the host");
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, e.status());
            assertEquals(joined.get("status"), stack.agentItem(id).get("status"));
        }

        @Test
        void initiate_forDeathTheAgentHasLeft_endsNotNeededAndTheNewerDeathsFlowActs() {
            String id = fixture.readyOnHost("two-deaths");
            // Two deaths before the outbox runs (a slow publisher): the first death's execution starts late.
            ok(stack.agent("fail", id, null));
            join(id);
            ok(stack.agent("fail", id, null));
            long newest = stack.agentView(id).get("lastTransition").get("seq").asLong();

            stack.pump.drain();

            List<Execution> all = stack.executionsFor(id);
            assertEquals(2, all.size(), all::toString);
            Execution stale = all.get(0);
            Execution current = all.get(1);
            assertEquals(newest - 2, stale.input().get("startSeq").asLong());
            assertEquals(newest, current.input().get("startSeq").asLong());
            assertEquals(Execution.Status.SUCCEEDED, stale.status(), stale::toString);
            assertEquals("NotNeeded", statesEntered(stale).get(statesEntered(stale).size() - 1));
            assertEquals(Execution.Status.RUNNING, current.status());
            assertEquals(List.of("restart-" + id + "-" + newest + "-1"),
                    commandsFor(id).stream().map(c -> c.get("commandId").asText()).toList());
            join(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, current.status());
        }

        @Test
        void giveUp_whenAgentCameBackAndDiedAgainSinceTheCheck_leavesTheNewerFlowAlone() {
            String id = fixture.readyOnHost("reborn");
            Execution old = fixture.kill(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            stack.advanceAndRunDue(SECOND_WAIT);
            RequestHandler<Map<String, Object>, Map<String, Object>> revive = stack.host.handler("ReviveFunction");
            long[] newer = new long[1];
            // Between the last check and the give-up write: the agent joins, dies, and a newer flow takes it over.
            faults.before(StoreFaults.transition(TEAM, id, "restart_exhausted"), () -> {
                join(id);
                ok(stack.agent("fail", id, null));
                newer[0] = stack.agentView(id).get("lastTransition").get("seq").asLong();
                Map<String, Object> out = revive.handleRequest(new HashMap<>(Map.of("action", "initiate", "team", TEAM,
                        "agentId", id, "startSeq", newer[0], "executionId", "newer-flow")),
                        new LocalContext("ReviveFunction", "t"));
                assertEquals("restart_requested", out.get("outcome"));
            });

            stack.advanceAndRunDue(THIRD_WAIT);

            assertEquals(Execution.Status.SUCCEEDED, old.status(), old::toString);
            assertEquals("NotNeeded", statesEntered(old).get(statesEntered(old).size() - 1));
            JsonNode agent = stack.agentView(id);
            assertEquals("restarting", agent.get("status").asText(), "the newer flow's restart stands");
            assertEquals(newer[0] + 1, agent.get("lastTransition").get("seq").asLong());
            join(id);
            stack.pump.drain();
        }

        @Test
        void revive_joinAtEachWait_isNeverOverwritten() {
            List<Duration> waits = List.of(FIRST_WAIT, SECOND_WAIT, THIRD_WAIT);
            for (int joinAt = 0; joinAt < waits.size(); joinAt++) {
                String id = fixture.readyOnHost("join-at-" + (joinAt + 1));
                Execution e = fixture.kill(id);
                for (int w = 0; w < joinAt; w++) {
                    stack.advanceAndRunDue(waits.get(w));
                }
                join(id);
                long joinSeq = stack.agentView(id).get("lastTransition").get("seq").asLong();
                for (int w = joinAt; w < waits.size(); w++) {
                    stack.advanceAndRunDue(waits.get(w));
                }
                stack.advanceAndRunDue(Duration.ofSeconds(30));

                int attempt = joinAt + 1;
                assertEquals(Execution.Status.SUCCEEDED, e.status(), () -> "join during wait " + attempt + ": " + e);
                JsonNode agent = stack.agentView(id);
                assertEquals("ready", agent.get("status").asText(), "join during wait " + attempt);
                assertEquals(joinSeq, agent.get("lastTransition").get("seq").asLong(),
                        "nothing was written after the join during wait " + attempt);
                assertEquals(attempt, commandItemsFor(id).size());
            }
        }

        @Test
        void reviveOnDeathRule_onDeath_startsExecutionWithTeamAgentHostAndDeathSeq() {
            String id = fixture.readyOnHost("input");
            Execution e = fixture.kill(id);
            JsonNode in = e.input();
            assertEquals(TEAM, in.get("team").asText());
            assertEquals(id, in.get("agentId").asText());
            assertEquals(HOST, in.get("hostId").asText());
            assertTrue(in.get("startSeq").isIntegralNumber(), Json.write(in));
            assertEquals(2, in.get("startSeq").asLong(), "join is seq 1, the death seq 2");
            join(id);
            stack.advanceAndRunDue(FIRST_WAIT);
            assertEquals(Execution.Status.SUCCEEDED, e.status());
        }
    }
}
