package io.lifeline.local.aws.asl;

import static io.lifeline.local.aws.asl.Json.events;
import static io.lifeline.local.aws.asl.Json.machine;
import static io.lifeline.local.aws.asl.Json.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.testing.MutableClock;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class WaitTest {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private final MutableClock clock = new MutableClock(T0);

    private AslRunner runner(String waitFields, double timeScale) {
        return new AslRunner(AslMachine.load(machine("W", "\"W\": {\"Type\": \"Wait\", " + waitFields + ", \"Next\": \"Done\"},"
                + " \"Done\": {\"Type\": \"Succeed\"}")), (r, i) -> null, clock, timeScale);
    }

    /** Checks the execution is parked until exactly {@code until}: not resumed a millisecond before, done at it. */
    private void assertParkedUntil(AslRunner runner, Execution e, Instant until) {
        assertEquals(Optional.of(until), e.waitingUntil());
        assertEquals(until.toString(), events(e, "WaitStarted").get(0).detail().get("until").asText());
        clock.set(until.minusMillis(1));
        assertEquals(0, runner.runDue());
        assertEquals(Execution.Status.RUNNING, e.status());
        clock.set(until);
        assertEquals(2, runner.runDue()); // the end of the Wait, then the Succeed state
        assertEquals(Execution.Status.SUCCEEDED, e.status());
    }

    @Test
    void wait_seconds_parksForThatLong() {
        AslRunner runner = runner("\"Seconds\": 10", 1.0);

        Execution e = runner.start("x", parse("{\"keep\": 1}"));

        assertParkedUntil(runner, e, T0.plusSeconds(10));
        assertEquals(parse("{\"keep\": 1}"), e.output());
    }

    @Test
    void wait_secondsPath_readsSecondsFromInput() {
        AslRunner runner = runner("\"SecondsPath\": \"$.restart.checkAfter\"", 1.0);

        Execution e = runner.start("x", parse("{\"restart\": {\"checkAfter\": 30}}"));

        assertParkedUntil(runner, e, T0.plusSeconds(30));
    }

    @Test
    void wait_secondsPathNotAnInteger_failsWithStatesRuntime() {
        Execution e = runner("\"SecondsPath\": \"$.s\"", 1.0).start("x", parse("{\"s\": \"soon\"}"));

        assertEquals(Execution.Status.FAILED, e.status());
        assertEquals("States.Runtime", e.error());
    }

    @Test
    void wait_timestamp_parksUntilIt() {
        AslRunner runner = runner("\"Timestamp\": \"2025-01-01T00:05:00Z\"", 1.0);

        Execution e = runner.start("x", parse("{}"));

        assertParkedUntil(runner, e, T0.plusSeconds(300));
    }

    @Test
    void wait_timestampPath_readsTimestampFromInput() {
        AslRunner runner = runner("\"TimestampPath\": \"$.at\"", 1.0);

        Execution e = runner.start("x", parse("{\"at\": \"2025-01-01T01:10:00+01:00\"}"));

        assertParkedUntil(runner, e, T0.plusSeconds(600));
    }

    @Test
    void wait_timestampPathWithFraction_parksToTheMillisecond() {
        AslRunner runner = runner("\"TimestampPath\": \"$.at\"", 1.0);

        Execution e = runner.start("x", parse("{\"at\": \"2025-01-01T00:00:42.5Z\"}"));

        assertParkedUntil(runner, e, T0.plusMillis(42_500));
    }

    @Test
    void wait_pastTimestamp_continuesAtOnce() {
        Execution e = runner("\"Timestamp\": \"2020-01-01T00:00:00Z\"", 1.0).start("x", parse("{}"));

        assertEquals(Execution.Status.SUCCEEDED, e.status());
        assertEquals(1, events(e, "WaitStarted").size());
    }

    @Test
    void wait_timeScale_shortensSecondsAndTimestamps() {
        AslRunner bySeconds = runner("\"Seconds\": 100", 0.01);
        AslRunner byTimestamp = runner("\"Timestamp\": \"2025-01-01T00:01:40Z\"", 0.01);

        Execution seconds = bySeconds.start("x", parse("{}"));
        Execution timestamp = byTimestamp.start("x", parse("{}"));

        assertEquals(Optional.of(T0.plusSeconds(1)), seconds.waitingUntil());
        assertEquals(Optional.of(T0.plusSeconds(1)), timestamp.waitingUntil());
    }

    @Test
    void wait_inputPathAndOutputPath_shapeWhatItPassesOn() {
        AslRunner runner = runner("\"Seconds\": 0, \"InputPath\": \"$.a\", \"OutputPath\": \"$.b\"", 1.0);

        Execution e = runner.start("x", parse("{\"a\": {\"b\": 7}}"));

        assertEquals(parse("7"), e.output());
    }
}
