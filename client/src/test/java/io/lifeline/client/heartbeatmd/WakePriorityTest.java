package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The heartbeat.md format's [BG] (concurrent, bounded, awaited) and [LOW] (only within the wake's time budget). */
@Tag("unit")
class WakePriorityTest {
    private static final Instant T0 = Instant.parse("2024-01-15T10:32:15Z");

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);

    /** A heartbeat.md with one block per {@code priority, id, type, extra field lines...} entry. */
    private Path file(String[]... actions) throws Exception {
        List<String> lines = new ArrayList<>(List.of("---", "version: 1", "status: idle", "---", "", "# Heartbeat", "",
                "## Pending Actions", ""));
        for (String[] a : actions) {
            lines.add("### [" + a[0] + "] Action " + a[1]);
            lines.add("- **id**: " + a[1]);
            lines.add("- **type**: " + a[2]);
            lines.add("- **status**: pending");
            for (int i = 3; i < a.length; i++) {
                lines.add("- **" + a[i].replaceFirst(":.*", "") + "**: " + a[i].replaceFirst("^[^:]*: ", ""));
            }
            lines.add("");
        }
        Path f = dir.resolve("heartbeat.md");
        Files.writeString(f, String.join("\n", lines));
        return f;
    }

    private static String[] action(String... parts) {
        return parts;
    }

    private static ActionRunner.Outcome ok(String message) {
        return new ActionRunner.Outcome(true, message, Duration.ofMillis(100));
    }

    private static String block(String text, String id) {
        int start = text.indexOf("- **id**: " + id);
        int end = text.indexOf("###", start);
        return text.substring(start, end < 0 ? text.length() : end);
    }

    @Test
    void bg_actionsRunConcurrently_noMoreThanTheBound_andAllAreAwaitedAndRecorded() throws Exception {
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch allFour = new CountDownLatch(4);
        ActionRunner probe = (a, base) -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            allFour.countDown();
            try {
                // Waits for all four to be running at once, which the bound of two never allows: each gives up.
                allFour.await(300, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inFlight.decrementAndGet();
            return ok("done " + a.id());
        };
        Path f = file(action("BG", "bg-1", "probe"), action("BG", "bg-2", "probe"), action("BG", "bg-3", "probe"),
                action("BG", "bg-4", "probe"));
        WakeResult r = Wake.run(f, clock, WakeOptions.defaults().withRunners(Map.of("probe", probe))
                .withBackgroundParallelism(2));

        assertEquals(2, most.get(), "two at once, never more");
        assertEquals(4, r.succeeded().size());
        assertEquals(List.of("bg-1", "bg-2", "bg-3", "bg-4"), r.ran().stream().map(WakeResult.Attempt::actionId).toList());
        String out = Files.readString(f);
        for (String id : List.of("bg-1", "bg-2", "bg-3", "bg-4")) {
            assertTrue(block(out, id).contains("- **status**: completed\n"), out);
            assertTrue(block(out, id).contains("- **result**: done " + id), out);
        }
    }

    @Test
    void bg_runsAlongsideTheForeground_notAfterIt() throws Exception {
        CountDownLatch bgStarted = new CountDownLatch(1);
        CountDownLatch fgDone = new CountDownLatch(1);
        ActionRunner background = (a, base) -> {
            bgStarted.countDown();
            try {
                return fgDone.await(10, TimeUnit.SECONDS) ? ok("saw the foreground finish")
                        : new ActionRunner.Outcome(false, "foreground never finished", Duration.ZERO);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        };
        ActionRunner foreground = (a, base) -> {
            try {
                // Had [BG] run after the foreground (sequentially), this would wait in vain.
                boolean alongside = bgStarted.await(10, TimeUnit.SECONDS);
                fgDone.countDown();
                return alongside ? ok("bg was running") : new ActionRunner.Outcome(false, "bg not running",
                        Duration.ZERO);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        };
        Path f = file(action("HIGH", "fg-1", "fg"), action("BG", "bg-1", "bg"));
        WakeResult r = Wake.run(f, clock, WakeOptions.defaults().withRunners(Map.of("fg", foreground, "bg", background)));
        assertEquals(2, r.succeeded().size(), r.ran().toString());
        assertTrue(r.failed().isEmpty());
    }

    @Test
    void bg_failureIsRecordedWithItsRetry_andOneWaitingOnAForegroundActionRunsOnceItCompletes() throws Exception {
        ActionRunner fails = (a, base) -> new ActionRunner.Outcome(false, "disk full", Duration.ofMillis(5));
        ActionRunner works = (a, base) -> ok("fine");
        Path f = file(action("BG", "bg-fail", "fails", "retry: 3"), action("MEDIUM", "fg-1", "works"),
                action("BG", "bg-after", "works", "depends_on: fg-1"));
        WakeResult r = Wake.run(f, clock, WakeOptions.defaults().withRunners(Map.of("fails", fails, "works", works)));
        String out = Files.readString(f);
        assertTrue(block(out, "bg-fail").contains("- **status**: failed\n- **retry**: 3\n- **failed_at**: 2024-01-15T10:32:15Z\n"
                + "- **error**: disk full\n- **retry_count**: 1/3\n- **next_retry**: 2024-01-15T10:33:15Z"), out);
        assertTrue(block(out, "bg-after").contains("- **status**: completed"), out);
        assertEquals(List.of("fg-1", "bg-fail", "bg-after"), r.ran().stream().map(WakeResult.Attempt::actionId)
                .toList());
        assertTrue(out.contains("status: error\n") && out.contains("last_error: \"bg-fail: disk full\""), out);
    }

    @Test
    void low_runsOnlyWhenItFitsTheBudget_elseStaysPendingWithTheReason_andRunsOnALaterWake() throws Exception {
        // The MEDIUM action takes 4 of the budget's 5 minutes (on the test clock).
        ActionRunner slow = (a, base) -> {
            clock.advance(Duration.ofMinutes(4));
            return ok("slow done");
        };
        ActionRunner quick = (a, base) -> ok("quick done");
        Path f = file(action("MEDIUM", "slow-1", "slow"),
                action("LOW", "low-fits", "quick", "timeout: 30s"),
                action("LOW", "low-big", "quick", "timeout: 5m"),
                action("LOW", "low-known", "quick", "timeout: 1h", "duration: 2.5s"));
        WakeResult r = Wake.run(f, clock, WakeOptions.defaults().withRunners(Map.of("slow", slow, "quick", quick))
                .withBudget(Duration.ofMinutes(5)));

        assertEquals(List.of("slow-1", "low-fits", "low-known"), r.ran().stream().map(WakeResult.Attempt::actionId)
                .toList());
        assertEquals(1, r.heldBack().size());
        WakeResult.HeldBack held = r.heldBack().get(0);
        assertEquals("low-big", held.actionId());
        assertEquals(Evaluator.Verdict.DEFERRED, held.verdict());
        assertEquals("deferred: not enough of the wake's time budget left (1m; its timeout is 5m)", held.reason());
        String out = Files.readString(f);
        assertTrue(block(out, "low-big").contains("- **status**: pending\n- **timeout**: 5m\n- **deferred**: " + held.reason()),
                out);
        // A deferred action is still due: the next wake comes within the retry delay (1 min), not "never".
        assertEquals(clock.instant().plus(Duration.ofMinutes(1)), r.nextWake());
        assertFalse(out.contains("status: error"));

        clock.advance(Duration.ofMinutes(1));
        WakeResult later = Wake.run(f, clock, WakeOptions.defaults().withRunners(Map.of("slow", slow, "quick", quick))
                .withBudget(Duration.ofMinutes(5)));
        assertEquals(List.of("low-big"), later.ran().stream().map(WakeResult.Attempt::actionId).toList());
        String after = Files.readString(f);
        assertTrue(block(after, "low-big").contains("- **status**: completed"), after);
        assertFalse(after.contains("deferred"), after);
    }
}
