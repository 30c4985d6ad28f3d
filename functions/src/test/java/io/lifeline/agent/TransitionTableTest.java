package io.lifeline.agent;

import static io.lifeline.agent.AgentStatus.DEAD;
import static io.lifeline.agent.AgentStatus.DEAD_FAILED_REVIVE;
import static io.lifeline.agent.AgentStatus.OFFLINE;
import static io.lifeline.agent.AgentStatus.READY;
import static io.lifeline.agent.AgentStatus.RESTARTING;
import static io.lifeline.agent.AgentStatus.WORKING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transition table against the state machine as documented (docs/state-machine.md), row by row, and the wire
 * vocabulary around it.
 */
@Tag("unit")
class TransitionTableTest {

    /** One row of the documented table, written out again here so the test does not read the code's table. */
    private record Row(Set<AgentStatus> from, AgentStatus to, Trigger trigger, String actor) {
    }

    /**
     * The documented table. The row "ready -> working: claim_task (or heartbeat status working)" is two
     * triggers in code (claim_task, report_working); likewise "working -> ready" (task_complete, report_ready).
     */
    private static final List<Row> DESIGN = List.of(
            new Row(EnumSet.of(OFFLINE, DEAD, RESTARTING, DEAD_FAILED_REVIVE), READY, Trigger.JOIN, "agent"),
            new Row(EnumSet.of(READY), WORKING, Trigger.CLAIM_TASK, "agent"),
            new Row(EnumSet.of(READY), WORKING, Trigger.REPORT_WORKING, "agent"),
            new Row(EnumSet.of(WORKING), READY, Trigger.TASK_COMPLETE, "agent"),
            new Row(EnumSet.of(WORKING), READY, Trigger.REPORT_READY, "agent"),
            new Row(EnumSet.of(READY, WORKING), DEAD, Trigger.HEARTBEAT_EXPIRED, "sweep"),
            new Row(EnumSet.of(WORKING), DEAD, Trigger.STALLED, "sweep, or host"),
            // A later row: a host that knows its agent crashed reports it.
            new Row(EnumSet.of(READY, WORKING), DEAD, Trigger.REPORTED_FAILURE, "host"),
            new Row(EnumSet.of(READY, WORKING), OFFLINE, Trigger.LEAVE, "agent"),
            // A later row: a host's daemon gives up on a crash-looping agent.
            new Row(EnumSet.of(READY, WORKING, DEAD, RESTARTING), DEAD_FAILED_REVIVE, Trigger.HOST_GAVE_UP, "host"),
            // A widened row: a manual revive restarts a dead_failed_revive agent too.
            new Row(EnumSet.of(DEAD, DEAD_FAILED_REVIVE), RESTARTING, Trigger.RESTART_INITIATED, "revive flow"),
            new Row(EnumSet.of(RESTARTING), DEAD_FAILED_REVIVE, Trigger.RESTART_EXHAUSTED, "revive flow, or the sweep"),
            new Row(EnumSet.of(DEAD, DEAD_FAILED_REVIVE), OFFLINE, Trigger.CLEANUP, "operator"));

    @Test
    void rules_matchDesignSection2_rowByRow() {
        Map<Trigger, Row> expected = new EnumMap<>(Trigger.class);
        DESIGN.forEach(r -> assertEquals(null, expected.put(r.trigger(), r), "design rows name each trigger once"));
        assertEquals(EnumSet.allOf(Trigger.class), expected.keySet(), "every trigger has a design row");
        for (Trigger t : Trigger.values()) {
            TransitionTable.Rule rule = TransitionTable.rule(t);
            Row row = expected.get(t);
            assertNotNull(rule, "no rule for " + t);
            assertEquals(t, rule.trigger(), "rule(" + t + ") is filed under its own trigger");
            assertEquals(row.from(), rule.from(), "from-states of " + t);
            assertEquals(row.to(), rule.to(), "target of " + t);
            assertEquals(row.actor(), rule.actor(), "actor of " + t);
        }
    }

    @Test
    void allowedPairs_areExactlyTheDesignPairs() {
        Set<String> design = new HashSet<>();
        DESIGN.forEach(r -> r.from().forEach(f -> design.add(f.wire() + " -" + r.trigger().wire() + "-> "
                + r.to().wire())));
        Set<String> code = new HashSet<>();
        for (AgentStatus from : AgentStatus.values()) {
            for (Trigger t : Trigger.values()) {
                for (AgentStatus to : AgentStatus.values()) {
                    if (TransitionTable.allows(from, t, to)) {
                        code.add(from.wire() + " -" + t.wire() + "-> " + to.wire());
                    }
                }
            }
        }
        assertEquals(design, code);
        assertEquals(24, code.size(), "the documented table (with the two heartbeat-report triggers, reported_failure,"
                + " manual revive from dead_failed_revive, a host's give-up and a stall's restart) allows 24 pairs");
    }

