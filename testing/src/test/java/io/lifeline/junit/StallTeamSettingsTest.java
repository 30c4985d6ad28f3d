package io.lifeline.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.manager.ActivityState;
import io.lifeline.client.manager.HeartbeatManager;
import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A team's stall rule ({@code PUT settings}: {@code stallAfterSeconds}, {@code onStall}) is what an agent registered
 * after it without its own gets, as the allowances are: here 30 s and {@code restart}, so a wedged work loop is a
 * death with trigger {@code stalled} within 30 s plus one sweep, where the deployment's rule (120 s, alert) would
 * only have flagged it after 120 s.
 */
@Tag("e2e")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StallTeamSettingsTest {
    @RegisterExtension
    static final LifelineLocalExtension LIFELINE = LifelineLocalExtension.builder().build();

    @Test
    void theTeamsStallRule_isWhatAnAgentRegisteredAfterItGets(LocalLifeline lifeline) {
        LifelineClient client = lifeline.client();
        client.updateSettings(Map.of("stallAfterSeconds", 30, "onStall", "restart"));
        client.register(RegisterAgent.of("team-rule", "Team rule", "worker"));
        client.join("team-rule");
        HeartbeatManager manager = HeartbeatManager.builder(client, "team-rule").clock(lifeline.clock()).build();
        manager.setState(ActivityState.PROCESSING);
        manager.progress();
        manager.beatNow();
        List<String> dead = List.of();
        int sweeps = 0;
        while (dead.isEmpty() && sweeps < 8) {
            lifeline.advance(Duration.ofSeconds(15));
            manager.beatNow();
            dead = lifeline.sweep();
            sweeps++;
        }
        assertEquals(List.of("local/team-rule"), dead);
        assertEquals(3, sweeps, "30 s is not yet a stall; 45 s (30 s + one sweep) is");
        assertNotNull(client.agent("team-rule").lastTransition());
        assertEquals("stalled", client.agent("team-rule").lastTransition().trigger());
    }
}
