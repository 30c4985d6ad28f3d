package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.store.outbox.FlapStore;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What the flapping flag's bound is judged from, and how a lapsed flag ends, over the engine's tables made from
 * template.yaml: each count moves the newest change to {@code previous} in its own write (the first of an item and
 * the first of a new window too); a lapse ends only the flag it names and only at the change that is still the
 * newest counted, moving it to resolved as the check's resolve does, after which the agent can be flagged again.
 */
@Tag("store")
class FlapStoreTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration WINDOW = Duration.ofSeconds(600);

    static StoreTables store;
    static FlapStore flaps;

    @BeforeAll
    static void start() {
        store = StoreTables.create();
        flaps = new FlapStore(store.dynamo, store.tables, Duration.ofDays(7));
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    private static String team() {
        return "flaps-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void eachCount_movesTheNewestChangeToPrevious_inItsOwnWrite() {
        String team = team();
        FlapStore.Flaps first = flaps.count(team, "a", 2, "dead", T0, WINDOW).flaps();
        assertEquals(T0, first.last());
        assertEquals(T0, first.previous(), "no change before the first: itself");
        FlapStore.Flaps second = flaps.count(team, "a", 3, "ready", T0.plusSeconds(2), WINDOW).flaps();
        assertEquals(T0.plusSeconds(2), second.last());
        assertEquals(T0, second.previous());
        assertEquals(2, second.count());
        // A new window (the first change 600 s or more before) keeps the previous change too.
        FlapStore.Flaps later = flaps.count(team, "a", 4, "dead", T0.plusSeconds(900), WINDOW).flaps();
        assertEquals(1, later.count());
        assertEquals(T0.plusSeconds(2), later.previous());
        // A change counted before is not counted again, and leaves the item as it was.
        FlapStore.Counted again = flaps.count(team, "a", 4, "dead", T0.plusSeconds(900), WINDOW);
        assertFalse(again.counted());
        assertEquals(T0.plusSeconds(2), again.flaps().previous());
    }

    @Test
    void aLapse_endsOnlyTheFlagItNames_atTheNewestChange_andTheAgentCanBeFlaggedAgain() {
        String team = team();
        for (int seq = 2; seq <= 6; seq++) {
            flaps.count(team, "a", seq, seq % 2 == 0 ? "dead" : "ready", T0.plusSeconds(2L * seq), WINDOW);
        }
        Instant flagged = T0.plusSeconds(12);
        assertTrue(flaps.flag(team, "a", flagged));
        flaps.count(team, "a", 7, "dead", T0.plusSeconds(900), WINDOW);
        assertFalse(flaps.lapse(team, "a", flagged.plusMillis(1), 7), "another flag");
        assertFalse(flaps.lapse(team, "a", flagged, 6), "not the newest change counted");
        assertTrue(flaps.lapse(team, "a", flagged, 7));
        FlapStore.Flaps f = flaps.read(team, "a");
        assertNull(f.flaggedAt());
        assertEquals(flagged, f.resolvedFlag(), "resolved, as the check's resolve leaves it");
        assertEquals(1, f.count(), "the count starts again from the change that came past the bound");
        assertFalse(flaps.lapse(team, "a", flagged, 7), "ended already");
        assertTrue(flaps.flag(team, "a", T0.plusSeconds(1000)), "flagged again by a new crash loop");
    }

    @Test
    void stallChanges_countInTheSameWindowAsStatusChanges_eachOnce_inTheirOwnOrder() {
        String team = team();
        long start = FlapStore.stallKey(T0, false);
        long end = FlapStore.stallKey(T0, true);
        assertTrue(start < end && end < FlapStore.stallKey(T0.plusMillis(1), false), "a stall's end before the next");
        FlapStore.Flaps first = flaps.countStall(team, "a", start, "stalled", T0, WINDOW).flaps();
        assertEquals(1, first.count());
        assertEquals(0, first.seq(), "a stall leaves the status changes' seq alone");
        assertFalse(flaps.countStall(team, "a", start, "stalled", T0, WINDOW).counted(), "counted once");
        flaps.countStall(team, "a", end, "working", T0.plusSeconds(5), WINDOW);
        // A status change after stalls only counts in their window (no seq yet is no new window).
        FlapStore.Flaps death = flaps.count(team, "a", 3, "dead", T0.plusSeconds(9), WINDOW).flaps();
        assertEquals(3, death.count());
        assertEquals(T0, death.windowStart());
        assertEquals(T0.plusSeconds(5), death.previous());
        assertTrue(flaps.flag(team, "a", T0.plusSeconds(9)), "an item of stalls and deaths can be flagged");
        // A lapse at a stall change ends the flag only while it is the newest change counted.
        long later = FlapStore.stallKey(T0.plusSeconds(700), false);
        flaps.countStall(team, "a", later, "stalled", T0.plusSeconds(700), WINDOW);
        assertFalse(flaps.lapseAtStall(team, "a", T0.plusSeconds(9), end, T0.plusSeconds(5)), "not the newest");
        assertTrue(flaps.lapseAtStall(team, "a", T0.plusSeconds(9), later, T0.plusSeconds(700)));
        assertEquals(T0.plusSeconds(9), flaps.read(team, "a").resolvedFlag());
    }
}
