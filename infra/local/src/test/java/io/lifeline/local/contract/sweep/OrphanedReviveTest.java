package io.lifeline.local.contract.sweep;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.agent.SweepPlan;
import io.lifeline.app.Sweeper;
import io.lifeline.config.Config;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.contract.outbox.PublisherTest;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Nothing stays {@code restarting} past the revive flow's longest possible run. An agent whose
 * flow died (here: the flow put it in restarting, then never ran again, as a failed or lost execution) is moved
 * by the sweep to {@code dead_failed_revive} ({@code restart_exhausted}) once it has been restarting longer than
 * the flow could run, and not a millisecond before; a flow still inside its bound is left alone; a join that
 * lands between the sweep's read and its write wins. The template's revive defaults (30/60/120 s, 3 attempts),
 * the real revive flow (ASL runner over revive.asl.json) and the engine; time moves by the test clock only.
 */
@Tag("contract")
class OrphanedReviveTest {
    private static final Instant T0 = TestStack.START;
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    /** The Sweep function's configuration, as template.yaml gives it. */
    private static Config sweepConfig(TestStack s) {
        return Config.fromEnvironment(s.host.function("SweepFunction").environment());
    }

    private static List<String> triggers(TestStack s, String id) {
        List<String> out = new ArrayList<>();
        s.transitions(id, 50).forEach(t -> out.add(0, t.get("trigger").asText()));
        return out;
    }

    private static long restartCommands(TestStack s, String id) {
        return s.allItems().stream().filter(i -> i.get("sk").s().startsWith("CMD#")
                && AttributeValue.fromS(id).equals(i.get("agentId"))).count();
    }

    @Test
    void restartingPastTheFlowsLongestRun_endsRestartExhausted_notAMillisecondBefore() throws Exception {
        TestStack s = STACKS.open(TestStack.builder());
        Execution flow = s.restartingAfterACrash("orphan");
        Duration longest = sweepConfig(s).reviveLongestRun();
        assertEquals(Duration.parse("PT1H20M54S"), longest, "the template's defaults");

        s.clock.set(T0.plus(longest));
        s.sweep();
        assertEquals("restarting", s.status("orphan"), "at the bound the flow might still be running");

        s.clock.set(T0.plus(longest).plusMillis(1));
        s.sweep();
        JsonNode last = s.agentView("orphan").get("lastTransition");
        assertEquals("dead_failed_revive", s.status("orphan"));
        assertEquals("restarting", last.get("from").asText());
        assertEquals("restart_exhausted", last.get("trigger").asText());
        assertEquals("restarting for 1h20m54s with no revive flow left to end it", last.get("reason").asText());
        assertEquals(T0.plus(longest).plusMillis(1).toString(), last.get("at").asText());
        s.sweep();
        assertEquals(List.of("join", "reported_failure", "restart_initiated", "restart_exhausted"),
                triggers(s, "orphan"), "ended once");

        s.pump.drain();
        List<JsonNode> gaveUp = PublisherTest.onBus(s, "AgentStatusChanged", "agentId", "orphan").stream()
                .filter(d -> d.get("to").asText().equals("dead_failed_revive")).toList();
        assertEquals(1, gaveUp.size(), "one alert-worthy event, as from the flow's own give-up");
        assertEquals("restart_exhausted", gaveUp.get(0).get("trigger").asText());

        // Should the flow wake after all, it finds the agent no longer its own and ends without a write.
        s.stepFunctions.runDue();
        assertEquals(Execution.Status.SUCCEEDED, flow.status(), flow::toString);
        assertEquals("NotNeeded", TestStack.statesEntered(flow).get(TestStack.statesEntered(flow).size() - 1));
        assertEquals("dead_failed_revive", s.status("orphan"));
        assertEquals(1, restartCommands(s, "orphan"), "no further restart was asked for");
        // dead_failed_revive is not the end: the agent may still join.
        ok(s.agent("join", "orphan", null));
        assertEquals("ready", s.status("orphan"));
    }

    @Test
    void restartingInsideTheFlowsLongestRun_isLeftAlone() throws Exception {
        TestStack s = STACKS.open(TestStack.builder());
        Duration longest = sweepConfig(s).reviveLongestRun();
        s.restartingAfterACrash("early");
        s.clock.set(T0.plusSeconds(300));
        s.restartingAfterACrash("late");

        s.clock.set(T0.plus(longest).plusSeconds(1));
        s.sweep();
        assertEquals("dead_failed_revive", s.status("early"));
        assertEquals("restarting", s.status("late"), "its flow has 5 minutes left");

        s.clock.set(T0.plusSeconds(300).plus(longest).plusSeconds(1));
        s.sweep();
        assertEquals("dead_failed_revive", s.status("late"));
    }

