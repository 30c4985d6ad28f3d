package io.lifeline.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import io.lifeline.app.SweepRound;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The sweep queue's two kinds of message told apart: a due sweep (its body names a due time only) and a part of a
 * round (its body names the round, the part, the parts and the due time of the sweep the round answers).
 */
@Tag("unit")
class SweepPartMessageTest {
    private static SQSEvent.SQSMessage message(String body) {
        SQSEvent.SQSMessage m = new SQSEvent.SQSMessage();
        m.setMessageId("m1");
        m.setBody(body);
        return m;
    }

    @Test
    void aPartsBody_isReadWhole() {
        SQSEvent.SQSMessage m = message("{\"dueAt\":\"2026-03-01T12:00:15Z\",\"round\":\"2026-03-01T12:00:15Z\","
                + "\"part\":2,\"of\":4,\"roundDue\":\"2026-03-01T12:00:14Z\"}");
        assertTrue(SweepHandler.isPart(m));
        SweepHandler.PartMessage p = SweepHandler.part(m);
        assertEquals(new SweepRound.Part(Instant.parse("2026-03-01T12:00:15Z"), 2, 4), p.part());
        assertEquals(Instant.parse("2026-03-01T12:00:14Z"), p.due());
    }

    @Test
    void aDueSweepsBody_isNoPart() {
        assertFalse(SweepHandler.isPart(message("{\"dueAt\":\"2026-03-01T12:00:15Z\"}")));
        assertFalse(SweepHandler.isPart(message(null)));
    }

    @Test
    void aPartWhoseRoundCannotBeRead_isNone() {
        SQSEvent.SQSMessage m = message("{\"part\":1,\"of\":2,\"round\":\"yesterday\"}");
        assertTrue(SweepHandler.isPart(m));
        assertNull(SweepHandler.part(m));
    }
}
