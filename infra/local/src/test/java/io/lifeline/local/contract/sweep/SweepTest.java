package io.lifeline.local.contract.sweep;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.SweepPlan;
import io.lifeline.app.Sweeper;
import io.lifeline.auth.Scope;
import io.lifeline.config.Config;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.stack.SharedDynamo;
import io.lifeline.local.stack.TestStack;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The liveness engine end to end in Lifeline Local, driven by the test clock (no sleeps): the sweep's misses
 * and dead-marking (the heartbeat protocol: stale after 60 s, grace 2, so dead 75-90 s after the last heartbeat with
 * sweeps at 15 s), a heartbeat racing the sweep's write, the cost of a sweep over healthy agents, agent and team
 * pauses, self-preservation, the outbox's hand-back, events and leader notice, and the fail route.
 *
 * <p>Each test has a stack of its own (fresh table, bus and clock at {@link TestStack#START}), because a
 * sweep reads the whole table and moving the clock ages every agent in it.
 */
@Tag("contract")
class SweepTest {
    private static final Instant T0 = TestStack.START;
    private static final String TEAM = TestStack.TEAM;
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    /** Sets the clock to T0 + {@code seconds} and runs one sweep through the template's SweepFunction. */
    private static List<String> sweepAt(TestStack s, double seconds) {
        s.clock.set(T0.plusMillis(Math.round(seconds * 1000)));
        return s.sweep();
    }

    private static Instant t(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }

    /** The item's misses; a sign of life removes the count, so absent is 0. */
    private static int misses(TestStack s, String agentId) {
        var misses = s.agentItem(agentId).get("misses");
        return misses == null ? 0 : Integer.parseInt(misses.n());
    }

    private static String status(TestStack s, String agentId) {
        return s.agentItem(agentId).get("status").s();
    }

    private static List<LocalEventBus.Delivered> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type)).toList();
    }

    private static List<JsonNode> deaths(TestStack s, String agentId) {
        return onBus(s, "AgentStatusChanged").stream().map(d -> d.event().path("detail"))
                .filter(d -> d.path("agentId").asText().equals(agentId) && d.path("to").asText().equals("dead"))
                .toList();
    }

    /** The team's event log as GET /events answers it, of one type. */
    private static JsonNode eventLog(TestStack s, String team, String key, String type) {
        return ok(s.send("events", key, Map.of("team", team), Map.of("type", type), null)).body();
    }

    private static JsonNode task(TestStack s, String taskId) {
        for (JsonNode t : ok(s.team("list-tasks", null)).body().get("tasks")) {
            if (t.path("taskId").asText().equals(taskId)) {
                return t;
            }
        }
        throw new AssertionError("no task " + taskId);
    }

    private static void readyAll(TestStack s, String... agentIds) {
        for (String id : agentIds) {
            ok(s.ready(id));
        }
    }

    private static void heartbeatAll(TestStack s, String... agentIds) {
        for (String id : agentIds) {
            ok(s.heartbeat(id, "{}"));
        }
    }

    /** Requests on a team other than {@link TestStack#TEAM}, with that team's admin key. */
    private record Team(TestStack s, String name, String key) {
        static Team of(TestStack s, String name) {
            return new Team(s, name, s.key(name, Scope.ADMIN));
        }

        TestStack.Reply agent(String route, String agentId, String body) {
            return s.send(route, key, Map.of("team", name, "agentId", agentId), null, body);
        }

        void ready(String... agentIds) {
            for (String id : agentIds) {
                ok(s.send("register", key, Map.of("team", name), null, "{\"agentId\":\"" + id
                        + "\",\"name\":\"Agent " + id + "\",\"role\":\"worker\"}"));
                ok(agent("join", id, null));
            }
        }

        void heartbeat(String... agentIds) {
            for (String id : agentIds) {
                ok(agent("heartbeat", id, "{}"));
            }
        }

        String status(String agentId) {
            return ok(agent("get-agent", agentId, null)).text("status");
        }
    }

    private static Sweeper sweeper(TestStack s) {
        Config config = Config.fromEnvironment(
                s.host.function("SweepFunction").environment());
        return new Sweeper(new SweepStore(s.dynamo, s.tables, 2), new TeamStore(s.dynamo, s.tables),
                new SweepPlan.Policy(0.5, 4), new Sweeper.Timing(config.missSpacing(), config.reviveLongestRun()),
                s.clock);
    }

    private static List<JsonNode> reassigned(TestStack s) {
        return onBus(s, "TasksReassigned").stream().map(d -> d.event().get("detail")).toList();
    }

    /** A second pump over the same stream with no checkpoint: every record delivered again. */
    private static int replay(TestStack s) throws Exception {
        try (DynamoDbStreamsClient streams = SharedDynamo.streams()) {
            StreamPump replay = new StreamPump(streams, s.streamArn(), StreamPump.consumers(s.host), null);
            return replay.drain();
        }
    }

    /** Misses and death. */
    @Nested
    class MissesAndDeath {
        @Test
        void sweep_beforeDeadline_recordsNoMiss() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");

            assertEquals(List.of(), sweepAt(s, 15));
            assertEquals(List.of(), sweepAt(s, 59.999));

            assertEquals(0, misses(s, "a1"));
            assertEquals("ready", status(s, "a1"));
            assertEquals(0, s.agentView("a1").get("consecutiveMisses").asInt());
        }

        @Test
        void sweep_exactlyAtDeadline_recordsNoMiss_oneMilliLater_recordsOne() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            assertEquals(t(60).toString(), s.agentView("a1").get("deadline").asText());

            sweepAt(s, 60);
            assertEquals(0, misses(s, "a1"), "at the deadline itself the agent is not late yet");

            sweepAt(s, 60.001);
            assertEquals(1, misses(s, "a1"));
        }

        @Test
        void sweep_afterDeadline_recordsOneMiss_agentStaysAlive() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");

            assertEquals(List.of(), sweepAt(s, 75));

            assertEquals(1, misses(s, "a1"));
            JsonNode view = s.agentView("a1");
            assertEquals("ready", view.get("status").asText());
            assertEquals(1, view.get("consecutiveMisses").asInt());
            assertEquals(t(60).toString(), view.get("deadline").asText(), "a miss does not move the deadline");
        }

        @Test
        void sweep_atGrace_marksDeadWithHeartbeatExpired_reasonSaysHowLongSilent() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");

            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(TEAM + "/a1"), sweepAt(s, 90));

            Map<String, AttributeValue> item = s.agentItem("a1");
            assertEquals("dead", item.get("status").s());
            assertEquals("2", item.get("misses").n(), "consecutiveMisses = grace");
            JsonNode last = s.agentView("a1").get("lastTransition");
            assertEquals("ready", last.get("from").asText());
            assertEquals("dead", last.get("to").asText());
            assertEquals("heartbeat_expired", last.get("trigger").asText());
            assertTrue(last.get("reason").asText().contains("no heartbeat for 90 s"), last.toString());
            assertEquals(t(90).toString(), last.get("at").asText());

            assertEquals(List.of(), sweepAt(s, 105), "a dead agent is not swept again");
            s.pump.drain();
            List<JsonNode> deaths = deaths(s, "a1");
            assertEquals(1, deaths.size());
            assertEquals("heartbeat_expired", deaths.get(0).get("trigger").asText());
            assertEquals("ready", deaths.get(0).get("from").asText());
            assertTrue(deaths.get(0).get("reason").asText().contains("no heartbeat for 90 s"));
        }

        @Test
        void sweep_workingAgent_diesLikeAReadyOne() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "w1");
            ok(s.heartbeat("w1", "{\"status\":\"working\"}"));

            sweepAt(s, 75);
            assertEquals(List.of(TEAM + "/w1"), sweepAt(s, 90));
            assertEquals("working", s.agentView("w1").get("lastTransition").get("from").asText());
        }

        @Test
        void sweep_agentWithGraceThree_diesAtTheThirdMiss() throws Exception {
            TestStack s = STACKS.open();
            ok(s.team("register", "{\"agentId\":\"g3\",\"name\":\"G3\",\"role\":\"worker\",\"graceMisses\":3}"));
            ok(s.agent("join", "g3", null));

            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(), sweepAt(s, 90));
            assertEquals(2, misses(s, "g3"));
            assertEquals(List.of(TEAM + "/g3"), sweepAt(s, 105));
            assertEquals("3", s.agentItem("g3").get("misses").n());
        }

        @Test
        void sweep_agentWithOwnStaleAfter_usesIt() throws Exception {
            TestStack s = STACKS.open();
            ok(s.team("register", "{\"agentId\":\"slow\",\"name\":\"Slow\",\"role\":\"worker\",\"staleAfterSeconds\":300}"));
            ok(s.agent("join", "slow", null));
            readyAll(s, "fast");

            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(TEAM + "/fast"), sweepAt(s, 90));
            assertEquals(0, misses(s, "slow"));
            sweepAt(s, 301);
            assertEquals(1, misses(s, "slow"));
        }

        @Test
        void heartbeat_afterAMiss_resetsMissesToZero() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            sweepAt(s, 75);
            assertEquals(1, misses(s, "a1"));

            s.clock.set(t(80));
            TestStack.Reply hb = ok(s.heartbeat("a1", "{}"));
            assertEquals(t(140).toString(), hb.text("nextDeadline"));
            assertEquals(0, misses(s, "a1"));
            assertEquals(0, s.agentView("a1").get("consecutiveMisses").asInt());

            assertEquals(List.of(), sweepAt(s, 90));
            assertEquals(List.of(), sweepAt(s, 135));
            assertEquals(0, misses(s, "a1"));
            assertEquals(List.of(), sweepAt(s, 150), "the old miss was forgotten: one new miss is not death");
            assertEquals(1, misses(s, "a1"));
            assertEquals(List.of(TEAM + "/a1"), sweepAt(s, 165));
        }
    }

    /** A miss counts once per interval. */
    @Nested
    class OneMissPerInterval {
        @Test
        void twoSweepsASecondApart_pastTheDeadline_recordOneMiss() throws Exception {
            TestStack s = STACKS.open();
            ok(s.team("register", "{\"agentId\":\"g3\",\"name\":\"G3\",\"role\":\"worker\",\"graceMisses\":3}"));
            ok(s.agent("join", "g3", null));
            Sweeper sweeper = sweeper(s);

            s.clock.set(t(61));
            Sweeper.Report first = sweeper.sweepOnce();
            s.clock.set(t(62));
            Sweeper.Report second = sweeper.sweepOnce();

            assertEquals(1, first.missesRecorded());
            assertEquals(0, second.missesRecorded(), "the second sweep came 1 s after the first");
            assertEquals(1, second.missesTooSoon());
            assertEquals(0, second.raceLostToHeartbeat(), "no heartbeat raced: the spacing refused it");
            assertEquals(1, misses(s, "g3"));
            assertEquals(Long.toString(t(61).toEpochMilli()), s.agentItem("g3").get("lastMissAt").n(),
                    "the refused sweep left the first miss's time");
            // Three quarters of the 15 s interval after the first miss, the next one counts.
            s.clock.set(t(72.25));
            assertEquals(1, sweeper.sweepOnce().missesRecorded());
            assertEquals(2, misses(s, "g3"));
        }

        @Test
        void sweepRightAfterTheSweepThatCountedAMiss_cannotTurnItIntoDeath() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");

            assertEquals(List.of(), sweepAt(s, 61));
            assertEquals(List.of(), sweepAt(s, 62), "grace 2: a second miss 1 s after the first is not counted");
            assertEquals(List.of(), sweepAt(s, 72.249));
            assertEquals("ready", status(s, "a1"));
            assertEquals(1, misses(s, "a1"));
            assertEquals(List.of(TEAM + "/a1"), sweepAt(s, 72.25));
            s.pump.drain();
            assertEquals(1, deaths(s, "a1").size());
            assertTrue(deaths(s, "a1").get(0).get("reason").asText().contains("2 missed sweeps"));
        }

        @Test
        void missAfterAHeartbeat_isNotHeldBackByTheMissBeforeIt() throws Exception {
            TestStack s = STACKS.open();
            ok(s.team("register", "{\"agentId\":\"g3\",\"name\":\"G3\",\"role\":\"worker\",\"graceMisses\":3}"));
            ok(s.agent("join", "g3", null));
            assertEquals(List.of(), sweepAt(s, 61));
            assertEquals(1, misses(s, "g3"));

            // A beat resets the misses and promises the next within 1 s; it does not come. The sweep 2 s after the
            // last miss counts a new one: the spacing is between misses with no sign of life between them.
            s.clock.set(t(62));
            ok(s.heartbeat("g3", "{\"nextHeartbeatWithinSeconds\":1}"));
            assertEquals(0, misses(s, "g3"));
            assertEquals(List.of(), sweepAt(s, 63.5));
            assertEquals(1, misses(s, "g3"));
        }
    }

    /** A heartbeat racing the sweep. */
    @Nested
    class HeartbeatRacingTheSweep {
        /**
         * On the sweep's write for {@code agentId} (the UpdateItem that records its miss or its death), first sends a
         * real heartbeat for that agent through the gateway from another thread and waits for its answer: the
         * sweep has read, the heartbeat lands, then the sweep writes.
         */
        static final class HeartbeatInTheGap implements ExecutionInterceptor {
            final AtomicBoolean armed = new AtomicBoolean();
            final AtomicInteger fired = new AtomicInteger();
            final ExecutorService other = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "racing-heartbeat");
                t.setDaemon(true);
                return t;
            });
            volatile TestStack stack;
            volatile String agentId;
            volatile TestStack.Reply heartbeat;

            void arm(TestStack s, String id) {
                stack = s;
                agentId = id;
                heartbeat = null;
                armed.set(true);
            }

            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                // The sweep's write sets misses without a heartbeat time (a heartbeat sets both); recognised by what
                // it writes, not by its condition, so a sweep that forgot the condition is still raced.
                if (context.request() instanceof UpdateItemRequest u
                        && TestStack.agentPartition(agentId).equals(u.key().get("pk").s())
                        && u.updateExpression().contains("#misses =") && !u.updateExpression().contains("#hbAt")
                        && armed.compareAndSet(true, false)) {
                    fired.incrementAndGet();
                    try {
                        heartbeat = other.submit(() -> stack.heartbeat(agentId, "{}")).get(30, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException("the racing heartbeat did not complete", e);
                    }
                }
            }
        }

        @Test
        void sweep_whenHeartbeatLandsBetweenReadAndKill_agentStaysAlive_reportsRaceLost() throws Exception {
            HeartbeatInTheGap race = new HeartbeatInTheGap();
            TestStack s = STACKS.open(TestStack.builder().interceptor(race));
            readyAll(s, "racer");
            Sweeper sweeper = sweeper(s);
            s.clock.set(t(75));
            assertEquals(1, sweeper.sweepOnce().missesRecorded());
            long beatsSeen = Long.parseLong(s.agentItem("racer").get("beats").n());

            race.arm(s, "racer");
            s.clock.set(t(90));
            Sweeper.Report report = sweeper.sweepOnce();

            assertEquals(1, race.fired.get(), "the heartbeat was sent between the sweep's read and its write");
            assertEquals(200, race.heartbeat.status(), race.heartbeat.body().toString());
            assertEquals(List.of(), report.markedDead());
            assertEquals(1, report.raceLostToHeartbeat());
            assertEquals(0, report.missesRecorded());
            Map<String, AttributeValue> item = s.agentItem("racer");
            assertEquals("ready", item.get("status").s());
            assertEquals(null, item.get("misses"), "no misses (the beat removed the count)");
            assertEquals(beatsSeen + 1, Long.parseLong(item.get("beats").n()));
            assertEquals(t(150).toString(), s.agentView("racer").get("deadline").asText());
            s.pump.drain();
            assertEquals(List.of(), deaths(s, "racer"));
            assertEquals(List.of("join"), s.transitions("racer", 10).stream()
                    .map(tr -> tr.get("trigger").asText()).toList());
        }

        @Test
        void sweep_whenHeartbeatLandsBetweenReadAndMiss_missIsNotRecorded() throws Exception {
            HeartbeatInTheGap race = new HeartbeatInTheGap();
            TestStack s = STACKS.open(TestStack.builder().interceptor(race));
            readyAll(s, "racer");

            race.arm(s, "racer");
            assertEquals(List.of(), sweepAt(s, 75));

            assertEquals(1, race.fired.get());
            assertEquals(200, race.heartbeat.status());
            assertEquals(0, misses(s, "racer"), "the heartbeat reset the misses and the sweep's miss was refused");
            assertEquals(List.of(), sweepAt(s, 90));
            assertEquals(List.of(), sweepAt(s, 135));
            assertEquals(0, misses(s, "racer"));
            assertEquals(List.of(), sweepAt(s, 150));
            assertEquals(1, misses(s, "racer"));
        }
    }

    /** Cost. */
    @Nested
    class Cost {
        /** Records each DynamoDB operation while on. */
        static final class Operations implements ExecutionInterceptor {
            final List<String> seen = Collections.synchronizedList(new ArrayList<>());
            volatile boolean on;

            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (on) {
                    seen.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
                }
            }

            List<String> during(Runnable r) {
                seen.clear();
                on = true;
                try {
                    r.run();
                } finally {
                    on = false;
                }
                synchronized (seen) {
                    return List.copyOf(seen);
                }
            }

            static List<String> writes(List<String> ops) {
                Set<String> writes = Set.of("UpdateItem", "PutItem", "DeleteItem", "TransactWriteItems",
                        "BatchWriteItem");
                return ops.stream().filter(writes::contains).toList();
            }
        }

        @Test
        void sweep_whenNoAgentIsStale_writesNothing() throws Exception {
            Operations ops = new Operations();
            TestStack s = STACKS.open(TestStack.builder().interceptor(ops));
            readyAll(s, "h1", "h2", "h3", "h4", "h5", "late");
            ok(s.createTask("job"));
            ok(s.task("claim", "job", "{\"agentId\":\"h2\"}"));
            ok(s.team("register", "{\"agentId\":\"never\",\"name\":\"Never\",\"role\":\"worker\"}"));
            readyAll(s, "failed");
            ok(s.agent("fail", "failed", "{\"reason\":\"crashed\"}"));
            ok(s.team("put-settings", "{\"leaderAgentId\":\"h1\"}"));
            ok(s.team("register", "{\"agentId\":\"sched\",\"name\":\"S\",\"role\":\"worker\",\"schedule\":\"every:5m\"}"));
            ok(s.agent("join", "sched", null));
            s.pump.drain();

            s.clock.set(t(50));
            heartbeatAll(s, "h1", "h2", "h3", "h4", "h5");
            s.clock.set(t(59));

            List<String> healthy = ops.during(s::sweep);
            assertEquals(List.of(), Operations.writes(healthy), "operations: " + healthy);
            assertTrue(healthy.contains("Scan"));
            assertTrue(healthy.stream().allMatch("Scan"::equals), "a sweep of healthy agents only reads: " + healthy);

            // The same counter sees the sweep's write as soon as one agent is stale: one UpdateItem for it alone.
            s.clock.set(t(61));
            List<String> oneStale = ops.during(s::sweep);
            assertEquals(List.of("UpdateItem"), Operations.writes(oneStale), "operations: " + oneStale);
            assertEquals(1, misses(s, "late"));
        }
    }

    /** Pauses. */
    @Nested
    class Pauses {
        @Test
        void pauseAgent_holdsBackMissesAndDeath_untilResumed_thenKilledNormally() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "p1", "control");

            TestStack.Reply paused = ok(s.agent("pause-agent", "p1", "{\"seconds\":3600,\"reason\":\"kernel upgrade\"}"));
            assertEquals(t(3600).toString(), paused.text("pausedUntil"));
            assertEquals("kernel upgrade", paused.text("pauseReason"));
            JsonNode view = s.agentView("p1");
            assertEquals(t(3600).toString(), view.get("pausedUntil").asText());
            assertEquals("kernel upgrade", view.get("pauseReason").asText());

            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(TEAM + "/control"), sweepAt(s, 90), "the unpaused agent dies as usual");
            for (int sec = 105; sec <= 1200; sec += 75) {
                assertEquals(List.of(), sweepAt(s, sec));
            }
            assertEquals(0, misses(s, "p1"), "no miss counted while paused");
            assertEquals("ready", status(s, "p1"));

            s.clock.set(t(1201));
            JsonNode resumed = ok(s.agent("resume-agent", "p1", null)).body();
            assertFalse(resumed.has("pausedUntil"));
            view = s.agentView("p1");
            assertFalse(view.has("pausedUntil"), view.toString());
            assertFalse(view.has("pauseReason"), view.toString());

            assertEquals(List.of(), sweepAt(s, 1215));
            assertEquals(1, misses(s, "p1"));
            assertEquals(List.of(TEAM + "/p1"), sweepAt(s, 1230));
        }

        @Test
        void pauseAgent_whenWindowEnds_killedNormallyWithoutResume() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "p1");
            ok(s.agent("pause-agent", "p1", "{\"until\":\"" + t(120) + "\"}"));

            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(), sweepAt(s, 119.999));
            assertEquals(0, misses(s, "p1"));
            assertEquals(List.of(), sweepAt(s, 120), "the pause ends at its instant");
            assertEquals(1, misses(s, "p1"));
            assertEquals(List.of(TEAM + "/p1"), sweepAt(s, 135));
        }

        @Test
        void pauseAgent_doesNotHoldBackHeartbeats() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "p1");
            ok(s.agent("pause-agent", "p1", "{\"seconds\":600}"));
            s.clock.set(t(30));
            TestStack.Reply hb = ok(s.heartbeat("p1", "{\"status\":\"working\"}"));
            assertEquals("working", hb.text("agentStatus"));
            assertEquals(t(90).toString(), hb.text("nextDeadline"));
        }

        @Test
        void pauseTeam_holdsBackTheTeam_untilResumed_otherTeamUnaffected() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1", "a2");
            Team beta = Team.of(s, "beta");
            beta.ready("b1");

            JsonNode paused = ok(s.team("pause-team", "{\"seconds\":600,\"reason\":\"deploy\"}")).body();
            assertEquals(t(600).toString(), paused.get("pausedUntil").asText());
            JsonNode settings = ok(s.team("get-settings", null)).body();
            assertEquals(t(600).toString(), settings.get("pausedUntil").asText());
            assertEquals("deploy", settings.get("pauseReason").asText());

            sweepAt(s, 75);
            assertEquals(List.of("beta/b1"), sweepAt(s, 90), "the other team is swept as usual");
            for (int sec = 105; sec <= 300; sec += 15) {
                assertEquals(List.of(), sweepAt(s, sec));
            }
            assertEquals(0, misses(s, "a1"));
            assertEquals(0, misses(s, "a2"));

            s.clock.set(t(301));
            JsonNode resumed = ok(s.team("resume-team", null)).body();
            assertFalse(resumed.has("pausedUntil"));
            assertEquals(List.of(), sweepAt(s, 315));
            assertEquals(1, misses(s, "a1"));
            assertEquals(Set.of(TEAM + "/a1", TEAM + "/a2"), new HashSet<>(sweepAt(s, 330)));
        }

        @Test
        void pauseTeam_whenWindowEnds_sweepResumesByItself() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            ok(s.team("pause-team", "{\"seconds\":100}"));
            assertEquals(List.of(), sweepAt(s, 75));
            assertEquals(List.of(), sweepAt(s, 90));
            assertEquals(0, misses(s, "a1"));
            sweepAt(s, 105);
            assertEquals(1, misses(s, "a1"));
            assertEquals(List.of(TEAM + "/a1"), sweepAt(s, 120));
        }
    }

    /** Self-preservation. */
    @Nested
    class SelfPreservation {
        private static final String[] SIX = {"a1", "a2", "a3", "a4", "a5", "a6"};

        /** Six alive agents; a1..a4 stop at T0, a5 and a6 heartbeat before each sweep; sweeps at 75..120 s. */
        private static void fourOfSixGoSilent(TestStack s) {
            readyAll(s, SIX);
            for (int sec = 75; sec <= 120; sec += 15) {
                s.clock.set(t(sec));
                heartbeatAll(s, "a5", "a6");
                assertEquals(List.of(), s.sweep(), "held at " + sec + " s");
            }
        }

        @Test
        void selfPreservation_fourOfSixSilent_marksNone_countsNoMisses_raisesOneAlert() throws Exception {
            TestStack s = STACKS.open();
            fourOfSixGoSilent(s);

            for (String id : SIX) {
                assertEquals("ready", status(s, id), id);
                assertEquals(0, misses(s, id), id + ": held, so not even misses are counted");
            }
            s.pump.drain();
            List<LocalEventBus.Delivered> alerts = onBus(s, "MassStaleSuspected");
            assertEquals(1, alerts.size(), "one alert for the hold, however many sweeps it lasts");
            JsonNode d = alerts.get(0).event().get("detail");
            assertEquals(TEAM, d.get("team").asText());
            assertEquals(6, d.get("aliveAgents").asInt());
            assertEquals(4, d.get("staleAgents").asInt());
            assertEquals(0.5, d.get("threshold").asDouble());
            assertEquals(t(75).toString(), d.get("at").asText());
            assertEquals(1, eventLog(s, TEAM, s.adminKey, "MassStaleSuspected").get("count").asInt());
            assertEquals(List.of(), onBus(s, "AgentStatusChanged").stream()
                    .filter(e -> e.event().path("detail").path("to").asText().equals("dead")).toList());
        }

        @Test
        void selfPreservation_whenSilentOnesRecover_normalMarkingResumesForTheStillSilent() throws Exception {
            TestStack s = STACKS.open();
            fourOfSixGoSilent(s);

            // a1 and a2 come back: 2 of 6 stale is under the threshold.
            s.clock.set(t(135));
            heartbeatAll(s, "a1", "a2", "a5", "a6");
            assertEquals(List.of(), s.sweep());
            assertEquals(1, misses(s, "a3"));
            assertEquals(1, misses(s, "a4"));
            assertNull(s.item("TEAM#" + TEAM, "TEAM").get("massStaleSince"), "the hold has cleared");
            assertEquals(Set.of(TEAM + "/a3", TEAM + "/a4"), new HashSet<>(sweepAt(s, 150)));
            for (String id : List.of("a1", "a2", "a5", "a6")) {
                assertEquals("ready", status(s, id), id);
            }
            s.pump.drain();
            JsonNode death = deaths(s, "a3").get(0);
            assertTrue(death.get("reason").asText().contains("no heartbeat for 150 s"), death.toString());
            assertEquals(1, onBus(s, "MassStaleSuspected").size(), "clearing raises nothing");

            // A new hold later is a new alert: all four remaining agents go silent.
            for (int sec = 196; sec <= 226; sec += 15) {
                assertEquals(List.of(), sweepAt(s, sec));
            }
            s.pump.drain();
            List<LocalEventBus.Delivered> alerts = onBus(s, "MassStaleSuspected");
            assertEquals(2, alerts.size());
            assertEquals(4, alerts.get(1).event().get("detail").get("aliveAgents").asInt());
            assertEquals(4, alerts.get(1).event().get("detail").get("staleAgents").asInt());
        }

        @Test
        void selfPreservation_whenSilentOnesAreCleanedUp_normalMarkingResumesForTheRest() throws Exception {
            TestStack s = STACKS.open();
            fourOfSixGoSilent(s);

            // The operator reports a1 and a2 failed and cleans them up: 2 of the 4 still alive are stale (50%).
            for (String id : List.of("a1", "a2")) {
                ok(s.agent("fail", id, "{\"reason\":\"host gone\"}"));
                ok(s.agent("cleanup", id, null));
            }
            s.clock.set(t(135));
            heartbeatAll(s, "a5", "a6");
            assertEquals(List.of(), s.sweep());
            assertEquals(1, misses(s, "a3"));
            s.clock.set(t(150));
            heartbeatAll(s, "a5", "a6");
            assertEquals(Set.of(TEAM + "/a3", TEAM + "/a4"), new HashSet<>(s.sweep()));
            assertEquals("offline", status(s, "a1"));
            assertEquals("ready", status(s, "a5"));
        }

        @Test
        void selfPreservation_teamOfThree_isNeverHeld() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1", "a2", "a3");
            sweepAt(s, 75);
            assertEquals(Set.of(TEAM + "/a1", TEAM + "/a2", TEAM + "/a3"), new HashSet<>(sweepAt(s, 90)));
            s.pump.drain();
            assertEquals(List.of(), onBus(s, "MassStaleSuspected"));
        }

        @Test
        void selfPreservation_teamMinAliveSetting_holdsTeamOfThree() throws Exception {
            TestStack s = STACKS.open();
            JsonNode set = ok(s.team("put-settings", "{\"selfPreservationMinAlive\":3}")).body();
            assertEquals(3, set.get("selfPreservationMinAlive").asInt());
            assertEquals(3, ok(s.team("get-settings", null)).body().get("selfPreservationMinAlive").asInt());
            readyAll(s, "a1", "a2", "a3");
            for (int sec = 75; sec <= 120; sec += 15) {
                s.clock.set(t(sec));
                ok(s.heartbeat("a3", "{}"));
                assertEquals(List.of(), s.sweep());
            }
            assertEquals(0, misses(s, "a1"));
            s.pump.drain();
            List<LocalEventBus.Delivered> alerts = onBus(s, "MassStaleSuspected");
            assertEquals(1, alerts.size());
            assertEquals(3, alerts.get(0).event().get("detail").get("aliveAgents").asInt());
            assertEquals(2, alerts.get(0).event().get("detail").get("staleAgents").asInt());
        }

        @Test
        void selfPreservation_teamThresholdSetting_letsFourOfSixBeMarked() throws Exception {
            TestStack s = STACKS.open();
            ok(s.team("put-settings", "{\"selfPreservationThreshold\":0.8}"));
            readyAll(s, SIX);
            s.clock.set(t(75));
            heartbeatAll(s, "a5", "a6");
            assertEquals(List.of(), s.sweep());
            assertEquals(1, misses(s, "a1"));
            s.clock.set(t(90));
            heartbeatAll(s, "a5", "a6");
            assertEquals(Set.of(TEAM + "/a1", TEAM + "/a2", TEAM + "/a3", TEAM + "/a4"), new HashSet<>(s.sweep()));
            s.pump.drain();
            assertEquals(List.of(), onBus(s, "MassStaleSuspected"));
        }

        @Test
        void selfPreservation_serviceParameter_isTheDefault() throws Exception {
            TestStack s = STACKS.open(TestStack.builder().parameter("SelfPreservationThreshold", "0.9"));
            readyAll(s, SIX);
            s.clock.set(t(75));
            heartbeatAll(s, "a6");
            s.sweep();
            assertEquals(1, misses(s, "a1"), "5 of 6 is under 0.9: marked");
        }

        @Test
        void selfPreservation_oneTeamHeld_otherTeamsSweptNormally() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, SIX);
            Team beta = Team.of(s, "beta");
            beta.ready("b1", "b2", "b3", "b4");
            Team gamma = Team.of(s, "gamma");
            gamma.ready("g1", "g2");

            List<String> dead = new ArrayList<>();
            for (int sec = 75; sec <= 105; sec += 15) {
                s.clock.set(t(sec));
                heartbeatAll(s, "a5", "a6");
                beta.heartbeat("b2", "b3", "b4");
                dead.addAll(s.sweep());
            }
            assertEquals(Set.of("beta/b1", "gamma/g1", "gamma/g2"), new HashSet<>(dead));
            assertEquals("ready", beta.status("b2"));
            assertEquals(0, misses(s, "a1"));
            s.pump.drain();
            List<LocalEventBus.Delivered> alerts = onBus(s, "MassStaleSuspected");
            assertEquals(1, alerts.size());
            assertEquals(TEAM, alerts.get(0).event().get("detail").get("team").asText());
            assertEquals(0, eventLog(s, "beta", beta.key(), "MassStaleSuspected").get("count").asInt());
        }
    }

    /** Tasks handed back exactly once. */
    @Nested
    class TasksHandedBackOnce {
        @Test
        void death_withTask_handsItBackOnce_andReplayChangesNothing() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            ok(s.createTask("t1"));
            ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));

            sweepAt(s, 75);
            assertEquals(List.of(TEAM + "/a1"), sweepAt(s, 90));
            assertEquals("in_progress", task(s, "t1").get("status").asText(), "the outbox hands back, not the sweep");

            s.pump.drain();
            JsonNode t1 = task(s, "t1");
            assertEquals("pending", t1.get("status").asText());
            assertFalse(t1.has("assignee"), t1.toString());
            assertNull(s.agentItem("a1").get("taskId"), "the dead agent no longer holds it");
            List<JsonNode> events = reassigned(s);
            assertEquals(1, events.size());
            assertEquals("a1", events.get(0).get("fromAgentId").asText());
            assertEquals(List.of("t1"), List.of(events.get(0).get("taskIds").get(0).asText()));
            assertEquals(1, events.get(0).get("taskIds").size());
            assertEquals(1, deaths(s, "a1").size());

            Set<Map<String, AttributeValue>> before = new HashSet<>(s.allItems());
            int onBusBefore = s.bus.delivered().size();
            assertEquals(0, s.pump.drain());
            assertTrue(replay(s) > 0);
            s.pump.drain();
            assertEquals(before, new HashSet<>(s.allItems()), "the replay changed no item");
            assertEquals(onBusBefore, s.bus.delivered().size(), "the replay put no event on the bus");
            assertEquals(1, eventLog(s, TEAM, s.adminKey, "TasksReassigned").get("count").asInt());
            assertEquals(1, eventLog(s, TEAM, s.adminKey, "AgentStatusChanged").findValues("to").stream()
                    .filter(v -> v.asText().equals("dead")).count());
        }

        @Test
        void replay_afterAgentRejoinedAndReclaimedTheTask_doesNotHandItBackAgain() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            ok(s.createTask("t1"));
            ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));
            sweepAt(s, 75);
            sweepAt(s, 90);
            s.pump.drain();
            assertEquals("pending", task(s, "t1").get("status").asText());

            // The agent comes back and takes the same task again; then the stream is delivered again from the
            // start (a lost checkpoint): the old death must not take the task away from it a second time.
            s.clock.set(t(120));
            ok(s.agent("join", "a1", null));
            ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));
            s.pump.drain();
            replay(s);
            s.pump.drain();

            JsonNode t1 = task(s, "t1");
            assertEquals("in_progress", t1.get("status").asText(), t1.toString());
            assertEquals("a1", t1.get("assignee").asText());
            assertEquals("working", status(s, "a1"));
            assertEquals(1, reassigned(s).size());
        }
    }

    /** Leader inbox. */
    @Nested
    class LeaderInbox {
        @Test
        void death_withLeader_givesLeaderOneInboxMessage() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "lead", "a1");
            JsonNode settings = ok(s.team("put-settings", "{\"leaderAgentId\":\"lead\"}")).body();
            assertEquals("lead", settings.get("leaderAgentId").asText());
            ok(s.createTask("t1"));
            ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));

            for (int sec : new int[] {75, 90}) {
                s.clock.set(t(sec));
                ok(s.heartbeat("lead", "{}"));
                s.sweep();
            }
            assertEquals("dead", status(s, "a1"));
            s.pump.drain();

            JsonNode messages = ok(s.agent("inbox", "lead", null)).body().get("messages");
            assertEquals(1, messages.size(), messages.toString());
            JsonNode m = messages.get(0);
            assertEquals("a1", m.get("aboutAgentId").asText());
            String text = m.get("message").asText();
            assertTrue(text.contains("a1"), text);
            assertTrue(text.contains("no heartbeat for 90 s"), text);
            assertTrue(text.contains("t1"), text);
            assertEquals("t1", m.get("tasksHandedBack").get(0).asText());
            assertEquals(1, m.get("tasksHandedBack").size());
            assertEquals(t(90).toString(), m.get("at").asText());
            List<LocalEventBus.Delivered> notified = onBus(s, "LeaderNotified");
            assertEquals(1, notified.size());
            assertEquals("lead", notified.get(0).event().get("detail").get("leaderAgentId").asText());
            assertEquals("a1", notified.get(0).event().get("detail").get("aboutAgentId").asText());
            assertEquals(0, ok(s.agent("inbox", "a1", null)).body().get("messages").size());

            replay(s);
            s.pump.drain();
            assertEquals(1, ok(s.agent("inbox", "lead", null)).body().get("messages").size());
            assertEquals(1, onBus(s, "LeaderNotified").size());
        }

        @Test
        void death_withoutTask_leaderMessageSaysNoTasks() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "lead", "a1");
            ok(s.team("put-settings", "{\"leaderAgentId\":\"lead\"}"));
            s.clock.set(t(10));
            ok(s.agent("fail", "a1", "{\"reason\":\"segfault\"}"));
            s.pump.drain();
            JsonNode m = ok(s.agent("inbox", "lead", null)).body().get("messages").get(0);
            assertTrue(m.get("message").asText().contains("segfault"), m.toString());
            assertTrue(m.get("message").asText().contains("No tasks were handed back"), m.toString());
            assertEquals(0, m.get("tasksHandedBack").size());
        }

        @Test
        void leadersOwnDeath_givesNoSelfNotice() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "lead", "a1");
            ok(s.team("put-settings", "{\"leaderAgentId\":\"lead\"}"));
            for (int sec : new int[] {75, 90}) {
                s.clock.set(t(sec));
                ok(s.heartbeat("a1", "{}"));
                s.sweep();
            }
            assertEquals("dead", status(s, "lead"));
            s.pump.drain();
            assertEquals(1, deaths(s, "lead").size());
            assertEquals(0, ok(s.agent("inbox", "lead", null)).body().get("messages").size());
            assertEquals(List.of(), onBus(s, "LeaderNotified"));
        }
    }

    /** The fail route. */
    @Nested
    class FailRoute {
        @Test
        void fail_whenWorking_movesToDeadAtOnce_handsBackTaskViaOutbox() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            ok(s.createTask("t1"));
            ok(s.task("claim", "t1", "{\"agentId\":\"a1\"}"));
            String agentKey = s.key(TEAM, Scope.AGENT);
            s.clock.set(t(5));

            TestStack.Reply r = s.send("fail", agentKey, Map.of("team", TEAM, "agentId", "a1"), null,
                    "{\"reason\":\"OOM killed\"}");

            assertEquals(200, r.status(), r.body().toString());
            assertEquals("dead", r.text("status"));
            JsonNode last = r.body().get("lastTransition");
            assertEquals("working", last.get("from").asText());
            assertEquals("reported_failure", last.get("trigger").asText());
            assertTrue(last.get("reason").asText().contains("OOM killed"), last.toString());
            assertEquals(t(5).toString(), last.get("at").asText());
            assertEquals("in_progress", task(s, "t1").get("status").asText(), "handed back by the outbox");

            s.pump.drain();
            JsonNode t1 = task(s, "t1");
            assertEquals("pending", t1.get("status").asText());
            assertFalse(t1.has("assignee"));
            assertEquals(1, reassigned(s).size());
            List<JsonNode> deaths = deaths(s, "a1");
            assertEquals(1, deaths.size());
            assertEquals("reported_failure", deaths.get(0).get("trigger").asText());
            assertEquals(List.of(), sweepAt(s, 200), "a dead agent is not swept");
        }

        @Test
        void fail_whenReady_movesToDeadWithoutReason() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            TestStack.Reply r = ok(s.agent("fail", "a1", null));
            assertEquals("dead", r.text("status"));
            assertEquals("ready", r.body().get("lastTransition").get("from").asText());
            assertEquals("reported_failure", r.body().get("lastTransition").get("trigger").asText());
        }

        @Test
        void fail_whenNotAlive_answers409AndWritesNothing() throws Exception {
            TestStack s = STACKS.open();
            ok(s.register("off"));
            readyAll(s, "gone");
            ok(s.agent("fail", "gone", null));
            s.pump.drain();

            TestStack.Reply offline = s.writesNothing(() -> s.agent("fail", "off", "{\"reason\":\"x\"}"));
            assertEquals(409, offline.status(), offline.body().toString());
            assertEquals("INVALID_TRANSITION", offline.code());
            TestStack.Reply dead = s.writesNothing(() -> s.agent("fail", "gone", null));
            assertEquals(409, dead.status());
            assertEquals("INVALID_TRANSITION", dead.code());
        }

        @Test
        void fail_needsAgentScope() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            String readKey = s.key(TEAM, Scope.READ);
            Map<String, String> path = Map.of("team", TEAM, "agentId", "a1");

            TestStack.Reply read = s.writesNothing(() -> s.send("fail", readKey, path, null, null));
            assertEquals(403, read.status(), read.body().toString());
            TestStack.Reply none = s.writesNothing(() -> s.send("fail", null, path, null, null));
            assertEquals(401, none.status());
            String otherTeamsAgentKey = s.key("beta", Scope.AGENT);
            TestStack.Reply other = s.writesNothing(() -> s.send("fail", otherTeamsAgentKey, path, null, null));
            assertEquals(403, other.status());
            assertEquals("ready", status(s, "a1"));

            assertEquals(200, s.send("fail", s.key(TEAM, Scope.AGENT), path, null, null).status());
        }

        @Test
        void fail_unknownAgentOrBadBody_isRefused() throws Exception {
            TestStack s = STACKS.open();
            readyAll(s, "a1");
            TestStack.Reply unknown = s.writesNothing(() -> s.agent("fail", "nobody", null));
            assertEquals(404, unknown.status());
            assertEquals("AGENT_NOT_FOUND", unknown.code());
            TestStack.Reply bad = s.writesNothing(() -> s.agent("fail", "a1", "{\"why\":\"x\"}"));
            assertEquals(400, bad.status(), bad.body().toString());
            assertNotNull(bad.text("error"));
            assertEquals("ready", status(s, "a1"));
        }
    }
}
