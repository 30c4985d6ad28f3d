package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.Transition;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.app.AgentFlaps;
import io.lifeline.app.AlertBursts;
import io.lifeline.app.EventCatalogue;
import io.lifeline.app.LifelineEvent;
import io.lifeline.app.StallBursts;
import io.lifeline.app.StallDigest;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.outbox.StallWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.event.ruler.Machine;

/**
 * The alert routing of template.yaml, checked without a stack: each rule's EventPattern, as Local reads it,
 * matched with AWS's event-ruler against full EventBridge events built from the real event catalogue; the
 * rules' Conditions; and each input transformer against the catalogue's details.
 */
@Tag("unit")
class AlertRulesTest {
    /** Every optional parameter set, so every rule of the template is deployed. */
    static final Map<String, String> ALL_OPTIONAL = Map.of("AlertEmail", "ops@example.com",
            "AlertWebhookUrl", "http://x", "SlackWebhookUrl", "http://y", "PagerDutyRoutingKey", "k",
            "RestartWebhookUrl", "http://z");
    static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");

    static SamTemplate template;
    static Map<String, SamTemplate.Rule> rules;

    @BeforeAll
    static void read() throws Exception {
        template = TestStack.template();
        rules = new LinkedHashMap<>();
        template.rules(ALL_OPTIONAL).forEach(r -> rules.put(r.logicalId(), r));
    }

    // ---- example events ---------------------------------------------------------------------------

    static LifelineEvent status(AgentStatus from, AgentStatus to, Trigger trigger, String reason) {
        assertTrue(TransitionTable.allows(from, trigger, to), from + " x " + trigger + " -> " + to + " is no row");
        return EventCatalogue.of(new StreamChanges.StatusChanged("acme", "a-1", "Agent 1", "host-1",
                new Transition(3, from, to, trigger, reason, AT), null));
    }

    /** A death of an agent with no host: nobody can be asked to restart it. */
    static LifelineEvent hostlessDeath() {
        return hostless(AgentStatus.READY, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT);
    }

    /** A change of agent a-2, which has no host. */
    static LifelineEvent hostless(AgentStatus from, AgentStatus to, Trigger trigger, String reason) {
        assertTrue(TransitionTable.allows(from, trigger, to), from + " x " + trigger + " -> " + to + " is no row");
        return EventCatalogue.of(new StreamChanges.StatusChanged("acme", "a-2", "Agent 2", null,
                new Transition(3, from, to, trigger, reason, AT), null));
    }

    /** A death as a publisher from before {@code reviveFlow} sent it (an archived event replayed). */
    static LifelineEvent withoutReviveFlow(LifelineEvent e) {
        ObjectNode d = e.detail().deepCopy();
        d.remove("reviveFlow");
        return new LifelineEvent(e.team(), e.type(), e.eventId(), e.at(), d);
    }

    /** The silence of host-1's lease flagged at AT, which the changes below follow from. */
    static final HostIncidents.Cause SILENCE = new HostIncidents.Cause("host-1", AT);

    /** A change of a-1 that follows from its host's silence (the sweep's death, the flow's moves, the return). */
    static LifelineEvent ofSilence(AgentStatus from, AgentStatus to, Trigger trigger, String reason) {
        assertTrue(TransitionTable.allows(from, trigger, to), from + " x " + trigger + " -> " + to + " is no row");
        return EventCatalogue.of(new StreamChanges.StatusChanged("acme", "a-1", "Agent 1", "host-1",
                new Transition(3, from, to, trigger, reason, AT.plusSeconds(30)), null, SILENCE));
    }

    /**
     * A change of a-1 its host daemon claimed (its crash report saying it restarts the agent itself, and the join
     * that ends that death): the daemon's to handle, as the catalogue tells it with {@code hostRestart}.
     */
    static LifelineEvent ofHostRestart(AgentStatus from, AgentStatus to, Trigger trigger, String reason) {
        assertTrue(TransitionTable.allows(from, trigger, to), from + " x " + trigger + " -> " + to + " is no row");
        LifelineEvent e = EventCatalogue.of(new StreamChanges.StatusChanged("acme", "a-1", "Agent 1", "host-1",
                new Transition(3, from, to, trigger, reason, AT), null, null, null, 2L, AT.plusSeconds(32)));
        assertEquals(AT.plusSeconds(32).toString(), e.detail().path("hostRestart").asText(), e.detail()::toString);
        return e;
    }

