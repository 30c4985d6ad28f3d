package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.AgentStatus;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code --demo} shows every status: with scaled timing, the simulated team goes through offline, ready,
 * working, dead, restarting and dead_failed_revive, the crashed agent its host restarts comes back, the one
 * with no host comes back by itself, the paused agent is never marked dead, and the context-limit report
 * rotates a session. Each status is held for a few seconds at least once (read from the transitions'
 * timestamps), so a dashboard polling every 2 s shows it.
 */
@Tag("e2e")
class DemoTest {
    @Test
    void demo_withScaledTiming_showsEveryStatus() throws Exception {
        Set<String> all = new TreeSet<>();
        EnumSet.allOf(AgentStatus.class).forEach(s -> all.add(s.wire()));
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of("StaleAfterSeconds", "2", "SweepIntervalMillis", "500"), Clock.systemUTC(), 0.05, true))) {
            Set<String> seen = new TreeSet<>();
            Instant giveUp = Instant.now().plusSeconds(90);
            while (Instant.now().isBefore(giveUp) && !(seen.size() == 6
                    && "ready".equals(status(local, Demo.REVIVED)) && seen.contains("dead_failed_revive")
                    && "ready".equals(status(local, Demo.UNHOSTED)) && died(local, Demo.UNHOSTED))) {
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
            assertEquals(all, seen, "every status shows");
            assertEquals("ready", status(local, Demo.REVIVED), "its host restarted it");
            assertEquals("ready", status(local, Demo.UNHOSTED), "it came back by itself");
            assertTrue(died(local, Demo.UNHOSTED));
            // A status entered just now (the unrecoverable end, say) is still being held: give it its seconds.
            Map<String, Double> held = longestHolds(local);
            while (Instant.now().isBefore(giveUp) && held.values().stream().anyMatch(s -> s < 3.0)) {
                Thread.sleep(250);
                held = longestHolds(local);
            }
            for (String status : all) {
                assertTrue(held.getOrDefault(status, 0.0) >= 3.0, status + " held at least 3 s once: " + held);
            }
            assertEquals("dead_failed_revive", status(local, Demo.LOST));
            assertEquals("offline", status(local, Demo.NEVER));
            JsonNode paused = get(local, "/v1/teams/local/agents/" + Demo.PAUSED);
            assertTrue(paused.get("alive").asBoolean(), "a paused agent is not marked dead: " + paused);
            assertTrue(paused.has("pausedUntil"));
            assertTrue(get(local, "/v1/teams/local/agents/" + Demo.CONTEXT).get("sessionRotations").asInt() >= 1);
            for (String w : Demo.WORKERS) {
                List<String> triggers = new ArrayList<>();
                get(local, "/v1/teams/local/agents/" + w + "/transitions").get("transitions")
                        .forEach(t -> triggers.add(t.get("trigger").asText()));
                assertTrue(triggers.contains("claim_task") && triggers.contains("task_complete"), w + ": " + triggers);
            }
        }
    }

    private static boolean died(LifelineLocal local, String agentId) throws Exception {
        for (JsonNode t : get(local, "/v1/teams/local/agents/" + agentId + "/transitions").get("transitions")) {
            if ("dead".equals(t.get("to").asText())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Per status, the longest time (seconds) any agent spent in it: from each transition into it to the next
     * transition (or to now for the status it still holds); offline from registration for an agent never joined.
     */
    private static Map<String, Double> longestHolds(LifelineLocal local) throws Exception {
        Map<String, Double> held = new HashMap<>();
        Instant now = Instant.now();
        for (JsonNode a : get(local, "/v1/teams/local/agents").get("agents")) {
            List<JsonNode> ts = new ArrayList<>();
            get(local, "/v1/teams/local/agents/" + a.get("agentId").asText() + "/transitions").get("transitions")
                    .forEach(ts::add);
            ts.sort(Comparator.comparingLong(t -> t.get("seq").asLong()));
            if (ts.isEmpty()) {
                hold(held, a.get("status").asText(), Instant.parse(a.get("registeredAt").asText()), now);
            }
            for (int i = 0; i < ts.size(); i++) {
                Instant from = Instant.parse(ts.get(i).get("at").asText());
                Instant to = i + 1 < ts.size() ? Instant.parse(ts.get(i + 1).get("at").asText()) : now;
                hold(held, ts.get(i).get("to").asText(), from, to);
            }
        }
        return held;
    }

    private static void hold(Map<String, Double> held, String status, Instant from, Instant to) {
        held.merge(status, Duration.between(from, to).toMillis() / 1000.0, Math::max);
    }

    private static String status(LifelineLocal local, String agentId) throws Exception {
        return get(local, "/v1/teams/local/agents/" + agentId).get("status").asText();
    }

    private static JsonNode get(LifelineLocal local, String path) throws Exception {
        return Json.parse(local.gateway().handle("GET", path, "limit=100",
                Map.of("Authorization", List.of("Bearer " + local.adminKey())), null).body());
    }
}
