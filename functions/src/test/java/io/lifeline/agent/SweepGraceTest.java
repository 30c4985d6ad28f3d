package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.lifeline.agent.AgentStatus;
import io.lifeline.config.Config;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * After a start of the host, the sweep judges each alive agent against at least the start plus the window it
 * had at its last beat; with no start given (AWS) nothing changes.
 */
@Tag("unit")
class SweepGraceTest {
    static final Instant BEAT = Instant.parse("2026-11-24T10:00:00Z");
    static final Duration STALE_AFTER = Duration.ofSeconds(60);
    static final SweepPlan.Policy POLICY = new SweepPlan.Policy(0.5, 100);

    static SweepPlan.Observed agent(String id, Instant beat, Duration window) {
        return new SweepPlan.Observed("t", id, AgentStatus.READY, beat, beat.plus(window), 0, 2, 5, null);
    }

    @Test
    void afterStart_withNoStart_leavesEveryAgentAsItIs() {
        List<SweepPlan.Observed> agents = List.of(agent("a", BEAT, STALE_AFTER));
        assertSame(agents, SweepPlan.afterStart(agents, null));
    }

    @Test
    void afterStart_longerThanStaleAfterAfterTheLastBeat_givesOneFullWindowFromTheStart() {
        Instant start = BEAT.plus(Duration.ofMinutes(10));
        List<SweepPlan.Observed> moved = SweepPlan.afterStart(List.of(agent("a", BEAT, STALE_AFTER)), start);
        assertEquals(start.plus(STALE_AFTER), moved.get(0).deadline());
        // Judged within the window: not stale, no action. Just past it: stale, a miss.
        assertEquals(0, actions(moved, start.plus(STALE_AFTER)));
        assertEquals(1, actions(moved, start.plus(STALE_AFTER).plusMillis(1)));
        // Without the grace the same sweep right after the start would have counted a miss.
        assertEquals(1, actions(List.of(agent("a", BEAT, STALE_AFTER)), start.plusSeconds(1)));
    }

    @Test
    void afterStart_forAnAgentThatBeatSinceTheStart_orNeverBeat_keepsItsDeadline() {
        Instant start = BEAT.minusSeconds(10);
        SweepPlan.Observed a = agent("a", BEAT, Duration.ofHours(1)); // beat after the start, a schedule's long gap
        SweepPlan.Observed b = new SweepPlan.Observed("t", "b", AgentStatus.READY, null, null, 0, 2, 0, null);
        List<SweepPlan.Observed> moved = SweepPlan.afterStart(List.of(a, b), start);
        assertSame(a, moved.get(0));
        assertSame(b, moved.get(1));
    }

    @Test
    void config_readsTheStartOnlyWhenSet() {
        Map<String, String> env = Map.of("LIVE_TABLE", "live", "LEDGER_TABLE", "ledger");
        assertEquals(null, Config.fromEnvironment(env).sweepGraceFrom());
        assertEquals(null, Config.fromEnvironment(Map.of("LIVE_TABLE", "live", "LEDGER_TABLE", "ledger", "SWEEP_GRACE_FROM_MS", "0"))
                .sweepGraceFrom());
        assertEquals(Instant.ofEpochMilli(1_795_000_000_000L), Config.fromEnvironment(Map.of("LIVE_TABLE", "live", "LEDGER_TABLE", "ledger",
                "SWEEP_GRACE_FROM_MS", "1795000000000")).sweepGraceFrom());
    }

    private static int actions(List<SweepPlan.Observed> agents, Instant now) {
        return SweepPlan.decide(agents, Map.of(), POLICY, now).stream().mapToInt(o -> o.actions().size()).sum();
    }
}
