package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link Subagents}: eight by id, the rest counted; a change that changes nothing is the same set (no write). */
@Tag("unit")
class SubagentsTest {
    private static final Instant T = Instant.parse("2026-11-28T10:00:00Z");

    private static Subagents.Entry e(String id) {
        return new Subagents.Entry(id, "Explore", T);
    }

    @Test
    void startsAndStops_keepEightById_andCountTheRest() {
        Subagents s = Subagents.NONE;
        for (int i = 0; i < 10; i++) {
            s = s.started(e("a" + i));
        }
        assertEquals(8, s.running().size());
        assertEquals(2, s.more());
        assertSame(s, s.started(e("a0")), "a repeated start changes nothing");
        Subagents stopped = s.stopped("a3");
        assertEquals(7, stopped.running().size());
        assertEquals(2, stopped.more());
        assertEquals(1, s.stopped("a9").more(), "the stop of a counted one counts one fewer");
        Subagents one = Subagents.NONE.started(e("x"));
        assertSame(one, one.stopped("unknown"), "an unknown stop changes nothing");
        assertEquals(Subagents.NONE, one.stopped("x"));
        assertEquals(List.of(e("x")), one.running());
    }

    @Test
    void refusesBadIdsAndTypes() {
        assertThrows(LifelineException.class, () -> new Subagents.Entry(null, "t", T));
        assertThrows(LifelineException.class, () -> new Subagents.Entry("x".repeat(129), "t", T));
        assertThrows(LifelineException.class, () -> new Subagents.Entry("a", "bad\ntype", T));
        assertThrows(LifelineException.class, () -> new Subagents.Entry("a", "t", null));
        assertEquals("x".repeat(128), new Subagents.Entry("x".repeat(128), null, T).id());
    }
}
