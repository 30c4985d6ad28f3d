package io.lifeline.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.support.Json;
import io.lifeline.testing.LogCapture;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sweep asks the gate it was built with whether a due sweep judges, once, with its one reading of the time and
 * how late the sweep is; a held sweep judges nobody (it reads no table) and its line says so. The Lambda runtime's
 * handler judges every sweep. Local's own gate, and the sweep end to end: infra/local's LateSweepGateTest,
 * LateSweepTest, SweepClockTest.
 */
@Tag("unit")
class SweepGateTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:20Z");

    @RegisterExtension
    final LogCapture log = new LogCapture();

    private static SweepHandler handler(SweepGate gate) {
        Config config = Config.fromEnvironment(Map.of("LIVE_TABLE", "live", "LEDGER_TABLE", "ledger",
                "SWEEPS_PER_INVOCATION", "1"));
        // No DynamoDB client: a held sweep must not reach the store.
        return new SweepHandler(new Wiring(config, Clock.fixed(NOW, ZoneOffset.UTC), null), gate);
    }

    private static SQSEvent queuedSweepDueAt(Instant due) {
        SQSEvent.MessageAttribute a = new SQSEvent.MessageAttribute();
        a.setDataType("String");
        a.setStringValue(due.toString());
        SQSEvent.SQSMessage m = new SQSEvent.SQSMessage();
        m.setMessageId("m-1");
        m.setMessageAttributes(Map.of(SweepHandler.DUE_AT, a));
        SQSEvent event = new SQSEvent();
        event.setRecords(List.of(m));
        return event;
    }

    @Test
    void aHeldSweep_judgesNobody_andItsLineNamesTheHold() throws Exception {
        List<Duration> asked = new ArrayList<>();
        Instant until = NOW.plusSeconds(10);
        SweepHandler sweep = handler((now, late) -> {
            assertEquals(NOW, now, "the sweep's one reading of the time");
            asked.add(late);
            return new SweepGate.Hold(until);
        });

        assertEquals(List.of(), sweep.handleQueued(queuedSweepDueAt(NOW.minusSeconds(20)), null));

        assertEquals(List.of(Duration.ofSeconds(20)), asked, "asked once, with the lateness against dueAt");
        JsonNode line = Json.parse(log.lines().get(log.lines().size() - 1));
        assertEquals("skipped_late", line.path("outcome").asText(), line.toString());
        assertEquals(20_000, line.path("lateMs").asLong());
        assertEquals("2026-03-01T12:00:00Z", line.path("due").asText());
        assertEquals(until.toString(), line.path("heldUntil").asText());
    }

    @Test
    void aSweepHeldByItsOwnLateness_hasNoHeldUntil() throws Exception {
        SweepHandler sweep = handler((now, late) -> new SweepGate.Hold(null));
        assertEquals(List.of(), sweep.handleQueued(queuedSweepDueAt(NOW.minusSeconds(20)), null));
        JsonNode line = Json.parse(log.lines().get(log.lines().size() - 1));
        assertEquals("skipped_late", line.path("outcome").asText());
        assertFalse(line.has("heldUntil"), line.toString());
    }

    @Test
    void theLambdaRuntimesGate_holdsNoSweep_howeverLate() {
        assertNull(SweepGate.JUDGE_EVERY_SWEEP.hold(NOW, Duration.ofHours(1)));
    }
}