    /** host-1's further lease host-1.2, flagged with host-1 and part of its incident. */
    static LifelineEvent furtherLeaseExpired() {
        return EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1.2", List.of("a-30"), 1,
                AT.minusSeconds(75), AT, "host-1", 1));
    }

    static LifelineEvent furtherLeaseRestored() {
        return EventCatalogue.of(new StreamChanges.HostLeaseRestored("acme", "host-1.2", AT, AT.plusSeconds(40),
                AT.plusSeconds(45), "host-1"));
    }

    static final AlertBursts.Settings BURSTS = new AlertBursts.Settings(1,
            Duration.ofSeconds(60), 20);

    /** A window of two teams' six deaths, the first of which (a-1, reviving) paged on its own. */
    /** A digested window of 6 deaths, all back. */
    static AlertWindowStore.Window window() {
        return window(6);
    }

    static AlertWindowStore.Window window(int back) {
        return new AlertWindowStore.Window(AT, 6, back, "lifeline/acme/a-1/reviving", true,
                new LinkedHashMap<>(Map.of("acme", 4, "beta", 2)), new LinkedHashMap<>(Map.of("host-1", 4, "-", 2)),
                Map.of("heartbeat_expired", 6), List.of("acme/a-1", "acme/a-2", "beta/b-1"));
    }

    static LifelineEvent burstStarted() {
        return AlertBursts.started("acme", AT, BURSTS, AT.plusSeconds(3));
    }

    /** The digest of a window with 4 of its 6 agents still down at its end. */
    static LifelineEvent digest() {
        return AlertBursts.digest(window(2), BURSTS, "https://dash.example/", AT.plusSeconds(65));
    }

    /** The digest of a window whose agents were all back before its end (its AlertBurstResolved went out first). */
    static LifelineEvent digestAllBack() {
        return AlertBursts.digest(window(), BURSTS, "https://dash.example/", AT.plusSeconds(65));
    }

    static LifelineEvent burstResolved() {
        return AlertBursts.resolved(window(), AT.plusSeconds(300));
    }

    static LifelineEvent stallBurstStarted() {
        return StallBursts.started("acme", AT, BURSTS, AT.plusSeconds(3));
    }

    /** The digest of stalls of a window: 40 agents of acme stalled at once, 2 of them over by its end. */
    static LifelineEvent stallDigest() {
        return StallDigest.digest(AT, new StallDigest.Counts(40, 2, 2, Map.of("acme", 40), 1, Map.of("host-1", 40), 1,
                List.of("acme/a-1", "acme/a-2")), BURSTS, "https://dash.example/", AT.plusSeconds(65));
    }

    static LifelineEvent stallBurstResolved() {
        return StallBursts.resolved(AT, new StallWindowStore.Totals(40, 40, 39), AT.plusSeconds(300));
    }

    /** A change as the outbox marks it when it is in a burst: left to its window's digest. */
    static LifelineEvent inBurst(LifelineEvent e) {
        ObjectNode d = e.detail().deepCopy();
        d.put("burst", AT.toString());
        return new LifelineEvent(e.team(), e.type(), e.eventId(), e.at(), d);
    }

    static final AgentFlaps.Settings FLAPPING = new AgentFlaps.Settings(4,
            Duration.ofSeconds(600), Duration.ofSeconds(600), Duration.ofSeconds(15));

    /** a-1 flagged flapping at AT, at its fifth change between alive and down (a death). */
    static LifelineEvent flapping() {
        return AgentFlaps.flapping((StreamChanges.StatusChanged) new StreamChanges.StatusChanged(
                "acme", "a-1", "Agent 1", "host-1", new Transition(9, AgentStatus.READY, AgentStatus.DEAD,
                Trigger.REPORTED_FAILURE, "failure reported: exit 1", AT), null), AT, 5, FLAPPING);
    }

    /** a-1 flagged flapping at AT by its third stall's start under onStall: alert (no seq: a stall changes no status). */
    static LifelineEvent flappingByStalls() {
        return AgentFlaps.flapping(new StreamChanges.Stall("acme", "a-1", "Agent 1", null, AT, "model stream silent",
                AT.minusSeconds(121), null, false, "working"), "stalled", AT, 5, AT, FLAPPING);
    }

    /** a-1 stable again ({@code alive}: it is ready; else dead). */
    static LifelineEvent flappingResolved(boolean alive) {
        return AgentFlaps.resolved("acme", "a-1", AT, AT.plusSeconds(120),
                alive ? "ready" : "dead", FLAPPING, AT.plusSeconds(720));
    }

    /** a-1 stable again, its newest change counted the start of a stall it is still in: not alive. */
    static LifelineEvent stableButStalled() {
        return AgentFlaps.resolved("acme", "a-1", AT, AT.plusSeconds(120), "stalled", FLAPPING, AT.plusSeconds(720));
    }

    /** A change as the outbox marks it while its agent is flagged flapping: its flag's notice speaks for it. */
    static LifelineEvent whileFlapping(LifelineEvent e) {
        ObjectNode d = e.detail().deepCopy();
        d.put("flapping", AT.toString());
        return new LifelineEvent(e.team(), e.type(), e.eventId(), e.at(), d);
    }

    static LifelineEvent hostLeaseExpired() {
        return EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1", List.of("a-1", "a-3"), 2,
                AT.minusSeconds(75), AT));
    }

    /** The host of {@link #hostLeaseExpired} heard again: the same silence ({@code expiredAt}: AT). */
    static LifelineEvent hostLeaseRestored() {
        return EventCatalogue.of(new StreamChanges.HostLeaseRestored("acme", "host-1", AT, AT.plusSeconds(40),
                AT.plusSeconds(45)));
    }

    static LifelineEvent restartRequested() {
        return EventCatalogue.of(new StreamChanges.RestartRequested("acme", new HostCommandStore.Command(
                "restart-a-1-3-1", "host-1", "restart", "a-1", 1, "agent is dead", "pending", AT, AT.plusSeconds(600),
                null)));
    }

    static LifelineEvent massStale() {
        return EventCatalogue.of(new StreamChanges.MassStale("acme", 5, 4, 0.5, AT));
    }

    static final String BOX_WHY = "one source 203.0.113.7 went silent while the rest still reach Lifeline: a failure"
            + " at the agents' side, marked dead as judged";

    /** One source address of the team went silent and its agents are marked dead: not held. */
    static LifelineEvent sourceSilent() {
        return EventCatalogue.of(new StreamChanges.MassStale("acme", 11, 10, 0.5, AT, false, BOX_WHY));
    }

    /** A death of a-1 that follows from its source address's silence (the team's flag is the incident's page). */
    static LifelineEvent diedOfSource() {
        return EventCatalogue.of(new StreamChanges.StatusChanged("acme", "a-1", "Agent 1", "host-1",
                new Transition(3, AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT,
                        AT.plusSeconds(30)), null, HostIncidents.Cause.ofSource("203.0.113.7", AT)));
    }

    static LifelineEvent fleetHeld() {
        return EventCatalogue.of(new StreamChanges.FleetMassStale(70, 60, 0.5, List.of("t01", "t02"), 30, AT, null));
    }

    static LifelineEvent fleetResolved() {
        return EventCatalogue.of(new StreamChanges.FleetMassStale(70, 60, 0.5, List.of("t01", "t02"), 30, AT,
                AT.plusSeconds(90)));
    }

    static LifelineEvent awaitingInput() {
        return EventCatalogue.of(new StreamChanges.AwaitingInput("acme", "a-1", "Agent 1", "host-1", AT,
                AT.plusSeconds(300), null));
    }

    static LifelineEvent inputResumed() {
        return EventCatalogue.of(new StreamChanges.AwaitingInput("acme", "a-1", "Agent 1", "host-1", AT,
                AT.plusSeconds(300), AT.plusSeconds(420)));
    }

    static LifelineEvent stalled() {
        return EventCatalogue.of(new StreamChanges.Stall("acme", "a-1", "Agent 1", null, AT.plusSeconds(135),
                "no progress reported", AT, null, false));
    }

    static LifelineEvent progressResumed() {
        return EventCatalogue.of(new StreamChanges.Stall("acme", "a-1", "Agent 1", null, AT.plusSeconds(135),
                "no progress reported", AT, AT.plusSeconds(150), false));
    }

    static LifelineEvent parked() {
        return EventCatalogue.of(new StreamChanges.Park("acme", "a-1", "Agent 1", null, AT, AT.plusSeconds(1800),
                "usage limit", null, false));
    }

    static LifelineEvent resumed() {
        return EventCatalogue.of(new StreamChanges.Park("acme", "a-1", "Agent 1", null, AT, AT.plusSeconds(1800),
                "usage limit", AT.plusSeconds(1810), false));
    }

    static LifelineEvent tasksReassigned() {
        return EventCatalogue.of(new StreamChanges.TaskReassigned("acme", "t-1", "a-1", AT));
    }

    static LifelineEvent leaderNotified() {
        return EventCatalogue.of(new StreamChanges.LeaderNotice("acme", "lead", new InboxStore.Notice(
                AT.toEpochMilli() + "#a-1#3", "a-1", "Agent a-1 became inactive", List.of("t-1"), AT)));
    }

    static LifelineEvent rotation() {
        return EventCatalogue.of(new StreamChanges.SessionRotation("acme", "a-1", 1, AT));
    }

    /** The event as EventBridge hands it to rules and targets. */
    static ObjectNode envelope(LifelineEvent e, String source) {
        ObjectNode n = Json.object().put("version", "0").put("id", UUID.randomUUID().toString())
                .put("detail-type", e.type()).put("source", source).put("account", "123456789012")
                .put("time", e.at().toString()).put("region", "eu-west-1");
        n.set("resources", Json.MAPPER.createArrayNode());
        n.set("detail", e.detail());
        return n;
    }

    static ObjectNode envelope(LifelineEvent e) {
        return envelope(e, LifelineEvent.SOURCE);
    }

    static boolean matches(SamTemplate.Rule rule, JsonNode event) {
        try {
            Machine m = Machine.builder().build();
            m.addRule(rule.logicalId(), rule.eventPattern());
            return m.rulesForJSONEvent(Json.write(event)).contains(rule.logicalId());
        } catch (Exception e) {
            throw new AssertionError("event-ruler could not use " + rule.logicalId() + ": " + rule.eventPattern(), e);
        }
    }

    record Examples(List<LifelineEvent> positive, List<LifelineEvent> negative) {
    }

    static final String SILENT = "no heartbeat for 90 s, 2 missed sweeps";

    /** One or more events each rule must route, and some it must not. */
    static Map<String, Examples> examples() {
        LifelineEvent died = status(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT);
        LifelineEvent crashed = status(AgentStatus.READY, AgentStatus.DEAD, Trigger.REPORTED_FAILURE,
                "failure reported: oom");
        LifelineEvent notRevived = status(AgentStatus.RESTARTING, AgentStatus.DEAD_FAILED_REVIVE,
                Trigger.RESTART_EXHAUSTED, "3 restarts failed");
        LifelineEvent back = status(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN, "agent joined");
        LifelineEvent backAfterRevive = status(AgentStatus.DEAD_FAILED_REVIVE, AgentStatus.READY, Trigger.JOIN,
                "agent joined");
        LifelineEvent taskDone = status(AgentStatus.WORKING, AgentStatus.READY, Trigger.TASK_COMPLETE, null);
        LifelineEvent claimed = status(AgentStatus.READY, AgentStatus.WORKING, Trigger.CLAIM_TASK, null);
        LifelineEvent left = status(AgentStatus.READY, AgentStatus.OFFLINE, Trigger.LEAVE, "shift over");
        LifelineEvent restarting = status(AgentStatus.DEAD, AgentStatus.RESTARTING, Trigger.RESTART_INITIATED, null);
        LifelineEvent hostlessCrash = hostless(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.REPORTED_FAILURE,
                "failure reported: oom");
        LifelineEvent hostGaveUp = status(AgentStatus.WORKING, AgentStatus.DEAD_FAILED_REVIVE, Trigger.HOST_GAVE_UP,
                "host gave up");
        LifelineEvent diedOfHost = ofSilence(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT);
        LifelineEvent notRevivedOfHost = ofSilence(AgentStatus.RESTARTING, AgentStatus.DEAD_FAILED_REVIVE,
                Trigger.RESTART_EXHAUSTED, "3 restarts failed");
        LifelineEvent backWithHost = ofSilence(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN, "agent joined");
        LifelineEvent crashedUnderDaemon = ofHostRestart(AgentStatus.READY, AgentStatus.DEAD, Trigger.REPORTED_FAILURE,
                "failure reported: crash 2 of 5 in 10 min: exited with status 1");
        LifelineEvent restartedByDaemon = ofHostRestart(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN,
                "agent joined");
        Map<String, Examples> m = new LinkedHashMap<>();
        m.put("DeathAlertRule", new Examples(List.of(died, crashed, notRevived, hostlessDeath()),
                List.of(left, restarting, back, hostLeaseExpired(), diedOfHost, notRevivedOfHost, inBurst(died),
                        inBurst(notRevived), digest(), whileFlapping(died), whileFlapping(notRevived), flapping(),
                        crashedUnderDaemon)));
        m.put("RecoveryAlertRule", new Examples(List.of(back, backAfterRevive), List.of(taskDone, died, backWithHost,
                inBurst(back), burstResolved(), whileFlapping(back), flappingResolved(true), restartedByDaemon)));
        m.put("FlappingAlertRule", new Examples(List.of(flapping(), flappingByStalls()), List.of(died,
                whileFlapping(died), flappingResolved(true))));
        m.put("FlappingResolvedAlertRule", new Examples(List.of(flappingResolved(true), flappingResolved(false)),
                List.of(flapping(), back, whileFlapping(back))));
        m.put("FlapCheckOnFlappingRule", new Examples(List.of(flapping(), flappingByStalls()), List.of(flappingResolved(true), died,
                whileFlapping(died))));
        m.put("SlackFlappingRule", new Examples(List.of(flapping(), flappingByStalls()), List.of(died,
                whileFlapping(died), flappingResolved(true))));
        m.put("SlackFlappingResolvedRule", new Examples(List.of(flappingResolved(true), flappingResolved(false)),
                List.of(flapping(), back)));
        m.put("PagerDutyFlappingRule", new Examples(List.of(flapping(), flappingByStalls()), List.of(died,
                whileFlapping(died), whileFlapping(stalled()), flappingResolved(true))));
        // Stable but down, or still stalled: the flapping incident stays open (the changes it held are its own).
        m.put("PagerDutyFlappingResolvedRule", new Examples(List.of(flappingResolved(true)),
                List.of(flappingResolved(false), stableButStalled(), flapping(), back)));
        m.put("DigestOnBurstRule", new Examples(List.of(burstStarted()), List.of(digest(), burstResolved(), died,
                inBurst(died), stallBurstStarted())));
        m.put("DigestAlertRule", new Examples(List.of(digest()), List.of(burstStarted(), burstResolved(), died,
                stallDigest())));
        // A burst of stalls: its own start, digest and end, on the alerts topic only (a stall's one destination).
        m.put("StallDigestOnBurstRule", new Examples(List.of(stallBurstStarted()), List.of(burstStarted(),
                stallDigest(), stallBurstResolved(), stalled(), inBurst(stalled()))));
        m.put("StallDigestAlertRule", new Examples(List.of(stallDigest()), List.of(stallBurstStarted(),
                stallBurstResolved(), digest(), stalled())));
        m.put("StallBurstResolvedAlertRule", new Examples(List.of(stallBurstResolved()), List.of(stallBurstStarted(),
                stallDigest(), burstResolved(), progressResumed())));
        m.put("BurstResolvedAlertRule", new Examples(List.of(burstResolved()), List.of(burstStarted(), digest(), back)));
        m.put("SlackDigestRule", new Examples(List.of(digest(), digestAllBack()),
                List.of(burstStarted(), burstResolved(), died, stallDigest())));
        m.put("SlackBurstResolvedRule", new Examples(List.of(burstResolved()), List.of(burstStarted(), digest(), back)));
        m.put("PagerDutyDigestRule", new Examples(List.of(digest()),
                List.of(burstStarted(), burstResolved(), died, digestAllBack(), stallDigest())));
        m.put("PagerDutyBurstResolvedRule", new Examples(List.of(burstResolved()), List.of(burstStarted(), digest(),
                back)));
        m.put("MassStaleAlertRule", new Examples(List.of(massStale(), sourceSilent()), List.of(died, tasksReassigned(),
                fleetHeld())));
        m.put("FleetMassStaleAlertRule", new Examples(List.of(fleetHeld(), fleetResolved()), List.of(massStale(),
                died)));
        m.put("AwaitingInputAlertRule", new Examples(List.of(awaitingInput(), inputResumed()), List.of(died, back,
                fleetHeld())));
        // A flapping agent's stalls and resumes (alert mode: each a change towards its flag) are its flag's.
        // A stall in a burst of stalls, and its end, are its window's digest's.
        m.put("StallAlertRule", new Examples(List.of(stalled(), progressResumed()), List.of(died, back,
                awaitingInput(), fleetHeld(), whileFlapping(stalled()), whileFlapping(progressResumed()),
                inBurst(stalled()), inBurst(progressResumed()), stallDigest(), stallBurstResolved())));
        m.put("ParkAlertRule", new Examples(List.of(parked(), resumed()), List.of(died, back, stalled(),
                progressResumed())));
        m.put("HostLeaseAlertRule", new Examples(List.of(hostLeaseExpired()), List.of(died, massStale(),
                hostLeaseRestored(), furtherLeaseExpired())));
        m.put("HostLeaseRestoredAlertRule", new Examples(List.of(hostLeaseRestored()), List.of(hostLeaseExpired(),
                back, died, furtherLeaseRestored())));
        m.put("AlertWebhookRule", new Examples(List.of(died, back, taskDone, massStale(), tasksReassigned(),
                leaderNotified(), rotation(), restartRequested(), sourceSilent(), hostLeaseExpired(), hostLeaseRestored(), fleetHeld(),
                fleetResolved(), awaitingInput(), inputResumed(), diedOfHost, backWithHost, furtherLeaseExpired(),
                furtherLeaseRestored(), inBurst(died), burstStarted(), digest(), burstResolved(), whileFlapping(died),
                flapping(), flappingResolved(true), crashedUnderDaemon, restartedByDaemon, whileFlapping(stalled()),
                whileFlapping(progressResumed()), flappingByStalls(), stallBurstStarted(), stallDigest(),
                stallBurstResolved(), inBurst(stalled())), List.of()));
        // The revive flow still takes a death of a silent host: the host, once back, runs the pending restart.
        // A death its host daemon claimed starts the flow too: its first step waits out the claim (docs/revive.md).
        m.put("ReviveOnDeathRule", new Examples(List.of(died, crashed, diedOfHost, crashedUnderDaemon),
                List.of(hostlessDeath(), notRevived, left, back, restarting)));
        m.put("RestartWebhookRule", new Examples(List.of(restartRequested()), List.of(died, back, massStale())));
        m.put("SlackRule", new Examples(List.of(died, crashed, notRevived, back),
                List.of(taskDone, claimed, left, restarting, massStale(), hostLeaseExpired(), diedOfHost,
                        notRevivedOfHost, backWithHost, inBurst(died), inBurst(back), digest(), whileFlapping(died),
                        whileFlapping(back), flapping(), crashedUnderDaemon, restartedByDaemon, diedOfSource(),
                        sourceSilent())));
        m.put("SlackHostLeaseRule", new Examples(List.of(hostLeaseExpired()), List.of(died, massStale(),
                hostLeaseRestored(), furtherLeaseExpired())));
        m.put("SlackHostLeaseRestoredRule", new Examples(List.of(hostLeaseRestored()), List.of(hostLeaseExpired(),
                back, furtherLeaseRestored())));
        // A source gone silent is one message, as a host is; a hold (Lifeline's own doubt) is the alerts topic's.
        m.put("SlackSourceSilentRule", new Examples(List.of(sourceSilent()), List.of(massStale(), diedOfSource(),
                died, hostLeaseExpired(), fleetHeld(), fleetResolved())));
        // Pages: deaths no revive flow will handle, and failed revives; a death the flow handles is the next rule's.
        m.put("PagerDutyTriggerRule", new Examples(List.of(hostlessDeath(), hostlessCrash, notRevived, hostGaveUp,
                withoutReviveFlow(died)), List.of(died, crashed, back, left, restarting, hostLeaseExpired(),
                notRevivedOfHost, withoutReviveFlow(diedOfHost), inBurst(notRevived), inBurst(hostlessDeath()),
                whileFlapping(hostlessDeath()), whileFlapping(notRevived), flapping(), crashedUnderDaemon,
                diedOfSource(), sourceSilent())));
        m.put("PagerDutyRevivingDeathRule", new Examples(List.of(died, crashed),
                List.of(hostlessDeath(), hostlessCrash, notRevived, hostGaveUp, withoutReviveFlow(died), back,
                        restarting, hostLeaseExpired(), diedOfHost, inBurst(died), whileFlapping(died),
                        crashedUnderDaemon)));
        m.put("PagerDutyResolveRule", new Examples(List.of(back, backAfterRevive), List.of(died, taskDone,
                hostLeaseRestored(), backWithHost, inBurst(back), burstResolved(), whileFlapping(back),
                flappingResolved(true), restartedByDaemon)));
        m.put("PagerDutyHostLeaseRule", new Examples(List.of(hostLeaseExpired()), List.of(died, notRevived,
                massStale(), hostLeaseRestored(), furtherLeaseExpired())));
        m.put("PagerDutyHostLeaseRestoredRule", new Examples(List.of(hostLeaseRestored()), List.of(hostLeaseExpired(),
                back, died, furtherLeaseRestored())));
        m.put("PagerDutySourceSilentRule", new Examples(List.of(sourceSilent()), List.of(massStale(), diedOfSource(),
                died, notRevived, hostLeaseExpired(), fleetHeld(), fleetResolved())));
        return m;
    }

    /** Patterns. */
    @Nested
    class Patterns {
        @Test
        void everyRuleOfTheTemplate_hasExamples() {
            assertEquals(examples().keySet(), rules.keySet(), "a rule without examples, or examples without a rule");
        }

        @Test
        void eachRule_matchesItsPositiveExamples_andNotItsNegativeOnes() {
            List<String> wrong = new ArrayList<>();
            examples().forEach((id, ex) -> {
                SamTemplate.Rule rule = rules.get(id);
                assertFalse(ex.positive().isEmpty(), id);
                for (LifelineEvent e : ex.positive()) {
                    if (!matches(rule, envelope(e))) {
                        wrong.add(id + " should match " + e.type() + " " + e.detail());
                    }
                }
                for (LifelineEvent e : ex.negative()) {
                    if (matches(rule, envelope(e))) {
                        wrong.add(id + " should not match " + e.type() + " " + e.detail());
                    }
                }
            });
            assertEquals(List.of(), wrong);
        }

        @Test
        void noRule_matchesAnEventFromAnotherSource() {
            examples().forEach((id, ex) -> {
                for (LifelineEvent e : ex.positive()) {
                    assertTrue(matches(rules.get(id), envelope(e)), id);
                    assertFalse(matches(rules.get(id), envelope(e, "other.app")), id + " matched source other.app");
                }
            });
        }

        /** A task completion or a claim is routine: only the catch-all webhook hears of it, no alert does. */
        @Test
        void routineChanges_raiseNoAlert() {
            for (LifelineEvent e : List.of(status(AgentStatus.WORKING, AgentStatus.READY, Trigger.TASK_COMPLETE, null),
                    status(AgentStatus.WORKING, AgentStatus.READY, Trigger.REPORT_READY, null),
                    status(AgentStatus.READY, AgentStatus.WORKING, Trigger.CLAIM_TASK, null),
                    status(AgentStatus.OFFLINE, AgentStatus.READY, Trigger.JOIN, "agent joined"))) {
                Set<String> matched = rules.values().stream().filter(r -> matches(r, envelope(e)))
                        .map(SamTemplate.Rule::logicalId).collect(Collectors.toSet());
                assertEquals(Set.of("AlertWebhookRule"), matched, e.detail().toString());
            }
        }
    }

    /** Conditions. */
    @Nested
    class Conditions {
        static Set<String> ruleIds(Map<String, String> parameters) {
            return template.rules(parameters).stream().map(SamTemplate.Rule::logicalId)
                    .collect(Collectors.toCollection(TreeSet::new));
        }

        @Test
        void rules_withTheOptionalParametersEmpty_leaveOutTheConditionalRules() {
            Set<String> always = Set.of("DeathAlertRule", "RecoveryAlertRule", "MassStaleAlertRule", "HostLeaseAlertRule",
                    "HostLeaseRestoredAlertRule", "ReviveOnDeathRule", "FleetMassStaleAlertRule", "AwaitingInputAlertRule",
                    "StallAlertRule", "ParkAlertRule", "DigestOnBurstRule", "DigestAlertRule", "BurstResolvedAlertRule", "FlappingAlertRule",
                    "FlappingResolvedAlertRule", "FlapCheckOnFlappingRule", "StallDigestOnBurstRule",
                    "StallDigestAlertRule", "StallBurstResolvedAlertRule");
            assertEquals(always, ruleIds(Map.of()));
            assertEquals(always, ruleIds(Map.of("AlertWebhookUrl", "", "SlackWebhookUrl", "", "PagerDutyRoutingKey", "")));
            assertEquals(union(always, "AlertWebhookRule"), ruleIds(Map.of("AlertWebhookUrl", "http://x")));
            assertEquals(union(always, "SlackRule", "SlackHostLeaseRule", "SlackHostLeaseRestoredRule", "SlackDigestRule",
                    "SlackBurstResolvedRule", "SlackFlappingRule", "SlackFlappingResolvedRule", "SlackSourceSilentRule"),
                    ruleIds(Map.of("SlackWebhookUrl", "http://y")));
            assertEquals(union(always, "PagerDutyTriggerRule", "PagerDutyRevivingDeathRule", "PagerDutyResolveRule",
                    "PagerDutyHostLeaseRule", "PagerDutyHostLeaseRestoredRule", "PagerDutyDigestRule",
                    "PagerDutyBurstResolvedRule", "PagerDutyFlappingRule", "PagerDutyFlappingResolvedRule",
                    "PagerDutySourceSilentRule"),
                    ruleIds(Map.of("PagerDutyRoutingKey", "k")));
            assertEquals(union(always, "PagerDutyTriggerRule", "PagerDutyResolveRule", "PagerDutyHostLeaseRule",
                    "PagerDutyHostLeaseRestoredRule", "PagerDutyDigestRule", "PagerDutyBurstResolvedRule",
                    "PagerDutyFlappingRule", "PagerDutyFlappingResolvedRule", "PagerDutySourceSilentRule"),
                    ruleIds(Map.of("PagerDutyRoutingKey", "k", "PagerDutyRevivingDeathSeverity", "off")));
            assertEquals(always, ruleIds(Map.of("PagerDutyRevivingDeathSeverity", "info")), "no PagerDuty without a key");
            assertEquals(union(always, "RestartWebhookRule"), ruleIds(Map.of("RestartWebhookUrl", "http://z")));
            assertEquals(union(always, "AlertWebhookRule", "SlackRule", "SlackHostLeaseRule", "SlackHostLeaseRestoredRule",
                    "PagerDutyTriggerRule", "PagerDutyRevivingDeathRule", "PagerDutyResolveRule", "PagerDutyHostLeaseRule",
                    "PagerDutyHostLeaseRestoredRule", "RestartWebhookRule", "SlackDigestRule", "SlackBurstResolvedRule",
                    "PagerDutyDigestRule", "PagerDutyBurstResolvedRule", "SlackFlappingRule", "SlackFlappingResolvedRule",
                    "PagerDutyFlappingRule", "PagerDutyFlappingResolvedRule", "SlackSourceSilentRule",
                    "PagerDutySourceSilentRule"),
                    ruleIds(ALL_OPTIONAL));

            for (SamTemplate.Rule r : template.rules(Map.of())) {
                if (r.logicalId().equals("ReviveOnDeathRule")) {
                    assertEquals("ReviveStateMachine", r.targets().get(0).stateMachine());
                    continue;
                }
                if (r.logicalId().equals("DigestOnBurstRule") || r.logicalId().equals("StallDigestOnBurstRule")) {
                    assertEquals("DigestStateMachine", r.targets().get(0).stateMachine());
                    continue;
                }
                if (r.logicalId().equals("FlapCheckOnFlappingRule")) {
                    assertEquals("FlapCheckStateMachine", r.targets().get(0).stateMachine());
                    continue;
                }
                assertEquals(List.of("alerts-topic topic AlertsTopic"), destinations(r), r.logicalId());
            }
            assertEquals(List.of("alert-webhook endpoint http://x"), destinations(rules.get("AlertWebhookRule")));
            assertEquals(List.of("slack endpoint http://y"), destinations(rules.get("SlackRule")));
            assertEquals(List.of("slack-host endpoint http://y"), destinations(rules.get("SlackHostLeaseRule")));
            assertEquals(List.of("slack-host-back endpoint http://y"), destinations(rules.get("SlackHostLeaseRestoredRule")));
            assertEquals(List.of("slack-source endpoint http://y"), destinations(rules.get("SlackSourceSilentRule")));
            assertEquals("https://events.pagerduty.com/v2/enqueue",
                    rules.get("PagerDutySourceSilentRule").targets().get(0).endpoint());
            assertEquals("https://events.pagerduty.com/v2/enqueue",
                    rules.get("PagerDutyTriggerRule").targets().get(0).endpoint());
        }

        private static List<String> destinations(SamTemplate.Rule r) {
            return r.targets().stream().map(t -> t.id() + " " + t.destination()).toList();
        }

        private static Set<String> union(Set<String> base, String... more) {
            Set<String> out = new TreeSet<>(base);
            out.addAll(List.of(more));
            return out;
        }
    }

    /** Input transformers. */
    @Nested
    class InputTransformers {
        record Transformer(String ruleId, String targetId, Map<String, String> paths, String template) {
        }

        /** Every target's InputTransformer, read from the template's YAML (Local does not model them). */
        static List<Transformer> transformers() throws Exception {
            JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
            List<Transformer> out = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = root.path("Resources").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> r = it.next();
                if (!"AWS::Events::Rule".equals(r.getValue().path("Type").asText())) {
                    continue;
                }
                for (JsonNode t : r.getValue().path("Properties").path("Targets")) {
                    JsonNode it2 = t.path("InputTransformer");
                    if (it2.isMissingNode()) {
                        continue;
                    }
                    Map<String, String> paths = new LinkedHashMap<>();
                    it2.path("InputPathsMap").fields().forEachRemaining(e -> paths.put(e.getKey(), e.getValue().asText()));
                    JsonNode tpl = it2.path("InputTemplate");
                    String text = tpl.isTextual() ? tpl.asText() : tpl.path("Fn::Sub").asText();
                    assertFalse(text.isEmpty(), r.getKey() + ": InputTemplate not read");
                    out.add(new Transformer(r.getKey(), t.path("Id").asText(), paths, text));
                }
            }
            return out;
        }

        private static final Pattern PLACEHOLDER = Pattern.compile("<([^<>\\s]+)>");

        static Set<String> placeholders(String inputTemplate) {
            Set<String> out = new LinkedHashSet<>();
            Matcher m = PLACEHOLDER.matcher(inputTemplate);
            while (m.find()) {
                out.add(m.group(1));
            }
            return out;
        }

        static JsonNode at(JsonNode event, String path) {
            assertTrue(path.startsWith("$."), path);
            JsonNode n = event;
            for (String part : path.substring(2).split("\\.")) {
                n = n.path(part);
            }
            return n;
        }

        @Test
        void inputTemplates_useOnlyTheirOwnVariables_andAreValidJsonOnceFilled() throws Exception {
            List<Transformer> all = transformers();
            assertEquals(Set.of("DeathAlertRule", "RecoveryAlertRule", "MassStaleAlertRule", "FleetMassStaleAlertRule",
                    "AwaitingInputAlertRule", "StallAlertRule", "ParkAlertRule", "HostLeaseAlertRule", "HostLeaseRestoredAlertRule", "SlackRule",
                    "SlackHostLeaseRule", "SlackHostLeaseRestoredRule", "PagerDutyTriggerRule", "PagerDutyRevivingDeathRule", "PagerDutyResolveRule", "PagerDutyHostLeaseRule",
                    "PagerDutyHostLeaseRestoredRule", "ReviveOnDeathRule", "DigestOnBurstRule", "DigestAlertRule",
                    "BurstResolvedAlertRule", "SlackDigestRule", "SlackBurstResolvedRule", "PagerDutyDigestRule",
                    "PagerDutyBurstResolvedRule", "FlappingAlertRule", "FlappingResolvedAlertRule",
                    "FlapCheckOnFlappingRule", "SlackFlappingRule", "SlackFlappingResolvedRule", "PagerDutyFlappingRule",
                    "PagerDutyFlappingResolvedRule", "SlackSourceSilentRule", "PagerDutySourceSilentRule",
                    "StallDigestOnBurstRule", "StallDigestAlertRule", "StallBurstResolvedAlertRule"),
                    all.stream().map(Transformer::ruleId).collect(Collectors.toSet()));
            for (Transformer t : all) {
                Set<String> used = placeholders(t.template());
                assertFalse(used.isEmpty(), t.ruleId());
                Set<String> unknown = new TreeSet<>(used);
                unknown.removeAll(t.paths().keySet());
                unknown.removeIf(v -> v.startsWith("aws.events."));
                assertEquals(Set.of(), unknown, t.ruleId() + ": placeholders without an InputPathsMap entry");
                Set<String> unused = new TreeSet<>(t.paths().keySet());
                unused.removeAll(used);
                assertEquals(Set.of(), unused, t.ruleId() + ": variables the template never uses");

                // A placeholder inside quotes takes text; a bare one (a number such as <seq>) takes a number.
                String quotedFilled = t.template().replaceAll("\\$\\{[^}]+}", "k").replaceAll("\"<([A-Za-z0-9_.-]+)>", "\"v")
                        .replaceAll("<([A-Za-z0-9_.-]+)>\"", "v\"");
                String filled = PLACEHOLDER.matcher(quotedFilled).replaceAll("7");
                JsonNode parsed = Json.parse(filled);
                assertTrue(parsed.isTextual() || parsed.isObject(), t.ruleId() + ": " + filled);
            }
        }

        /**
         * Every event the catalogue can produce: every row of the transition table for an agent with a host and one
         * without, with and without a reason.
         */
        static List<LifelineEvent> catalogue(boolean withReason) {
            List<LifelineEvent> out = new ArrayList<>();
            for (TransitionTable.Rule row : TransitionTable.rules()) {
                for (AgentStatus from : row.from()) {
                    out.add(status(from, row.to(), row.trigger(), withReason ? "because" : null));
                    out.add(hostless(from, row.to(), row.trigger(), withReason ? "because" : null));
                }
            }
            out.addAll(List.of(massStale(), sourceSilent(), tasksReassigned(), leaderNotified(), rotation(), restartRequested(),
                    hostLeaseExpired(), hostLeaseRestored(), fleetHeld(), fleetResolved(), awaitingInput(), inputResumed(),
                    stalled(), progressResumed(), parked(), resumed(),
                    burstStarted(), digest(), burstResolved(), flapping(), flappingByStalls(), flappingResolved(true),
                    flappingResolved(false), stallBurstStarted(), stallDigest(), stallBurstResolved()));
            return out;
        }

        @Test
        void inputPaths_existInTheCatalogueDetail_ofEveryEventTheRuleMatches() throws Exception {
            List<String> missing = new ArrayList<>();
            for (Transformer t : transformers()) {
                SamTemplate.Rule rule = rules.get(t.ruleId());
                int matched = 0;
                for (LifelineEvent e : catalogue(true)) {
                    ObjectNode event = envelope(e);
                    if (!matches(rule, event)) {
                        continue;
                    }
                    matched++;
                    t.paths().forEach((var, path) -> {
                        JsonNode v = at(event, path);
                        if (v.isMissingNode() || v.isNull()) {
                            missing.add(t.ruleId() + " <" + var + "> " + path + " not in " + e.detail());
                        }
                    });
                }
                assertTrue(matched > 0, t.ruleId() + " matches no event the catalogue produces");
                // Without a reason (a failure reported without one, a claim): only the optional reason may be absent.
                for (LifelineEvent e : catalogue(false)) {
                    ObjectNode event = envelope(e);
                    if (matches(rule, event)) {
                        t.paths().forEach((var, path) -> {
                            if (at(event, path).isMissingNode() && !path.equals("$.detail.reason")) {
                                missing.add(t.ruleId() + " <" + var + "> " + path + " not in " + e.detail());
                            }
                        });
                    }
                }
            }
            assertEquals(List.of(), missing);
        }
    }

    /** PagerDuty urgency: page what no revive flow will fix. */
    @Nested
    class PagerDutyUrgency {
        /**
         * {@code reviveFlow} is on every death and only there, and it is true exactly when the revive rule, as the
         * template has it, starts a flow for the event: the alert rules and the revive rule read the same facts.
         */
        @Test
        void reviveFlow_isTrueExactlyWhenTheReviveRuleStartsAFlow_andOnlyDeathsCarryIt() {
            SamTemplate.Rule revive = rules.get("ReviveOnDeathRule");
            int flows = 0;
            int deaths = 0;
            for (boolean withReason : List.of(true, false)) {
                for (LifelineEvent e : InputTransformers.catalogue(withReason)) {
                    String to = e.detail().path("to").asText();
                    boolean death = e.type().equals(EventCatalogue.AGENT_STATUS_CHANGED)
                            && (to.equals("dead") || to.equals("dead_failed_revive"));
                    assertEquals(death, e.detail().has("reviveFlow"), e.detail()::toString);
                    if (!death) {
                        continue;
                    }
                    deaths++;
                    assertTrue(e.detail().get("reviveFlow").isBoolean(), e.detail()::toString);
                    boolean flow = matches(revive, envelope(e));
                    assertEquals(flow, e.detail().get("reviveFlow").asBoolean(), e.detail()::toString);
                    flows += flow ? 1 : 0;
                }
            }
            assertTrue(flows > 0 && flows < deaths, flows + " of " + deaths);
        }

        /** What PagerDuty is sent for {@code e} under these parameters: each matching target's body, transformed. */
        static List<JsonNode> pagerDuty(Map<String, String> parameters, LifelineEvent e) {
            List<JsonNode> out = new ArrayList<>();
            for (SamTemplate.Rule r : template.rules(parameters)) {
                if (!matches(r, envelope(e))) {
                    continue;
                }
                for (SamTemplate.Target t : r.targets()) {
                    if ("https://events.pagerduty.com/v2/enqueue".equals(t.endpoint())) {
                        out.add(LocalEventBus.transform(t, envelope(e)));
                    }
                }
            }
            return out;
        }

        static Map<String, String> withPagerDuty(String revivingSeverity) {
            Map<String, String> p = new LinkedHashMap<>(ALL_OPTIONAL);
            if (revivingSeverity != null) {
                p.put("PagerDutyRevivingDeathSeverity", revivingSeverity);
            }
            return p;
        }

        private static String summary(List<JsonNode> bodies) {
            return bodies.stream().map(b -> b.path("event_action").asText() + " " + b.path("dedup_key").asText() + " "
                    + b.path("payload").path("severity").asText()).sorted().collect(Collectors.joining("; "));
        }

        @Test
        void pagerDuty_deathNoFlowWillHandle_andFailedRevive_pageCritical_underTheAgentsKey() {
            for (LifelineEvent e : List.of(hostlessDeath(),
                    hostless(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.REPORTED_FAILURE, null),
                    status(AgentStatus.RESTARTING, AgentStatus.DEAD_FAILED_REVIVE, Trigger.RESTART_EXHAUSTED, "3 failed"),
                    status(AgentStatus.READY, AgentStatus.DEAD_FAILED_REVIVE, Trigger.HOST_GAVE_UP, "gave up"),
                    withoutReviveFlow(status(AgentStatus.READY, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT)))) {
                String agent = e.detail().path("agentId").asText();
                for (String severity : Arrays.asList(null, "info", "critical", "off")) {
                    List<JsonNode> bodies = pagerDuty(withPagerDuty(severity), e);
                    assertEquals("trigger lifeline/acme/" + agent + " critical", summary(bodies), e.detail() + " " + severity);
                    assertEquals(e.detail().path("seq").asLong(),
                            bodies.get(0).path("payload").path("custom_details").path("seq").asLong());
                }
            }
        }

        @Test
        void pagerDuty_deathTheFlowHandles_isTheConfiguredSeverity_underItsOwnKey_orNothingWhenOff() {
            LifelineEvent died = status(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT);
            LifelineEvent crashed = status(AgentStatus.READY, AgentStatus.DEAD, Trigger.REPORTED_FAILURE, null);
            assertEquals("warning", template.parameter("PagerDutyRevivingDeathSeverity", Map.of()), "the default");
            for (LifelineEvent e : List.of(died, crashed)) {
                assertEquals("trigger lifeline/acme/a-1/reviving warning", summary(pagerDuty(withPagerDuty(null), e)));
                for (String severity : List.of("critical", "error", "warning", "info")) {
                    List<JsonNode> bodies = pagerDuty(withPagerDuty(severity), e);
                    assertEquals("trigger lifeline/acme/a-1/reviving " + severity, summary(bodies));
                    JsonNode payload = bodies.get(0).path("payload");
                    assertTrue(payload.path("summary").asText().contains("host-1"), payload::toString);
                    assertEquals(3, payload.path("custom_details").path("seq").asInt());
                }
                assertEquals(List.of(), pagerDuty(withPagerDuty("off"), e), "off: nothing until the flow gives up");
                // The alerts topic hears of every death whatever PagerDuty is told.
                assertTrue(matches(rules.get("DeathAlertRule"), envelope(e)));
            }
        }

        /**
         * A death the flow handles, then its end: the flow brings the agent back (both keys resolved), or gives up
         * (a critical page under the agent's key, which the reviving alert's open key cannot swallow), then the agent
         * is back (both resolved).
         */
        @Test
        void pagerDuty_revivingDeathThenFailedRevive_pagesUnderAnotherKey_andRecoveryResolvesBoth() {
            Map<String, String> p = withPagerDuty(null);
            LifelineEvent died = status(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT);
            LifelineEvent restarting = status(AgentStatus.DEAD, AgentStatus.RESTARTING, Trigger.RESTART_INITIATED, null);
            LifelineEvent gaveUp = status(AgentStatus.RESTARTING, AgentStatus.DEAD_FAILED_REVIVE,
                    Trigger.RESTART_EXHAUSTED, "no rejoin after 3 restart attempts");
            String bothResolved = "resolve lifeline/acme/a-1 ; resolve lifeline/acme/a-1/reviving ";
            assertEquals("trigger lifeline/acme/a-1/reviving warning", summary(pagerDuty(p, died)));
            assertEquals("", summary(pagerDuty(p, restarting)));
            assertEquals(bothResolved, summary(pagerDuty(p,
                    status(AgentStatus.RESTARTING, AgentStatus.READY, Trigger.JOIN, "agent joined"))));
            assertEquals("trigger lifeline/acme/a-1 critical", summary(pagerDuty(p, gaveUp)));
            assertEquals(bothResolved, summary(pagerDuty(p,
                    status(AgentStatus.DEAD_FAILED_REVIVE, AgentStatus.READY, Trigger.JOIN, "agent joined"))));
            assertEquals("resolve lifeline/acme/a-2 ; resolve lifeline/acme/a-2/reviving ", summary(pagerDuty(p,
                    hostless(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN, "agent joined"))));
            // Routine changes tell PagerDuty nothing.
            for (LifelineEvent e : List.of(status(AgentStatus.WORKING, AgentStatus.READY, Trigger.TASK_COMPLETE, null),
                    status(AgentStatus.READY, AgentStatus.OFFLINE, Trigger.LEAVE, "bye"))) {
                assertEquals(List.of(), pagerDuty(p, e));
            }
        }

        /** A silent host is one alert on each channel, none per agent: its agents' deaths are their own events. */
        @Test
        void hostLeaseExpired_isOneAlertPerChannel_namingTheHost() {
            LifelineEvent e = hostLeaseExpired();
            Set<String> matched = rules.values().stream().filter(r -> matches(r, envelope(e)))
                    .map(SamTemplate.Rule::logicalId).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(Set.of("AlertWebhookRule", "HostLeaseAlertRule", "PagerDutyHostLeaseRule", "SlackHostLeaseRule"),
                    matched);
            JsonNode sns = LocalEventBus.transform(rules.get("HostLeaseAlertRule").targets().get(0), envelope(e));
            assertEquals("Lifeline: host host-1 of team acme went silent (lease not renewed, found at " + AT
                    + "); its 2 agents are silent with it", sns.asText());
            JsonNode slack = LocalEventBus.transform(rules.get("SlackHostLeaseRule").targets().get(0), envelope(e));
            assertTrue(slack.path("text").asText().startsWith("Lifeline: host host-1 of team acme went silent"), slack::toString);

            List<JsonNode> pd = pagerDuty(withPagerDuty(null), e);
            assertEquals("trigger lifeline/acme/host/host-1/" + AT + " critical", summary(pd));
            assertEquals(List.of("a-1", "a-3"), Json.MAPPER.convertValue(
                    pd.get(0).path("payload").path("custom_details").path("agentIds"), List.class));
            // A later silence of the same host is a new event, so a new page (its HostLeaseRestored resolves the first).
            LifelineEvent later = EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1", List.of("a-1"), 1,
                    AT.plusSeconds(3600), AT.plusSeconds(3675)));
            assertFalse(summary(pd).equals(summary(pagerDuty(withPagerDuty(null), later))));
        }

        /**
         * The host heard again: one notice on each channel, and PagerDuty resolves exactly the page of that silence (the
         * dedup key is the host and the silence's {@code expiredAt}, which both events carry), not a later silence's.
         */
        @Test
        void hostLeaseRestored_isOneNoticePerChannel_andResolvesThePageOfItsSilence() {
            LifelineEvent e = hostLeaseRestored();
            Set<String> matched = rules.values().stream().filter(r -> matches(r, envelope(e)))
                    .map(SamTemplate.Rule::logicalId).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(Set.of("AlertWebhookRule", "HostLeaseRestoredAlertRule", "PagerDutyHostLeaseRestoredRule",
                    "SlackHostLeaseRestoredRule"), matched);
            JsonNode sns = LocalEventBus.transform(rules.get("HostLeaseRestoredAlertRule").targets().get(0), envelope(e));
            assertEquals("Lifeline: host host-1 of team acme is back (lease renewed at " + AT.plusSeconds(40)
                    + "; silent since the alert of " + AT + ")", sns.asText());
            JsonNode slack = LocalEventBus.transform(rules.get("SlackHostLeaseRestoredRule").targets().get(0), envelope(e));
            assertTrue(slack.path("text").asText().startsWith("Lifeline: host host-1 of team acme is back"), slack::toString);

            String trigger = summary(pagerDuty(withPagerDuty(null), hostLeaseExpired()));
            List<JsonNode> pd = pagerDuty(withPagerDuty(null), e);
            assertEquals("resolve lifeline/acme/host/host-1/" + AT + " ", summary(pd));
            assertEquals(trigger.replace("trigger ", "resolve ").replace(" critical", " "), summary(pd),
                    "the resolve names the trigger's dedup key");
            LifelineEvent laterBack = EventCatalogue.of(new StreamChanges.HostLeaseRestored("acme", "host-1",
                    AT.plusSeconds(3675), AT.plusSeconds(3700), AT.plusSeconds(3705)));
            assertFalse(summary(pd).equals(summary(pagerDuty(withPagerDuty(null), laterBack))),
                    "a later silence's restore resolves only its own page");
            for (String severity : Arrays.asList("info", "off")) {
                assertEquals(summary(pd), summary(pagerDuty(withPagerDuty(severity), e)), severity);
            }
        }

        /**
         * One source address gone silent, its agents marked dead: one message on each channel, as for a silent host,
         * PagerDuty's keyed by the team and the silence's since (a later silence pages again); its ten deaths reach no
         * person. A hold of the same team is the alerts topic's alone.
         */
        @Test
        void sourceSilent_isOneAlertPerChannel_itsDeathsAlertNobody_aHoldOnlyTheTopic() {
            LifelineEvent e = sourceSilent();
            Set<String> matched = rules.values().stream().filter(r -> matches(r, envelope(e)))
                    .map(SamTemplate.Rule::logicalId).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(Set.of("AlertWebhookRule", "MassStaleAlertRule", "PagerDutySourceSilentRule",
                    "SlackSourceSilentRule"), matched);
            JsonNode slack = LocalEventBus.transform(rules.get("SlackSourceSilentRule").targets().get(0), envelope(e));
            assertEquals("Lifeline: 10 of 11 agents of team acme went silent at once (since " + AT + "): " + BOX_WHY + ".",
                    slack.path("text").asText());
            List<JsonNode> pd = pagerDuty(withPagerDuty(null), e);
            assertEquals("trigger lifeline/acme/source/" + AT + " critical", summary(pd));
            assertEquals(10, pd.get(0).path("payload").path("custom_details").path("staleAgents").asInt());
            assertTrue(pd.get(0).path("payload").path("summary").asText().contains("203.0.113.7"), pd::toString);
            LifelineEvent later = EventCatalogue.of(new StreamChanges.MassStale("acme", 11, 10, 0.5,
                    AT.plusSeconds(3600), false, BOX_WHY));
            assertFalse(summary(pd).equals(summary(pagerDuty(withPagerDuty(null), later))), "a later silence pages again");

            List<LifelineEvent> incident = new ArrayList<>(List.of(e));
            for (int i = 0; i < 10; i++) {
                incident.add(diedOfSource());
            }
            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(incident));
            assertEquals(Map.of("topic", 1, "slack", 0, "pagerduty", 0), perDestination(List.of(massStale())),
                    "a hold is the alerts topic's");
        }

        /** What each destination receives for {@code events}: the alerts topic, Slack and PagerDuty, counted. */
        static Map<String, Integer> perDestination(List<LifelineEvent> events) {
            Map<String, Integer> out = new LinkedHashMap<>(Map.of("topic", 0, "slack", 0, "pagerduty", 0));
            for (LifelineEvent e : events) {
                for (SamTemplate.Rule r : rules.values()) {
                    if (!matches(r, envelope(e))) {
                        continue;
                    }
                    for (SamTemplate.Target t : r.targets()) {
                        String where = t.topic() != null ? "topic" : "http://y".equals(t.endpoint()) ? "slack"
                                : "https://events.pagerduty.com/v2/enqueue".equals(t.endpoint()) ? "pagerduty" : null;
                        if (where != null) {
                            out.merge(where, 1, Integer::sum);
                        }
                    }
                }
            }
            return out;
        }

        /**
         * A silent host with three leases whose 60 agents die of it and come back: the host's incident is one message
         * on each channel when it goes silent and one when it is back (PagerDuty: one trigger, one resolve of its key);
         * the agents' changes (deaths, the flow's give-up, returns) and the further leases reach no person, though
         * every one of them is on the bus (the alert webhook and the events route have them all).
         */
        @Test
        void silentHostWithThreeLeases_isOneIncident_itsAgentsChangesAlertNobody() {
            List<LifelineEvent> silence = new ArrayList<>();
            List<String> named = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                named.add("a-" + i);
            }
            silence.add(EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1", named.subList(0, 25), 60,
                    AT.minusSeconds(75), AT, null, 3)));
            silence.add(EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1.2", named.subList(25, 50),
                    25, AT.minusSeconds(75), AT, "host-1", 1)));
            silence.add(EventCatalogue.of(new StreamChanges.HostLeaseExpired("acme", "host-1.3", named.subList(50, 60),
                    10, AT.minusSeconds(75), AT, "host-1", 1)));
            for (int i = 0; i < 60; i++) {
                silence.add(ofSilence(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT));
                silence.add(ofSilence(AgentStatus.DEAD, AgentStatus.RESTARTING, Trigger.RESTART_INITIATED, null));
                silence.add(ofSilence(AgentStatus.RESTARTING, AgentStatus.DEAD_FAILED_REVIVE, Trigger.RESTART_EXHAUSTED,
                        "no rejoin after 3 restart attempts"));
            }
            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(silence));
            JsonNode sns = LocalEventBus.transform(rules.get("HostLeaseAlertRule").targets().get(0), envelope(silence.get(0)));
            assertTrue(sns.asText().endsWith("its 60 agents are silent with it"), sns::toString);

            List<LifelineEvent> back = new ArrayList<>(List.of(hostLeaseRestored(), furtherLeaseRestored(),
                    EventCatalogue.of(new StreamChanges.HostLeaseRestored("acme", "host-1.3", AT, AT.plusSeconds(40),
                            AT.plusSeconds(45), "host-1"))));
            for (int i = 0; i < 60; i++) {
                back.add(ofSilence(AgentStatus.DEAD_FAILED_REVIVE, AgentStatus.READY, Trigger.JOIN, "agent joined"));
            }
            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(back));
            assertEquals("resolve lifeline/acme/host/host-1/" + AT + " ", summary(pagerDuty(withPagerDuty(null), back.get(0))));
            assertEquals(summary(pagerDuty(withPagerDuty(null), silence.get(0))).replace("trigger ", "resolve ")
                    .replace(" critical", " "), summary(pagerDuty(withPagerDuty(null), back.get(0))));
            for (LifelineEvent e : silence) {
                assertTrue(matches(rules.get("AlertWebhookRule"), envelope(e)), e.detail()::toString);
            }
            JsonNode died = silence.get(3).detail();
            assertEquals("host_silent", died.path("cause").path("kind").asText());
            assertEquals("host-1", died.path("cause").path("hostId").asText());
            assertEquals(AT.toString(), died.path("cause").path("expiredAt").asText());
        }

        /**
         * A burst in one window: its first death alerts on its own as ever, the other 59 (marked {@code burst} by the
         * outbox) reach no person, and the window's digest is one more message on the topic and Slack and one trigger
         * under the first death's PagerDuty key, so PagerDuty has one incident; the burst's end resolves that key. Every
         * death still reaches the alert webhook.
         */
        @Test
        void burstInOneWindow_isTheFirstDeathAndOneDigestPerDestination_andOnePagerDutyIncident() {
            List<LifelineEvent> burst = new ArrayList<>();
            burst.add(status(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT));
            for (int i = 0; i < 59; i++) {
                burst.add(inBurst(i % 2 == 0 ? hostlessDeath()
                        : status(AgentStatus.READY, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT)));
            }
            burst.add(digest());
            assertEquals(Map.of("topic", 2, "slack", 2, "pagerduty", 2), perDestination(burst));
            Set<String> keys = new TreeSet<>();
            burst.forEach(e -> pagerDuty(withPagerDuty(null), e).forEach(b -> keys.add(b.path("dedup_key").asText())));
            assertEquals(Set.of("lifeline/acme/a-1/reviving"), keys, "one incident: the digest joins the first death's key");
            for (LifelineEvent e : burst) {
                assertTrue(matches(rules.get("AlertWebhookRule"), envelope(e)));
            }

            JsonNode slack = LocalEventBus.transform(rules.get("SlackDigestRule").targets().get(0), envelope(digest()));
            String text = slack.path("text").asText();
            assertTrue(text.startsWith("Lifeline: 6 agents died between " + AT + " and " + AT.plusSeconds(60)
                    + ", 5 of them in this digest; by team: acme 4, beta 2; by host: host-1 4, - 2; by reason: "
                    + "heartbeat_expired 6; agents: acme/a-1, acme/a-2, beta/b-1 and 3 more."), text);
            assertTrue(text.endsWith("Dashboard: https://dash.example/#status=dead."), text);
            JsonNode sns = LocalEventBus.transform(rules.get("DigestAlertRule").targets().get(0), envelope(digest()));
            assertTrue(sns.asText().startsWith("Lifeline: 6 agents died between"), sns::toString);
            // A burst of stalls says stalled, on the alerts topic alone, and its end says how many came back.
            JsonNode stalls = LocalEventBus.transform(rules.get("StallDigestAlertRule").targets().get(0),
                    envelope(stallDigest()));
            assertEquals("Lifeline: 40 agents stalled (no progress in a turn) between " + AT + " and "
                    + AT.plusSeconds(60) + ", 39 of them in this digest; by team: acme 40; by host: host-1 40; "
                    + "agents: acme/a-1, acme/a-2 and 38 more. Dashboard: https://dash.example/", stalls.asText());
            assertEquals(Map.of("topic", 1, "slack", 0, "pagerduty", 0), perDestination(List.of(stallDigest())));
            assertEquals(Map.of("topic", 1, "slack", 0, "pagerduty", 0),
                    perDestination(List.of(stallBurstResolved())));
            assertEquals("Lifeline: the 40 stalls of the burst of " + AT + " are over: 39 with progress again, 1 ended "
                    + "otherwise (a death, a leave or a new life)", LocalEventBus.transform(
                    rules.get("StallBurstResolvedAlertRule").targets().get(0), envelope(stallBurstResolved())).asText());
            JsonNode pd = pagerDuty(withPagerDuty(null), digest()).get(0);
            assertEquals("critical", pd.path("payload").path("severity").asText());
            assertEquals(4, pd.path("payload").path("custom_details").path("byTeam").path("acme").asInt());
            assertEquals(3, pd.path("payload").path("custom_details").path("agents").size());

            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(List.of(burstResolved())));
            assertEquals("resolve lifeline/acme/a-1/reviving ", summary(pagerDuty(withPagerDuty(null), burstResolved())));
            List<LifelineEvent> backs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                backs.add(inBurst(status(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN, "agent joined")));
            }
            assertEquals(Map.of("topic", 0, "slack", 0, "pagerduty", 0), perDestination(backs),
                    "a burst's agents coming back are its one resolve");
        }

        /**
         * An agent crash-looping (a death and a rejoin every 2 s for 2 minutes): its first changes alert as ever, until
         * the one that flags it; that change and every later one (marked {@code flapping} by the outbox) reach no person,
         * and the flag is one notice on each destination (PagerDuty: a trigger under the agent's flapping key), resolved
         * once it is stable and alive. Every change still reaches the alert webhook.
         */
        @Test
        void crashLoop_isOneFlappingNoticePerDestination_andOneResolve() {
            List<LifelineEvent> loop = new ArrayList<>();
            loop.add(flapping());
            for (int i = 0; i < 30; i++) {
                loop.add(whileFlapping(status(AgentStatus.READY, AgentStatus.DEAD, Trigger.REPORTED_FAILURE, "exit 1")));
                loop.add(whileFlapping(status(AgentStatus.DEAD, AgentStatus.READY, Trigger.JOIN, "agent joined")));
            }
            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(loop));
            assertEquals("trigger lifeline/acme/a-1/flapping critical", summary(pagerDuty(withPagerDuty(null), flapping()))
                    .strip());
            for (LifelineEvent e : loop) {
                assertTrue(matches(rules.get("AlertWebhookRule"), envelope(e)));
            }
            JsonNode slack = LocalEventBus.transform(rules.get("SlackFlappingRule").targets().get(0), envelope(flapping()));
            assertEquals("Lifeline: agent a-1 of team acme is flapping: 5 changes between alive and down within 600 s "
                    + "(flagged at " + AT + ", now dead); its deaths and recoveries are held until it is stable for 600 s.",
                    slack.path("text").asText());
            JsonNode sns = LocalEventBus.transform(rules.get("FlappingAlertRule").targets().get(0), envelope(flapping()));
            assertTrue(sns.asText().startsWith("Lifeline: agent a-1 of team acme is flapping: 5 changes"), sns::toString);

            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 1), perDestination(List.of(flappingResolved(true))));
            assertEquals("resolve lifeline/acme/a-1/flapping ", summary(pagerDuty(withPagerDuty(null),
                    flappingResolved(true))));
            assertEquals(Map.of("topic", 1, "slack", 1, "pagerduty", 0), perDestination(List.of(flappingResolved(false))),
                    "stable but dead: told, and the flapping incident stays open");
            JsonNode back = LocalEventBus.transform(rules.get("SlackFlappingResolvedRule").targets().get(0),
                    envelope(flappingResolved(true)));
            assertEquals("Lifeline: agent a-1 of team acme is no longer flapping (flagged at " + AT + ", stable since "
                    + AT.plusSeconds(120) + "): it is ready.", back.path("text").asText());
        }
    }

    /** Delivery: retries, dead letters, secrets. */
    @Nested
    class Delivery {
        @Test
        void everyTarget_hasARetryPolicy_andTheDeliveryDeadLetterQueue() throws Exception {
            JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
            List<String> missing = new ArrayList<>();
            root.path("Resources").fields().forEachRemaining(r -> {
                if ("AWS::Events::Rule".equals(r.getValue().path("Type").asText())) {
                    for (JsonNode t : r.getValue().path("Properties").path("Targets")) {
                        if (!t.has("RetryPolicy") || !t.path("DeadLetterConfig").has("Arn")) {
                            missing.add(r.getKey() + "/" + t.path("Id").asText());
                        }
                    }
                }
            });
            assertEquals(List.of(), missing, "targets without a RetryPolicy or a DeadLetterConfig");
            for (SamTemplate.Rule r : rules.values()) {
                for (SamTemplate.Target t : r.targets()) {
                    assertEquals("DeliveryDeadLetterQueue", t.deadLetterQueue(), r.logicalId());
                }
            }
        }

        /** Alerts give up in minutes (a late "dead" after its "recovered" misleads); a revive start keeps trying a day. */
        @Test
        void alertTargets_giveUpWithinMinutes_whileReviveStartsKeepTryingForADay() {
            Duration window = Duration.ofSeconds(Long.parseLong(
                    template.parameter("AlertRetryWindowSeconds", Map.of())));
            assertTrue(window.compareTo(Duration.ofMinutes(30)) <= 0, window.toString());
            for (String id : List.of("DeathAlertRule", "RecoveryAlertRule", "MassStaleAlertRule", "FleetMassStaleAlertRule",
                    "AwaitingInputAlertRule", "StallAlertRule", "ParkAlertRule", "HostLeaseAlertRule", "HostLeaseRestoredAlertRule", "SlackRule",
                    "SlackHostLeaseRule", "SlackHostLeaseRestoredRule", "PagerDutyTriggerRule", "PagerDutyRevivingDeathRule", "PagerDutyResolveRule", "PagerDutyHostLeaseRule",
                    "PagerDutyHostLeaseRestoredRule", "AlertWebhookRule", "DigestOnBurstRule", "DigestAlertRule",
                    "BurstResolvedAlertRule", "SlackDigestRule", "SlackBurstResolvedRule", "PagerDutyDigestRule",
                    "PagerDutyBurstResolvedRule", "FlappingAlertRule", "FlappingResolvedAlertRule", "FlapCheckOnFlappingRule",
                    "SlackFlappingRule", "SlackFlappingResolvedRule", "PagerDutyFlappingRule",
                    "PagerDutyFlappingResolvedRule", "StallDigestAlertRule", "StallBurstResolvedAlertRule")) {
                for (SamTemplate.Target t : rules.get(id).targets()) {
                    assertEquals(window, t.retry().maximumEventAge(), id + "/" + t.id());
                }
            }
            assertEquals(Duration.ofHours(24),
                    rules.get("ReviveOnDeathRule").targets().get(0).retry().maximumEventAge());
            Duration restart = rules.get("RestartWebhookRule").targets().get(0).retry().maximumEventAge();
            assertTrue(restart.compareTo(Duration.ofSeconds(Long.parseLong(
                    template.parameter("CommandTtlSeconds", Map.of())))) <= 0, "no retry past the command's life");
        }

        /**
         * The PagerDuty routing key and the Slack URL are in no rule: the key reaches PagerDuty's body from the
         * connection's secret body parameter, and the body a trigger sends is Events v2's with the key in it.
         */
        @Test
        void secrets_areInNoRule_andThePagerDutyKeyReachesTheBodyFromItsConnection() throws Exception {
            JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
            root.path("Resources").fields().forEachRemaining(r -> {
                if ("AWS::Events::Rule".equals(r.getValue().path("Type").asText())) {
                    String text = r.getValue().toString();
                    for (String secret : List.of("PagerDutyRoutingKey", "SlackWebhookUrl", "Secret")) {
                        assertFalse(text.contains(secret), r.getKey() + " mentions " + secret);
                    }
                }
            });
            assertEquals("true", root.path("Parameters").path("PagerDutyRoutingKey").path("NoEcho").asText());
            assertEquals("true", root.path("Parameters").path("SlackWebhookUrl").path("NoEcho").asText());

            String key = "0123456789abcdef0123456789abcdef";
            Map<String, String> withKey = new LinkedHashMap<>(ALL_OPTIONAL);
            withKey.put("PagerDutyRoutingKey", key);
            SamTemplate.Target trigger = template.rules(withKey).stream()
                    .filter(r -> r.logicalId().equals("PagerDutyTriggerRule")).findFirst().orElseThrow().targets().get(0);
            assertFalse(trigger.inputTemplate().contains(key));
            assertEquals(Map.of("routing_key", key), trigger.bodyParameters());
            ObjectNode body = ((ObjectNode) LocalEventBus.transform(trigger, envelope(
                    status(AgentStatus.WORKING, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, SILENT)))).deepCopy();
            trigger.bodyParameters().forEach(body::put);
            assertEquals(key, body.path("routing_key").asText());
            assertEquals("trigger", body.path("event_action").asText());
            assertEquals("lifeline/acme/a-1", body.path("dedup_key").asText());
            // The transition's seq rides along, so a receiver can order a trigger and its resolve.
            assertTrue(body.path("payload").path("custom_details").path("seq").isNumber(), body.toString());
        }

        /** Each destination has its own connection, so a credential reaches only the endpoint it is for. */
        @Test
        void eachApiDestination_hasItsOwnConnection() throws Exception {
            JsonNode resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile())
                    .path("Resources");
            Map<String, String> connectionOf = new LinkedHashMap<>();
            resources.fields().forEachRemaining(r -> {
                if ("AWS::Events::ApiDestination".equals(r.getValue().path("Type").asText())) {
                    connectionOf.put(r.getKey(), r.getValue().path("Properties").path("ConnectionArn").asText());
                }
            });
            assertEquals(4, connectionOf.size(), connectionOf.toString());
            assertEquals(connectionOf.size(), new HashSet<>(connectionOf.values()).size(), connectionOf.toString());
        }

        /** The rules' logical ids named by {@code !GetAtt X.Arn} anywhere under {@code node} (tags dropped: "X.Arn"). */
        private static Set<String> namedRuleArns(JsonNode node) {
            Set<String> out = new TreeSet<>();
            if (node.isTextual() && node.asText().endsWith("Rule.Arn")) {
                out.add(node.asText().substring(0, node.asText().length() - ".Arn".length()));
            }
            node.forEach(child -> out.addAll(namedRuleArns(child)));
            return out;
        }

        /**
         * The alerts topic lets EventBridge publish only for the rules that target it, and the dead-letter queue takes
         * messages only for the rules whose targets name it (aws:SourceArn), so no other rule of the account can use
         * either.
         */
        @Test
        void topicAndDeadLetterPolicies_nameExactlyTheRulesThatUseThem() throws Exception {
            JsonNode resources = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile())
                    .path("Resources");
            Set<String> topicRules = new TreeSet<>();
            Set<String> queueRules = new TreeSet<>();
            resources.fields().forEachRemaining(r -> {
                if ("AWS::Events::Rule".equals(r.getValue().path("Type").asText())) {
                    for (JsonNode t : r.getValue().path("Properties").path("Targets")) {
                        if (t.path("Arn").asText().equals("AlertsTopic")) {
                            topicRules.add(r.getKey());
                        }
                        if (t.path("DeadLetterConfig").path("Arn").asText().equals("DeliveryDeadLetterQueue.Arn")) {
                            queueRules.add(r.getKey());
                        }
                    }
                }
            });
            JsonNode eventsOnTopic = null;
            for (JsonNode st : resources.path("AlertsTopicPolicy").path("Properties").path("PolicyDocument").path("Statement")) {
                if (st.path("Principal").path("Service").asText().equals("events.amazonaws.com")) {
                    eventsOnTopic = st;
                }
            }
            assertEquals(topicRules, namedRuleArns(eventsOnTopic.path("Condition").path("ArnEquals")),
                    "the topic policy's aws:SourceArn");
            JsonNode queueStatement = resources.path("DeliveryDeadLetterQueuePolicy").path("Properties")
                    .path("PolicyDocument").path("Statement").get(0);
            assertEquals(queueRules, namedRuleArns(queueStatement.path("Condition").path("ArnEquals")),
                    "the queue policy's aws:SourceArn");
            assertEquals(rules.keySet(), queueRules, "every rule's target has the queue");
        }
    }
}