    /**
     * On the sweep's write that ends {@code agentId}'s restart, first sends a real join for that agent through the
     * gateway from another thread and waits for its answer: the sweep has read, the agent joins, the sweep writes.
     */
    static final class JoinInTheGap implements ExecutionInterceptor {
        final AtomicBoolean armed = new AtomicBoolean();
        final AtomicInteger fired = new AtomicInteger();
        final ExecutorService other = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "racing-join");
            t.setDaemon(true);
            return t;
        });
        volatile TestStack stack;
        volatile String agentId;
        volatile TestStack.Reply join;

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof UpdateItemRequest u
                    && TestStack.agentPartition(agentId).equals(u.key().get("pk").s())
                    && u.expressionAttributeValues().containsValue(AttributeValue.fromS("restart_exhausted"))
                    && armed.compareAndSet(true, false)) {
                fired.incrementAndGet();
                try {
                    join = other.submit(() -> stack.agent("join", agentId, null)).get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException("the racing join did not complete", e);
                }
            }
        }
    }

    @Test
    void joinLandingBetweenTheSweepsReadAndItsWrite_wins() throws Exception {
        JoinInTheGap race = new JoinInTheGap();
        TestStack s = STACKS.open(TestStack.builder().interceptor(race));
        s.restartingAfterACrash("racer");
        Config config = sweepConfig(s);
        Sweeper sweeper = new Sweeper(new SweepStore(s.dynamo, s.tables, 2), new TeamStore(s.dynamo, s.tables),
                new SweepPlan.Policy(0.5, 4), new Sweeper.Timing(config.missSpacing(), config.reviveLongestRun()),
                s.clock);
        race.stack = s;
        race.agentId = "racer";
        race.armed.set(true);

        s.clock.set(T0.plus(config.reviveLongestRun()).plusSeconds(1));
        Sweeper.Report report = sweeper.sweepOnce();

        assertEquals(1, race.fired.get(), "the join was sent between the sweep's read and its write");
        assertEquals(200, race.join.status(), race.join.body().toString());
        assertEquals(List.of(), report.revivesEnded());
        assertEquals(1, report.raceLostToHeartbeat());
        assertEquals("ready", s.status("racer"));
        assertEquals(List.of("join", "reported_failure", "restart_initiated", "join"), triggers(s, "racer"));
    }

    // ---- the bound holds for the flow as written ---------------------------------------------------------

    /**
     * {@link Config#reviveLongestRun()} assumes the shape of revive.asl.json and the revive function's timeout:
     * one Wait state (the backoff the revive function computes), every Task state's Retry entries together no
     * longer than {@link Config#reviveTaskWorstCase()}, at most {@link Config#REVIVE_TASKS_BEYOND_CHECKS} Task
     * states besides Check (which runs once per attempt), a timeout of at most 10 s; and the Sweep function must
     * see the same revive parameters as the flow. Should any of these change, the bound must change with it.
     */
    @Test
    void longestRun_coversEveryWaitAndRetryOfReviveAslJsonAndTheTemplate() throws Exception {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        JsonNode template = yaml.readTree(TestStack.templatePath().toFile());
        JsonNode resources = template.get("Resources");
        Path asl = TestStack.templatePath().toAbsolutePath().getParent()
                .resolve(resources.get("ReviveStateMachine").get("Properties").get("DefinitionUri").asText());
        JsonNode states = new ObjectMapper().readTree(asl.toFile()).get("States");

        int waits = 0;
        int tasksBesidesCheck = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = states.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> state = it.next();
            String type = state.getValue().get("Type").asText();
            if (type.equals("Wait")) {
                assertEquals("$.revive.waitSeconds", state.getValue().path("SecondsPath").asText(),
                        "every wait is one the revive function computes");
                // A wait that leads back to Initiate (a host daemon's claim) comes before the flow's restarting write,
                // so it is no part of the time an agent stays restarting; the bound covers the others.
                waits += state.getValue().path("Next").asText().equals("Initiate") ? 0 : 1;
            }
            if (type.equals("Task")) {
                tasksBesidesCheck += state.getKey().equals("Check") ? 0 : 1;
                Duration worst = Config.REVIVE_TASK_TIMEOUT;
                for (JsonNode retry : state.getValue().path("Retry")) {
                    // Step Functions' defaults: 1 s, rate 2, 3 attempts, no cap.
                    Config.Retrier r = new Config.Retrier(
                            Duration.ofSeconds(retry.path("IntervalSeconds").asLong(1)),
                            retry.path("BackoffRate").asDouble(2.0), retry.path("MaxAttempts").asInt(3),
                            retry.has("MaxDelaySeconds") ? Duration.ofSeconds(retry.get("MaxDelaySeconds").asLong())
                                    : null);
                    worst = worst.plus(r.totalWait()).plus(Config.REVIVE_TASK_TIMEOUT.multipliedBy(r.maxAttempts()));
                }
                assertTrue(worst.compareTo(Config.reviveTaskWorstCase()) <= 0,
                        state.getKey() + " may take " + worst + ", more than the bound's " + Config.reviveTaskWorstCase());
            }
        }
        assertEquals(1, waits, "one Wait state while restarting");
        assertTrue(tasksBesidesCheck <= Config.REVIVE_TASKS_BEYOND_CHECKS,
                tasksBesidesCheck + " Task states besides Check");

        JsonNode revive = resources.get("ReviveFunction").get("Properties");
        int timeout = revive.has("Timeout") ? revive.get("Timeout").asInt()
                : template.get("Globals").get("Function").get("Timeout").asInt();
        assertTrue(timeout <= Config.REVIVE_TASK_TIMEOUT.toSeconds(), "revive function timeout " + timeout + " s");

        Map<String, String> sweepEnv = environment("SweepFunction");
        Map<String, String> reviveEnv = environment("ReviveFunction");
        for (String name : List.of("REVIVE_MAX_ATTEMPTS", "REVIVE_BASE_WAIT_SECONDS", "REVIVE_BACKOFF_RATE")) {
            assertTrue(sweepEnv.containsKey(name), "SweepFunction has " + name);
            assertEquals(reviveEnv.get(name), sweepEnv.get(name), name);
        }
    }

    /** A function's environment as Local resolves it from template.yaml with its default parameters. */
    private static Map<String, String> environment(String function) throws Exception {
        SamTemplate template = TestStack.template();
        return template.functions(LifelineLocal.localParameters(Map.of()),
                        LifelineLocal.resourceNames(template, LocalTables.named(template, "t"), "b")).stream()
                .filter(f -> f.logicalId().equals(function)).findFirst().orElseThrow().environment();
    }
}