    @Test
    void rules_listEveryTriggerOnce_eachWithOneTarget() {
        List<TransitionTable.Rule> rules = TransitionTable.rules();
        assertEquals(Trigger.values().length, rules.size());
        List<Trigger> triggers = new ArrayList<>();
        rules.forEach(r -> triggers.add(r.trigger()));
        assertEquals(EnumSet.allOf(Trigger.class), EnumSet.copyOf(triggers));
        for (TransitionTable.Rule r : rules) {
            assertNotNull(r.to(), r.trigger() + " has a target");
            assertFalse(r.from().isEmpty(), r.trigger() + " has a from-state");
            assertFalse(r.from().contains(r.to()), r.trigger() + " never loops to its own from-state");
            assertEquals(r, TransitionTable.rule(r.trigger()), "rules() and rule() agree for " + r.trigger());
            // Exactly one target: for each allowed from-state, exactly one `to` is allowed.
            for (AgentStatus from : r.from()) {
                long targets = EnumSet.allOf(AgentStatus.class).stream()
                        .filter(to -> TransitionTable.allows(from, r.trigger(), to)).count();
                assertEquals(1, targets, r.trigger() + " from " + from);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Trigger.class)
    void allows_agreesWithRule_forEveryFromAndTo(Trigger trigger) {
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        for (AgentStatus from : AgentStatus.values()) {
            for (AgentStatus to : AgentStatus.values()) {
                assertEquals(rule.allows(from) && rule.to() == to, TransitionTable.allows(from, trigger, to),
                        from + " -" + trigger + "-> " + to);
            }
        }
    }

    @Test
    void rules_areImmutable() {
        assertThrows(UnsupportedOperationException.class, () -> TransitionTable.rule(Trigger.JOIN).from().add(READY));
        assertThrows(UnsupportedOperationException.class, () -> TransitionTable.rules().clear());
    }

    @Test
    void aliveStates_areReadyAndWorkingOnly() {
        assertEquals(EnumSet.of(READY, WORKING), EnumSet.copyOf(
                EnumSet.allOf(AgentStatus.class).stream().filter(AgentStatus::isAlive).toList()));
    }

    @Test
    void aliveAgents_canAlwaysDieOrLeave_andDeadOnesCanAlwaysJoin() {
        for (AgentStatus s : AgentStatus.values()) {
            if (s.isAlive()) {
                assertTrue(TransitionTable.rule(Trigger.HEARTBEAT_EXPIRED).allows(s), s + " can expire");
                assertTrue(TransitionTable.rule(Trigger.LEAVE).allows(s), s + " can leave");
                assertFalse(TransitionTable.rule(Trigger.JOIN).allows(s), s + " cannot join again");
            } else {
                assertTrue(TransitionTable.rule(Trigger.JOIN).allows(s), s + " can join (self-healing)");
            }
        }
    }

    @Test
    void reportTrigger_mapsReportedStatusToItsTrigger() {
        assertEquals(Trigger.REPORT_WORKING, TransitionTable.reportTrigger(WORKING));
        assertEquals(Trigger.REPORT_READY, TransitionTable.reportTrigger(READY));
        assertEquals(WORKING, TransitionTable.rule(TransitionTable.reportTrigger(WORKING)).to());
        assertEquals(READY, TransitionTable.rule(TransitionTable.reportTrigger(READY)).to());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ready", "idle"})
    void fromReported_readyAndIdle_meanReady(String value) {
        assertEquals(Optional.of(READY), AgentStatus.fromReported(value));
    }

    @ParameterizedTest
    @ValueSource(strings = {"working", "active"})
    void fromReported_workingAndActive_meanWorking(String value) {
        assertEquals(Optional.of(WORKING), AgentStatus.fromReported(value));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"offline", "dead", "restarting", "dead_failed_revive", "inactive", "terminated",
            "READY", "Working", " ready", "ready ", "busy", "waiting"})
    void fromReported_anythingElse_isRefused(String value) {
        assertEquals(Optional.empty(), AgentStatus.fromReported(value));
    }

    @ParameterizedTest
    @EnumSource(AgentStatus.class)
    void statusWire_roundTrips(AgentStatus s) {
        assertEquals(s.name().toLowerCase(Locale.ROOT), s.wire());
        assertEquals(Optional.of(s), AgentStatus.fromWire(s.wire()));
    }

    @ParameterizedTest
    @EnumSource(Trigger.class)
    void triggerWire_roundTrips(Trigger t) {
        assertEquals(t.name().toLowerCase(Locale.ROOT), t.wire());
        assertEquals(Optional.of(t), Trigger.fromWire(t.wire()));
    }

    @Test
    void wire_vocabulary_isExactlyTheSixStatusesAndThirteenTriggers() {
        assertEquals(List.of("offline", "ready", "working", "dead", "restarting", "dead_failed_revive"),
                EnumSet.allOf(AgentStatus.class).stream().map(AgentStatus::wire).toList());
        assertEquals(Set.of("join", "claim_task", "task_complete", "report_working", "report_ready",
                        "heartbeat_expired", "stalled", "reported_failure", "host_gave_up", "leave", "restart_initiated",
                        "restart_exhausted", "cleanup"),
                Set.copyOf(EnumSet.allOf(Trigger.class).stream().map(Trigger::wire).toList()));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"OFFLINE", "Ready", "idle", "active", "inactive", "terminated", "dead-failed-revive"})
    void statusFromWire_unknownOrAlias_isEmpty(String value) {
        assertEquals(Optional.empty(), AgentStatus.fromWire(value));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"JOIN", "claim", "complete", "heartbeat", "expired"})
    void triggerFromWire_unknown_isEmpty(String value) {
        assertEquals(Optional.empty(), Trigger.fromWire(value));
    }
}
