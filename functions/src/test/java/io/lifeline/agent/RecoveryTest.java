package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The crash-recovery answer. Boundaries: a checkpoint exactly {@code maxAge} old is still offered
 * ({@code age > maxAge} is too old); a session is active while the liveness rule holds it alive, so at its deadline
 * itself it is still active and the checkpoint is not offered, one millisecond later it is: the boundary of
 * {@link Liveness#stale}, the sweep and its lease condition (the deadline is the heartbeat plus staleAfter, or what
 * the agent declared).
 */
@Tag("unit")
class RecoveryTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration MAX_AGE = Duration.ofHours(24);
    private static final Duration STALE_AFTER = Duration.ofSeconds(60);
    private static final String CHECKPOINT = "{\"step\":3}";

    private static Agent agent(AgentStatus status, Instant heartbeatAt) {
        return new Agent("acme", "a-1", "Agent", "worker", "host-1", status, heartbeatAt,
                heartbeatAt == null ? null : heartbeatAt.plus(STALE_AFTER), 0, 1, STALE_AFTER, 2, null,
                AgentStats.NONE, NOW.minus(Duration.ofDays(2)), null, null, null, null);
    }

    private static Recovery.Answer decide(Agent a, Instant savedAt) {
        return Recovery.decide(a, CHECKPOINT, savedAt, MAX_AGE, NOW);
    }

    @Test
    void decide_noCheckpoint_noSavedState() {
        Recovery.Answer a = Recovery.decide(agent(AgentStatus.DEAD, NOW.minusSeconds(600)), null, null, MAX_AGE, NOW);
        assertFalse(a.available());
        assertEquals(Recovery.NO_SAVED_STATE, a.reason());
        assertNull(a.checkpointJson());
        assertNull(a.savedAt());
    }

    @Test
    void decide_checkpointWithoutTime_orTimeWithoutCheckpoint_noSavedState() {
        Agent dead = agent(AgentStatus.DEAD, NOW.minusSeconds(600));
        assertEquals(Recovery.NO_SAVED_STATE, Recovery.decide(dead, CHECKPOINT, null, MAX_AGE, NOW).reason());
        assertEquals(Recovery.NO_SAVED_STATE, Recovery.decide(dead, null, NOW, MAX_AGE, NOW).reason());
    }

    @Test
    void decide_checkpointOlderThanMaxAge_stateTooOld() {
        Instant savedAt = NOW.minus(MAX_AGE).minusMillis(1);
        Recovery.Answer a = decide(agent(AgentStatus.DEAD, savedAt), savedAt);
        assertFalse(a.available());
        assertEquals(Recovery.STATE_TOO_OLD, a.reason());
        assertNull(a.checkpointJson(), "a too-old checkpoint is not handed out");
        assertEquals(savedAt, a.savedAt());
    }

    @Test
    void decide_checkpointExactlyMaxAge_isStillOffered() {
        Instant savedAt = NOW.minus(MAX_AGE);
        Recovery.Answer a = decide(agent(AgentStatus.DEAD, savedAt), savedAt);
        assertTrue(a.available(), "age == maxAge is not 'too old' (strict >, as the crash-recovery protocol)");
        assertNull(a.reason());
        assertEquals(CHECKPOINT, a.checkpointJson());
        assertEquals(savedAt, a.savedAt());
    }

    @Test
    void decide_tooOldWinsOverStillActive() {
        Instant savedAt = NOW.minus(MAX_AGE).minusSeconds(1);
        assertEquals(Recovery.STATE_TOO_OLD, decide(agent(AgentStatus.READY, NOW), savedAt).reason());
    }

    @ParameterizedTest
    @EnumSource(value = AgentStatus.class, names = {"READY", "WORKING"})
    void decide_aliveWithRecentHeartbeat_sessionStillActive(AgentStatus status) {
        Instant beat = NOW.minus(STALE_AFTER).plusMillis(1);
        Recovery.Answer a = decide(agent(status, beat), NOW.minusSeconds(5));
        assertFalse(a.available());
        assertEquals(Recovery.SESSION_STILL_ACTIVE, a.reason());
        assertNull(a.checkpointJson());
        assertEquals(NOW.minusSeconds(5), a.savedAt());
    }

    @ParameterizedTest
    @EnumSource(value = AgentStatus.class, names = {"READY", "WORKING"})
    void decide_aliveExactlyAtItsDeadline_isStillActive_asLivenessJudgesIt(AgentStatus status) {
        // heartbeat age == staleAfter: the deadline is now, and the agent is not stale at its deadline (the sweep
        // counts no miss), so its session is still active and the checkpoint is not handed out.
        Agent atDeadline = agent(status, NOW.minus(STALE_AFTER));
        assertFalse(Liveness.stale(atDeadline.deadline(), NOW), "the rule: alive at the deadline itself");
        Recovery.Answer a = decide(atDeadline, NOW.minusSeconds(90));
        assertFalse(a.available());
        assertEquals(Recovery.SESSION_STILL_ACTIVE, a.reason());
        assertNull(a.checkpointJson());
    }

    @ParameterizedTest
    @EnumSource(value = AgentStatus.class, names = {"READY", "WORKING"})
    void decide_aliveOneMillisecondPastItsDeadline_isOffered_asLivenessJudgesItStale(AgentStatus status) {
        Agent past = agent(status, NOW.minus(STALE_AFTER).minusMillis(1));
        assertTrue(Liveness.stale(past.deadline(), NOW), "the rule: stale just after the deadline");
        Recovery.Answer a = decide(past, NOW.minusSeconds(90));
        assertTrue(a.available());
        assertEquals(CHECKPOINT, a.checkpointJson());
    }

    @ParameterizedTest
    @EnumSource(value = AgentStatus.class, names = {"READY", "WORKING"})
    void decide_aliveWithStaleHeartbeat_isOffered(AgentStatus status) {
        Recovery.Answer a = decide(agent(status, NOW.minus(STALE_AFTER).minusSeconds(30)), NOW.minusSeconds(100));
        assertTrue(a.available());
        assertNull(a.reason());
    }

    @ParameterizedTest
    @EnumSource(value = AgentStatus.class, names = {"OFFLINE", "DEAD", "RESTARTING", "DEAD_FAILED_REVIVE"})
    void decide_notAlive_isOfferedEvenWithRecentHeartbeat(AgentStatus status) {
        // Not alive means the session ended, whatever the last heartbeat's age.
        Recovery.Answer a = decide(agent(status, NOW.minusSeconds(1)), NOW.minusSeconds(1));
        assertTrue(a.available());
        assertEquals(CHECKPOINT, a.checkpointJson());
        assertEquals(NOW.minusSeconds(1), a.savedAt());
    }

    @Test
    void decide_aliveButNeverBeat_isOffered() {
        assertTrue(decide(agent(AgentStatus.READY, null), NOW.minusSeconds(1)).available());
    }

    @Test
    void decide_usesTheAgentsOwnStaleAfter() {
        Agent slow = new Agent("acme", "a-2", "Agent", "worker", null, AgentStatus.WORKING, NOW.minusSeconds(200),
                NOW.plusSeconds(100), 0, 1, Duration.ofSeconds(300), 2, null, AgentStats.NONE, NOW, null, null, null, null);
        assertEquals(Recovery.SESSION_STILL_ACTIVE, decide(slow, NOW.minusSeconds(10)).reason());
    }

    @Test
    void decide_followsTheStoredDeadline() {
        // An agent that declared nextHeartbeatWithinSeconds=600 beat 120 s ago: its deadline is 480 s away,
        // so its session is still active although its staleAfter (60 s) has long passed.
        Agent scheduled = new Agent("acme", "a-3", "Agent", "worker", null, AgentStatus.WORKING,
                NOW.minusSeconds(120), NOW.plusSeconds(480), 0, 1, STALE_AFTER, 2, null, AgentStats.NONE, NOW, null, null, null, null);
        assertEquals(Recovery.SESSION_STILL_ACTIVE, decide(scheduled, NOW.minusSeconds(120)).reason());
    }
}
