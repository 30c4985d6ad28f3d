package io.lifeline.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.RegisterAgent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Parked, not dead, at a usage limit, end to end on Lifeline Local and a test clock: an agent parked until a reset is
 * neither stale, dead nor stalled before the reset plus its stale-after, however long its silence, and is judged as any
 * silent agent after it when it never resumes; a runtime's usage-limit failure hook parks it until the reset its
 * message names, and its next activity resumes it. One {@code AgentParked} and one {@code AgentResumed} per park.
 */
@Tag("e2e")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ParkEndToEndTest {
    private static final Duration SWEEP = Duration.ofSeconds(15);
    private static final Duration STALE_AFTER = Duration.ofSeconds(60);

    @RegisterExtension
    static final LifelineLocalExtension LIFELINE = LifelineLocalExtension.builder()
            .parameter("StallAfterSeconds", "120").build();

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static int post(LocalLifeline lifeline, String path, String json) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create(lifeline.url() + "/v1/teams/" + lifeline.team() + path))
                .header("Authorization", "Bearer " + lifeline.apiKey()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        return HTTP.send(r, HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    private static long events(LifelineClient client, String agentId, String type) {
        return client.events(EventQuery.all().withAgent(agentId).withType(type)).events().size();
    }

    @Test
    void aParkedAgent_isNotStaleDeadOrStalledBeforeItsResetPlusStaleAfter_andDiesAfterItIfItNeverResumes(
            LocalLifeline lifeline) throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("limited", "Limited", "worker").withStaleAfterSeconds(STALE_AFTER.toSeconds()));
        client.join("limited");
        Instant until = lifeline.clock().instant().plus(Duration.ofMinutes(10));
        // In a turn, progressing now, then the provider's limit: parked; nothing more is heard from it.
        assertEquals(200, post(lifeline, "/agents/limited/heartbeat", "{\"status\": \"working\", \"progress\": true,"
                + " \"parked\": {\"until\": \"" + until + "\", \"reason\": \"usage limit\"}}"));
        AgentView parked = client.agent("limited");
        assertNotNull(parked.parked(), "parked");
        assertEquals(until, parked.parked().until());
        assertEquals("usage limit", parked.parked().reason());
        assertTrue(parked.deadline().compareTo(until.plus(STALE_AFTER)) >= 0, "its deadline: " + parked.deadline());

        Instant parkedDeadline = until.plus(STALE_AFTER);
        while (!lifeline.clock().instant().plus(SWEEP).isAfter(parkedDeadline)) {
            lifeline.advance(SWEEP);
            List<String> dead = lifeline.sweep();
            AgentView a = client.agent("limited");
            assertTrue(dead.isEmpty(), "no death while parked: " + dead + " at " + lifeline.clock().instant());
            assertEquals("working", a.status(), "alive while parked, at " + lifeline.clock().instant());
            assertNull(a.stalled(), "never stalled while parked (12 minutes without progress)");
            assertEquals(0, a.consecutiveMisses(), "not stale before its reset plus its stale-after");
        }
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> events(client, "limited", "AgentParked") == 1));
        assertEquals(0, events(client, "limited", "AgentStalled"));

        // Past the reset plus its stale-after and never resumed: judged as any silent agent (misses, then dead).
        String status = "working";
        for (int i = 0; i < 4 && !"dead".equals(status); i++) {
            lifeline.advance(SWEEP);
            lifeline.sweep();
            status = client.agent("limited").status();
        }
        assertEquals("dead", status, "dead once its park ran out");
        assertTrue(client.agent("limited").deadline().equals(parkedDeadline), "it died of the park's deadline");
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> events(client, "limited", "AgentResumed") == 1));
        EventView end = client.events(EventQuery.all().withAgent("limited").withType("AgentResumed")).events().get(0);
        assertEquals("ended", end.detail().path("state").asText(), end.detail().toString());
        assertEquals(1, events(client, "limited", "AgentParked"));
    }

    @Test
    void aRuntimesUsageLimitHook_parksUntilTheResetItsMessageNames_andItsNextActivityResumes(LocalLifeline lifeline)
            throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("hooked", "Hooked", "worker").withStaleAfterSeconds(STALE_AFTER.toSeconds()));
        assertEquals(200, post(lifeline, "/agents/hooked/hooks/claude-code",
                "{\"hook_event_name\": \"UserPromptSubmit\", \"session_id\": \"s-1\", \"prompt\": \"work\"}"));
        Instant at = lifeline.clock().instant();
        // Claude Code 2.1.197's StopFailure when its retries ran out on a 429 (the message is the API's).
        assertEquals(200, post(lifeline, "/agents/hooked/hooks/claude-code", "{\"hook_event_name\": \"StopFailure\", "
                + "\"session_id\": \"s-1\", \"error\": \"rate_limit\", \"last_assistant_message\": \"API Error: "
                + "Request rejected (429) \\u00b7 Rate limit reached. Please try again in 1h30m.\"}"));
        AgentView parked = client.agent("hooked");
        assertNotNull(parked.parked(), "parked by its runtime's usage-limit hook");
        assertEquals(at.plus(Duration.ofMinutes(90)), parked.parked().until(), "the reset its message names");
        assertTrue(parked.alive());

        lifeline.advance(Duration.ofMinutes(90));
        assertEquals(200, post(lifeline, "/agents/hooked/hooks/claude-code",
                "{\"hook_event_name\": \"UserPromptSubmit\", \"session_id\": \"s-1\", \"prompt\": \"continue\"}"));
        AgentView resumed = client.agent("hooked");
        assertNull(resumed.parked(), "resumed by its next activity");
        assertEquals("working", resumed.status());
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> events(client, "hooked", "AgentParked") == 1
                && events(client, "hooked", "AgentResumed") == 1));
        EventView end = client.events(EventQuery.all().withAgent("hooked").withType("AgentResumed")).events().get(0);
        assertEquals("resumed", end.detail().path("state").asText(), end.detail().toString());
    }
}
