package io.lifeline.local.contract.alerts;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.LocalStepFunctions;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.model.EventBridgeException;
import software.amazon.awssdk.services.eventbridge.model.ReplayDestination;
import software.amazon.awssdk.services.eventbridge.model.StartReplayResponse;

/**
 * What the template's RetryPolicy and DeadLetterConfig mean, in Local: a rule target that fails is retried as its
 * policy says (an API destination's 404 not at all), one that fails past it lands in the delivery dead-letter
 * queue with its rule and error, and an archive replay to that rule (StartReplay, as {@code aws events start-replay}
 * sends it) delivers it once the target is fixed, to that rule only. The webhooks carry the generated secret.
 */
@Timeout(60)
@Tag("contract")
class DeliveryRetryTest {
    /** A request an endpoint received. */
    record Received(String path, Map<String, String> headers, JsonNode body) {
    }

    HttpServer server;
    final List<Received> received = new CopyOnWriteArrayList<>();
    /**
     * Per path: the statuses to answer a death with, in order (the last one repeats); 204 when none are set, and
     * to every other event (the alert webhook hears joins, hand-backs...).
     */
    final Map<String, List<Integer>> answers = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    TestStack stack;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                String path = exchange.getRequestURI().getPath();
                Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                exchange.getRequestHeaders().forEach((k, v) -> headers.put(k, v.get(0)));
                JsonNode body = Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                received.add(new Received(path, headers, body));
                int status = 204;
                if (body.path("detail").path("to").asText().equals("dead")) {
                    int n = calls.computeIfAbsent(path, p -> new AtomicInteger()).getAndIncrement();
                    List<Integer> plan = answers.getOrDefault(path, List.of(204));
                    status = plan.get(Math.min(n, plan.size() - 1));
                }
                exchange.sendResponseHeaders(status, -1);
            }
        });
        server.start();
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        stack = TestStack.builder()
                .parameter("AlertWebhookUrl", base + "/hook")
                .parameter("SlackWebhookUrl", base + "/slack")
                .parameter("RestartWebhookUrl", base + "/restart")
                .build();
        stack.bus.retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5));
    }

    @AfterEach
    void stop() {
        stack.close();
        server.stop(0);
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        Instant until = Instant.now().plus(Duration.ofSeconds(20));
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(until)) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    private List<Received> at(String path) {
        return received.stream().filter(r -> r.path().equals(path)).toList();
    }

    /** The deaths of {@code agentId} that {@code path} received. */
    private List<Received> deathsAt(String path, String agentId) {
        return at(path).stream().filter(r -> deathOf(r.body(), agentId)).toList();
    }

    private static boolean deathOf(JsonNode event, String agentId) {
        return event.path("detail").path("agentId").asText().equals(agentId)
                && event.path("detail").path("to").asText().equals("dead");
    }

    /** The agent reports a failure: one death, to every rule that wants deaths; waits until every target settled. */
    private void kill(String agentId) throws InterruptedException {
        killNoWait(agentId);
        await("every delivery settled", () -> stack.bus.inFlight() == 0);
    }

    private void killNoWait(String agentId) {
        ok(stack.ready(agentId));
        stack.clock.advance(Duration.ofSeconds(1));
        ok(stack.agent("fail", agentId, "{\"reason\":\"oom\"}"));
        stack.pump.drain();
    }

    @Test
    void alertWebhook_answering404_isNotRetried_andItsEventWaitsInTheDeadLetterQueue() throws Exception {
        answers.put("/hook", List.of(404));
        kill("a-404");

        assertEquals(1, deathsAt("/hook", "a-404").size(), "a 404 is not retried (EventBridge retries 401, 407, 409, 429 and 5xx only)");
        List<LocalEventBus.DeadLetter> letters = stack.bus.deadLetters().stream()
                .filter(d -> deathOf(d.event(), "a-404")).toList();
        assertEquals(1, letters.size(), stack.bus.deadLetters().toString());
        LocalEventBus.DeadLetter letter = letters.get(0);
        assertEquals("DeliveryDeadLetterQueue", letter.queue());
        assertEquals("AlertWebhookRule", letter.ruleId());
        assertEquals(LocalEventBus.ruleArn("AlertWebhookRule"), letter.ruleArn());
        assertEquals("ERROR_FROM_TARGET", letter.errorCode());
        assertTrue(letter.errorMessage().contains("404"), letter.errorMessage());
        assertEquals(0, letter.retryAttempts());
        assertEquals(1, at("/slack").stream().filter(r -> r.body().path("text").asText().contains("a-404")).count(),
                "the other targets took it");
        assertEquals(0, stack.bus.dropped());
    }

    @Test
    void alertWebhook_failingThenRecovering_isRetried_andNothingIsDeadLettered() throws Exception {
        answers.put("/hook", List.of(503, 429, 500, 204));
        kill("a-flaky");

        assertEquals(4, deathsAt("/hook", "a-flaky").size(),
                "three refusals, then the delivery");
        assertEquals(List.of(), stack.bus.deadLetters());
    }

    @Test
    void alertWebhook_failingPastItsRetryWindow_isDeadLettered() throws Exception {
        answers.put("/hook", List.of(503));
        // Slow retries, so the test clock can pass the window between two of them.
        stack.bus.retryBackoff(Duration.ofMillis(200), Duration.ofMillis(200));
        killNoWait("a-down");
        await("a first refusal", () -> !deathsAt("/hook", "a-down").isEmpty());
        assertEquals(List.of(), stack.bus.deadLetters(), "still retrying");
        stack.clock.advance(Duration.ofSeconds(Long.parseLong(
                TestStack.template().parameter("AlertRetryWindowSeconds", Map.of()))));
        await("the delivery given up", () -> stack.bus.inFlight() == 0);

        List<LocalEventBus.DeadLetter> letters = stack.bus.deadLetters();
        assertEquals(1, letters.size(), letters.toString());
        assertEquals("AlertWebhookRule", letters.get(0).ruleId());
        assertTrue(letters.get(0).retryAttempts() >= 1, "retried before the window closed");
        assertTrue(letters.get(0).retryAttempts() < 185, "the window, not the attempts, ended it");
    }

    /**
     * README, "When a delivery fails": the dead letter names the rule; fix the target, then replay the archive to
     * that rule over the event's time. The webhook gets the death once more (marked as a replay); Slack, which
     * took it the first time, gets nothing again.
     */
    @Test
    void deadLetteredEvent_replayedFromTheArchiveToItsRule_reachesTheFixedTarget_only() throws Exception {
        answers.put("/hook", List.of(404));
        kill("a-replay");
        LocalEventBus.DeadLetter letter = stack.bus.deadLetters().get(0);
        int slackBefore = at("/slack").size();
        assertEquals(1, deathsAt("/hook", "a-replay").size());

        answers.put("/hook", List.of(204));
        Instant from = stack.clock.instant().minusSeconds(60);
        Instant to = stack.clock.instant().plusSeconds(1);
        try (EventBridgeClient events = stack.bus.client()) {
            StartReplayResponse replay = events.startReplay(r -> r.replayName("fix-hook")
                    .eventSourceArn(LocalEventBus.ARCHIVE_ARN).eventStartTime(from).eventEndTime(to)
                    .destination(ReplayDestination.builder().arn("arn:aws:events:us-east-1:000000000000:event-bus/"
                            + LifelineLocal.EVENT_BUS_NAME).filterArns(letter.ruleArn()).build()));
            assertEquals("STARTING", replay.stateAsString());
        }
        await("the replay delivered", () -> stack.bus.inFlight() == 0 && deathsAt("/hook", "a-replay").size() > 1);
        stack.bus.purgeDeadLetters();

        List<Received> deaths = deathsAt("/hook", "a-replay");
        assertEquals(2, deaths.size(), "the first try (404) and the replay");
        assertEquals("fix-hook", deaths.get(1).body().path("replay-name").asText(), "a replayed event says so");
        assertFalse(deaths.get(0).body().has("replay-name"));
        assertEquals(slackBefore, at("/slack").size(), "the replay went to the named rule only");
        assertEquals(List.of(), stack.bus.deadLetters());
    }

    @Test
    void replay_withAWindowBeforeTheEvent_sendsNothing_andABackwardWindowIsRefused() throws Exception {
        kill("a-window");
        int hookBefore = at("/hook").size();
        Instant t = stack.clock.instant();
        assertEquals(0, stack.bus.startReplay("early", t.minusSeconds(3600), t.minusSeconds(60),
                List.of("AlertWebhookRule")));
        try (EventBridgeClient events = stack.bus.client()) {
            var e = Assertions.assertThrows(
                    EventBridgeException.class,
                    () -> events.startReplay(r -> r.replayName("backward").eventSourceArn(LocalEventBus.ARCHIVE_ARN)
                            .eventStartTime(t).eventEndTime(t.minusSeconds(1))
                            .destination(ReplayDestination.builder().arn("bus").build())));
            assertTrue(e.getMessage().contains("start before its end"), e.getMessage());
        }
        assertEquals(hookBefore, at("/hook").size());
    }

    /** A StartExecution that fails (throttled) is retried: the death still gets its revive flow. */
    @Test
    void reviveStart_failingTwice_isRetried_andTheFlowStarts() throws Exception {
        AtomicInteger failures = new AtomicInteger(2);
        stack.bus.startStateMachinesWith((machine, input) -> {
            if (failures.getAndDecrement() > 0) {
                throw new IllegalStateException("ThrottlingException: Rate exceeded");
            }
            stack.stepFunctions.start(LocalStepFunctions.arn(machine), null, input);
        });
        kill("a-revive");
        stack.stepFunctions.runDue();

        assertEquals("restarting", stack.status("a-revive"));
        assertEquals(1, stack.executionsFor("a-revive").size());
        assertTrue(failures.get() < 0, "both failures were spent");
        assertEquals(List.of(), stack.bus.deadLetters());
    }

    /**
     * The restart webhook sends the stack's generated secret in X-Lifeline-Token; a host compares it in constant
     * time (README's host example does the same) and acts only on a match.
     */
    @Test
    void restartWebhook_carriesTheGeneratedSecret_whichAHostCanVerify() throws Exception {
        kill("a-token");
        stack.stepFunctions.runDue();
        await("the restart request", () -> !at("/restart").isEmpty());

        Received request = at("/restart").get(0);
        assertEquals("AgentRestartRequested", request.body().path("detail-type").asText());
        String secret = stack.secrets().get("RestartWebhookSecret");
        assertEquals(48, secret.length());
        String token = request.headers().get("X-Lifeline-Token");
        assertTrue(MessageDigest.isEqual(secret.getBytes(StandardCharsets.UTF_8),
                token.getBytes(StandardCharsets.UTF_8)), "the host's check passes");
        assertFalse(MessageDigest.isEqual("lifeline".getBytes(StandardCharsets.UTF_8),
                token.getBytes(StandardCharsets.UTF_8)), "the old public constant no longer does");
        assertNotEquals(secret, stack.secrets().get("AlertWebhookSecret"), "one secret per destination");
        assertEquals(stack.secrets().get("AlertWebhookSecret"), at("/hook").get(0).headers().get("X-Lifeline-Token"));
        assertEquals(null, at("/slack").get(0).headers().get("X-Lifeline-Token"), "Slack gets no webhook secret");
    }
}
