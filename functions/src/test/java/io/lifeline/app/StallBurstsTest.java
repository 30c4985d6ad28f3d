package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.Liveness;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.FlapStore;
import io.lifeline.store.outbox.OutboxMarks;
import io.lifeline.store.outbox.OutboxParking;
import io.lifeline.store.outbox.StallWindowStore;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A burst of stalls through the outbox's use case over the real store (docs/alerts-noise.md), threshold 1: three
 * agents stall in one window; the first is alerted one by one, the other two carry {@code burst}, and the window's
 * {@code AlertStallBurstStarted} is raised once; every record handled again (a stream retry) decides the same and
 * counts nothing twice; the ends carry {@code burst} as their starts did, and the last raises the one
 * {@code AlertStallBurstResolved}. A death of the same window counts as it always did, on its own head count.
 */
@Tag("store")
class StallBurstsTest {
    private static final Duration RETENTION = Duration.ofDays(30);

    @AutoClose
    final AppFixture f = new AppFixture();
    private final OutboxTest.SentEvents bus = new OutboxTest.SentEvents();
    private final SweepStore sweeps = new SweepStore(f.tables.dynamo, f.tables.tables, 1);
    private final AlertWindowStore windows = new AlertWindowStore(f.tables.dynamo, f.tables.tables, RETENTION);

    private Outbox outbox() {
        Clock clock = Clock.fixed(AppFixture.T0.plusSeconds(30), ZoneOffset.UTC);
        var d = f.tables.dynamo;
        var t = f.tables.tables;
        return new Outbox(new TransitionLog(d, t, RETENTION),
                new DeathFollowUp(f.tasks, f.teams, new InboxStore(d, t, RETENTION)), new EventLog(d, t, RETENTION),
                new OutboxMarks(d, t), new OutboxParking(d, t, RETENTION),
                new AlertBursts(windows, new AlertBursts.Settings(1, Duration.ofSeconds(60), 20), clock),
                new AgentFlaps(new FlapStore(d, t, RETENTION), new AgentFlaps.Settings(4, Duration.ofMinutes(10),
                        Duration.ofMinutes(10), Duration.ofSeconds(15))),
                bus, clock);
    }

    private Map<String, AttributeValue> item(String team) {
        return f.tables.dynamo.getItem(g -> g.tableName(f.tables.tables.live())
                .key(AgentItems.key(team, "a")).consistentRead(true)).item();
    }

    private static Liveness.ProgressSeen seen(String team, Instant progressAt, Instant stalledSince) {
        return new Liveness.ProgressSeen(team, "a", AgentStatus.WORKING, new Liveness.Progress(progressAt, false, null),
                false, false, null, null, stalledSince);
    }

    private Instant progress(String team) {
        return f.writes.heartbeat(new Heartbeat(team, "a", AgentStatus.WORKING, null, null, null, null, null)
                .withProgress(Heartbeat.Reported.NOW), f.tick()).progress().lastProgressAt();
    }

    /** The sweep's raise of a stall of team's agent a: its images. */
    private Outbox.Images stall(String team, int n) {
        Instant progressAt = progress(team);
        Map<String, AttributeValue> before = item(team);
        assertTrue(sweeps.raiseStall(seen(team, progressAt, null), Liveness.NO_PROGRESS_REPORTED, false, f.tick()));
        return new Outbox.Images("s" + n, before, item(team));
    }

    /** Progress again and the sweep's resolve of team's agent a's stall: its images. */
    private Outbox.Images resume(String team, int n) {
        Instant since = f.agents.require(team, "a").stall().since();
        Instant progressAt = progress(team);
        Map<String, AttributeValue> before = item(team);
        assertTrue(sweeps.resolveStall(seen(team, progressAt, since)));
        return new Outbox.Images("r" + n, before, item(team));
    }

    private List<LifelineEvent> sent(String type) {
        return bus.sent.stream().filter(e -> e.type().equals(type)).toList();
    }

    @Test
    void threeStallsOfOneWindow_pastAThresholdOf1_theLaterTwoInTheBurst_retriesCountNothingTwice_andOneResolve() {
        Outbox outbox = outbox();
        List<String> teams = new ArrayList<>();
        List<Outbox.Images> starts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String team = AppFixture.team("brown" + i);
            new KeyStore(f.tables.dynamo, f.tables.tables).createTeam(team, f.tick());
            f.ready(team, "a");
            teams.add(team);
            Outbox.Images s = stall(team, i);
            assertEquals(1, outbox.run(List.of(s)).failedAt());
            starts.add(s);
        }
        // A stream retry of every start, in a new container (it remembers nothing): the same decisions.
        assertEquals(0, outbox().run(starts).put(), "logged already: nothing sent again");

        List<LifelineEvent> stalls = sent(EventCatalogue.AGENT_STALLED);
        assertEquals(List.of(false, true, true), stalls.stream().map(e -> e.detail().has("burst")).toList());
        assertEquals(1, sent(EventCatalogue.ALERT_STALL_BURST_STARTED).size());
        Instant window = Instant.parse(stalls.get(1).detail().path("burst").asText());
        assertEquals(AppFixture.T0, window);
        StallWindowStore counts = windows.stalls();
        assertEquals(new StallWindowStore.Totals(3, 0, 0), counts.totals(window), "each stall counted once");
        assertEquals(2, counts.head(window).counted(), "the head counts up to threshold + 1 and no further");
        assertEquals(null, windows.head(window).lead(), "a stall sets no death's PagerDuty key");
        assertEquals(0, windows.totals(window).deaths(), "no death counted");

        List<Outbox.Images> ends = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Outbox.Images r = resume(teams.get(i), i);
            assertEquals(1, outbox.run(List.of(r)).failedAt());
            ends.add(r);
        }
        assertEquals(0, outbox().run(ends).put(), "a retry of the ends raises nothing new");
        List<LifelineEvent> resumes = sent(EventCatalogue.AGENT_PROGRESS_RESUMED);
        assertEquals(List.of(false, true, true), resumes.stream().map(e -> e.detail().has("burst")).toList(),
                "an end is in the burst when its start was");
        List<LifelineEvent> resolved = sent(EventCatalogue.ALERT_STALL_BURST_RESOLVED);
        assertEquals(1, resolved.size());
        assertEquals(3, resolved.get(0).detail().path("back").asInt(), resolved.get(0).detail()::toString);
        assertEquals(0, resolved.get(0).detail().path("ended").asInt());
        assertEquals(new StallWindowStore.Totals(3, 3, 3), counts.totals(window), "each end counted once");
        assertEquals(List.of(), sent(EventCatalogue.ALERT_BURST_STARTED), "no burst of deaths");
    }
}
