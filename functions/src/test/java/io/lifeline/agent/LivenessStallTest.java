package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The progress rule of {@link Liveness} at its boundaries: stalled one millisecond after the last progress plus the
 * threshold, not at it; never while a tool call is in flight, while waiting, while {@code ready}, or before any
 * progress was reported; and the sweep's decisions (raise once, restart only without a daemon, resolve once).
 */
@Tag("unit")
class LivenessStallTest {
    private static final Instant PROGRESS = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration STALL = Duration.ofSeconds(120);
    private static final Instant AT_THRESHOLD = PROGRESS.plus(STALL);

    private static Liveness.Progress progress(boolean tool) {
        return new Liveness.Progress(PROGRESS, tool, null);
    }

    private static Liveness.ProgressSeen seen(AgentStatus status, boolean tool, boolean waiting, boolean hosted,
                                              Liveness.OnStall onStall, Instant stalledSince) {
        return new Liveness.ProgressSeen("t", "a", status, progress(tool), waiting, hosted, null, onStall,
                stalledSince);
    }

    @Test
    void stalled_oneMillisecondAfterTheThreshold_notAtIt() {
        assertFalse(Liveness.stalled(AgentStatus.WORKING, progress(false), false, STALL, AT_THRESHOLD));
        assertTrue(Liveness.stalled(AgentStatus.WORKING, progress(false), false, STALL, AT_THRESHOLD.plusMillis(1)));
        assertFalse(Liveness.stalled(AgentStatus.WORKING, progress(false), false, STALL, PROGRESS));
    }

    @Test
    void aToolCallInFlight_waiting_ready_orNoProgressEverReported_isNeverAStall() {
        Instant late = AT_THRESHOLD.plus(Duration.ofHours(5));
        assertFalse(Liveness.stalled(AgentStatus.WORKING, progress(true), false, STALL, late), "tool in flight");
        assertFalse(Liveness.stalled(AgentStatus.WORKING, progress(false), true, STALL, late), "waiting");
        assertFalse(Liveness.stalled(AgentStatus.READY, progress(false), false, STALL, late), "ready");
        assertFalse(Liveness.stalled(AgentStatus.WORKING, null, false, STALL, late), "never reported progress");
        assertFalse(Liveness.stalled(AgentStatus.DEAD, progress(false), false, STALL, late), "not alive");
    }

    @Test
    void theAgentsOwnThreshold_winsOverTheDeployments() {
        Liveness.ProgressSeen own = new Liveness.ProgressSeen("t", "a", AgentStatus.WORKING, progress(false), false,
                false, Duration.ofSeconds(20), null, null);
        assertEquals(Duration.ofSeconds(20), Liveness.stallAfter(own, STALL));
        Instant now = PROGRESS.plusSeconds(20).plusMillis(1);
        assertEquals(List.of(own), Liveness.stalls(List.of(own), STALL, now).raise());
        assertEquals(List.of(), Liveness.stalls(List.of(own), STALL, PROGRESS.plusSeconds(20)).raise());
    }

    @Test
    void onStall_defaultsToRestartUnderADaemon_andAlertWithout() {
        assertEquals(Liveness.OnStall.ALERT, Liveness.onStall(seen(AgentStatus.WORKING, false, false, false, null,
                null)));
        assertEquals(Liveness.OnStall.RESTART, Liveness.onStall(seen(AgentStatus.WORKING, false, false, true, null,
                null)));
        assertEquals(Liveness.OnStall.ALERT, Liveness.onStall(seen(AgentStatus.WORKING, false, false, true,
                Liveness.OnStall.ALERT, null)));
    }

    @Test
    void stalls_raiseOnce_restartOnlyWithoutADaemon_andResolveOnce() {
        Instant now = AT_THRESHOLD.plusMillis(1);
        Liveness.ProgressSeen alert = seen(AgentStatus.WORKING, false, false, false, null, null);
        Liveness.ProgressSeen restart = seen(AgentStatus.WORKING, false, false, false, Liveness.OnStall.RESTART, null);
        Liveness.ProgressSeen raised = seen(AgentStatus.WORKING, false, false, false, null, now.minusSeconds(15));
        Liveness.ProgressSeen toolNow = seen(AgentStatus.WORKING, true, false, false, null, now.minusSeconds(15));
        Liveness.ProgressSeen died = seen(AgentStatus.DEAD, false, false, false, null, now.minusSeconds(15));
        Liveness.StallDecisions d = Liveness.stalls(List.of(alert, restart, raised, toolNow, died), STALL, now);
        assertEquals(List.of(alert, restart), d.raise(), "raised once: a standing stall is not raised again");
        assertEquals(List.of(restart), d.restart());
        assertEquals(List.of(toolNow, died), d.resolve());
    }

    @Test
    void aHostedAgent_isLeftToItsDaemonsProgress_theServerNeverRestartsIt() {
        Instant now = AT_THRESHOLD.plusMillis(1);
        Liveness.ProgressSeen hosted = seen(AgentStatus.WORKING, false, false, true, Liveness.OnStall.RESTART, null);
        Liveness.StallDecisions d = Liveness.stalls(List.of(hosted), STALL, now);
        assertEquals(List.of(), d.raise());
        assertEquals(List.of(), d.restart());
    }

    @Test
    void aHostedAgentsStall_isItsDaemonsToEnd_whileItIsInATurn_theSweepEndsItOnlyOnceItIsNot() {
        // Its item's last progress is old (the daemon's beats carry the newer to the lease, not the item): the sweep
        // does not resolve the daemon's stall from there, however long it lasts.
        Instant since = AT_THRESHOLD.plusSeconds(3);
        Instant now = since.plus(Duration.ofHours(1));
        Liveness.ProgressSeen working = seen(AgentStatus.WORKING, false, false, true, Liveness.OnStall.ALERT, since);
        Liveness.ProgressSeen dead = seen(AgentStatus.DEAD, false, false, true, Liveness.OnStall.ALERT, since);
        Liveness.ProgressSeen ready = seen(AgentStatus.READY, false, false, true, Liveness.OnStall.ALERT, since);
        Liveness.StallDecisions d = Liveness.stalls(List.of(working, dead, ready), STALL, now);
        assertEquals(List.of(), d.raise());
        assertEquals(List.of(dead, ready), d.resolve(), "died, or rejoined: its daemon could not say it ended");
    }

    @Test
    void aBeatsProgressAge_placesTheLastProgressBeforeTheBeat_neverAfterIt() {
        Instant beat = PROGRESS.plusSeconds(90);
        assertEquals(PROGRESS, Liveness.lastProgress(beat, Duration.ofSeconds(90)));
        assertEquals(beat, Liveness.lastProgress(beat, Duration.ZERO));
        assertEquals(beat, Liveness.lastProgress(beat, Duration.ofSeconds(-5)));
        assertEquals(null, Liveness.lastProgress(beat, null));
    }
}
