package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The advice a join or heartbeat answers: an interval that is at most half of what the agent's deadline allows
 * (so following it keeps the agent alive), and a deadline that is always a time.
 */
@Tag("unit")
class HeartbeatAdviceTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

    private static Duration s(long seconds) {
        return Duration.ofSeconds(seconds);
    }

    private static Agent agent(Duration staleAfter, Instant deadline) {
        return new Agent("acme", "a-1", "Agent", "worker", null, AgentStatus.READY, NOW, deadline, 0, 1, staleAfter,
                2, null, AgentStats.NONE, NOW, null, null, null, null);
    }

    @ParameterizedTest(name = "interval {0}s, stale-after {1}s, agent {2}s, declared {3}s -> {4}s")
    @CsvSource(nullValues = "-", value = {
        // interval, deployment stale-after, agent's stale-after, declared, recommended
        "30, 60,  60,   -, 30",   // the defaults: half of 60 is 30
        "30,  4,   4,   -,  2",   // README's demo line, --param StaleAfterSeconds=4
        "30, 60,  10,   -,  5",   // the agent's own stale-after, below the deployment's
        "30, 60, 600,   -, 30",   // a long stale-after never raises the deployment's interval
        "30,  4, 600,   -, 30",   // the agent's own setting wins over the deployment default
        "30, 60,   3,   -,  1",   // 1.5 s rounds down
        "30, 60,   1,   -,  1",   // cannot halve 1 s in whole seconds: 1 s, the least we can say
        "30, 60,   0,   -, 30",   // unknown (an old item): the deployment's stale-after
        "30,  8,   0,   -,  4",
        "30, 60,  60,   6,  3",   // nextHeartbeatWithinSeconds sets this deadline, so it sets the pace
        "30, 60,  60, 900, 30",
        " 5, 60,  60,   -,  5",   // a deployment interval already short enough is kept
    })
    void interval_isTheDeploymentIntervalAtMostHalfTheAllowedTime(long interval, long deploymentStale,
                                                                   long agentStale, Long declared, long expected) {
        Duration d = HeartbeatAdvice.interval(s(interval), s(deploymentStale), s(agentStale),
                declared == null ? null : s(declared));
        assertEquals(s(expected), d);
    }

    @Test
    void interval_forEveryStaleAfterFrom2sTo2Days_leavesAtLeastOneBeatOfMargin() {
        for (long stale = 2; stale <= 2 * 24 * 3600; stale += stale < 120 ? 1 : 97) {
            Duration d = HeartbeatAdvice.interval(s(30), s(60), s(stale), null);
            assertTrue(d.multipliedBy(2).compareTo(s(stale)) <= 0, "stale-after " + stale + " s: " + d);
            assertTrue(d.compareTo(s(1)) >= 0 && d.compareTo(s(30)) <= 0, "stale-after " + stale + " s: " + d);
        }
    }

    @Test
    void answeredDeadline_withStoredDeadline_isIt() {
        Instant deadline = NOW.plusSeconds(60);
        assertEquals(deadline, HeartbeatAdvice.answeredDeadline(agent(s(60), deadline)));
    }

    @Test
    void answeredDeadline_withNoDeadline_isTheLargestRfc3339Time() {
        assertEquals("9999-12-31T23:59:59Z", HeartbeatAdvice.answeredDeadline(agent(s(60), null)).toString());
    }

    @Test
    void intervalSeconds_forAStoredAgent_usesItsStaleAfter() {
        assertEquals(5, HeartbeatAdvice.intervalSeconds(s(30), s(60), agent(s(10), null), null));
    }
}
