package io.lifeline.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The sweep's figures derived from configuration: the spacing between two counted misses, and the revive
 * flow's longest possible run, past which the sweep ends a restart no flow is left to end.
 */
@Tag("unit")
class ConfigTest {

    private static Config config(Map<String, String> env) {
        Map<String, String> all = new HashMap<>(env);
        all.put("LIVE_TABLE", "live");
        all.put("LEDGER_TABLE", "ledger");
        return Config.fromEnvironment(all);
    }

    @Test
    void missSpacing_isThreeQuartersOfTheSweepInterval() {
        assertEquals(Duration.ofMillis(11_250), config(Map.of()).missSpacing());
        assertEquals(Duration.ofMillis(750), config(Map.of("SWEEP_INTERVAL_MS", "1000")).missSpacing());
    }

    @Test
    void reviveTaskWorstCase_isEveryRetryOfEveryRetrierAtTheTimeout() {
        assertEquals(Duration.ofSeconds(10 + 20 + 40 + 80 + 120 + 120 + 120 + 120),
                Config.REVIVE_TASK_RETRIERS.get(0).totalWait(), "SnapStartNotReady: capped at 120 s");
        assertEquals(Duration.ofSeconds(2 + 4 + 8), Config.REVIVE_TASK_RETRIERS.get(1).totalWait());
        assertEquals(Duration.ofSeconds(630 + 14 + 12 * 10), Config.reviveTaskWorstCase(),
                "1 + 8 + 3 invocations of 10 s");
    }

    @Test
    void reviveLongestRun_withTheDefaults_isTheWaitsPlusSixTasksAtTheirWorstPlusAMinute() {
        // Waits 30 + 60 + 120 s; Tasks: 3 Checks, Initiate, GiveUp, RecordError, each at worst 764 s; 60 s margin.
        assertEquals(Duration.ofSeconds(210 + 6 * 764 + 60), config(Map.of()).reviveLongestRun());
        assertEquals(Duration.parse("PT1H20M54S"), config(Map.of()).reviveLongestRun());
    }

    @Test
    void reviveLongestRun_followsTheReviveParameters() {
        Config one = config(Map.of("REVIVE_MAX_ATTEMPTS", "1", "REVIVE_BASE_WAIT_SECONDS", "5",
                "REVIVE_BACKOFF_RATE", "1"));
        assertEquals(Duration.ofSeconds(5 + 4 * 764 + 60), one.reviveLongestRun());
        Config steep = config(Map.of("REVIVE_MAX_ATTEMPTS", "4", "REVIVE_BASE_WAIT_SECONDS", "10",
                "REVIVE_BACKOFF_RATE", "1.5"));
        assertEquals(Duration.ofMillis(10_000 + 15_000 + 22_500 + 33_750).plusSeconds(7 * 764 + 60),
                steep.reviveLongestRun());
    }
}
