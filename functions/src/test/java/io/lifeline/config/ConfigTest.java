package io.lifeline.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sweep's figures derived from configuration: the spacing between two counted misses, and the revive
 * flow's longest possible run, past which the sweep ends a restart no flow is left to end.
 */
class ConfigTest {

    private static Config config(Map<String, String> env) {
        java.util.Map<String, String> all = new java.util.HashMap<>(env);
        all.put("TABLE_NAME", "t");
        return Config.fromEnvironment(all);
    }

    @Test
    void missSpacing_isThreeQuartersOfTheSweepInterval() {
        assertEquals(Duration.ofMillis(11_250), config(Map.of()).missSpacing());
        assertEquals(Duration.ofMillis(750), config(Map.of("SWEEP_INTERVAL_MS", "1000")).missSpacing());
    }

    @Test
    void reviveLongestRun_withTheDefaults_isTheWaitsPlusSevenTasksAtTheirWorstPlusAMinute() {
        // Waits 30 + 60 + 120 s; Tasks: 3 Checks + Initiate, GiveUp, RecordError and a spare, each at worst
        // 4 invocations of 10 s and retry waits of 2 + 4 + 8 s; a 60 s margin.
        assertEquals(Duration.ofSeconds(210 + 7 * 54 + 60), config(Map.of()).reviveLongestRun());
    }

    @Test
    void reviveLongestRun_followsTheReviveParameters() {
        Config one = config(Map.of("REVIVE_MAX_ATTEMPTS", "1", "REVIVE_BASE_WAIT_SECONDS", "5",
                "REVIVE_BACKOFF_RATE", "1"));
        assertEquals(Duration.ofSeconds(5 + 5 * 54 + 60), one.reviveLongestRun());
        Config steep = config(Map.of("REVIVE_MAX_ATTEMPTS", "4", "REVIVE_BASE_WAIT_SECONDS", "10",
                "REVIVE_BACKOFF_RATE", "1.5"));
        assertEquals(Duration.ofMillis(10_000 + 15_000 + 22_500 + 33_750).plusSeconds(8 * 54 + 60),
                steep.reviveLongestRun());
    }
}
