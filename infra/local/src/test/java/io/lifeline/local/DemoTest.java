package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.support.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@code --demo} shows every status: with scaled timing, the simulated team goes through offline, ready,
 * working, dead, restarting and dead_failed_revive, the crashed agent its host restarts comes back, the
 * paused agent is never marked dead, and the context-limit report rotates a session.
 */
class DemoTest {
    @Test
    void demo_withScaledTiming_showsEveryStatus() throws Exception {
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", "2", "SweepIntervalMillis", "500"), Clock.systemUTC(), 0.05, true))) {
            Set<String> seen = new TreeSet<>();
            Instant giveUp = Instant.now().plusSeconds(90);
            while (Instant.now().isBefore(giveUp) && !(seen.size() == 6
                    && "ready".equals(status(local, Demo.REVIVED)) && seen.contains("dead_failed_revive"))) {
                for (JsonNode a : get(local, "/v1/teams/local/agents").get("agents")) {
                    seen.add(a.get("status").asText());
                    for (JsonNode t : get(local, "/v1/teams/local/agents/" + a.get("agentId").asText() + "/transitions")
                            .get("transitions")) {
                        seen.add(t.get("from").asText());
                        seen.add(t.get("to").asText());
                    }
                }
                Thread.sleep(250);
            }
            Set<String> all = new TreeSet<>();
            EnumSet.allOf(io.lifeline.agent.AgentStatus.class).forEach(s -> all.add(s.wire()));
            assertEquals(all, seen, "every status shows");
            assertEquals("ready", status(local, Demo.REVIVED), "its host restarted it");
            assertEquals("dead_failed_revive", status(local, Demo.LOST));
            assertEquals("offline", status(local, Demo.NEVER));
            JsonNode paused = get(local, "/v1/teams/local/agents/" + Demo.PAUSED);
            assertTrue(paused.get("alive").asBoolean(), "a paused agent is not marked dead: " + paused);
            assertTrue(paused.has("pausedUntil"));
            assertTrue(get(local, "/v1/teams/local/agents/" + Demo.CONTEXT).get("sessionRotations").asInt() >= 1);
            for (String w : Demo.WORKERS) {
                List<String> triggers = new java.util.ArrayList<>();
                get(local, "/v1/teams/local/agents/" + w + "/transitions").get("transitions")
                        .forEach(t -> triggers.add(t.get("trigger").asText()));
                assertTrue(triggers.contains("claim_task") && triggers.contains("task_complete"), w + ": " + triggers);
            }
        }
    }

    private static String status(LifelineLocal local, String agentId) throws Exception {
        return get(local, "/v1/teams/local/agents/" + agentId).get("status").asText();
    }

    private static JsonNode get(LifelineLocal local, String path) throws Exception {
        return Json.parse(local.gateway().handle("GET", path, "limit=100",
                Map.of("Authorization", List.of("Bearer " + local.adminKey())), null).body());
    }
}
