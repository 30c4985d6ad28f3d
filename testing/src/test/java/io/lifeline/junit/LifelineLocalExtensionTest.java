package io.lifeline.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The example docs/sdk.md shows, as an agent author would write it: an agent that beats stays alive, a silent one is
 * marked dead by the sweep and comes back when it joins again, all on the test clock. The class's tests share one
 * Local (one team), so each uses its own agent.
 */
@Tag("e2e")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifelineLocalExtensionTest {
    @RegisterExtension
    static final LifelineLocalExtension LIFELINE = LifelineLocalExtension.builder()
            .staleAfter(Duration.ofSeconds(30)).build();

    @Test
    void anAgentThatBeats_staysAlive(LocalLifeline lifeline) {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("steady", "Steady", "worker"));
        client.join("steady");
        for (int i = 0; i < 10; i++) {
            assertFalse(lifeline.elapse(Duration.ofSeconds(20)).contains("local/steady"));
            client.heartbeat("steady", Heartbeat.status("working"));
        }
        assertEquals("working", client.agent("steady").status());
    }

    @Test
    void aSilentAgent_isMarkedDead_thenComesBackByJoining(LocalLifeline lifeline) throws Exception {
        LifelineClient client = lifeline.client();
        client.register(RegisterAgent.of("quiet", "Quiet", "worker"));
        client.join("quiet");
        client.heartbeat("quiet", Heartbeat.status("working"));

        assertFalse(lifeline.elapse(Duration.ofSeconds(45)).contains("local/quiet"));
        assertEquals("working", client.agent("quiet").status(), "one miss is not a death");

        // Stale after 30 s and 2 grace misses (the template's default), a sweep every 15 s: dead within 2 minutes.
        assertTrue(lifeline.elapse(Duration.ofSeconds(75)).contains("local/quiet"));
        assertEquals("dead", client.agent("quiet").status());
        assertTrue(lifeline.eventually(Duration.ofSeconds(20), () -> deaths(client, "quiet") == 1),
                "one AgentStatusChanged to dead on the team's event log");

        LifelineApiException refused = assertThrows(LifelineApiException.class,
                () -> client.heartbeat("quiet", Heartbeat.status("working")));
        assertTrue(refused.rejoinRequired());
        client.join("quiet");
        assertEquals("ready", client.agent("quiet").status());
        assertTrue(client.agent("quiet").alive());
    }

    private static long deaths(LifelineClient client, String agentId) {
        List<EventView> events = client.events(EventQuery.all().withAgent(agentId).withType("AgentStatusChanged"))
                .events();
        return events.stream().filter(e -> "dead".equals(e.detail().path("to").asText())).count();
    }
}
