package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.TaskStatus;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.FlapStore;
import io.lifeline.store.outbox.OutboxMarks;
import io.lifeline.store.outbox.OutboxParking;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The outbox's use case over the real store, fed the live item's images before and after a change as the stream
 * brings them: a death becomes its ledger record, its task's hand-back and its events, sent once through the bus port,
 * and the item is finished (its published watermark at the death's seq); a replay sends nothing twice; a bus that takes
 * nothing hands the record back and finishes nothing. An agent that keeps stalling under {@code onStall: alert} (it
 * stays working) is counted in the flapping rule as a crash loop is: flagged once, at the same stall as it would be
 * as deaths, its later stalls and resumes marked {@code flapping}; a stall past the flag's bound is alerted and ends
 * the flag; a stall whose write was its restart's death is counted once, as the death.
 */
@Tag("store")
class OutboxTest {
    private static final Duration RETENTION = Duration.ofDays(30);

    @AutoClose
    final AppFixture f = new AppFixture();

    /** The bus port as a list: what it was sent, and whether it takes anything. */
    static final class SentEvents implements EventBus {
        final List<LifelineEvent> sent = new ArrayList<>();
        boolean takes = true;

        @Override
        public Outcome send(List<LifelineEvent> events) {
            if (!takes) {
                Set<String> unsent = new TreeSet<>();
                events.forEach(e -> unsent.add(e.eventId()));
                return new Outcome(0, unsent);
            }
            sent.addAll(events);
            return new Outcome(events.size(), Set.of());
        }
    }

    private final SentEvents bus = new SentEvents();

    private Outbox outbox() {
        Clock clock = Clock.fixed(AppFixture.T0.plusSeconds(60), ZoneOffset.UTC);
        var d = f.tables.dynamo;
        var t = f.tables.tables;
        return new Outbox(new TransitionLog(d, t, RETENTION),
                new DeathFollowUp(f.tasks, f.teams, new InboxStore(d, t, RETENTION)), new EventLog(d, t, RETENTION),
                new OutboxMarks(d, t), new OutboxParking(d, t, RETENTION),
                new AlertBursts(new AlertWindowStore(d, t, RETENTION), new AlertBursts.Settings(1,
                        Duration.ofSeconds(60), 20), clock),
                new AgentFlaps(new FlapStore(d, t, RETENTION), new AgentFlaps.Settings(4, Duration.ofMinutes(10),
                        Duration.ofMinutes(10), Duration.ofSeconds(15))),
                bus, clock);
    }

    private Map<String, AttributeValue> item(String team, String agentId) {
        return f.tables.dynamo.getItem(g -> g.tableName(f.tables.tables.live())
                .key(AgentItems.key(team, agentId)).consistentRead(true)).item();
    }

    /** In a team of its own, a working agent on task t-1, then its crash as its host reports it: the images. */
    private Outbox.Images death(String team) {
        new KeyStore(f.tables.dynamo, f.tables.tables).createTeam(team, f.tick());
        f.ready(team, "a");
        f.tasks.create(team, "t-1", "Write the report", null, f.tick());
        f.tasks.claim(team, "t-1", "a", f.tick());
        Map<String, AttributeValue> before = item(team, "a");
        f.changes.fail(team, "a", "exit 1", f.tick());
        return new Outbox.Images("1", before, item(team, "a"));
    }

    private static List<String> types(List<LifelineEvent> events) {
        return events.stream().map(LifelineEvent::type).sorted().toList();
    }

    @Test
    void run_aDeath_recordsItHandsTheTaskBackSendsItsEventsOnceAndFinishesTheItem() {
        String team = AppFixture.team("death");
        Outbox.Images death = death(team);

        Outbox.Batch batch = outbox().run(List.of(death));

        assertEquals(1, batch.failedAt(), "nothing handed back");
        assertEquals(List.of(EventCatalogue.AGENT_STATUS_CHANGED, EventCatalogue.TASKS_REASSIGNED), types(bus.sent));
        assertEquals(2, batch.put());
        assertEquals(TaskStatus.PENDING, f.tasks.list(team, null).get(0).status());
        Agent dead = f.agents.get(team, "a").orElseThrow();
        assertEquals(AgentStatus.DEAD, dead.status());
        // Finished: the item keeps only the change's seq and time, and the rest is read from its ledger record.
        long seq = dead.lastTransition().seq();
        assertEquals(Long.toString(seq), item(team, "a").get(AgentItems.PUBLISHED_SEQ).n());
        assertEquals(Trigger.REPORTED_FAILURE, dead.lastTransition().trigger());
        assertEquals(AgentStatus.WORKING, dead.lastTransition().from());
        assertNull(dead.currentTaskId(), "the stopped life's task is cleared from the item");
    }

    @Test
    void run_theSameChangeAgain_sendsNothingTwice() {
        String team = AppFixture.team("replay");
        Outbox.Images death = death(team);
        Outbox outbox = outbox();
        outbox.run(List.of(death));

        Outbox.Batch again = outbox().run(List.of(death));

        assertEquals(1, again.failedAt());
        assertEquals(0, again.put(), "the event log holds them: none is sent again");
        assertEquals(2, bus.sent.size());
    }

    @Test
    void run_whenTheBusTakesNothing_handsTheRecordBackAndFinishesNothing() {
        String team = AppFixture.team("refused");
        Outbox.Images death = death(team);
        bus.takes = false;

        Outbox.Batch batch = outbox().run(List.of(death));

        assertEquals(0, batch.failedAt(), "the record comes back with the batch");
        assertEquals(2, batch.unsent());
        assertNull(item(team, "a").get(AgentItems.PUBLISHED_SEQ), "not finished: no published watermark");
        assertEquals(0, bus.sent.size());
    }

    // ---- stalls under onStall: alert ------------------------------------------------------------------

    private final SweepStore sweeps = new SweepStore(f.tables.dynamo, f.tables.tables, 1);

    /** A progress report of agent a, working: its item's last progress. */
    private Instant progress(String team) {
        return f.writes.heartbeat(new Heartbeat(team, "a", AgentStatus.WORKING, null, null, null, null, null)
                .withProgress(Heartbeat.Reported.NOW), f.tick()).progress().lastProgressAt();
    }

    private static Liveness.ProgressSeen seen(String team, Instant progressAt, Instant stalledSince) {
        return new Liveness.ProgressSeen(team, "a", AgentStatus.WORKING, new Liveness.Progress(progressAt, false, null),
                false, false, null, null, stalledSince);
    }

    /** The sweep's raise of a stall of agent a (working, its last progress {@code progressAt}): its images. */
    private Outbox.Images stall(String team, Instant progressAt, boolean restart, int n) {
        Map<String, AttributeValue> before = item(team, "a");
        assertTrue(sweeps.raiseStall(seen(team, progressAt, null), Liveness.NO_PROGRESS_REPORTED, restart, f.tick()));
        return new Outbox.Images("s" + n, before, item(team, "a"));
    }

    /** Progress again and the sweep's resolve of agent a's stall: its images. */
    private Outbox.Images resume(String team, int n) {
        Instant since = f.agents.require(team, "a").stall().since();
        Instant progressAt = progress(team);
        Map<String, AttributeValue> before = item(team, "a");
        assertTrue(sweeps.resolveStall(seen(team, progressAt, since)));
        return new Outbox.Images("r" + n, before, item(team, "a"));
    }

    private static List<LifelineEvent> of(List<LifelineEvent> events, String type) {
        return events.stream().filter(e -> e.type().equals(type)).toList();
    }

    @Test
    void anAgentThatStallsFourTimes_isFlaggedOnceAtItsThirdStall_andItsLaterStallsAndResumesCarryTheFlag() {
        String team = AppFixture.team("stalls");
        new KeyStore(f.tables.dynamo, f.tables.tables).createTeam(team, f.tick());
        f.ready(team, "a");
        Outbox outbox = outbox();
        Outbox.Images last = stalls(outbox, team, 4);
        // The same resume handled again (a stream retry) counts nothing and raises nothing new.
        assertEquals(0, outbox.run(List.of(last)).put(), "its events are logged: none sent again");

        assertEquals(1, of(bus.sent, EventCatalogue.AGENT_FLAPPING).size(), "one flapping notice");
        LifelineEvent flag = of(bus.sent, EventCatalogue.AGENT_FLAPPING).get(0);
        assertEquals(5, flag.detail().path("changes").asInt(), "the third stall's start: the fifth change");
        assertEquals("stalled", flag.detail().path("status").asText());
        assertFalse(flag.detail().has("seq"), "a stall changes no status");
        List<LifelineEvent> stalls = of(bus.sent, EventCatalogue.AGENT_STALLED);
        List<LifelineEvent> resumes = of(bus.sent, EventCatalogue.AGENT_PROGRESS_RESUMED);
        assertEquals(4, stalls.size(), "every stall is published");
        assertEquals(4, resumes.size(), "and every resume");
        String since = flag.detail().path("since").asText();
        assertEquals(List.of(false, false, true, true), stalls.stream().map(e -> e.detail().has("flapping")).toList());
        assertEquals(List.of(false, false, true, true), resumes.stream().map(e -> e.detail().has("flapping")).toList());
        assertEquals(since, stalls.get(3).detail().path("flapping").asText());
        assertEquals(since, f.agents.require(team, "a").flappingSince().toString(), "the agent view shows the flag");

        // The flag's check resolves it as it does a crash loop's: the newest change counted was the last resume.
        FlapStore store = new FlapStore(f.tables.dynamo, f.tables.tables, RETENTION);
        FlapStore.Flaps flaps = store.read(team, "a");
        assertEquals(8, flaps.count());
        assertEquals(resumes.get(3).at(), flaps.last());
        assertEquals("working", flaps.lastStatus());
        assertFalse(store.resolve(team, "a", Instant.parse(since), stalls.get(3).at()), "not at an older change");
        assertTrue(store.resolve(team, "a", Instant.parse(since), flaps.last()));
    }

    /** Agent a stalls {@code n} times, each stall ended by progress, each change through the outbox: the last end. */
    private Outbox.Images stalls(Outbox outbox, String team, int n) {
        Outbox.Images last = null;
        for (int i = 1; i <= n; i++) {
            Instant progressAt = progress(team);
            assertEquals(1, outbox.run(List.of(stall(team, progressAt, false, i))).failedAt());
            last = resume(team, i);
            assertEquals(1, outbox.run(List.of(last)).failedAt());
        }
        return last;
    }

    @Test
    void aStallPastTheFlagsBound_isNotHeld_andEndsTheFlag_whenItsCheckNeverRan() {
        String team = AppFixture.team("lapse");
        new KeyStore(f.tables.dynamo, f.tables.tables).createTeam(team, f.tick());
        f.ready(team, "a");
        Outbox outbox = outbox();
        stalls(outbox, team, 3);
        assertEquals(1, of(bus.sent, EventCatalogue.AGENT_FLAPPING).size());
        String since = of(bus.sent, EventCatalogue.AGENT_FLAPPING).get(0).detail().path("since").asText();
        // 615 s (the stable window and one sweep) after the newest change, with no check run: the next stall.
        f.skip(Duration.ofSeconds(615));
        Instant progressAt = progress(team);
        outbox.run(List.of(stall(team, progressAt, false, 5)));

        LifelineEvent fifth = of(bus.sent, EventCatalogue.AGENT_STALLED).get(3);
        assertFalse(fifth.detail().has("flapping"), "past the bound: alerted as ever");
        List<LifelineEvent> resolved = of(bus.sent, EventCatalogue.AGENT_FLAPPING_RESOLVED);
        assertEquals(1, resolved.size(), "the flag ends, once");
        assertEquals(since, resolved.get(0).detail().path("since").asText());
        assertEquals("working", resolved.get(0).detail().path("status").asText(), "what it was before the stall");
        assertNull(f.agents.require(team, "a").flappingSince(), "the agent view's mark is gone");
        assertNull(new FlapStore(f.tables.dynamo, f.tables.tables, RETENTION).read(team, "a").flaggedAt());
    }

    @Test
    void aStallWhoseWriteIsItsRestartsDeath_countsOnce_asTheDeath() {
        String team = AppFixture.team("restart");
        new KeyStore(f.tables.dynamo, f.tables.tables).createTeam(team, f.tick());
        f.ready(team, "a");
        Outbox outbox = outbox();
        Instant progressAt = progress(team);
        outbox.run(List.of(stall(team, progressAt, true, 1)));

        assertEquals(List.of(EventCatalogue.AGENT_STALLED, EventCatalogue.AGENT_STATUS_CHANGED),
                types(bus.sent).stream().filter(t -> !t.equals(EventCatalogue.TASKS_REASSIGNED)).toList());
        FlapStore.Flaps flaps = new FlapStore(f.tables.dynamo, f.tables.tables, RETENTION).read(team, "a");
        assertEquals(1, flaps.count(), "the death, not its stall too");
        assertEquals("dead", flaps.lastStatus());
        assertEquals(0, flaps.stall(), "no stall change counted");
    }
}
