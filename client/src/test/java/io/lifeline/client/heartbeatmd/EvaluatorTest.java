package io.lifeline.client.heartbeatmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class EvaluatorTest {
    private static final Instant NOW = Instant.parse("2024-01-15T10:32:00Z");

    @TempDir
    Path dir;

    private static String file(String lastWake, String... blocks) {
        StringBuilder s = new StringBuilder("---\nversion: 1\n");
        if (lastWake != null) {
            s.append("last_wake: ").append(lastWake).append('\n');
        }
        s.append("---\n\n# Heartbeat\n\n## Pending Actions\n\n");
        for (String b : blocks) {
            s.append(b).append('\n');
        }
        return s.toString();
    }

    private static String action(String priority, String id, String... fields) {
        StringBuilder s = new StringBuilder("### [" + priority + "] Action " + id + "\n- **id**: " + id
                + "\n- **type**: shell\n- **command**: true\n");
        for (String f : fields) {
            s.append("- **").append(f.substring(0, f.indexOf('='))).append("**: ").append(f.substring(f.indexOf('=') + 1))
                    .append('\n');
        }
        return s.toString();
    }

    private Evaluator.Evaluation evaluate(String text, Map<String, String> env, boolean startup) {
        return new Evaluator(Clock.fixed(NOW, ZoneOffset.UTC), env::get)
                .evaluate(HeartbeatFile.parse(text), dir, startup);
    }

    private Evaluator.Evaluation evaluate(String text) {
        return evaluate(text, Map.of(), false);
    }

    private static List<String> ids(List<Action> actions) {
        return actions.stream().map(Action::id).toList();
    }

    @Test
    void evaluate_seedScheduleEvaluationExample_executesBAndCButNotA() {
        Evaluator.Evaluation e = evaluate(file("2024-01-15T10:30:00Z",
                action("MEDIUM", "A", "schedule=every:5m", "status=pending", "last_run=2024-01-15T10:30:00Z"),
                action("MEDIUM", "B", "schedule=every:5m", "status=pending", "last_run=2024-01-15T10:25:00Z"),
                action("MEDIUM", "C", "schedule=cron:*/10 * * * *", "status=pending", "last_run=2024-01-15T10:20:00Z")));
        assertEquals(Evaluator.Verdict.NOT_DUE, e.decision("A").verdict());
        assertEquals(Instant.parse("2024-01-15T10:35:00Z"), e.decision("A").dueAt());
        assertEquals(Instant.parse("2024-01-15T10:30:00Z"), e.decision("B").dueAt());
        assertEquals(Instant.parse("2024-01-15T10:30:00Z"), e.decision("C").dueAt());
        assertEquals(List.of("B", "C"), ids(e.due()));
    }

    @Test
    void evaluate_atSchedule_dueOnlyOncePassedAndWhilePending() {
        Evaluator.Evaluation e = evaluate(file(null,
                action("LOW", "past", "schedule=at:2024-01-15T10:00:00Z"),
                action("LOW", "future", "schedule=at:2024-01-15T14:00:00Z"),
                action("LOW", "done", "schedule=at:2024-01-15T10:00:00Z", "status=completed",
                        "completed_at=2024-01-15T10:00:05Z")));
        assertEquals(List.of("past"), ids(e.due()));
        assertEquals(Instant.parse("2024-01-15T14:00:00Z"), e.decision("future").dueAt());
        assertNull(e.decision("done").dueAt());
    }

    @Test
    void evaluate_everyNeverRun_isDueNow() {
        assertEquals(List.of("x"), ids(evaluate(file(null, action("LOW", "x", "schedule=every:30s"))).due()));
    }

    @Test
    void evaluate_everyCompleted_isDueAgainAfterInterval() {
        Evaluator.Evaluation e = evaluate(file(null,
                action("LOW", "x", "schedule=every:1h", "status=completed", "completed_at=2024-01-15T09:30:00Z"),
                action("LOW", "y", "schedule=every:1h", "status=completed", "completed_at=2024-01-15T10:00:00Z")));
        assertEquals(List.of("x"), ids(e.due()));
        assertEquals(Instant.parse("2024-01-15T11:00:00Z"), e.decision("y").dueAt());
    }

    @Test
    void evaluate_dailyAndHourlyNeverRun_dueWhenSlotPassedSinceLastWake() {
        Evaluator.Evaluation e = evaluate(file("2024-01-15T09:55:00Z",
                action("LOW", "hourly", "schedule=hourly"),
                action("LOW", "daily", "schedule=daily:02:00"),
                action("LOW", "daily-past", "schedule=daily:10:15")));
        assertEquals(List.of("hourly", "daily-past"), ids(e.due()));
        assertEquals(Instant.parse("2024-01-16T02:00:00Z"), e.decision("daily").dueAt());
    }

    @Test
    void evaluate_calendarNeverRunAndNoLastWake_waitsForFirstSlot() {
        Evaluator.Evaluation e = evaluate(file(null, action("LOW", "d", "schedule=daily:02:00"),
                action("LOW", "c", "schedule=cron:0 * * * *")));
        assertEquals(List.of(), ids(e.due()));
        assertEquals(Instant.parse("2024-01-16T02:00:00Z"), e.decision("d").dueAt());
        assertEquals(Instant.parse("2024-01-15T11:00:00Z"), e.decision("c").dueAt());
    }

    @Test
    void evaluate_dailyRanToday_isDueTomorrow() {
        Evaluator.Evaluation e = evaluate(file("2024-01-15T10:30:00Z", action("LOW", "d", "schedule=daily:02:00",
                "status=completed", "completed_at=2024-01-15T02:00:03Z")));
        assertEquals(Instant.parse("2024-01-16T02:00:00Z"), e.decision("d").dueAt());
        assertEquals(List.of(), ids(e.due()));
    }

    @Test
    void evaluate_startup_dueOnStartupWakeOrFirstWakeOnly() {
        String later = file("2024-01-15T10:30:00Z", action("LOW", "s", "schedule=startup", "status=completed",
                "completed_at=2024-01-15T10:00:00Z"));
        assertEquals(List.of(), ids(evaluate(later).due()));
        assertEquals(List.of("s"), ids(evaluate(later, Map.of(), true).due()));
        assertEquals(List.of("s"), ids(evaluate(file(null, action("LOW", "s", "schedule=startup"))).due()));
    }

    @Test
    void evaluate_onChange_dueWhenWatchedFileHashDiffers() throws Exception {
        Files.writeString(dir.resolve("config.yaml"), "a: 1\n");
        String hash = Evaluator.hashOf(dir.resolve("config.yaml"));
        String unchanged = file(null, action("LOW", "w", "schedule=on_change:config.yaml", "status=completed",
                "watched_hash=" + hash));
        assertEquals(List.of(), ids(evaluate(unchanged).due()));
        Files.writeString(dir.resolve("config.yaml"), "a: 2\n");
        assertEquals(List.of("w"), ids(evaluate(unchanged).due()));
        assertEquals(List.of("n"), ids(evaluate(file(null, action("LOW", "n", "schedule=on_change:config.yaml"))).due()));
    }

    @Test
    void evaluate_dueActions_orderedByPriorityThenFileOrder() {
        Evaluator.Evaluation e = evaluate(file(null, action("BG", "bg"), action("LOW", "low"), action("MEDIUM", "m1"),
                action("CRITICAL", "crit"), action("HIGH", "high"), action("MEDIUM", "m2")));
        assertEquals(List.of("crit", "high", "m1", "m2", "low", "bg"), ids(e.due()));
    }

    @Test
    void evaluate_dependencyNotCompleted_isBlocked() {
        Evaluator.Evaluation e = evaluate(file(null,
                action("LOW", "first", "schedule=at:2024-01-15T11:00:00Z"),
                action("LOW", "second", "depends_on=first"),
                action("LOW", "base", "status=completed", "completed_at=2024-01-15T10:00:00Z"),
                action("LOW", "third", "depends_on=base")));
        assertEquals(Evaluator.Verdict.BLOCKED, e.decision("second").verdict());
        assertEquals("waiting on first (pending)", e.decision("second").reason());
        assertEquals(List.of("third"), ids(e.due()));
    }

    @Test
    void evaluate_conditions_fileExistsEnvAndNot() throws Exception {
        Files.writeString(dir.resolve("ready.flag"), "");
        String text = file(null,
                action("LOW", "f1", "condition=file_exists:ready.flag"),
                action("LOW", "f2", "condition=file_exists:missing.flag"),
                action("LOW", "e1", "condition=env:DEPLOY"),
                action("LOW", "e2", "condition=env:MODE=prod"),
                action("LOW", "e3", "condition=env:MODE=dev"),
                action("LOW", "n1", "condition=not:env:PAUSED"),
                action("LOW", "n2", "condition=not:file_exists:ready.flag"));
        Evaluator.Evaluation e = evaluate(text, Map.of("DEPLOY", "yes", "MODE", "prod"), false);
        assertEquals(List.of("f1", "e1", "e2", "n1"), ids(e.due()));
        assertEquals(Evaluator.Verdict.SKIPPED, e.decision("f2").verdict());
        assertEquals("condition 'env:MODE=dev' does not hold", e.decision("e3").reason());
    }

    @Test
    void evaluate_failedWithAttemptsLeft_isDueAtNextRetry() {
        Evaluator.Evaluation e = evaluate(file(null,
                action("HIGH", "r", "retry=3", "status=failed", "failed_at=2024-01-15T10:30:00Z",
                        "retry_count=1/3", "next_retry=2024-01-15T10:31:00Z"),
                action("HIGH", "later", "retry=3", "status=failed", "failed_at=2024-01-15T10:30:00Z",
                        "retry_count=2/3", "next_retry=2024-01-15T10:37:15Z"),
                action("HIGH", "spent", "retry=3", "status=failed", "failed_at=2024-01-15T10:30:00Z",
                        "retry_count=3/3")));
        assertEquals(List.of("r"), ids(e.due()));
        assertEquals(Instant.parse("2024-01-15T10:37:15Z"), e.decision("later").dueAt());
        assertNull(e.decision("spent").dueAt());
    }
}
