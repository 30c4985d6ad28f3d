package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.client.model.BatchEntry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link PendingChanges}: what an accepted entry carried is taken, what changed while it was on its way stays to be
 * sent, and the stall is sent only when it differs from what the server took.
 */
@Tag("unit")
class PendingChangesTest {
    private static final Instant T = Instant.parse("2026-11-28T10:00:00Z");
    private static final BatchEntry.Subagents ONE = new BatchEntry.Subagents(
            List.of(new BatchEntry.Running("a1", "Explore", T)), 0);
    private static final BatchEntry.Park PARK = new BatchEntry.Park(true, T.plusSeconds(3600), "usage limit");

    @Test
    void anAcceptedEntryTakesWhatItCarried_butNotWhatChangedMeanwhile() {
        PendingChanges p = PendingChanges.NONE.withSubagents(ONE).withPark(PARK);
        PendingChanges.Sent sent = new PendingChanges.Sent(p.stallChange(true, true), p.park(), p.subagents());
        assertEquals(Boolean.TRUE, sent.stall());
        assertEquals(new PendingChanges(true, null, null), p.taken(sent));

        PendingChanges meanwhile = p.withSubagents(new BatchEntry.Subagents(List.of(), 0))
                .withPark(BatchEntry.Park.RESUMED);
        PendingChanges after = meanwhile.taken(sent);
        assertEquals(BatchEntry.Park.RESUMED, after.park(), "the end of the park came after: still to send");
        assertEquals(new BatchEntry.Subagents(List.of(), 0), after.subagents(), "so did the emptied set");
    }

    @Test
    void theStallIsSentOnlyWhenItDiffersFromWhatTheServerTook() {
        PendingChanges none = PendingChanges.NONE;
        assertNull(none.stallChange(false, true), "not stalled, none sent: nothing");
        assertNull(none.stallChange(true, false), "stalled without the age it was judged from: not yet");
        PendingChanges stalled = none.taken(new PendingChanges.Sent(true, null, null));
        assertNull(stalled.stallChange(true, true), "taken already");
        assertEquals(Boolean.FALSE, stalled.stallChange(false, true), "its end");
        assertNull(stalled.newLife().stallChange(false, true), "a new life's join ended it on the server");
    }
}
